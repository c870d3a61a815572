// `check` (check.hpp): explain a user's hypothesis, validate it on the corpus, and separate it from each
// shipped hypothesis by the smallest corpus case that does, else by Z3 synthesis within small bounds.
#include "tbcheck/search/check.hpp"

#include <fmt/format.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/validate.hpp"

namespace tbcheck::search {
std::vector<OptionExplanation> explain(const model::Hypothesis& h) {
  std::vector<OptionExplanation> out;
  for (const auto& o : model::option_settings(h)) {
    OptionExplanation e{std::string(o.mechanism), o.value, std::string(o.row->cites), std::string(o.row->meaning)};
    // Off: a flag that is false or a threshold that is absent has no table row of its own.
    if (!o.on) e.meaning = fmt::format("not applied ({} would be: {})", o.row->value, o.row->meaning);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<std::string> option_differences(const model::Hypothesis& a, const model::Hypothesis& b) {
  std::vector<std::string> out;
  const auto sa = model::option_settings(a), sb = model::option_settings(b);
  for (size_t i = 0; i < sa.size(); ++i)
    if (sa[i].value != sb[i].value) out.push_back(fmt::format("{}: {} vs {}", sa[i].mechanism, sa[i].value, sb[i].value));
  return out;
}

std::string_view to_string(SynthesisMode m) {
  switch (m) {
    case SynthesisMode::None: return "none";
    case SynthesisMode::Unseparated: return "unseparated";
    case SynthesisMode::All: return "all";
  }
  return "?";
}

std::string_view to_string(PairVerdict v) {
  switch (v) {
    case PairVerdict::SameOptions: return "same-options";
    case PairVerdict::SeparatedByCorpus: return "separated-by-corpus";
    case PairVerdict::SeparatedBySynthesis: return "separated-by-synthesis";
    case PairVerdict::EquivalentWithinBounds: return "equivalent-within-bounds";
    case PairVerdict::Unknown: return "unknown";
    case PairVerdict::Unsupported: return "unsupported";
  }
  return "?";
}

DistinguishBounds default_check_bounds() {
  DistinguishBounds b;
  b.max_kernels = 2;
  b.max_blocks_per_kernel = 2;
  b.max_total_blocks = 3;
  b.params.max_duration = 2;
  b.timeout_ms = 5000;
  b.reduced_tpcs = {1, 2};  // 2 TPCs: on 2 SMs even-first equals natural order (docs/design.md)
  return b;
}

nlohmann::json CheckReport::to_json() const {
  nlohmann::json j;
  j["hypothesis"] = hypothesis.to_json();
  j["hypothesis_file"] = hypothesis.file;
  j["options"] = nlohmann::json::array();
  for (const auto& o : options)
    j["options"].push_back({{"mechanism", o.mechanism}, {"value", o.value}, {"cites", o.cites}, {"meaning", o.meaning}});
  j["same_options_as"] = same_as ? nlohmann::json(*same_as) : nlohmann::json();
  j["corpus"] = {{"cases", cases}, {"levels", nlohmann::json::object()}, {"timing", model::to_string(timing)},
                 {"traced_cases", traced}};
  for (const auto& t : tallies)
    j["corpus"]["levels"][std::string(model::to_string(t.level))] = {{"pass", t.pass}, {"fail", t.fail}, {"unknown", t.unknown}, {"other", t.other}};
  j["corpus"]["failures"] = nlohmann::json::array();
  for (const auto& f : failures)
    j["corpus"]["failures"].push_back({{"case", f.case_id}, {"file", f.file}, {"level", f.level}, {"detail", f.detail}});
  j["corpus"]["expectation_mismatches"] = expectation_mismatches;
  j["pairs"] = nlohmann::json::array();
  for (const auto& p : pairs) {
    nlohmann::json x = {{"other", p.other},          {"differences", p.differences}, {"verdict", to_string(p.verdict)},
                        {"witness", p.witness_case}, {"detail", p.detail}};
    if (p.synthesis) {
      x["synthesis"] = {{"outcome", to_string(p.synthesis->outcome)}, {"solver_seconds", p.synthesis->solver_seconds},
                        {"kernels", p.synthesis->kernels},            {"blocks", p.synthesis->blocks},
                        {"unknown_structures", p.synthesis->unknown_structures}};
      if (p.synthesis->witness) x["synthesis"]["case"] = p.synthesis->witness->to_json();
    }
    j["pairs"].push_back(std::move(x));
  }
  j["neighbours"] = nlohmann::json::array();
  for (const auto& n : neighbours)
    j["neighbours"].push_back({{"name", n.name}, {"differences", n.differences}, {"separating_cases", n.cases}});
  j["solver_seconds"] = solver_seconds;
  return j;
}

CheckReport check_hypothesis(const model::Hypothesis& h, const std::vector<model::Case>& corpus,
                             const std::vector<model::Hypothesis>& against, const CheckOptions& o,
                             const std::function<void(const std::string& other)>& on_pair) {
  CheckReport r;
  r.hypothesis = h;
  r.options = explain(h);
  for (const auto& b : model::builtin_hypotheses())
    if (b.same_options(h)) {
      r.same_as = b.name;
      break;
    }

  // Validation at the three levels.
  model::ValidationRun run = model::run_validation(corpus, {h}, {}, o.judging);
  r.cases = run.cases.size();
  r.timing = o.judging.timing;
  for (const auto& row : run.results) r.traced += row[0].timing == model::Timing::Trace;
  for (model::Level l : model::kAllLevels) {
    auto t = run.tally(0, l);
    r.tallies.push_back({l, t.pass, t.fail, t.unknown, t.other});
  }
  for (size_t c = 0; c < run.cases.size(); ++c) {
    const auto& res = run.results[c][0];
    for (model::Level l : model::kAllLevels)
      if (res.at(l) == model::Verdict::Fail) {
        r.failures.push_back({run.cases[c].id, run.cases[c].file, std::string(model::to_string(l)), res.first_failure(l)});
        break;
      }
  }
  for (const auto& m : run.mismatches(model::Level::Exact))
    r.expectation_mismatches.push_back(fmt::format("{}: expected {}, got {}", run.cases[m.case_index].id,
                                                   m.expected == model::Expect::Pass ? "pass" : "fail",
                                                   model::to_string(m.got)));

  // Corpus separation: the user's schedule on every case once, then each other hypothesis'.
  std::vector<std::optional<model::Schedule>> mine(corpus.size());
  for (size_t c = 0; c < corpus.size(); ++c) mine[c] = model::try_simulate(corpus[c].scenario, h);
  // The neighbours in the composition space, each with the first corpus cases that tell it apart.
  for (const auto& n : model::neighbours(h, 2)) {
    NeighbourSeparation ns{n.name, option_differences(h, n), {}};
    for (size_t c = 0; c < corpus.size() && ns.cases.size() < 3; ++c) {
      if (!mine[c]) continue;
      auto theirs = model::try_simulate(corpus[c].scenario, n);
      // A neighbour that cannot run a case the checked one runs is told apart by it.
      if (!theirs || !first_difference(*mine[c], *theirs).empty()) ns.cases.push_back(corpus[c].id);
    }
    r.neighbours.push_back(std::move(ns));
  }
  const model::Device& device = o.device;
  for (const auto& other : against) {
    if (on_pair) on_pair(other.name);
    PairCheck p;
    p.other = other.name;
    p.differences = option_differences(h, other);
    if (h.same_options(other)) {
      p.verdict = PairVerdict::SameOptions;
      p.detail = "the same option for every mechanism: the same machine";
      r.pairs.push_back(std::move(p));
      continue;
    }
    // The smallest separating corpus case (fewest blocks, then corpus order) is the witness.
    int best_blocks = -1;
    for (size_t c = 0; c < corpus.size(); ++c) {
      if (!mine[c]) continue;
      int blocks = corpus[c].scenario.total_blocks();
      if (best_blocks >= 0 && blocks >= best_blocks) continue;
      auto theirs = model::try_simulate(corpus[c].scenario, other);
      if (!theirs) continue;
      std::string d = first_difference(*mine[c], *theirs);
      if (d.empty()) continue;
      best_blocks = blocks;
      p.verdict = PairVerdict::SeparatedByCorpus;
      p.witness_case = corpus[c].id;
      p.detail = d;
    }
    const bool synthesize = o.synthesis == SynthesisMode::All ||
                            (o.synthesis == SynthesisMode::Unseparated && p.verdict != PairVerdict::SeparatedByCorpus);
    if (synthesize) {
      PairResult s = distinguish_pair(h, other, device, o.bounds);
      r.solver_seconds += s.solver_seconds;
      if (p.verdict != PairVerdict::SeparatedByCorpus) {
        switch (s.outcome) {
          case PairOutcome::Separated:
            p.verdict = PairVerdict::SeparatedBySynthesis;
            p.witness_case = s.witness ? s.witness->id : "";
            p.detail = fmt::format("{} kernels, {} blocks ({}): {}", s.kernels, s.blocks, s.route, s.first_difference);
            break;
          case PairOutcome::Inseparable:
            p.verdict = PairVerdict::EquivalentWithinBounds;
            p.detail = s.reason;
            break;
          case PairOutcome::Unknown:
            p.verdict = PairVerdict::Unknown;
            p.detail = s.reason.empty() ? fmt::format("the solver did not decide {}", fmt::join(s.unknown_structures, "; "))
                                        : s.reason;
            break;
          case PairOutcome::Unsupported:
            p.verdict = PairVerdict::Unsupported;
            p.detail = s.reason;
            break;
        }
      }
      p.synthesis = std::move(s);
    } else if (p.verdict != PairVerdict::SeparatedByCorpus) {
      p.verdict = PairVerdict::Unknown;
      p.detail = "no corpus case separates them and synthesis was not asked for";
    }
    r.pairs.push_back(std::move(p));
  }
  return r;
}

}  // namespace tbcheck::search
