// The gpc-priority dispatcher (seed 003, Pai's Fermi scheduler): first waves planned by GPC priorities, later
// blocks on SMs in completion order; model/engine/src/fermi.cpp holds pick_sm and pick_block and what Pai leaves open.
#include "fermi_dispatch.hpp"

#include <algorithm>
#include <deque>
#include <queue>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "tbcheck/model/fermi.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::model {

namespace {

// A committed block waiting for its end; `seq` (dispatch order) orders blocks ending at the same instant.
struct InFlight {
  int64_t end;
  int64_t seq;
  int kernel;
  Allocation alloc;
  bool operator>(const InFlight& o) const { return std::tie(end, seq) > std::tie(o.end, o.seq); }
};

struct KernelState {
  std::vector<int> wave;   // SM of each first-wave pick; empty until the kernel first becomes the head
  bool planned = false;
  int next = 0;  // picks dispatched
};

}  // namespace

Schedule simulate_fermi(const Scenario& s, const Hypothesis& h, const ScenarioPlan& p) {
  const Device& d = s.device;
  const std::vector<int>& gpc_of_sm = p.gpc_of_sm;  // make_plan refused a device without a GPC map
  const int nk = static_cast<int>(s.kernels.size());

  std::vector<KernelState> ks(static_cast<size_t>(nk));
  const std::vector<int>& successor = p.streams.successor;
  const std::vector<bool>& first_in_stream = p.streams.first_in_stream;

  Schedule out;
  out.hypothesis = h.name;
  out.device = d.name;
  out.sms = d.sms;
  for (const auto& k : s.kernels) out.kernels.push_back({k.name, std::vector<BlockPlacement>(static_cast<size_t>(k.blocks))});

  GpuState g(d, h);
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;  // eligible kernels with blocks left
  for (int k = 0; k < nk; ++k)
    if (first_in_stream[k]) ready.push(k);
  std::vector<int> unretired(static_cast<size_t>(nk));
  for (int k = 0; k < nk; ++k) unretired[k] = s.kernels[k].blocks;
  std::priority_queue<InFlight, std::vector<InFlight>, std::greater<>> in_flight;
  std::deque<int> completions;  // SM of each completed block not yet reused, oldest first
  int64_t seq = 0, now = 0;
  int undispatched = s.total_blocks();

  while (true) {
    // 1. Retire every block whose end has come, in (end, dispatch) order: that is the completion order.
    while (!in_flight.empty() && in_flight.top().end <= now) {
      const InFlight& f = in_flight.top();
      g.release(f.alloc);
      completions.push_back(f.alloc.sm);
      const int k = f.kernel;
      in_flight.pop();
      if (--unretired[k] == 0 && successor[k] >= 0) ready.push(successor[k]);
    }
    // 2. Dispatch from the head until a block cannot be placed now.
    while (!ready.empty()) {
      const int k = ready.top();
      KernelState& st = ks[k];
      const BlockNeeds& n = p.kernels[static_cast<size_t>(k)].needs;
      if (!g.local_allows(n)) break;
      if (!st.planned) {
        // The kernel's first wave over the room the GPU has now (on an idle GPU: r on every SM).
        const int r = static_cast<int>(GpuState::empty_sm_capacity(d, h, n).blocks);
        std::vector<int> room(static_cast<size_t>(d.sms));
        for (int sm = 0; sm < d.sms; ++sm)
          room[static_cast<size_t>(sm)] = static_cast<int>(std::min<int64_t>(r, g.capacity_parts(sm, n).blocks));
        st.wave = fermi_first_wave(gpc_of_sm, room, s.kernels[k].blocks);
        st.planned = true;
        completions.clear();
      }
      int sm = -1;
      if (st.next < static_cast<int>(st.wave.size())) {
        const int planned_sm = st.wave[static_cast<size_t>(st.next)];
        if (g.capacity_parts(planned_sm, n).blocks <= 0) break;
        sm = planned_sm;
      } else {
        auto it = std::find_if(completions.begin(), completions.end(),
                               [&](int c) { return g.capacity_parts(c, n).blocks > 0; });
        if (it == completions.end()) break;
        sm = *it;
        completions.erase(it);
      }
      const int b = p.kernels[static_cast<size_t>(k)].labels[static_cast<size_t>(st.next++)];  // pick_block
      const int64_t end = now + s.kernels[k].duration;
      out.kernels[k].blocks[static_cast<size_t>(b)] = {sm, now, end};
      in_flight.push({end, seq++, k, g.commit(sm, n)});
      --undispatched;
      if (st.next == s.kernels[k].blocks) ready.pop();
    }
    if (in_flight.empty()) {
      if (undispatched > 0)
        throw std::logic_error(
            fmt::format("Fermi dispatcher stalled at time {} with {} blocks undispatched", now, undispatched));
      break;
    }
    now = in_flight.top().end;
  }
  return out;
}

}  // namespace tbcheck::model
