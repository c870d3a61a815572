// Delta debugging of corpus cases (minimize.hpp): ddmin over kernels, then halving-step shrinking of
// each kernel parameter, to a fixpoint; or, against an observation, the shortest sound kernel prefix.
#include "tbcheck/search/minimize.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/search/random.hpp"

namespace tbcheck::search {

std::string_view to_string(Param p) {
  switch (p) {
    case Param::Blocks: return "blocks";
    case Param::Threads: return "threads";
    case Param::Regs: return "regs";
    case Param::Smem: return "smem";
    case Param::Duration: return "duration";
    case Param::Local: return "local";
  }
  return "?";
}

std::string_view to_string(PredicateResult r) { return r == PredicateResult::Holds ? "holds" : "broken"; }

std::string_view to_string(MinimizeOutcome o) {
  switch (o) {
    case MinimizeOutcome::Reduced: return "reduced";
    case MinimizeOutcome::AlreadyMinimal: return "already-minimal";
    case MinimizeOutcome::EvaluationCap: return "evaluation-cap";
  }
  return "?";
}

CaseSize size_of(const model::Scenario& s) {
  CaseSize z;
  z.kernels = static_cast<int>(s.kernels.size());
  for (const auto& k : s.kernels) {
    z.blocks += k.blocks;
    z.duration += k.duration;
  }
  return z;
}

namespace {

// Realizable register counts below `regs`, ascending.
std::vector<int> regs_below(const model::Device& d, int regs) {
  std::vector<int> v;
  for (int r : realizable_regs(d))
    if (r < regs) v.push_back(r);
  return v;
}

}  // namespace

int steps_down(const model::Kernel& k, const model::Device& d, Param p) {
  switch (p) {
    case Param::Blocks: return k.blocks - 1;
    case Param::Threads: return k.warps() - 1;
    case Param::Regs: return static_cast<int>(regs_below(d, k.regs).size());
    case Param::Smem: return (k.smem + 127) / 128;  // to 128 x (m - 1), ..., 0
    case Param::Duration: return k.duration - 1;
    case Param::Local: return k.local;
  }
  return 0;
}

model::Kernel lowered(const model::Kernel& k, const model::Device& d, Param p, int steps) {
  model::Kernel r = k;
  switch (p) {
    case Param::Blocks:
      r.blocks = k.blocks - steps;
      r.grid.reset();  // a 2-D grid no longer matches; the block count is what the dispatcher sees
      break;
    case Param::Threads: r.threads = model::kThreadsPerWarp * (k.warps() - steps); break;
    case Param::Regs: {
      auto below = regs_below(d, k.regs);
      r.regs = below[below.size() - static_cast<size_t>(steps)];
      break;
    }
    case Param::Smem: r.smem = 128 * ((k.smem + 127) / 128 - steps); break;
    case Param::Duration: r.duration = k.duration - steps; break;
    case Param::Local: r.local = k.local - steps; break;
  }
  return r;
}

namespace {

// The case with only the first `n` kernels, its observation restricted to facts and recorded blocks
// about them (a fact naming a dropped kernel goes, since its truth was judged with that kernel present).
model::Case prefix_case(const model::Case& c, size_t n) {
  model::Case r = c;
  r.scenario.kernels.resize(n);
  if (!r.observation) return r;
  auto kept = [&](const std::string& name) {
    int i = c.scenario.kernel_index(name);
    return i >= 0 && static_cast<size_t>(i) < n;
  };
  model::Observation& o = *r.observation;
  std::erase_if(o.sm_of_block, [&](const auto& e) { return !kept(e.first); });
  std::erase_if(o.start_of_block, [&](const auto& e) { return !kept(e.first); });
  std::erase_if(o.facts, [&](const model::Fact& f) {
    if (!kept(f.kernel)) return true;
    return std::any_of(f.kernels.begin(), f.kernels.end(), [&](const std::string& k) { return !kept(k); });
  });
  return r;
}

bool observed(const model::Case& c) {
  return c.observation && (c.observation->has_recording() || !c.observation->facts.empty());
}

// KeepFailure's verdict at a level (facts-only cases read the same at every level).
model::Verdict failure_verdict(const model::Case& c, const model::Hypothesis& h, model::Level l, std::string* witness) {
  model::CaseResult r = model::evaluate(c, h);
  model::Verdict v = r.at(l);
  if (witness) *witness = v == model::Verdict::Fail ? r.first_failure(l) : "";
  return v;
}

// The coarsest level at which the case contradicts h (nullopt: at none).
std::optional<model::Level> coarsest_failing_level(const model::Case& c, const model::Hypothesis& h) {
  for (model::Level l : {model::Level::Sms, model::Level::Counts, model::Level::Exact})
    if (failure_verdict(c, h, l, nullptr) == model::Verdict::Fail) return l;
  return std::nullopt;
}

struct Shrinker {
  const MinimizeOptions& o;
  model::Case base;  // id, source, file: the scenario is what changes
  long evaluations = 0;
  bool capped = false;

  bool holds(const model::Scenario& s) {
    if (evaluations >= o.max_evaluations) {
      capped = true;
      return false;
    }
    ++evaluations;
    model::Case c = base;
    c.scenario = s;
    return evaluate_predicate(c, o) == PredicateResult::Holds;
  }

  model::Scenario with_kernels(const model::Scenario& s, const std::vector<size_t>& keep) {
    model::Scenario r = s;
    r.kernels.clear();
    for (size_t i : keep) r.kernels.push_back(s.kernels[i]);
    return r;
  }

  // Zeller's ddmin over the kernel list: subsets, then complements, at doubling granularity. At the
  // finest granularity the complements are the single-kernel removals, so on return removing any one
  // kernel breaks the predicate.
  bool ddmin_kernels(model::Scenario& s) {
    bool changed = false;
    size_t n = 2;
    while (s.kernels.size() >= 2 && !capped) {
      const size_t len = s.kernels.size();
      n = std::min(n, len);
      std::vector<std::vector<size_t>> chunks(n);
      for (size_t i = 0; i < len; ++i) chunks[i * n / len].push_back(i);
      bool reduced = false;
      for (size_t c = 0; c < n && !reduced; ++c) {
        auto cand = with_kernels(s, chunks[c]);
        if (holds(cand)) {
          s = cand;
          n = 2;
          reduced = true;
        }
      }
      // With two chunks the complements are the chunks themselves, already tried.
      for (size_t c = 0; c < n && !reduced && n > 2; ++c) {
        std::vector<size_t> keep;
        for (size_t i = 0; i < len; ++i)
          if (i * n / len != c) keep.push_back(i);
        auto cand = with_kernels(s, keep);
        if (holds(cand)) {
          s = cand;
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
        }
      }
      if (reduced) {
        changed = true;
        continue;
      }
      if (n >= len) break;
      n = std::min(n * 2, len);
    }
    return changed;
  }

  // Lowers one parameter of kernel i by the largest halving step that keeps the predicate, down to
  // single steps; on return a one-step lowering breaks it.
  bool shrink(model::Scenario& s, size_t i, Param p) {
    bool changed = false;
    for (int d = steps_down(s.kernels[i], s.device, p); d >= 1 && !capped; d /= 2) {
      while (!capped && d <= steps_down(s.kernels[i], s.device, p)) {
        model::Scenario cand = s;
        cand.kernels[i] = lowered(s.kernels[i], s.device, p, d);
        if (!holds(cand)) break;
        s = std::move(cand);
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

PredicateResult evaluate_predicate(const model::Case& c, const MinimizeOptions& o, std::string* witness) {
  if (o.goal == MinimizeGoal::KeepDisagreement) {
    auto a = model::try_simulate(c.scenario, o.hypotheses.at(0));
    auto b = a ? model::try_simulate(c.scenario, o.hypotheses.at(1)) : std::nullopt;
    if (!a || !b) return PredicateResult::Broken;  // a scenario one of them cannot run separates nothing
    std::string d = first_difference(*a, *b);
    if (witness) *witness = d;
    return d.empty() ? PredicateResult::Broken : PredicateResult::Holds;
  }
  model::Level l = o.level.value_or(model::Level::Exact);
  return failure_verdict(c, o.hypotheses.at(0), l, witness) == model::Verdict::Fail ? PredicateResult::Holds
                                                                                     : PredicateResult::Broken;
}

MinimizeResult minimize(const model::Case& c, const MinimizeOptions& opts) {
  MinimizeOptions o = opts;
  const std::string where = c.file.empty() ? c.id : c.file;
  MinimizeResult r;
  r.before = size_of(c.scenario);
  if (o.goal == MinimizeGoal::KeepDisagreement) {
    if (o.hypotheses.size() != 2)
      throw model::InputError(where, "--keep-disagreement",
                              fmt::format("expected two hypotheses, got {}", o.hypotheses.size()));
    if (evaluate_predicate(c, o, &r.witness) != PredicateResult::Holds)
      throw model::InputError(where, "--keep-disagreement",
                              fmt::format("{} and {} agree on every block of the case (or one cannot run it): nothing to "
                                          "keep",
                                          o.hypotheses[0].name, o.hypotheses[1].name));
    Shrinker sh{o, c};
    model::Scenario s = c.scenario;
    for (bool changed = true; changed && !sh.capped;) {
      changed = sh.ddmin_kernels(s);
      for (size_t i = 0; i < s.kernels.size(); ++i)
        for (Param p : kAllParams) changed = sh.shrink(s, i, p) || changed;
    }
    r.evaluations = sh.evaluations;
    r.result = c;
    r.result.scenario = s;
    r.result.observation.reset();
    r.result.expect.clear();
    r.result.id = c.id.empty() ? "minimized" : c.id + "-min";
    r.result.source = fmt::format("tbcheck minimize {} --keep-disagreement {},{}", where, o.hypotheses[0].name,
                                  o.hypotheses[1].name);
    r.scope = "kernels removed (ddmin) and blocks, threads, regs, smem, duration, local lowered";
    evaluate_predicate(r.result, o, &r.witness);
    r.result.notes = fmt::format("minimized from {} ({} kernels, {} blocks); first difference: {}", where,
                                 r.before.kernels, r.before.blocks, r.witness);
    r.after = size_of(s);
    r.outcome = sh.capped ? MinimizeOutcome::EvaluationCap
                          : r.after.kernels == r.before.kernels && r.after.blocks == r.before.blocks &&
                                    r.result.scenario.to_json() == c.scenario.to_json()
                                ? MinimizeOutcome::AlreadyMinimal
                                : MinimizeOutcome::Reduced;
    return r;
  }

  // KeepFailure.
  if (o.hypotheses.size() != 1)
    throw model::InputError(where, "--keep-failure", fmt::format("expected one hypothesis, got {}", o.hypotheses.size()));
  if (!observed(c))
    throw model::InputError(where, "observation",
                            "the case records no facts and no schedule, so no prediction can contradict it "
                            "(use --keep-disagreement to compare two hypotheses)");
  const model::Hypothesis& h = o.hypotheses[0];
  if (!o.level) {
    o.level = coarsest_failing_level(c, h);
    if (!o.level)
      throw model::InputError(where, "--keep-failure",
                              fmt::format("the observation does not contradict {} at any level: nothing to keep", h.name));
  } else if (evaluate_predicate(c, o) != PredicateResult::Holds) {
    throw model::InputError(where, "--keep-failure",
                            fmt::format("the observation does not contradict {} at level {}: nothing to keep", h.name,
                                        model::to_string(*o.level)));
  }
  if (c.observation->has_recording()) r.level = o.level;  // facts read the same at every level
  // Kernels sharing a stream may be dispatched out of list order, so no list prefix is sound then.
  std::vector<int> streams;
  for (const auto& k : c.scenario.kernels)
    if (k.stream) streams.push_back(*k.stream);
  std::sort(streams.begin(), streams.end());
  const bool shared_streams = std::adjacent_find(streams.begin(), streams.end()) != streams.end();
  size_t n = c.scenario.kernels.size();
  long evaluations = 1;
  if (!shared_streams) {
    // The predicate grows with the prefix (more kernels keep more facts and recorded blocks, and the
    // prefix's predictions do not change), so the shortest prefix is found by bisection; the final
    // one-kernel check keeps the result 1-minimal even if it did not.
    size_t lo = 1, hi = n;  // hi holds
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      ++evaluations;
      if (evaluate_predicate(prefix_case(c, mid), o) == PredicateResult::Holds) hi = mid;
      else lo = mid + 1;
    }
    n = hi;
    while (n > 1 && (++evaluations, evaluate_predicate(prefix_case(c, n - 1), o) == PredicateResult::Holds)) --n;
    r.scope = "kernels dropped from the end of the launch order, with the facts and recorded blocks about them; "
              "blocks and parameters of the kept kernels are as observed";
  } else {
    r.scope = "none: kernels share streams, so the launch order is not the dispatch order and no prefix is sound";
  }
  r.evaluations = evaluations;
  r.result = prefix_case(c, n);
  r.result.expect.clear();
  r.result.id = c.id.empty() ? "minimized" : c.id + "-min";
  r.result.source = c.source;
  evaluate_predicate(r.result, o, &r.witness);
  r.result.notes = fmt::format("{}the first {} of the {} kernels of {}: {} still contradicts the observation ({}{})",
                               c.notes.empty() ? "" : c.notes + "; minimized to ", n, c.scenario.kernels.size(), where,
                               h.name, r.witness,
                               c.observation->has_recording() ? fmt::format(", level {}", model::to_string(*o.level)) : "");
  r.after = size_of(r.result.scenario);
  r.outcome = n == c.scenario.kernels.size() ? MinimizeOutcome::AlreadyMinimal : MinimizeOutcome::Reduced;
  return r;
}

}  // namespace tbcheck::search
