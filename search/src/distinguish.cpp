// Distinguishing-scenario synthesis over structures in increasing size, with minimality proved by
// UNSAT at every smaller structure, duration minimised, and the witness re-checked by simulation.
#include "tbcheck/search/distinguish.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/simulator.hpp"

namespace tbcheck::search {

std::string_view to_string(PairOutcome o) {
  switch (o) {
    case PairOutcome::Separated: return "separated";
    case PairOutcome::Inseparable: return "inseparable within bounds";
    case PairOutcome::Unknown: return "unknown";
    case PairOutcome::Unsupported: return "unsupported";
  }
  return "?";
}

model::Device reduced_device(const model::Device& full, int tpcs) {
  model::Device d = full;
  d.sms = tpcs * full.sms_per_tpc;
  d.name = fmt::format("{}-{}tpc", full.name, tpcs);
  d.gpc_of_tpc.clear();
  return d;
}

std::string first_difference(const model::Schedule& a, const model::Schedule& b) {
  for (size_t k = 0; k < a.kernels.size() && k < b.kernels.size(); ++k)
    for (size_t i = 0; i < a.kernels[k].blocks.size(); ++i) {
      const auto& x = a.kernels[k].blocks[i];
      const auto& y = b.kernels[k].blocks[i];
      if (x.sm != y.sm || x.start != y.start)
        return fmt::format("{} block {}: {} puts it on SM {} at {}, {} on SM {} at {}", a.kernels[k].name, i, a.hypothesis,
                           x.sm, x.start, b.hypothesis, y.sm, y.start);
    }
  return "";
}

namespace {

// Structures (blocks per kernel) with `kernels` kernels and `total` blocks, each kernel <= cap.
void compositions(int kernels, int total, int cap, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (kernels == 0) {
    if (total == 0) out.push_back(cur);
    return;
  }
  for (int b = 1; b <= std::min(cap, total - (kernels - 1)); ++b) {
    cur.push_back(b);
    compositions(kernels - 1, total - b, cap, cur, out);
    cur.pop_back();
  }
}

int total_duration(const model::Scenario& s) {
  int t = 0;
  for (const auto& k : s.kernels) t += k.duration;
  return t;
}

// Replicates the scenario per TPC: every kernel's block count times `factor`.
model::Scenario lift(const model::Scenario& s, const model::Device& full, int factor) {
  model::Scenario out = s;
  out.device = full;
  out.device_builtin = true;
  for (auto& k : out.kernels) k.blocks *= factor;
  return out;
}

bool disagree(const model::Scenario& s, const model::Hypothesis& a, const model::Hypothesis& b) {
  try {
    return !first_difference(model::simulate(s, a), model::simulate(s, b)).empty();
  } catch (const model::InputError&) {
    return false;  // infeasible under one of them: not a usable witness
  }
}

}  // namespace

PairResult distinguish_pair(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& full,
                            const DistinguishBounds& b) {
  PairResult r;
  r.h1 = h1.name;
  r.h2 = h2.name;
  std::string bounds_text = fmt::format("kernels <= {}, blocks <= {} per kernel and {} in all, durations <= {}, warps <= {}",
                                        b.max_kernels, b.max_blocks_per_kernel, b.max_total_blocks, b.params.max_duration,
                                        b.params.max_warps);
  try {
    smt::check_encodable(h1);
    smt::check_encodable(h2);
  } catch (const smt::Unsupported& e) {
    r.outcome = PairOutcome::Unsupported;
    r.reason = e.what();
    return r;
  }
  if (h1.same_options(h2)) {
    // Same options, same machine: no query needed, but say so rather than "unknown".
    r.outcome = PairOutcome::Inseparable;
    r.reason = "the two hypotheses choose the same option for every mechanism";
    r.minimal_proved = true;
    return r;
  }
  for (int tpcs : b.reduced_tpcs) {
    if (tpcs > full.tpcs()) continue;
    model::Device reduced = reduced_device(full, tpcs);
    bool all_unsat = true;
    r.unknown_structures.clear();
    for (int kernels = 1; kernels <= b.max_kernels; ++kernels)
      for (int total = kernels; total <= std::min(b.max_total_blocks, kernels * b.max_blocks_per_kernel); ++total) {
        std::vector<std::vector<int>> structs;
        std::vector<int> cur;
        compositions(kernels, total, b.max_blocks_per_kernel, cur, structs);
        for (const auto& st : structs) {
          smt::QueryOptions o;
          o.bounds = b.params;
          o.timeout_ms = b.timeout_ms;
          smt::QueryResult q = smt::distinguish_structure(h1, h2, reduced, st, o);
          r.solver_seconds += q.seconds;
          std::string st_text = fmt::format("[{}] on {}", fmt::join(st, ","), reduced.name);
          if (q.outcome == smt::QueryOutcome::Unknown) {
            all_unsat = false;
            r.unknown_structures.push_back(fmt::format("{}: {}", st_text, q.reason));
            continue;
          }
          if (q.outcome != smt::QueryOutcome::Found) continue;
          // Minimise the total duration at this structure; each step is proved by the next query.
          model::Scenario best = q.scenario;
          for (int limit = total_duration(best) - 1; limit >= static_cast<int>(st.size()); limit = total_duration(best) - 1) {
            o.max_total_duration = limit;
            smt::QueryResult shorter = smt::distinguish_structure(h1, h2, reduced, st, o);
            r.solver_seconds += shorter.seconds;
            if (shorter.outcome != smt::QueryOutcome::Found) break;
            best = shorter.scenario;
          }
          // Never trust the model alone: the simulators must disagree on the reduced device ...
          if (!disagree(best, h1, h2)) {
            r.outcome = PairOutcome::Unknown;
            r.reason = fmt::format("internal: the solver's witness {} does not separate the simulators", best.to_json().dump());
            return r;
          }
          // ... and, once lifted, on the full device.
          int exact = full.tpcs() / tpcs;
          std::vector<int> factors = {exact};
          if (exact * tpcs != full.tpcs()) factors.push_back(exact + 1);
          factors.push_back(1);
          for (int f : factors) {
            model::Scenario lifted = lift(best, full, f);
            if (!disagree(lifted, h1, h2)) continue;
            model::Case c;
            c.scenario = lifted;
            c.id = fmt::format("synth-{}-{}-vs-{}", full.name, h1.name, h2.name);
            c.source = "synthesized";
            r.witness = c;
            r.route = f == 1 ? fmt::format("synthesized on {} TPC(s), disagrees unlifted on {}", tpcs, full.name)
                             : fmt::format("synthesized on {} TPC(s), lifted x{} to {}", tpcs, f, full.name);
            r.outcome = PairOutcome::Separated;
            r.kernels = static_cast<int>(lifted.kernels.size());
            r.blocks = lifted.total_blocks();
            r.total_duration = total_duration(lifted);
            r.minimal_proved = all_unsat;
            r.first_difference = first_difference(model::simulate(lifted, h1), model::simulate(lifted, h2));
            return r;
          }
          all_unsat = false;
          r.unknown_structures.push_back(fmt::format("{}: separates on the reduced device but lifting lost it", st_text));
        }
      }
    if (all_unsat) {
      r.outcome = PairOutcome::Inseparable;
      r.reason = fmt::format("no distinguishing scenario within bounds ({}) on {}", bounds_text, reduced.name);
      r.minimal_proved = true;
      // A bigger reduced device may still separate them (even-first vs natural needs 2 TPCs).
      continue;
    }
  }
  if (r.outcome == PairOutcome::Inseparable) {
    r.reason = fmt::format("no distinguishing scenario within bounds ({}) on reduced devices of {} TPC(s)", bounds_text,
                           fmt::join(b.reduced_tpcs, ", "));
    return r;
  }
  r.outcome = PairOutcome::Unknown;
  r.reason = fmt::format("Z3 could not decide {} structure(s) within {} ms each (first: {})", r.unknown_structures.size(),
                         b.timeout_ms, r.unknown_structures.empty() ? "-" : r.unknown_structures.front());
  return r;
}

model::json case_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2) {
  model::json j = r.witness->to_json();
  model::Schedule s1 = model::simulate(r.witness->scenario, h1), s2 = model::simulate(r.witness->scenario, h2);
  j["observation"] = {{"kind", "synthetic"}};
  j["notes"] = fmt::format("separates {} from {}; first difference: {}", h1.name, h2.name, r.first_difference);
  j["route"] = r.route;
  j["solver_seconds"] = r.solver_seconds;
  j["first_difference"] = r.first_difference;
  j["bounds"] = {{"max_kernels", b.max_kernels},
                 {"max_blocks_per_kernel", b.max_blocks_per_kernel},
                 {"max_total_blocks", b.max_total_blocks},
                 {"max_duration", b.params.max_duration},
                 {"max_warps", b.params.max_warps},
                 {"timeout_ms", b.timeout_ms},
                 {"minimal_proved", r.minimal_proved},
                 {"undecided_smaller_structures", r.unknown_structures}};
  j["predictions"] = {{h1.name, s1.to_json()}, {h2.name, s2.to_json()}};
  return j;
}

}  // namespace tbcheck::search
