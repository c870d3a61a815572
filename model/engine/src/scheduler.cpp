// The stepping Scheduler: the generic Dispatcher simulate() runs, with launches, placements and retirements
// at the caller's times; checks what a scenario file's loader and make_plan check, per launched kernel.
#include "tbcheck/model/scheduler.hpp"

#include <map>
#include <memory>

#include <fmt/format.h>

#include "dispatcher.hpp"
#include "plan.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::model {

namespace {

constexpr const char* kWhere = "scheduler";
constexpr int kNotPlaced = -1, kRetired = -2;

// A field of the one-kernel scenario a launch is checked as ("kernels[0].tpcs") as the launch's ("kernel.tpcs"),
// for refusals that are values.
std::string kernel_field(const std::string& field) {
  const std::string prefix = "kernels[0]";
  return field.rfind(prefix, 0) == 0 ? "kernel" + field.substr(prefix.size()) : field;
}

// The device limits the scenario loader checks of a kernel (model/core/src/scenario.cpp, kernel_from_json), without
// its JSON round trip: a launch costs about what a block's placement does.
void check_launch(const Kernel& k, const Device& d) {
  auto fail = [&](const char* field, const std::string& reason) {
    throw InputError(kWhere, fmt::format("kernel.{}", field), fmt::format("{}: {}", k.name, reason));
  };
  constexpr int64_t kMaxBlocks = int64_t{1} << 26;
  if (k.blocks < 1 || k.blocks > kMaxBlocks) fail("blocks", fmt::format("{} blocks: 1..{} are allowed", k.blocks, kMaxBlocks));
  if (k.grid && (k.grid->first < 1 || k.grid->second < 1 || int64_t{k.grid->first} * k.grid->second != k.blocks))
    fail("grid", fmt::format("grid {} x {} does not hold {} blocks", k.grid->first, k.grid->second, k.blocks));
  if (k.threads < 1 || k.threads > d.max_threads_per_block)
    fail("threads", fmt::format("{} threads: 1..{} per block on {}", k.threads, d.max_threads_per_block, d.name));
  if (k.regs < 1 || k.regs > d.max_regs_per_thread)
    fail("regs", fmt::format("{} registers: 1..{} per thread on {}", k.regs, d.max_regs_per_thread, d.name));
  if (k.smem < 0 || k.smem > d.max_smem_per_block)
    fail("smem", fmt::format("{} bytes: 0..{} bytes of shared memory per block on {}", k.smem, d.max_smem_per_block, d.name));
  if (k.local < 0 || k.local > 512 * 1024) fail("local", fmt::format("{} bytes: 0..524288 per thread", k.local));
  if (k.stream && *k.stream < 0) fail("stream", fmt::format("stream {}: streams are 0 or more", *k.stream));
  if (k.priority) {
    if (!d.stream_priorities) fail("priority", fmt::format("device {} has no stream priority range", d.name));
    if (!d.stream_priorities->contains(*k.priority))
      fail("priority", fmt::format("{} is outside {}'s range [{} (least), {} (greatest)]", *k.priority, d.name,
                                   d.stream_priorities->least, d.stream_priorities->greatest));
  }
  std::vector<char> seen(static_cast<size_t>(d.tpcs()), 0);
  for (int t : k.tpcs) {
    if (t < 0 || t >= d.tpcs()) fail("tpcs", fmt::format("TPC {} does not exist: {} has TPCs 0..{}", t, d.name, d.tpcs() - 1));
    if (seen[static_cast<size_t>(t)]++) fail("tpcs", fmt::format("TPC {} is listed twice", t));
  }
  if (k.cluster) {
    if (!d.has_clusters())
      fail("cluster", fmt::format("thread block clusters need compute capability 9.0 or later; {} is CC {}", d.name, d.cc));
    const auto& c = *k.cluster;
    if (c[0] < 1 || c[1] < 1 || c[2] != 1 || k.cluster_size() > kMaxPortableClusterBlocks)
      fail("cluster", fmt::format("{} x {} x {}: 1 to {} blocks per cluster, z = 1", c[0], c[1], c[2], kMaxPortableClusterBlocks));
    const int gx = k.grid ? k.grid->first : k.blocks, gy = k.grid ? k.grid->second : 1;
    if (gx % c[0] != 0 || gy % c[1] != 0)
      fail("cluster", fmt::format("grid {} x {} is not a whole number of {} x {} clusters", gx, gy, c[0], c[1]));
  }
}

}  // namespace

std::string_view to_string(PlaceStatus s) {
  switch (s) {
    case PlaceStatus::Placed: return "placed";
    case PlaceStatus::NoneFits: return "none-fits";
    case PlaceStatus::NothingEligible: return "nothing-eligible";
  }
  return "?";
}

json PlaceResult::to_json() const {
  json p = json::array();
  for (const Placement& b : placements) p.push_back({{"kernel", b.kernel}, {"block", b.block}, {"sm", b.sm}});
  return {{"status", to_string(status)}, {"placements", p}};
}

json Launch::to_json() const {
  json j = {{"check", check.to_json()}};
  if (accepted()) j["kernel"] = kernel;
  return j;
}

struct Scheduler::Impl {
  Impl(Device dev, Hypothesis hyp)
      : dp(std::make_shared<const Device>(std::move(dev))),
        hp(std::make_shared<const Hypothesis>(std::move(hyp))),
        d(*dp),
        h(*hp),
        disp(d, h) {}
  // Shared, never changed: a copy's dispatcher refers to the same device and hypothesis, which live as long as
  // any copy does (the stepwise order search copies a Scheduler at every branch).
  std::shared_ptr<const Device> dp;
  std::shared_ptr<const Hypothesis> hp;
  const Device& d;
  const Hypothesis& h;
  Dispatcher disp;  // holds references to *dp and *hp
  // Per kernel and block: its slot, kNotPlaced or kRetired. One array per kernel: a flat one for all kernels
  // costs as many loads per retire() and copies itself as it grows.
  std::vector<std::vector<int>> slot_of;
  std::map<int, int> last_of_stream;      // the kernel launched last on each stream
  int64_t now = 0;
  int in_flight = 0;

  void advance(int64_t t, const char* call) {
    if (t < now)
      throw InputError(kWhere, "now", fmt::format("{} at time {}, before the previous call's time {}", call, t, now));
    now = t;
  }
  void known_kernel(int k) const {
    if (k < 0 || k >= disp.kernels()) [[unlikely]]
      no_kernel(k);
  }
  [[noreturn, gnu::noinline, gnu::cold]] void no_kernel(int k) const {
    throw InputError(kWhere, "kernel", fmt::format("no kernel {}: {} kernels were launched", k, disp.kernels()));
  }
  // retire()'s refusals, kept out of its path: the checks there are compares, the messages are built here.
  [[noreturn, gnu::noinline, gnu::cold]] void bad_retire(int kernel, int block, int64_t t) const {
    known_kernel(kernel);
    const size_t n = slot_of[static_cast<size_t>(kernel)].size();
    if (block < 0 || static_cast<size_t>(block) >= n)
      throw InputError(kWhere, "block", fmt::format("kernel {} has blocks 0..{}; no block {}", kernel, n - 1, block));
    const int slot = slot_of[static_cast<size_t>(kernel)][static_cast<size_t>(block)];
    if (slot == kNotPlaced)
      throw InputError(kWhere, "block", fmt::format("block {} of kernel {} was never placed", block, kernel));
    if (slot == kRetired)
      throw InputError(kWhere, "block", fmt::format("block {} of kernel {} is already retired", block, kernel));
    throw InputError(kWhere, "now", fmt::format("retire at time {}, before the previous call's time {}", t, now));
  }
};

FeasibilityCheck Scheduler::support(const Device&, const Hypothesis& h) {
  FeasibilityCheck f;
  if (is_fermi(h.selection)) {
    f.status = Feasibility::Unsupported;
    f.field = "selection";
    f.reason = fmt::format("unsupported: {} uses selection 'gpc-priority', whose dispatcher (seed 003) plans each "
                           "kernel's first wave and reuses SMs from block durations known in advance; it has no "
                           "stepping form (use simulate())",
                           h.name);
  }
  return f;
}

Scheduler::Scheduler(Device d, Hypothesis h) {
  if (FeasibilityCheck f = support(d, h); !f.runs()) throw InputError(kWhere, f.field, f.reason);
  impl_ = std::make_unique<Impl>(std::move(d), std::move(h));
}

Scheduler::~Scheduler() = default;
Scheduler::Scheduler(Scheduler&&) noexcept = default;
Scheduler& Scheduler::operator=(Scheduler&&) noexcept = default;
Scheduler::Scheduler(const Scheduler& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Scheduler& Scheduler::operator=(const Scheduler& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}

Launch Scheduler::launch(const Kernel& k, int64_t now) {
  Impl& m = *impl_;
  m.advance(now, "launch");
  check_launch(k, m.d);
  // The caller owns time: the kernel is checked as the only kernel of a scenario, launched at 0.
  Scenario s{m.d, false, {k}};
  s.kernels[0].release = 0;
  Launch out;
  out.check = check_feasibility(s, m.h);
  if (!out.check.runs()) {
    out.check.kernel = -1;
    out.check.field = kernel_field(out.check.field);
    return out;
  }
  int waiting = 0, before = -1;
  if (k.stream)
    if (auto it = m.last_of_stream.find(*k.stream); it != m.last_of_stream.end() && m.disp.unretired(it->second) > 0) {
      before = it->second;
      waiting = 1;
    }
  out.kernel = m.disp.add_kernel(plan_kernel(s.kernels[0], m.d, m.h), waiting);
  if (before >= 0) m.disp.set_successor(before, out.kernel);
  if (k.stream) m.last_of_stream[*k.stream] = out.kernel;
  m.slot_of.emplace_back(static_cast<size_t>(k.blocks), kNotPlaced);
  return out;
}

PlaceStatus Scheduler::place(int64_t now, std::vector<Placement>& out) {
  Impl& m = *impl_;
  m.advance(now, "place");
  const std::vector<Dispatched>& placed = m.disp.dispatch(now);
  out.reserve(out.size() + placed.size());
  for (const Dispatched& b : placed) {
    m.slot_of[static_cast<size_t>(b.kernel)][static_cast<size_t>(b.block)] = b.slot;
    out.push_back({b.kernel, b.block, b.sm});
  }
  m.in_flight += static_cast<int>(placed.size());
  return !placed.empty()           ? PlaceStatus::Placed
         : m.disp.has_eligible() ? PlaceStatus::NoneFits
                                 : PlaceStatus::NothingEligible;
}

PlaceResult Scheduler::place(int64_t now) {
  PlaceResult r;
  r.status = place(now, r.placements);
  return r;
}

void Scheduler::retire(int kernel, int block, int64_t now) {
  Impl& m = *impl_;
  // One unsigned compare per range check; any refusal is explained by bad_retire.
  const auto k = static_cast<size_t>(kernel);
  if (k >= m.slot_of.size()) [[unlikely]]  // one entry per accepted kernel
    m.bad_retire(kernel, block, now);
  std::vector<int>& slots = m.slot_of[k];
  if (static_cast<size_t>(block) >= slots.size()) [[unlikely]]
    m.bad_retire(kernel, block, now);
  int& slot = slots[static_cast<size_t>(block)];
  if (slot < 0 || now < m.now) [[unlikely]]
    m.bad_retire(kernel, block, now);
  m.now = now;
  m.disp.retire(slot, kernel);
  slot = kRetired;
  --m.in_flight;
}

int Scheduler::kernels() const { return impl_->disp.kernels(); }

int Scheduler::blocks_left(int kernel) const {
  impl_->known_kernel(kernel);
  return impl_->disp.plan(kernel).blocks - impl_->disp.dispatched(kernel);
}

int Scheduler::in_flight() const { return impl_->in_flight; }

int64_t Scheduler::room(int sm, int kernel) const {
  impl_->known_kernel(kernel);
  if (sm < 0 || sm >= impl_->d.sms)
    throw InputError(kWhere, "sm", fmt::format("no SM {}: {} has SMs 0..{}", sm, impl_->d.name, impl_->d.sms - 1));
  return impl_->disp.capacity_of(sm, kernel);
}

const Device& Scheduler::device() const { return impl_->d; }
const Hypothesis& Scheduler::hypothesis() const { return impl_->h; }

}  // namespace tbcheck::model
