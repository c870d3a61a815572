// simulate() and try_simulate(): a scenario's plan, then the generic dispatcher driven by a clock of
// retirements and launches, or the gpc-priority one; the one place a refused scenario becomes an InputError.
#include "tbcheck/model/simulator.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dispatcher.hpp"
#include "fermi_dispatch.hpp"
#include "plan.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::model {

namespace {

// A committed block waiting for its end: its allocation slot and its kernel.
struct Resident {
  int slot;
  int kernel;
};

// Blocks in flight grouped by end time. Blocks dispatched one after another mostly share their
// end (same instant, same kernel), so a push is an append to the last bucket used; emptied
// buckets keep their storage for reuse.
class RetireQueue {
 public:
  bool empty() const { return buckets_.empty(); }
  int64_t next_end() const { return buckets_.begin()->first; }
  void push(int64_t end, Resident r) {
    if (end != last_end_) {
      auto [it, fresh] = buckets_.try_emplace(end);
      if (fresh && !spare_.empty()) {
        it->second = std::move(spare_.back());
        spare_.pop_back();
      }
      last_end_ = end;
      last_ = &it->second;
    }
    last_->push_back(r);
  }
  // Calls f(resident) for every block of the earliest end, then drops that end.
  template <class F>
  void pop_earliest(F&& f) {
    auto it = buckets_.begin();
    for (size_t i = taken_; i < it->second.size(); ++i) f(it->second[i]);
    drop_earliest();
  }
  // Calls f for the first block of the earliest end not yet taken: a bucket lists its blocks in dispatch
  // order, which is the order they started (retirement start-order). Nothing is pushed to that end
  // meanwhile: every new end lies after the instant being retired.
  template <class F>
  void pop_first(F&& f) {
    auto it = buckets_.begin();
    f(it->second[taken_]);
    if (++taken_ == it->second.size()) drop_earliest();
  }

 private:
  void drop_earliest() {
    auto it = buckets_.begin();
    if (it->first == last_end_) last_end_ = -1;  // ends are >= 1
    it->second.clear();
    spare_.push_back(std::move(it->second));
    buckets_.erase(it);
    taken_ = 0;
  }

  std::map<int64_t, std::vector<Resident>> buckets_;
  std::vector<std::vector<Resident>> spare_;
  int64_t last_end_ = -1;
  std::vector<Resident>* last_ = nullptr;
  size_t taken_ = 0;  // blocks of the earliest end already retired one at a time (pop_first)
};

// The generic dispatcher over the whole scenario: the clock is the next retirement or launch.
Schedule simulate_generic(const Scenario& s, const Hypothesis& h, ScenarioPlan&& p, const EndTimeSource* ends) {
  const Device& d = s.device;
  const int nk = static_cast<int>(s.kernels.size());
  Schedule out;
  out.hypothesis = h.name;
  out.device = d.name;
  out.sms = d.sms;
  out.kernels.resize(s.kernels.size());
  for (size_t k = 0; k < s.kernels.size(); ++k) {
    out.kernels[k].name = s.kernels[k].name;
    out.kernels[k].blocks.reserve(static_cast<size_t>(s.kernels[k].blocks));
  }
  // Blocks mostly arrive in index order (relabelling only permutes them within a dispatch), so a list grows by
  // appending and is not first filled with placeholders: a million placeholders cost a tenth of the run.
  auto record = [&](const Dispatched& b, const BlockPlacement& x) {
    std::vector<BlockPlacement>& v = out.kernels[static_cast<size_t>(b.kernel)].blocks;
    const size_t i = static_cast<size_t>(b.block);
    if (i == v.size()) {
      v.push_back(x);
      return;
    }
    if (i > v.size()) v.resize(i + 1);
    v[i] = x;
  };

  // A kernel becomes eligible once launched (its release time: the list is in release order, so index order
  // is launch order) and its stream predecessor has retired. A newly eligible kernel of a higher priority
  // becomes the head at the next decision: running blocks stay (Amert et al., RTSS 2017; seed 002 Section
  // III-B: block boundaries).
  Dispatcher disp(d, h);
  disp.set_gpc_pointer(s.gpc_pointer);
  std::vector<std::pair<int64_t, int>> releases;  // (instant, kernel) not yet launched, earliest at the back
  for (int k = 0; k < nk; ++k) {
    const Kernel& kr = s.kernels[static_cast<size_t>(k)];
    disp.add_kernel(std::move(p.kernels[static_cast<size_t>(k)]),
                    int(!p.streams.first_in_stream[static_cast<size_t>(k)]) + int(kr.release > 0));
    disp.set_successor(k, p.streams.successor[static_cast<size_t>(k)]);
    if (kr.release > 0) releases.emplace_back(kr.release, k);
  }
  std::sort(releases.begin(), releases.end(), std::greater<>());
  auto end_of = [&](int k, int block, int64_t start) -> int64_t {
    if (!ends) return start + s.kernels[static_cast<size_t>(k)].duration;
    return std::max(start + 1, (*ends)(k, block, start));
  };

  int undispatched = s.total_blocks();
  RetireQueue retiring;
  auto retire = [&](const Resident& r) { disp.retire(r.slot, r.kernel); };
  int64_t now = 0;
  while (true) {
    // 1. Retire every block whose end has come (all-then-dispatch), or only the first of them to have
    // started (start-order: `now` stays until the others have retired, each followed by a dispatch);
    // successors in a stream become eligible now.
    switch (h.retirement) {
      case Retirement::AllThenDispatch:
        while (!retiring.empty() && retiring.next_end() <= now) retiring.pop_earliest(retire);
        break;
      case Retirement::StartOrder:
        if (!retiring.empty() && retiring.next_end() <= now) retiring.pop_first(retire);
        break;
    }
    while (!releases.empty() && releases.back().first <= now) {
      disp.satisfied(releases.back().second);
      releases.pop_back();
    }
    // 2. Dispatch from the head until the hypothesis answers CANNOT_SCHEDULE_NOW.
    for (const Dispatched& b : disp.dispatch(now)) {
      const int64_t end = end_of(b.kernel, b.block, now);
      record(b, {b.sm, now, end});
      retiring.push(end, {b.slot, b.kernel});
      --undispatched;
    }
    if (retiring.empty() && releases.empty()) {
      if (undispatched > 0)
        throw std::logic_error(fmt::format("dispatcher stalled at time {} with {} blocks undispatched", now, undispatched));
      break;
    }
    now = retiring.empty() ? releases.back().first
          : releases.empty() ? retiring.next_end()
                             : std::min(retiring.next_end(), releases.back().first);
  }
  return out;
}

// A scenario make_plan accepted, under either dispatcher.
Schedule run_plan(const Scenario& s, const Hypothesis& h, ScenarioPlan&& p, const EndTimeSource* ends) {
  if (is_fermi(h.selection)) {
    if (ends) throw std::logic_error("recorded end times reached the gpc-priority dispatcher");
    return simulate_fermi(s, h, p);  // seed 003: model/engine/src/fermi_dispatch.cpp
  }
  return simulate_generic(s, h, std::move(p), ends);
}

}  // namespace

std::optional<Schedule> try_simulate(const Scenario& s, const Hypothesis& h, FeasibilityCheck* why,
                                     const EndTimeSource* ends) {
  ScenarioPlan p = make_plan(s, h);
  const bool runs = p.feasibility.runs();
  if (why) *why = p.feasibility;
  if (!runs) return std::nullopt;
  return run_plan(s, h, std::move(p), ends);
}

PredictAllResult predict_all(const Scenario& s, const std::vector<Hypothesis>& hs, const std::string& source,
                             const std::function<void(size_t, Schedule&&)>& each) {
  PredictAllResult out;
  for (size_t i = 0; i < hs.size(); ++i) {
    FeasibilityCheck why;
    std::optional<Schedule> sch = try_simulate(s, hs[i], &why);
    if (!sch) {
      if (hs.size() == 1) throw InputError(source, why.field, why.reason);
      out.skipped.push_back(fmt::format("{}: {}", hs[i].name, why.reason));
      continue;
    }
    ++out.ran;
    each(i, std::move(*sch));
  }
  if (out.ran == 0 && !hs.empty())
    throw InputError(source, "--hypothesis", fmt::format("no hypothesis can run this scenario: {}", fmt::join(out.skipped, "; ")));
  return out;
}

Schedule simulate(const Scenario& s, const Hypothesis& h) {
  ScenarioPlan p = make_plan(s, h);
  if (!p.feasibility.runs()) throw InputError("scenario", p.feasibility.field, p.feasibility.reason);
  return run_plan(s, h, std::move(p), nullptr);
}

}  // namespace tbcheck::model
