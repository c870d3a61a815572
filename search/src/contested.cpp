// Contested predictions: survivors of the device's (or architecture's) evidence, the blocks
// on which their schedules of a scenario part, and a distinguish witness that would settle them.
#include "tbcheck/search/contested.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search {

std::string_view to_string(EvidenceScope s) {
  switch (s) {
    case EvidenceScope::Device: return "device";
    case EvidenceScope::Architecture: return "architecture";
    case EvidenceScope::None: return "none";
  }
  return "?";
}

std::string_view to_string(SettleBy s) {
  switch (s) {
    case SettleBy::Witness: return "distinguish-witness";
    case SettleBy::Scenario: return "this-scenario";
  }
  return "?";
}

namespace {

// Hardware recordings and paper facts are evidence; a synthetic observation is some hypothesis' own
// prediction (corpus/predictions, corpus/synth) and would only confirm it.
bool is_evidence(const model::Case& c) {
  return c.observation && c.observation->kind != model::ObservationKind::Synthetic;
}

}  // namespace

Judgement judge(const model::Device& d, const std::vector<model::Hypothesis>& candidates,
                const std::vector<model::Case>& evidence, const model::JudgeOptions& judging) {
  Judgement j;
  j.device = d.name;
  j.architecture = d.architecture();
  std::vector<const model::Case*> own, arch;
  for (const auto& c : evidence) {
    if (!is_evidence(c)) continue;
    if (c.scenario.device.name == d.name) own.push_back(&c);
    else if (c.scenario.device.architecture() == j.architecture) arch.push_back(&c);
  }
  const auto& used = own.empty() ? arch : own;
  j.scope = !own.empty() ? EvidenceScope::Device : !arch.empty() ? EvidenceScope::Architecture : EvidenceScope::None;
  j.evidence_cases = used.size();
  std::set<std::string> devices;
  for (const auto* c : used) devices.insert(c->scenario.device.name);
  j.evidence_devices.assign(devices.begin(), devices.end());

  // verdict[c][h]; a case no candidate passes is an open question, not a reason to drop anyone.
  std::vector<std::vector<model::CaseResult>> results(used.size());
  std::vector<bool> open(used.size(), true);
  for (size_t c = 0; c < used.size(); ++c) {
    for (const auto& h : candidates) {
      results[c].push_back(model::evaluate(*used[c], h, judging));
      if (results[c].back().at(model::Level::Exact) == model::Verdict::Pass) open[c] = false;
    }
    if (open[c]) j.open_cases.push_back(used[c]->id);
  }
  for (size_t h = 0; h < candidates.size(); ++h) {
    std::optional<Elimination> out;
    for (size_t c = 0; c < used.size() && !out; ++c)
      if (!open[c] && results[c][h].at(model::Level::Exact) == model::Verdict::Fail)
        out = Elimination{candidates[h].name, used[c]->id, results[c][h].first_failure(model::Level::Exact)};
    if (out) j.eliminated.push_back(std::move(*out));
    else j.survivors.push_back(candidates[h].name);
  }
  return j;
}

ContestReport contest(const model::Scenario& sc, const std::vector<model::Hypothesis>& candidates,
                      const std::vector<model::Case>& evidence, const ContestOptions& o) {
  return contest(sc, candidates, judge(sc.device, candidates, evidence, o.judging), o);
}

ContestReport contest(const model::Scenario& sc, const std::vector<model::Hypothesis>& candidates, const Judgement& j,
                      const ContestOptions& o) {
  ContestReport r;
  r.device = j.device;
  r.architecture = j.architecture;
  r.scope = j.scope;
  r.evidence_devices = j.evidence_devices;
  r.evidence_cases = j.evidence_cases;
  r.open_cases = j.open_cases;
  r.eliminated = j.eliminated;

  // The survivors' schedules; one that cannot run the scenario takes no side.
  std::vector<const model::Hypothesis*> hs;
  std::vector<model::Schedule> schedules;
  for (const auto& h : candidates) {
    if (std::find(j.survivors.begin(), j.survivors.end(), h.name) == j.survivors.end()) continue;
    model::FeasibilityCheck why;
    std::optional<model::Schedule> simulated = model::try_simulate(sc, h, &why);
    if (!simulated) {
      r.not_run.push_back(fmt::format("{}: {}", h.name, why.message("scenario")));
      continue;
    }
    schedules.push_back(std::move(*simulated));
    hs.push_back(&h);
    r.candidates.push_back(h.name);
    r.survivors.push_back(h.name);
  }
  for (const auto& h : candidates)
    if (std::find(r.survivors.begin(), r.survivors.end(), h.name) == r.survivors.end() &&
        std::none_of(r.not_run.begin(), r.not_run.end(), [&](const std::string& s) { return s.rfind(h.name + ":", 0) == 0; }))
      r.candidates.push_back(h.name);

  // Groups of identical schedules (SM and start of every block), largest first, ties in candidate order.
  std::vector<int> group_of(hs.size(), -1);
  std::vector<std::vector<size_t>> members;
  for (size_t i = 0; i < hs.size(); ++i) {
    for (size_t g = 0; g < members.size() && group_of[i] < 0; ++g)
      if (schedules[members[g][0]].to_json()["kernels"] == schedules[i].to_json()["kernels"]) {
        members[g].push_back(i);
        group_of[i] = static_cast<int>(g);
      }
    if (group_of[i] < 0) {
      group_of[i] = static_cast<int>(members.size());
      members.push_back({i});
    }
  }
  std::stable_sort(members.begin(), members.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  for (const auto& m : members) {
    std::vector<std::string> names;
    for (size_t i : m) names.push_back(hs[i]->name);
    r.groups.push_back(std::move(names));
  }

  for (const auto& kernel : sc.kernels) r.blocks += static_cast<size_t>(kernel.blocks);
  // Fewer than two schedules contest nothing: every block is settled without walking them (a case of
  // 2^25 blocks that no survivor runs took seconds here).
  if (hs.size() < 2) r.settled_blocks = r.blocks;
  for (size_t k = 0; hs.size() >= 2 && k < sc.kernels.size(); ++k)
    for (size_t b = 0; b < static_cast<size_t>(sc.kernels[k].blocks); ++b) {
      std::map<std::pair<int, int64_t>, std::vector<std::string>> sides;
      for (size_t i = 0; i < hs.size(); ++i) {
        const auto& p = schedules[i].kernels[k].blocks[b];
        sides[{p.sm, p.start}].push_back(hs[i]->name);
      }
      if (sides.size() <= 1) {
        ++r.settled_blocks;
        continue;
      }
      ContestedBlock cb{sc.kernels[k].name, static_cast<int>(b), {}};
      for (auto& [where, names] : sides) cb.sides.push_back({where.first, where.second, std::move(names)});
      r.contested.push_back(std::move(cb));
    }

  // The first group against each other: the scenario itself separates them; distinguish may find a
  // smaller case (only the simulator search applies where pairs look ahead at the grid size).
  for (size_t g = 1; g < members.size(); ++g) {
    SettlingCase s;
    const model::Hypothesis& a = *hs[members[0][0]];
    const model::Hypothesis& b = *hs[members[g][0]];
    s.h1 = a.name;
    s.h2 = b.name;
    if (o.synthesize) {
      DistinguishBounds bounds;
      bounds.timeout_ms = o.query_timeout_ms;
      bounds.pair_budget_ms = o.pair_budget_ms;
      bounds.lemma_timeout_ms = 0;  // minimality is not the point here
      PairResult p = distinguish_pair(a, b, sc.device, bounds);
      s.distinguish = fmt::format("{}: {}", to_string(p.outcome), p.outcome == PairOutcome::Separated ? p.route : p.reason);
      // A witness lifted from a reduced device can be larger than the scenario; then the scenario is the case.
      if (p.outcome == PairOutcome::Separated && p.witness && p.witness->scenario.total_blocks() < sc.total_blocks()) {
        s.by = SettleBy::Witness;
        s.witness = p.witness;
      } else if (p.outcome == PairOutcome::Separated) {
        s.distinguish += " (no smaller than this scenario)";
      }
    }
    r.settling.push_back(std::move(s));
  }
  return r;
}

std::vector<CaseContest> contest_predictions(const model::ValidationRun& run, const ContestOptions& o) {
  std::vector<CaseContest> out;
  std::map<std::string, Judgement> judged;  // by device name
  for (const auto& c : run.cases) {
    if (is_evidence(c)) continue;
    auto it = judged.find(c.scenario.device.name);
    if (it == judged.end()) it = judged.emplace(c.scenario.device.name, judge(c.scenario.device, run.hypotheses, run.cases, o.judging)).first;
    out.push_back({c.id, contest(c.scenario, run.hypotheses, it->second, o)});
  }
  return out;
}

model::json ContestReport::to_json() const {
  model::json j;
  j["device"] = device;
  j["architecture"] = architecture;
  j["evidence"] = {{"scope", to_string(scope)}, {"devices", evidence_devices}, {"cases", evidence_cases},
                   {"open_cases", open_cases}};
  j["candidates"] = candidates;
  j["not_run"] = not_run;
  model::json el = model::json::array();
  for (const auto& e : eliminated) el.push_back({{"hypothesis", e.hypothesis}, {"case", e.case_id}, {"detail", e.detail}});
  j["eliminated"] = el;
  j["survivors"] = survivors;
  j["groups"] = groups;
  j["verdict"] = settled() ? "settled" : "contested";
  j["blocks"] = blocks;
  j["settled_blocks"] = settled_blocks;
  model::json cs = model::json::array();
  for (const auto& c : contested) {
    model::json sides = model::json::array();
    for (const auto& s : c.sides) sides.push_back({{"sm", s.sm}, {"start", s.start}, {"hypotheses", s.hypotheses}});
    cs.push_back({{"kernel", c.kernel}, {"block", c.block}, {"sides", sides}});
  }
  j["contested"] = cs;
  model::json st = model::json::array();
  for (const auto& s : settling) {
    model::json x = {{"h1", s.h1}, {"h2", s.h2}, {"by", to_string(s.by)}, {"distinguish", s.distinguish}};
    if (s.witness) x["witness"] = s.witness->to_json();
    st.push_back(std::move(x));
  }
  j["settling"] = st;
  return j;
}

std::string ContestReport::text(size_t max_blocks) const {
  std::string out;
  switch (scope) {
    case EvidenceScope::Device:
      out += fmt::format("Evidence: {} case(s) of {} itself", evidence_cases, device);
      break;
    case EvidenceScope::Architecture:
      out += fmt::format("Evidence: no case of {}; {} case(s) of the other {} devices ({})", device, evidence_cases,
                         architecture, fmt::join(evidence_devices, ", "));
      break;
    case EvidenceScope::None:
      out += fmt::format("Evidence: no case of {} or of any {} device: every candidate stands (an extrapolation)",
                         device, architecture);
      break;
  }
  if (!open_cases.empty()) out += fmt::format("; {} open (no candidate passes them)", open_cases.size());
  out += "\n";
  for (const auto& e : eliminated) out += fmt::format("  eliminated {} by {}\n", e.hypothesis, e.case_id);
  for (const auto& n : not_run) out += fmt::format("  cannot run {}\n", n);
  out += fmt::format("Survivors: {}\n", survivors.empty() ? "none" : fmt::format("{}", fmt::join(survivors, ", ")));
  if (settled()) {
    out += fmt::format("Settled: the survivors agree on all {} blocks.\n", blocks);
    return out;
  }
  // Runs of contested blocks per kernel ("K1 1-133"), then the sides block by block, by group label.
  std::vector<std::string> runs;
  for (size_t i = 0; i < contested.size();) {
    size_t e = i + 1;
    while (e < contested.size() && contested[e].kernel == contested[i].kernel && contested[e].block == contested[e - 1].block + 1) ++e;
    runs.push_back(e - i == 1 ? fmt::format("{} {}", contested[i].kernel, contested[i].block)
                              : fmt::format("{} {}-{}", contested[i].kernel, contested[i].block, contested[e - 1].block));
    i = e;
  }
  out += fmt::format("Contested: {} of {} blocks ({} settled): {}\n", contested.size(), blocks, settled_blocks,
                     fmt::join(runs, ", "));
  std::map<std::string, size_t> label;
  out += "Sides (survivors with the same schedule):\n";
  for (size_t g = 0; g < groups.size(); ++g) {
    out += fmt::format("  [{}] {}\n", g + 1, fmt::join(groups[g], ", "));
    for (const auto& n : groups[g]) label[n] = g + 1;
  }
  for (size_t i = 0; i < contested.size() && i < max_blocks; ++i) {
    const auto& c = contested[i];
    std::vector<std::string> sides;
    for (const auto& s : c.sides) {
      std::set<size_t> gs;
      for (const auto& n : s.hypotheses) gs.insert(label[n]);
      sides.push_back(fmt::format("SM {} at {} [{}]", s.sm, s.start, fmt::join(gs, "] [")));
    }
    out += fmt::format("  {} block {}: {}\n", c.kernel, c.block, fmt::join(sides, ", "));
  }
  if (contested.size() > max_blocks) out += fmt::format("  ... {} more contested blocks\n", contested.size() - max_blocks);
  for (const auto& s : settling) {
    if (s.witness) {
      int nb = 0;
      for (const auto& k : s.witness->scenario.kernels) nb += k.blocks;
      out += fmt::format("Settle {} vs {}: distinguish's case ({} kernel(s), {} blocks; {}), or this scenario\n", s.h1,
                         s.h2, s.witness->scenario.kernels.size(), nb, s.distinguish);
    } else {
      out += fmt::format("Settle {} vs {}: run this scenario on the device{}\n", s.h1, s.h2,
                         s.distinguish.empty() ? "" : " (distinguish: " + s.distinguish + ")");
    }
  }
  return out;
}

}  // namespace tbcheck::search
