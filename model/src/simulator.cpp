// The discrete-event dispatcher of DESIGN.md with a hypothesis plugged in.
// Capacities of the head kernel are cached per SM in a segment tree and refreshed only for SMs
// whose state changed, so a placement costs O(log SMs) instead of a scan over every SM.
#include "tbcheck/model/simulator.hpp"

#include <map>
#include <queue>
#include <stdexcept>

#include <fmt/format.h>

#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

std::vector<int> sm_order(const Device& d, Order o) {
  std::vector<int> order;
  order.reserve(static_cast<size_t>(d.sms));
  if (o == Order::Natural) {
    for (int i = 0; i < d.sms; ++i) order.push_back(i);
  } else {  // Mechanism 1: 0, 2, ..., then 1, 3, ...
    for (int i = 0; i < d.sms; i += 2) order.push_back(i);
    for (int i = 1; i < d.sms; i += 2) order.push_back(i);
  }
  return order;
}

void check_feasible(const Scenario& s, const Hypothesis& h, const std::string& where) {
  for (size_t i = 0; i < s.kernels.size(); ++i) {
    std::string why = infeasibility_reason(s.kernels[i], s.device, h);
    if (!why.empty())
      throw InputError(where, fmt::format("kernels[{}]", i),
                       fmt::format("kernel {} can never be placed on {} under {}: {}", s.kernels[i].name,
                                   s.device.name, h.name, why));
  }
}

namespace {

// Max-capacity with lowest-position tie-break, and first position with positive capacity.
class CapacityTree {
 public:
  explicit CapacityTree(int n) : n_(n) {
    size_ = 1;
    while (size_ < n) size_ *= 2;
    val_.assign(2 * static_cast<size_t>(size_), -1);
    pos_.assign(2 * static_cast<size_t>(size_), 0);
    for (int i = 0; i < size_; ++i) pos_[size_ + i] = i;
  }
  void set(int p, int64_t v) {
    int i = size_ + p;
    val_[i] = v;
    for (i /= 2; i >= 1; i /= 2) pull(i);
  }
  // (value, position) of the maximum; lowest position wins ties ("strictly greater replaces").
  std::pair<int64_t, int> best() const { return {val_[1], pos_[1]}; }
  // First position >= from (wrapping around) with a positive value; -1 if none.
  int first_positive_from(int from) const {
    int p = first_positive(1, 0, size_, from);
    if (p < 0 && from > 0) p = first_positive(1, 0, size_, 0);
    return p;
  }

 private:
  void pull(int i) {
    int l = 2 * i, r = 2 * i + 1;
    if (val_[r] > val_[l]) {
      val_[i] = val_[r];
      pos_[i] = pos_[r];
    } else {
      val_[i] = val_[l];
      pos_[i] = pos_[l];
    }
  }
  int first_positive(int node, int lo, int hi, int from) const {
    if (hi <= from || val_[node] <= 0 || lo >= n_) return -1;
    if (hi - lo == 1) return lo;
    int mid = (lo + hi) / 2;
    int p = first_positive(2 * node, lo, mid, from);
    return p >= 0 ? p : first_positive(2 * node + 1, mid, hi, from);
  }
  int n_, size_;
  std::vector<int64_t> val_;
  std::vector<int> pos_;
};

struct Retire {
  int64_t end;
  int gid;  // global block id
  bool operator>(const Retire& o) const { return end > o.end; }
};

}  // namespace

Schedule simulate(const Scenario& s, const Hypothesis& h) {
  check_feasible(s, h, "scenario");
  const Device& d = s.device;
  const int nk = static_cast<int>(s.kernels.size());

  std::vector<BlockNeeds> needs;
  std::vector<int> first_gid(static_cast<size_t>(nk) + 1, 0);
  for (int k = 0; k < nk; ++k) {
    needs.push_back(block_needs(s.kernels[k], d, h));
    first_gid[k + 1] = first_gid[k] + s.kernels[k].blocks;
  }

  // Streams: kernels with equal `stream` share one FIFO in list order; others have their own.
  std::vector<int> successor(static_cast<size_t>(nk), -1);
  std::vector<bool> first_in_stream(static_cast<size_t>(nk), true);
  {
    std::map<int, int> last_of_stream;
    for (int k = 0; k < nk; ++k) {
      if (!s.kernels[k].stream) continue;
      auto [it, fresh] = last_of_stream.try_emplace(*s.kernels[k].stream, k);
      if (!fresh) {
        successor[it->second] = k;
        first_in_stream[k] = false;
        it->second = k;
      }
    }
  }

  Schedule out;
  out.hypothesis = h.name;
  out.device = d.name;
  out.sms = d.sms;
  for (const auto& k : s.kernels) out.kernels.push_back({k.name, std::vector<BlockPlacement>(static_cast<size_t>(k.blocks))});

  GpuState g(d, h);
  const std::vector<int> order = sm_order(d, h.order);
  std::vector<int> pos_of(static_cast<size_t>(d.sms));
  for (int p = 0; p < d.sms; ++p) pos_of[order[p]] = p;
  CapacityTree tree(d.sms);

  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // eligible kernels with blocks left
  for (int k = 0; k < nk; ++k)
    if (first_in_stream[k]) ready.push(k);
  std::vector<int> next_block(static_cast<size_t>(nk), 0), unretired(static_cast<size_t>(nk));
  for (int k = 0; k < nk; ++k) unretired[k] = s.kernels[k].blocks;
  std::vector<Allocation> allocs(static_cast<size_t>(first_gid[nk]));
  std::vector<int> kernel_of_gid(static_cast<size_t>(first_gid[nk]));
  for (int k = 0; k < nk; ++k)
    for (int b = first_gid[k]; b < first_gid[k + 1]; ++b) kernel_of_gid[b] = k;
  std::priority_queue<Retire, std::vector<Retire>, std::greater<>> retiring;

  int head = -1;  // kernel whose capacities the tree holds
  int rr_pointer = 0;
  const bool tpc_coupled = h.smem_config == SmemConfig::Tpc && d.sms_per_tpc > 1;
  auto refresh = [&](int sm) {
    if (head < 0) return;
    if (tpc_coupled) {
      int first = d.tpc_of(sm) * d.sms_per_tpc;
      for (int i = first; i < first + d.sms_per_tpc; ++i) tree.set(pos_of[i], g.capacity(i, needs[head]));
    } else {
      tree.set(pos_of[sm], g.capacity(sm, needs[head]));
    }
  };

  int64_t now = 0;
  int undispatched = first_gid[nk];
  while (true) {
    // 1. Retire every block whose end has come; successors in a stream become eligible now.
    while (!retiring.empty() && retiring.top().end <= now) {
      int gid = retiring.top().gid;
      retiring.pop();
      g.release(allocs[gid]);
      refresh(allocs[gid].sm);
      int k = kernel_of_gid[gid];
      if (--unretired[k] == 0 && successor[k] >= 0) ready.push(successor[k]);
    }
    // 2. Dispatch from the head until the hypothesis answers CANNOT_SCHEDULE_NOW.
    while (!ready.empty()) {
      int k = ready.top();
      if (k != head) {
        head = k;
        for (int sm = 0; sm < d.sms; ++sm) tree.set(pos_of[sm], g.capacity(sm, needs[k]));
      }
      const BlockNeeds& n = needs[k];
      if (!g.local_allows(n)) break;
      int pos = -1;
      if (h.selection == Selection::RoundRobin) {
        pos = tree.first_positive_from(rr_pointer);
        if (pos < 0) break;
        rr_pointer = (pos + 1) % d.sms;
      } else {
        auto [value, p] = tree.best();
        if (value <= 0) break;
        pos = p;
      }
      int sm = order[pos];
      int b = next_block[k]++;
      int gid = first_gid[k] + b;
      allocs[gid] = g.commit(sm, n);
      refresh(sm);
      int64_t end = now + s.kernels[k].duration;
      out.kernels[k].blocks[b] = {sm, now, end};
      retiring.push({end, gid});
      --undispatched;
      if (next_block[k] == s.kernels[k].blocks) ready.pop();
    }
    if (retiring.empty()) {
      if (undispatched > 0)
        throw std::logic_error(fmt::format("dispatcher stalled at time {} with {} blocks undispatched", now, undispatched));
      break;
    }
    now = retiring.top().end;
  }
  return out;
}

}  // namespace tbcheck::model
