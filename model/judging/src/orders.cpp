// Judging a recording over the orders it did not observe: launches within its launch window and, under
// trace-driven timing, retirements within one timer tick. Enumeration with pruning (docs/recordings.md).
#include <algorithm>
#include <climits>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/simulator.hpp"
#include "order_steps.hpp"

namespace tbcheck::model {
namespace {

// Every linear extension of "a must precede b" over items 0..n-1, the identity first, each passed to f, where f
// settles whole prefixes: f returns how many leading positions of its order decided its outcome (every
// extension of that prefix is skipped), or -1 to stop (then false is returned).
bool for_each_extension_settled(int n, const std::function<bool(int, int)>& must_precede,
                                const std::function<int(const std::vector<int>&)>& f) {
  std::vector<int> order;
  std::vector<char> used(static_cast<size_t>(n), 0);
  // The length of the prefix whose extensions are all settled, or -1.
  std::function<int()> rec = [&]() -> int {
    const int depth = static_cast<int>(order.size());
    if (depth == n) return f(order);
    for (int i = 0; i < n; ++i) {
      if (used[static_cast<size_t>(i)]) continue;
      bool free = true;
      for (int p = 0; p < n && free; ++p) free = used[static_cast<size_t>(p)] || p == i || !must_precede(p, i);
      if (!free) continue;
      used[static_cast<size_t>(i)] = 1;
      order.push_back(i);
      const int settled = rec();
      order.pop_back();
      used[static_cast<size_t>(i)] = 0;
      if (settled < 0 || settled <= depth) return settled;
    }
    return depth;
  };
  return rec() >= 0;
}

// Every extension, each passed to f until f returns false (then false is returned).
bool for_each_extension(int n, const std::function<bool(int, int)>& must_precede,
                        const std::function<bool(const std::vector<int>&)>& f) {
  return for_each_extension_settled(n, must_precede, [&](const std::vector<int>& order) { return f(order) ? n : -1; });
}

bool is_identity(const std::vector<int>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i)) return false;
  return true;
}

using detail::TieGroup;

// Simulations the whole-simulation enumeration is given before the stepwise search takes over the exact level
// under trace timing: the smallest searches keep the enumeration's words, and a failing one its closest order.
constexpr int64_t kQuickSimulations = 8;

// One judgement of one simulated order.
struct Judged {
  Check check;
  int64_t t_star = INT64_MAX;  // model instant from which the first difference is decided (pruning)
  int64_t score = 0;           // blocks on their recorded SM: "closest" among failing orders
};

class OrderSearch {
 public:
  // One admissible order: the launch order (case list indices) and each tie group's chosen retirements.
  struct Order {
    std::vector<int> launch;
    std::vector<std::vector<int>> choice;
  };

  OrderSearch(const Case& c, const Hypothesis& h, const JudgeOptions& o, Timing t)
      : c_(c), h_(h), o_(*c.observation), max_(o.max_orders), tie_search_(o.tie_search), wording_(o.wording), timing_(t) {
    const Scenario& s = c.scenario;
    tick_ = o_.resolution ? o_.resolution->tick : 1;
    const int64_t window = o_.resolution ? o_.resolution->launch_window : 0;
    auto launch = [&](size_t k) {
      auto it = o_.launch_of_kernel.find(s.kernels[k].name);
      return it != o_.launch_of_kernel.end() ? it->second : s.kernels[k].release;
    };
    const size_t nk = s.kernels.size();
    before_.assign(nk, std::vector<char>(nk, 0));
    for (size_t i = 0; i < nk; ++i)
      for (size_t j = i + 1; j < nk; ++j) {
        const bool same_stream = s.kernels[i].stream && s.kernels[i].stream == s.kernels[j].stream;
        before_[i][j] = same_stream || std::abs(launch(j) - launch(i)) > window;
      }
    if (timing_ == Timing::Trace) {
      build_tie_groups();
      skew_ = dispatch_skew(o_, s, tick_);
    }
  }

  const std::optional<FeasibilityCheck>& refusal() const { return refusal_; }
  const DispatchSkew& skew() const { return skew_; }

  // The order the last run passed under, else the closest it simulated (none before a simulation).
  std::optional<Order> closest() const {
    if (passed_) return pass_state_;
    if (best_.score >= 0) return best_state_;
    return std::nullopt;
  }

  // The verdict at l over every admissible order, and the order it names. A `first` order (another
  // level's closest) is simulated before the enumeration: where it reproduces the recording at l the
  // search ends there; otherwise every admissible order is still tried.
  std::pair<Check, std::string> run(Level l, int64_t& sims, const std::optional<Order>& first = std::nullopt) {
    if (tie_search_ == TieSearch::Enumerate || timing_ != Timing::Trace || l != Level::Exact || first ||
        max_ <= kQuickSimulations)
      return enumerate(l, sims, first, max_);
    if (wording_ == Wording::Words) {
      auto quick = enumerate(l, sims, first, kQuickSimulations);
      if (passed_ || !stopped_ || refusal_) return quick;
    } else {
      reset(l, max_);
    }
    // The enumeration's bound came first: the stepwise search decides, from the first retirement on.
    const detail::StepResult step = stepwise();
    switch (step.outcome) {
      case detail::StepOutcome::Reproduced: {
        reset(l, 1);  // the one confirming simulation
        visit_order({launch_, step.choice});
        sims += 1;
        if (!passed_)
          throw std::logic_error(fmt::format("{} on case {}: the stepwise order search reproduced the recording under "
                                             "an order the simulation does not pass ({}: {})",
                                             h_.name, c_.id, best_order_, best_.check.detail));
        return {pass_, pass_order_};
      }
      case detail::StepOutcome::NoOrder: {
        Check out = best_.check;
        out.verdict = Verdict::Fail;
        out.detail = best_.score < 0
                         ? fmt::format("under every admissible order (searched retirement by retirement in {} step(s))",
                                       step.steps)
                         : fmt::format("under every admissible order (searched retirement by retirement in {} step(s), "
                                       "after {} simulation(s)); closest simulated ({} blocks on their recorded SM, {}): {}",
                                       step.steps, sims_, best_.score,
                                       best_order_.empty() ? "the listed order" : best_order_, best_.check.detail);
        return {out, best_order_};
      }
      case detail::StepOutcome::BoundReached:
      case detail::StepOutcome::NotApplicable: break;
    }
    return enumerate(l, sims, first, max_);
  }

 private:
  // Every launch order's tie orders, stepwise (order_steps.hpp), within the enumeration's bound in steps: one
  // simulation takes about a step per block. On Reproduced launch_ holds the launch order.
  detail::StepResult stepwise() {
    detail::StepResult out;
    out.outcome = detail::StepOutcome::NoOrder;
    const int64_t budget = max_ * (static_cast<int64_t>(c_.scenario.total_blocks()) + 1);
    for_each_launch_order([&] {
      arrange_launches();
      detail::StepProblem p;
      p.arranged = &scen_;
      p.h = &h_;
      p.o = &o_;
      p.case_index = case_index_;
      p.groups = &groups_;
      p.by_start = &by_start_;
      p.scale = scale_;
      p.tick = tick_;
      p.cross_gap = std::max(tick_, skew_.units + 1);
      detail::StepResult r = detail::search_orders_stepwise(p, budget - out.steps);
      r.steps += out.steps;
      if (r.outcome != detail::StepOutcome::NoOrder) {
        out = std::move(r);
        return false;
      }
      out.steps = r.steps;
      return true;
    });
    return out;
  }

  // Each launch order the recording admits (kernels launched further apart than its window keep their order) in
  // launch_, until `visit` returns false.
  void for_each_launch_order(const std::function<bool()>& visit) {
    const int nk = static_cast<int>(c_.scenario.kernels.size());
    for_each_extension(nk, [&](int a, int b) { return a < b && before_[static_cast<size_t>(a)][static_cast<size_t>(b)]; },
                       [&](const std::vector<int>& perm) {
                         launch_ = perm;
                         return visit();
                       });
  }

  // A fresh search at l within `bound` simulations: nothing simulated, passed or closest yet.
  void reset(Level l, int64_t bound) {
    bound_ = bound;
    level_ = l;
    sims_ = 0;
    best_ = {};
    best_.score = -1;
    best_order_.clear();
    passed_ = stopped_ = pruned_ = false;
  }

  std::pair<Check, std::string> enumerate(Level l, int64_t& sims, const std::optional<Order>& first, int64_t bound) {
    reset(l, bound);
    if (first) visit_order(*first);
    if (!passed_ && !stopped_)
      for_each_launch_order([&] {
        visit_launch_order();
        return !passed_ && !stopped_;
      });
    sims += sims_;
    if (passed_) return {pass_, pass_order_};
    Check out = best_.check;
    if (stopped_) {
      out.verdict = Verdict::Unknown;
      out.detail = fmt::format("bound reached: {} simulation(s) over the admissible orders (--max-orders {}) and none "
                               "reproduces the recording; closest ({} blocks on their recorded SM): {}",
                               sims_, bound_, best_.score, best_.check.detail);
      return {out, best_order_};
    }
    if (sims_ > 1 || pruned_)
      out.detail = fmt::format("under every admissible order ({} simulated{}); closest ({} blocks on their recorded SM, "
                               "{}): {}",
                               sims_, pruned_ ? ", the others pruned: they keep that first difference" : "", best_.score,
                               best_order_.empty() ? "the listed order" : best_order_, best_.check.detail);
    return {out, best_order_};
  }

 private:
  void build_tie_groups() {
    const Scenario& s = c_.scenario;
    struct E {
      int64_t end;
      int k, b;
    };
    std::vector<E> all;
    for (size_t k = 0; k < s.kernels.size(); ++k) {
      const auto& ends = o_.end_of_block.at(s.kernels[k].name);
      for (size_t b = 0; b < ends.size(); ++b) all.push_back({ends[b], static_cast<int>(k), static_cast<int>(b)});
    }
    std::sort(all.begin(), all.end(), [](const E& a, const E& b) { return std::tie(a.end, a.k, a.b) < std::tie(b.end, b.k, b.b); });
    for (const E& x : all) ends_.push_back({x.end, x.k, x.b});
    group_of_.assign(s.kernels.size(), {});
    for (size_t k = 0; k < s.kernels.size(); ++k) group_of_[k].assign(static_cast<size_t>(s.kernels[k].blocks), {-1, 0});
    for (size_t i = 0; i < all.size();) {
      size_t e = i + 1;
      while (e < all.size() && all[e].end - all[e - 1].end < tick_) ++e;
      if (e - i > 1) {
        TieGroup g;
        for (size_t x = i; x < e; ++x) {
          group_of_[static_cast<size_t>(all[x].k)][static_cast<size_t>(all[x].b)] = {static_cast<int>(groups_.size()),
                                                                                     static_cast<int>(x - i)};
          g.members.emplace_back(all[x].k, all[x].b);
          g.ends.push_back(all[x].end);
        }
        groups_.push_back(std::move(g));
      }
      i = e;
    }
    scale_ = 2;
    for (const auto& g : groups_) scale_ = std::max<int64_t>(scale_, static_cast<int64_t>(g.members.size()) + 1);
    choice_.resize(groups_.size());
    rank_.resize(groups_.size());
    // Equal recorded ends default to the model's own reading (they retire together, then dispatch);
    // ends that differ within a tick default to their recorded order.
    for (const auto& g : groups_)
      default_.push_back(g.ends.front() == g.ends.back() ? std::vector<int>{} : identity(g.members.size()));
    for (size_t g = 0; g < groups_.size(); ++g) set_choice(g, default_[g]);
    // The start-order reading of equal ends: one at a time in the order the blocks started (then case
    // order, the order the dispatcher serves blocks of one instant in).
    for (const auto& g : groups_) {
      std::vector<int> order = identity(g.members.size());
      auto start = [&](int m) {
        const auto [k, b] = g.members[static_cast<size_t>(m)];
        return std::make_tuple(o_.start_of_block.at(s.kernels[static_cast<size_t>(k)].name)[static_cast<size_t>(b)], k, b);
      };
      std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return start(x) < start(y); });
      by_start_.push_back(g.ends.front() == g.ends.back() ? order : std::vector<int>{});
    }
  }

  // Every group of equal ends retired one at a time in start order: the simulator's other reading, tried
  // right after its own so that a start-order recording is not searched for among every combination.
  void visit_start_order() {
    bool differs = false;
    for (size_t g = 0; g < groups_.size(); ++g)
      if (!by_start_[g].empty() && by_start_[g] != default_[g]) {
        set_choice(g, by_start_[g]);
        differs = true;
      }
    if (differs && budget()) {
      if (std::optional<Schedule> sch = simulate_trace()) consider(judge(*sch));
    }
    for (size_t g = 0; g < groups_.size(); ++g) set_choice(g, default_[g]);
  }

  static std::vector<int> identity(size_t n) {
    std::vector<int> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = static_cast<int>(i);
    return p;
  }

  // An empty order: the group retires together at its (equal) recorded end.
  void set_choice(size_t g, const std::vector<int>& order) {
    choice_[g] = order;
    rank_[g].assign(groups_[g].members.size(), 0);
    for (size_t p = 0; p < order.size(); ++p) rank_[g][static_cast<size_t>(order[p])] = static_cast<int>(p);
  }

  // One given order alone, then the defaults back.
  void visit_order(const Order& order) {
    launch_ = order.launch;
    arrange_launches();
    for (size_t g = 0; g < groups_.size() && g < order.choice.size(); ++g) set_choice(g, order.choice[g]);
    if (budget()) {
      std::optional<Schedule> sch = timing_ == Timing::Model ? simulate_model() : simulate_trace();
      if (sch) consider(judge(*sch));
    }
    for (size_t g = 0; g < groups_.size(); ++g) set_choice(g, default_[g]);
  }

  void visit_launch_order() {
    arrange_launches();
    if (!budget()) return;
    std::optional<Schedule> sch = timing_ == Timing::Model ? simulate_model() : simulate_trace();
    if (!sch) return;
    Judged j = judge(*sch);
    consider(j);
    if (timing_ == Timing::Trace && !passed_ && !stopped_) visit_start_order();
    if (timing_ == Timing::Trace && !passed_ && !stopped_) descend(0, j);
  }

  // The scenario in the chosen launch order. Release times are handed out in ascending order, so the list
  // stays in launch order; kernels released at one instant (the usual race) keep theirs.
  void arrange_launches() {
    const Scenario& s = c_.scenario;
    scen_ = s;
    std::vector<int64_t> releases;
    for (const auto& k : s.kernels) releases.push_back(k.release);
    std::sort(releases.begin(), releases.end());
    case_index_.assign(s.kernels.size(), 0);
    for (size_t i = 0; i < launch_.size(); ++i) {
      scen_.kernels[i] = s.kernels[static_cast<size_t>(launch_[i])];
      scen_.kernels[i].release = releases[i] * (timing_ == Timing::Trace ? scale_ : 1);
      case_index_[i] = launch_[i];
    }
  }

  bool budget() {
    if (sims_ >= bound_) {
      stopped_ = true;
      return false;
    }
    ++sims_;
    return true;
  }

  // A refusal of a reordered scenario (the listed order ran) ends the search with it as the reason.
  std::optional<Schedule> refused(FeasibilityCheck why) {
    refusal_ = std::move(why);
    stopped_ = true;
    return std::nullopt;
  }

  std::optional<Schedule> simulate_model() {
    FeasibilityCheck why;
    std::optional<Schedule> sch = try_simulate(scen_, h_, &why);
    return sch ? sch : refused(std::move(why));
  }

  std::optional<Schedule> simulate_trace() {
    EndTimeSource ends = [&](int kp, int b, int64_t) -> int64_t {
      const size_t k = static_cast<size_t>(case_index_[static_cast<size_t>(kp)]);
      const auto [g, member] = group_of_[k][static_cast<size_t>(b)];
      if (g < 0) return scale_ * o_.end_of_block.at(c_.scenario.kernels[k].name)[static_cast<size_t>(b)];
      const int p = rank_[static_cast<size_t>(g)][static_cast<size_t>(member)];
      return scale_ * groups_[static_cast<size_t>(g)].ends[static_cast<size_t>(p)] + p;
    };
    FeasibilityCheck why;
    std::optional<Schedule> sch = try_simulate(scen_, h_, &why, &ends);
    return sch ? sch : refused(std::move(why));
  }

  // Depth-first over the tie groups in time order. A group that starts after the instant the first
  // difference was decided at cannot remove it, nor can any later group: the subtree is pruned.
  void descend(size_t gi, const Judged& here) {
    if (gi == groups_.size() || passed_ || stopped_) return;
    if (scale_ * groups_[gi].ends.front() > here.t_star) {
      pruned_ = true;
      return;
    }
    const TieGroup& g = groups_[gi];
    const int n = static_cast<int>(g.members.size());
    // The retirements of the group an order's first difference did not wait for: the p-th retires at
    // scale * ends[p] + p, so every order that keeps the ones before it keeps that difference.
    auto settled = [&](const Judged& j) {
      for (int p = 0; p < n; ++p)
        if (scale_ * g.ends[static_cast<size_t>(p)] + p > j.t_star) return p;
      return n;
    };
    auto option = [&](const std::vector<int>& ext) -> int {
      int keep = n;
      if (ext == default_[gi]) {
        descend(gi + 1, here);
        keep = settled(here);
      } else {
        if (!budget()) return -1;
        set_choice(gi, ext);
        std::optional<Schedule> sch = simulate_trace();
        if (!sch) return -1;
        Judged j = judge(*sch);
        consider(j);
        if (!passed_) descend(gi + 1, j);
        set_choice(gi, default_[gi]);
        keep = settled(j);
      }
      if (keep < n) pruned_ = true;
      return passed_ || stopped_ ? -1 : keep;
    };
    // Equal ends may also have retired together, or one at a time in the order they started (the two
    // readings of the retirement mechanism); then every order a tick leaves open, one at a time.
    if (g.ends.front() == g.ends.back()) {
      if (option({}) < 0) return;
      if (!is_identity(by_start_[gi]) && option(by_start_[gi]) < 0) return;
    }
    for_each_extension_settled(
        n, [&](int a, int b) { return a < b && g.ends[static_cast<size_t>(b)] - g.ends[static_cast<size_t>(a)] >= tick_; },
        option);
  }

  std::string describe_order() const {
    std::vector<std::string> parts;
    if (!is_identity(launch_)) {
      std::vector<std::string> names;
      for (int k : launch_) names.push_back(c_.scenario.kernels[static_cast<size_t>(k)].name);
      parts.push_back(fmt::format("launch order {}", fmt::join(names, ", ")));
    }
    for (size_t g = 0; g < groups_.size(); ++g) {
      if (choice_[g] == default_[g]) continue;
      std::vector<std::string> who;
      for (int m : choice_[g]) {
        const auto [k, b] = groups_[g].members[static_cast<size_t>(m)];
        who.push_back(fmt::format("{}[{}]", c_.scenario.kernels[static_cast<size_t>(k)].name, b));
      }
      parts.push_back(who.empty() ? fmt::format("retirements recorded at {}..{} together", groups_[g].ends.front(),
                                                groups_[g].ends.back())
                                  : fmt::format("retirements recorded at {}..{} in the order {}",
                                                groups_[g].ends.front(), groups_[g].ends.back(), fmt::join(who, ", ")));
    }
    return fmt::format("{}", fmt::join(parts, "; "));
  }

  void consider(const Judged& j) {
    if (j.check.verdict == Verdict::Pass) {
      passed_ = true;
      pass_ = j.check;
      pass_order_ = describe_order();
      pass_state_ = {launch_, choice_};
      return;
    }
    if (j.score > best_.score) {
      best_ = j;
      best_order_ = describe_order();
      best_state_ = {launch_, choice_};
    }
  }

  int64_t score(const Schedule& sch) const {
    int64_t n = 0;
    for (size_t kp = 0; kp < scen_.kernels.size(); ++kp) {
      auto it = o_.sm_of_block.find(scen_.kernels[kp].name);
      if (it == o_.sm_of_block.end()) continue;
      for (size_t b = 0; b < it->second.size(); ++b) n += sch.kernels[kp].blocks[b].sm == it->second[b];
    }
    return n;
  }

  Judged judge(const Schedule& sch) const {
    Judged j;
    j.score = score(sch);
    if (timing_ == Timing::Model || level_ != Level::Exact) {
      j.check = compare_recording(o_, scen_, sch, level_, tick_);
      return j;  // no pruning: t_star stays past every group
    }
    // Trace, exact: every block's SM, and the dispatch order wherever recorded starts are a tick apart.
    // Within one model instant the dispatcher serves kernels by (priority rank, launch order), each in
    // block order, so that is the order of blocks that share a predicted start.
    using Key = std::tuple<int64_t, int, size_t, int>;
    struct B {
      int64_t rec_start, pred_start;
      int rec_sm, pred_sm, case_k, b;
      size_t kp;
      Key key;
    };
    std::vector<B> bs;
    for (size_t kp = 0; kp < scen_.kernels.size(); ++kp) {
      const std::string& name = scen_.kernels[kp].name;
      const auto& sms = o_.sm_of_block.at(name);
      const auto& starts = o_.start_of_block.at(name);
      const int rank = priority_rank(scen_.kernels[kp].priority, scen_.device, h_.priority);
      for (size_t b = 0; b < sms.size(); ++b) {
        const int64_t t = sch.kernels[kp].blocks[b].start;
        bs.push_back({starts[b], t, sms[b], sch.kernels[kp].blocks[b].sm, case_index_[kp], static_cast<int>(b), kp,
                      Key{t, rank, kp, static_cast<int>(b)}});
      }
    }
    std::sort(bs.begin(), bs.end(), [](const B& x, const B& y) {
      return std::tie(x.rec_start, x.case_k, x.b) < std::tie(y.rec_start, y.case_k, y.b);
    });
    auto name_of = [&](const B& x) { return scen_.kernels[x.kp].name; };
    // The words are made only for a difference earlier than the one found so far: most blocks of a wrong order
    // differ, and this runs once per simulation of the order search.
    auto found = [&](int64_t t, const auto& detail) {
      if (t < j.t_star) {
        j.t_star = t;
        j.check = {Verdict::Fail, detail()};
      }
    };
    // Dispatch order, where the recording resolves it: starts a tick or more apart on one recorded SM,
    // or on different SMs more than the dispatch skew apart (a latency that differs between SMs lets a
    // later dispatch read the timer first there). Per pair: the latest dispatched (predicted) among the
    // blocks recorded earlier by that much, over every SM and over x's own SM.
    const int64_t cross_gap = std::max(tick_, skew_.units + 1);
    std::optional<Key> latest;  // over every SM, recorded cross_gap or more earlier
    size_t latest_i = 0, seen = 0;
    int sms = 0;
    for (const B& x : bs) sms = std::max(sms, x.rec_sm + 1);
    std::vector<std::vector<size_t>> on_sm(static_cast<size_t>(sms));  // recorded SM -> indices into bs, by recorded start
    for (size_t i = 0; i < bs.size(); ++i) on_sm[static_cast<size_t>(bs[i].rec_sm)].push_back(i);
    struct SmSweep {
      size_t seen = 0;
      std::optional<Key> latest;
      size_t latest_i = 0;
    };
    std::vector<SmSweep> sweep(static_cast<size_t>(sms));
    for (size_t i = 0; i < bs.size(); ++i) {
      const B& x = bs[i];
      if (x.pred_sm != x.rec_sm)
        found(x.pred_start, [&] { return fmt::format("{} block {}: predicted SM {}, observed SM {}", name_of(x), x.b, x.pred_sm, x.rec_sm); });
      while (seen < i && bs[seen].rec_start <= x.rec_start - cross_gap) {
        if (!latest || bs[seen].key > *latest) {
          latest = bs[seen].key;
          latest_i = seen;
        }
        ++seen;
      }
      SmSweep& own = sweep[static_cast<size_t>(x.rec_sm)];
      const std::vector<size_t>& mine = on_sm[static_cast<size_t>(x.rec_sm)];
      while (own.seen < mine.size() && mine[own.seen] < i && bs[mine[own.seen]].rec_start <= x.rec_start - tick_) {
        if (!own.latest || bs[mine[own.seen]].key > *own.latest) {
          own.latest = bs[mine[own.seen]].key;
          own.latest_i = mine[own.seen];
        }
        ++own.seen;
      }
      const bool by_sm = own.latest && x.key < *own.latest;
      if (by_sm || (latest && x.key < *latest)) {
        const B& y = bs[by_sm ? own.latest_i : latest_i];
        found(x.pred_start, [&] {
          return y.rec_sm == x.rec_sm
                     ? fmt::format("{} block {} is dispatched before {} block {}, which the recording shows starting a "
                                   "tick or more earlier on the same SM {} ({} vs {})",
                                   name_of(x), x.b, name_of(y), y.b, x.rec_sm, y.rec_start, x.rec_start)
                     : fmt::format("{} block {} is dispatched before {} block {}, which the recording shows starting "
                                   "more than the dispatch skew ({}) earlier ({} on SM {} vs {} on SM {})",
                                   name_of(x), x.b, name_of(y), y.b, skew_.describe(), y.rec_start, y.rec_sm,
                                   x.rec_start, x.rec_sm);
        });
      }
      // Not later than the hardware: a block the recording shows starting a tick or more before some
      // block's end must be dispatched before that retirement (a dispatch latency only delays the
      // recorded start, so this never holds the right rule to a start it could not see).
      auto after = std::lower_bound(ends_.begin(), ends_.end(), std::make_tuple(x.rec_start + tick_, -1, -1));
      if (after != ends_.end() && x.pred_start >= scale_ * std::get<0>(*after)) {
        const auto [e, ek, eb] = *after;
        found(scale_ * e - 1, [&] {
          return fmt::format("{} block {} is dispatched only after {} block {} retired (recorded end {}); the "
                             "recording has it starting at {}, a tick or more before",
                             name_of(x), x.b, c_.scenario.kernels[static_cast<size_t>(ek)].name, eb, e, x.rec_start);
        });
      }
    }
    return j;
  }

  const Case& c_;
  const Hypothesis& h_;
  const Observation& o_;
  int64_t max_;
  TieSearch tie_search_;
  Wording wording_;
  int64_t bound_ = 0;  // the current enumeration's bound: max_, or kQuickSimulations before the stepwise search
  Timing timing_;
  int64_t tick_ = 1;
  DispatchSkew skew_;  // under trace timing: how far apart cross-SM starts must lie to order dispatches
  Level level_ = Level::Exact;
  std::vector<std::vector<char>> before_;  // kernel i must launch before j (case list indices)
  std::vector<TieGroup> groups_;
  std::vector<std::tuple<int64_t, int, int>> ends_;  // every recorded end (value, case kernel, block), ascending
  std::vector<std::vector<std::pair<int, int>>> group_of_;  // [kernel][block] -> (group, member) or (-1, 0)
  // Per group: the chosen order of members (empty: together), member -> position, and the default.
  std::vector<std::vector<int>> choice_, rank_, default_;
  std::vector<std::vector<int>> by_start_;  // per group of equal ends: its members in start order (else empty)
  int64_t scale_ = 1;                                       // model instants per recorded unit (trace)
  std::vector<int> launch_;                                 // chosen launch order (case list indices)
  std::vector<int> case_index_;                             // scenario kernel -> case kernel
  Scenario scen_;
  int64_t sims_ = 0;
  bool passed_ = false, stopped_ = false, pruned_ = false;
  std::optional<FeasibilityCheck> refusal_;  // a reordered scenario the hypothesis cannot run
  Check pass_;
  std::string pass_order_;
  Judged best_;
  std::string best_order_;
  Order pass_state_, best_state_;  // the orders pass_ and best_ were judged under
};

}  // namespace

std::string DispatchSkew::describe() const {
  return units == 0 ? "0 units: no blocks dispatchable together started apart" : fmt::format("{} unit(s): {}", units, basis);
}

DispatchSkew dispatch_skew(const Observation& o, const Scenario& s, int64_t tick) {
  std::vector<int64_t> ends;
  for (const auto& k : s.kernels)
    if (auto it = o.end_of_block.find(k.name); it != o.end_of_block.end()) ends.insert(ends.end(), it->second.begin(), it->second.end());
  std::sort(ends.begin(), ends.end());
  // A retirement the timer orders after start a and does not order after start b (a + tick <= e,
  // e < b + tick) may be what let b in: then the two need not have been dispatchable at once.
  auto separated = [&](int64_t a, int64_t b) {
    auto it = std::lower_bound(ends.begin(), ends.end(), a + tick);
    return it != ends.end() && *it < b + tick;
  };
  DispatchSkew out;
  for (const auto& k : s.kernels) {
    auto st = o.start_of_block.find(k.name);
    auto sm = o.sm_of_block.find(k.name);
    if (st == o.start_of_block.end() || st->second.empty()) continue;
    const std::vector<int>& starts = st->second;
    std::vector<size_t> by_start(starts.size());
    for (size_t b = 0; b < by_start.size(); ++b) by_start[b] = b;
    std::stable_sort(by_start.begin(), by_start.end(), [&](size_t x, size_t y) { return starts[x] < starts[y]; });
    size_t first = 0;
    for (size_t i = 1; i <= by_start.size(); ++i) {
      if (i < by_start.size() && !separated(starts[by_start[i - 1]], starts[by_start[i]])) continue;
      const int64_t lo = starts[by_start[first]], hi = starts[by_start[i - 1]];
      if (hi - lo > out.units) {
        std::set<int> used;
        if (sm != o.sm_of_block.end())
          for (size_t x = first; x < i; ++x)
            if (by_start[x] < sm->second.size()) used.insert(sm->second[by_start[x]]);
        out.units = hi - lo;
        out.basis = fmt::format("{} blocks of {} on SM(s) {} started {}..{} with no recorded retirement between them",
                                i - first, k.name, fmt::join(used, ", "), lo, hi);
      }
      first = i;
    }
  }
  return out;
}

CaseResult evaluate(const Case& c, const Hypothesis& h, const JudgeOptions& opts) {
  CaseResult r;
  r.case_id = c.id;
  r.hypothesis = h.name;
  if (!c.observation) {
    r.reason = "the case has no observation";
    return r;
  }
  FeasibilityCheck why;
  std::optional<Schedule> simulated = try_simulate(c.scenario, h, &why);
  if (!simulated) {
    r.reason = why.reason;
    return r;
  }
  const Schedule& sch = *simulated;
  r.ran = true;
  const Observation& o = *c.observation;
  // Paper facts state what a run showed as a whole: judged on the schedule the hypothesis predicts.
  if (!o.facts.empty()) {
    r.facts = Verdict::Pass;
    for (const auto& f : o.facts) {
      r.fact_checks.push_back(check_fact(f, c.scenario, sch));
      if (r.fact_checks.back().verdict == Verdict::Fail) r.facts = Verdict::Fail;
    }
  }
  if (!o.has_recording()) return r;
  // Trace-driven timing needs every block's times, and a dispatcher that takes recorded ends.
  r.timing = opts.timing == Timing::Trace && o.has_block_times(c.scenario) && !is_fermi(h.selection)
                 ? Timing::Trace
                 : Timing::Model;
  const bool unobserved = r.timing == Timing::Trace || (o.resolution && o.resolution->launch_window > 0) ||
                          (o.resolution && o.resolution->tick > 1);
  if (!unobserved) {  // the listed order is the only admissible one: one simulation judges every level
    const int64_t tick = o.resolution ? o.resolution->tick : 1;
    r.exact = compare_recording(o, c.scenario, sch, Level::Exact, tick);
    r.counts = compare_recording(o, c.scenario, sch, Level::Counts, tick);
    r.sms = compare_recording(o, c.scenario, sch, Level::Sms, tick);
    r.orders_tried = 1;
    return r;
  }
  OrderSearch search(c, h, opts, r.timing);
  if (r.timing == Timing::Trace) r.skew = search.skew();
  // counts and sms start from the order exact came closest with: an order that puts most blocks on their
  // recorded SMs is the likeliest to reproduce the per-SM counts, and where exact failed only on the
  // dispatch order it reproduces them outright (instead of searching every order from the listed one).
  std::optional<OrderSearch::Order> closest;
  for (Level l : kAllLevels) {
    if (!judges(opts.levels, l)) continue;
    // Every block on its recorded SM under some order: the coarser levels agree under that order.
    if (l != Level::Exact && r.exact->verdict == Verdict::Pass && !o.sm_of_block.empty()) {
      r.orders[static_cast<size_t>(l)] = r.orders[static_cast<size_t>(Level::Exact)];
      (l == Level::Counts ? r.counts : r.sms) = Check{};
      continue;
    }
    auto [check, order] = search.run(l, r.orders_tried, l == Level::Exact ? std::nullopt : closest);
    if (l == Level::Exact) closest = search.closest();
    if (const auto& refusal = search.refusal()) {
      r.ran = false;
      r.reason = refusal->reason;
      return r;
    }
    r.orders[static_cast<size_t>(l)] = std::move(order);
    switch (l) {
      case Level::Exact: r.exact = std::move(check); break;
      case Level::Counts: r.counts = std::move(check); break;
      case Level::Sms: r.sms = std::move(check); break;
    }
  }
  return r;
}

}  // namespace tbcheck::model
