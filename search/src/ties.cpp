// Tied retirements (ties.hpp): the two readings of the retirement mechanism side by side on one scenario,
// and the staggering that makes a synthesized witness hold under both.
#include "tbcheck/search/ties.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "classes.hpp"
#include "witness.hpp"

namespace tbcheck::search {

std::string_view to_string(TieEffect e) {
  switch (e) {
    case TieEffect::None: return "none";
    case TieEffect::StartsMove: return "starts-move";
    case TieEffect::SmsMove: return "sms-move";
  }
  return "?";
}

std::string_view to_string(WitnessTies t) {
  switch (t) {
    case WitnessTies::Robust: return "robust";
    case WitnessTies::Staggered: return "staggered";
    case WitnessTies::EveryOrder: return "separated-under-every-order";
    case WitnessTies::Dependent: return "tie-dependent";
    case WitnessTies::Compared: return "readings-compared";
  }
  return "?";
}

std::string_view to_string(OrderSeparation o) {
  switch (o) {
    case OrderSeparation::Separated: return "separated";
    case OrderSeparation::Reproduced: return "reproduced";
    case OrderSeparation::Unknown: return "unknown";
  }
  return "?";
}

model::json OrderCheck::to_json() const {
  return {{"result", to_string(result)}, {"detail", detail}, {"orders_tried", orders_tried}};
}

model::json TieCheck::to_json() const {
  model::json j = {{"effect", to_string(effect)}};
  if (!robust()) {
    j["hypothesis"] = hypothesis;
    j["detail"] = detail;
  }
  return j;
}

model::Hypothesis other_reading(const model::Hypothesis& h) {
  model::Hypothesis o = h;
  switch (h.retirement) {
    case model::Retirement::AllThenDispatch: o.retirement = model::Retirement::StartOrder; break;
    case model::Retirement::StartOrder: o.retirement = model::Retirement::AllThenDispatch; break;
  }
  return o;
}

namespace {

// What the other reading does to h's schedule `mine` of s.
TieEffect effect_on(const model::Scenario& s, const model::Hypothesis& h, const model::Schedule& mine,
                    std::string* detail) {
  const model::Hypothesis o = other_reading(h);
  if (model::combination_error(o)) return TieEffect::None;  // gpc-priority: one reading only
  const auto other = model::try_simulate(s, o);
  if (!other) return TieEffect::None;
  TieEffect e = TieEffect::None;
  for (size_t k = 0; k < mine.kernels.size(); ++k)
    for (size_t b = 0; b < mine.kernels[k].blocks.size(); ++b) {
      const auto& x = mine.kernels[k].blocks[b];
      const auto& y = other->kernels[k].blocks[b];
      if (x.sm != y.sm) {
        if (detail)
          *detail = fmt::format("{} block {}: SM {} at {} ({}), SM {} at {} ({})", mine.kernels[k].name, b, x.sm, x.start,
                                to_string(h.retirement), y.sm, y.start, to_string(o.retirement));
        return TieEffect::SmsMove;
      }
      if (x.start != y.start && e == TieEffect::None) {
        e = TieEffect::StartsMove;
        if (detail)
          *detail = fmt::format("{} block {}: starts at {} ({}), at {} ({})", mine.kernels[k].name, b, x.start,
                                to_string(h.retirement), y.start, to_string(o.retirement));
      }
    }
  return e;
}

// What the other reading does to h's schedule of s.
TieEffect effect_on(const model::Scenario& s, const model::Hypothesis& h, std::string* detail) {
  const auto mine = model::try_simulate(s, h);
  return mine ? effect_on(s, h, *mine, detail) : TieEffect::None;
}

// Whether s separates a and b (detail::separates) with both readings of the retirement mechanism giving each side
// one schedule (tie_robust): the staggering's question, asked with each side and each reading simulated once and
// stopping at the first answer (most durations tried fail it).
bool separates_robustly(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  const auto x = model::try_simulate(s, a);
  const auto y = x ? model::try_simulate(s, b) : std::nullopt;
  if (!x || !y || !detail::schedules_separate(s, *x, *y)) return false;
  return effect_on(s, a, *x, nullptr) == TieEffect::None && effect_on(s, b, *y, nullptr) == TieEffect::None;
}

// A schedule as a recording of every block's SM, start and end, equal times unordered.
model::Case recording_of(const model::Scenario& s, const model::Schedule& sch, const std::string& id) {
  model::Case c;
  c.id = id;
  c.source = "synthesized";
  c.scenario = s;
  model::Observation o = oracle::observation_of(sch, model::ObservationKind::Synthetic);
  o.resolution = model::Resolution{1, 0};
  c.observation = std::move(o);
  return c;
}

}  // namespace

namespace {

// every_order_separates with one bound on each judgement.
OrderCheck separation_within(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b,
                             int64_t max_orders) {
  OrderCheck r;
  model::JudgeOptions opts;
  opts.timing = model::Timing::Trace;
  opts.max_orders = max_orders;
  opts.levels = model::JudgedLevels::Exact;  // the separation is judged at Exact alone
  // Whole simulations alone: a witness's tie judgement mostly ends within the first bound, and the stepwise
  // search's step budget, spent in full on the undecided pairs before the enumeration, nearly doubled distinguish.
  opts.tie_search = model::TieSearch::Enumerate;
  auto unknown = [&](std::string why) {
    r.result = OrderSeparation::Unknown;
    r.detail = std::move(why);
    return r;
  };
  std::string undecided;  // the first judgement that reached the bound
  for (const auto& [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    // The readings x has: its own, and the other one where it has a meaning (gpc-priority has one).
    std::vector<model::Hypothesis> readings = {*x};
    if (!model::combination_error(other_reading(*x))) readings.push_back(other_reading(*x));
    for (const auto& xr : readings) {
      auto sch = model::try_simulate(s, xr);
      if (!sch) return unknown(fmt::format("{} cannot run the witness", xr.name));
      const std::string what = fmt::format("{}'s recording ({})", x->name, to_string(xr.retirement));
      const model::Case c = recording_of(s, *sch, what);
      // The side that made the recording must pass it, or the judge cannot tell the sides apart by it.
      const model::CaseResult own = model::evaluate(c, *x, opts);
      r.orders_tried += own.orders_tried;
      if (own.timing != model::Timing::Trace)
        return unknown(fmt::format("{} is not judged under trace timing (a gpc-priority dispatcher)", x->name));
      if (own.at(model::Level::Exact) != model::Verdict::Pass) {
        if (undecided.empty())
          undecided = fmt::format("{} does not pass {}: {}", x->name, what, own.first_failure(model::Level::Exact));
        continue;
      }
      const model::CaseResult other = model::evaluate(c, *y, opts);
      r.orders_tried += other.orders_tried;
      if (other.timing != model::Timing::Trace)
        return unknown(fmt::format("{} is not judged under trace timing (a gpc-priority dispatcher)", y->name));
      switch (other.at(model::Level::Exact)) {
        case model::Verdict::Fail: break;
        case model::Verdict::Pass:
          r.result = OrderSeparation::Reproduced;
          r.detail = fmt::format("{} reproduces {} under the order: {}", y->name, what,
                                 other.order(model::Level::Exact).empty() ? "as listed" : other.order(model::Level::Exact));
          return r;
        case model::Verdict::Unknown:  // the other recordings may still show a reproduction
          if (undecided.empty())
            undecided = fmt::format("{} against {}: {}", y->name, what, other.exact ? other.exact->detail : other.reason);
          break;
        case model::Verdict::Unsupported: return unknown(fmt::format("{} cannot run the witness: {}", y->name, other.reason));
      }
    }
  }
  if (!undecided.empty()) return unknown(std::move(undecided));
  r.result = OrderSeparation::Separated;
  r.detail = fmt::format("each side's recording under either reading is refuted for the other side under every "
                         "admissible order of its retirements ({} simulations)",
                         r.orders_tried);
  return r;
}

}  // namespace

OrderCheck every_order_separates(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b,
                                 int64_t max_orders) {
  if (max_orders <= kQuickOrders) return separation_within(s, a, b, max_orders);
  // The order search visits orders in one sequence whatever its bound, so a reproduction found within a few
  // simulations is one within max_orders, and a check that reached no bound is the same under a larger one. Where
  // some recording is reproduced it usually is within a few orders, while another judgement may search to the
  // bound without one: every judgement is asked with the small bound first.
  OrderCheck quick = separation_within(s, a, b, kQuickOrders);
  if (quick.result != OrderSeparation::Unknown) return quick;
  OrderCheck full = separation_within(s, a, b, max_orders);
  full.orders_tried += quick.orders_tried;
  return full;
}

TieCheck tie_robust(const model::Scenario& s, const std::vector<model::Hypothesis>& hs) {
  TieCheck c;
  for (const auto& h : hs) {
    std::string detail;
    const TieEffect e = effect_on(s, h, &detail);
    if (static_cast<int>(e) > static_cast<int>(c.effect)) {
      c.effect = e;
      c.hypothesis = h.name;
      c.detail = detail;
    }
  }
  return c;
}

RobustWitness robust_witness(const model::Scenario& witness, const model::Hypothesis& a, const model::Hypothesis& b,
                             int max_duration) {
  RobustWitness r{witness, WitnessTies::Robust, false, {}};
  if (a.retirement != b.retirement) {
    r.ties = WitnessTies::Compared;
    return r;
  }
  const std::vector<model::Hypothesis> pair = {a, b};
  if (tie_robust(witness, pair).robust()) return r;
  // Duration vectors over the kernels, fewest total first, those within max_duration before the others.
  const size_t nk = witness.kernels.size();
  const int cap = std::max(max_duration, kStaggerDurationCap);
  std::vector<std::vector<int>> candidates;
  std::vector<int> d(nk, 1);
  const size_t most = static_cast<size_t>(kStaggerTries) * 8;  // enumerated before sorting, then cut to the tries
  std::function<void(size_t)> all = [&](size_t k) {
    if (candidates.size() >= most) return;
    if (k == nk) {
      candidates.push_back(d);
      return;
    }
    for (int x = 1; x <= cap; ++x) {
      d[k] = x;
      all(k + 1);
    }
  };
  all(0);
  auto key = [&](const std::vector<int>& v) {
    const int top = *std::max_element(v.begin(), v.end());
    return std::make_pair(top > max_duration, std::accumulate(v.begin(), v.end(), 0));
  };
  std::stable_sort(candidates.begin(), candidates.end(), [&](const auto& x, const auto& y) { return key(x) < key(y); });
  if (candidates.size() > static_cast<size_t>(kStaggerTries)) candidates.resize(static_cast<size_t>(kStaggerTries));
  // A vector with a common divisor g acts as its quotient (detail::common_divisor) when every kernel is released at 0;
  // the quotient has the smaller total, so it was tried before and failed.
  const bool scales = std::all_of(witness.kernels.begin(), witness.kernels.end(),
                                  [](const model::Kernel& k) { return k.release == 0; });
  for (const auto& v : candidates) {
    if (scales && detail::common_divisor(v) > 1) continue;
    model::Scenario s = witness;
    for (size_t k = 0; k < nk; ++k) s.kernels[k].duration = v[k];
    if (!separates_robustly(s, a, b)) continue;
    r.scenario = std::move(s);
    r.ties = WitnessTies::Staggered;
    r.beyond_max_duration = *std::max_element(v.begin(), v.end()) > max_duration;
    return r;
  }
  r.orders = every_order_separates(witness, a, b);
  r.ties = r.orders.result == OrderSeparation::Separated ? WitnessTies::EveryOrder : WitnessTies::Dependent;
  return r;
}

model::json tied_retirements_json(const model::Scenario& witness, const model::Hypothesis& a, const model::Hypothesis& b,
                                  WitnessTies ties, bool beyond_max_duration, const OrderCheck& orders) {
  model::json j = {{"witness", to_string(ties)}, {"check", tie_robust(witness, {a, b}).to_json()}};
  if (beyond_max_duration) j["beyond_max_duration"] = true;
  if (ties == WitnessTies::EveryOrder || ties == WitnessTies::Dependent)
    j["every_order"] = orders.to_json();
  if (ties == WitnessTies::EveryOrder) {    // What a recording must be judged with for the proof to apply: retirements whose recorded ends are
    // less than a tick apart searched (trace timing), the tick the check assumed (equal ends).
    j["judge"] = {{"timing", to_string(model::Timing::Trace)}, {"resolution", model::Resolution{1, 0}.to_json()}};
  }
  return j;
}

std::vector<TieSubject> tie_subjects(const std::string& path, const std::vector<std::string>& hypothesis_dirs) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  if (fs::is_directory(path)) {
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  std::vector<TieSubject> out;
  for (const auto& f : files) {
    const model::json j = model::read_json_file(f);
    if (!j.is_object() || !j.contains("predictions")) continue;
    TieSubject t;
    t.scenario = model::case_from_json(j, f).scenario;
    t.id = j.value("id", f);
    for (const auto& [name, unused] : j.at("predictions").items()) {
      (void)unused;
      if (const auto* h = model::find_builtin_hypothesis(name)) {
        t.hypotheses.push_back(*h);
        continue;
      }
      bool found = false;
      for (const auto& dir : hypothesis_dirs) {
        const fs::path p = fs::path(dir) / (name + ".json");
        if (!fs::exists(p)) continue;
        t.hypotheses.push_back(model::load_hypothesis_file(p.string()));
        found = true;
        break;
      }
      if (!found)
        throw model::InputError(f, "predictions",
                                fmt::format("hypothesis '{}' is neither shipped nor a file <name>.json in {}", name,
                                            hypothesis_dirs.empty() ? std::string("(no folder given)")
                                                                    : fmt::format("{}", fmt::join(hypothesis_dirs, ", "))));
    }
    out.push_back(std::move(t));
  }
  return out;
}

TieCount count_tie_dependent(const std::vector<TieSubject>& subjects) {
  TieCount c;
  for (const auto& t : subjects) {
    ++c.cases;
    if (t.hypotheses.size() == 2 && t.hypotheses[0].retirement != t.hypotheses[1].retirement) {
      ++c.compared;
      continue;
    }
    const TieCheck r = tie_robust(t.scenario, t.hypotheses);
    switch (r.effect) {
      case TieEffect::None: break;
      case TieEffect::StartsMove: ++c.starts_move; break;
      case TieEffect::SmsMove: {
        ++c.sms_move;
        const OrderCheck o = t.hypotheses.size() == 2 ? every_order_separates(t.scenario, t.hypotheses[0], t.hypotheses[1])
                                                      : OrderCheck{OrderSeparation::Unknown, "not a pair", 0};
        if (o.result == OrderSeparation::Separated) {
          ++c.every_order;
        } else {
          c.dependent.push_back(fmt::format("{}: {}: {}; every order: {}: {}", t.id, r.hypothesis, r.detail,
                                            to_string(o.result), o.detail));
        }
        break;
      }
    }
  }
  return c;
}

}  // namespace tbcheck::search
