// Tests of learn's results as the terminal shows them (search/src/learn_text.cpp): what each learner prints for
// the outcomes a user meets, and the limits that keep a large space's answer readable.
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_replay.hpp"
#include "tbcheck/search/learn_rules.hpp"

using namespace tbcheck;

namespace {

size_t count_of(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

search::MechanismStatus settled_issue() {
  search::MechanismStatus m;
  m.mechanism = "issue";
  m.state = search::Settledness::Settled;
  m.values = {"paired", "paired-cc8"};
  m.settled_by = "case-7";
  return m;
}

}  // namespace

TEST_CASE("a learn step names its case and shows many predicted classes by their sizes only", "[learn][text]") {
  search::LearnStep s;
  s.index = 3;
  s.purpose = search::StepPurpose::Split;
  s.case_id = "synth-1";
  s.origin = "corpus corpus/synth";
  s.kernels = 2;
  s.blocks = 40;
  s.group_sizes = {1, 7, 2, 5, 3};
  s.groups = {{"a"}, {"b"}, {"c"}, {"d"}, {"e"}};
  s.dropped_count = 12;
  s.survivor_count = 2;
  s.survivors = {"alg1", "alg1-paired"};
  const std::string t = s.text();
  CHECK(t.find("step 3 (split): synth-1 (2 kernels, 40 blocks) from corpus corpus/synth\n") == 0);
  CHECK(t.find("predictions split the 18 consistent candidate(s) into 5 classes of sizes 7, 5, 3, 2, 1\n") !=
        std::string::npos);
  CHECK(t.find("dropped 12; 2 consistent: alg1, alg1-paired\n") != std::string::npos);

  // Few classes: their members, a large one by its first name.
  s.group_sizes = {2, 9};
  s.groups = {{"alg1", "alg1-paired"}, {"most-room"}};
  const std::string few = s.text();
  CHECK(few.find("into {alg1, alg1-paired} {9 candidates, e.g. most-room}\n") != std::string::npos);
}

TEST_CASE("learn's result when none fits says so and lists the nearest with their first wrong block", "[learn][text]") {
  search::LearnResult r;
  r.outcome = search::LearnOutcome::NoneSurvives;
  r.reason = "every candidate mispredicts an observed case";
  search::NearMiss n;
  n.name = "alg1";
  n.cases_refuted = 2;
  n.blocks_misplaced = 5;
  n.first_case = "case-1";
  n.where = "kernel k1 block 3: predicted SM 4 at 0, observed SM 5 at 0";
  r.nearest = {n};
  r.mechanisms = {settled_issue()};
  const std::string t = r.text("rtx3090", 2, "out");
  CHECK(t.find("\nnone-survives: no candidate fits\nevery candidate mispredicts an observed case\n") != std::string::npos);
  CHECK(t.find("  alg1: 2 case(s), 5 block(s); first fails case-1 (kernel k1 block 3: predicted SM 4 at 0, observed "
               "SM 5 at 0)\n") != std::string::npos);
  CHECK(t.find("paired = paired-cc8 (settled by case-7)") != std::string::npos);
  CHECK(t.find("wrote 2 file(s) to out\n") != std::string::npos);
}

TEST_CASE("learn's result shows the first twenty groups of a large consistent set and counts the rest", "[learn][text]") {
  search::LearnResult r;
  r.outcome = search::LearnOutcome::Undecided;
  for (int g = 0; g < 25; ++g) r.equivalence.push_back({fmt::format("h{}a", g), fmt::format("h{}b", g)});
  for (const auto& g : r.equivalence) r.survivors.insert(r.survivors.end(), g.begin(), g.end());
  const std::string t = r.text("h200");
  CHECK(t.find("undecided: 50 consistent candidates\n") != std::string::npos);
  CHECK(t.find("consistent set, grouped (members of a group proved equivalent on h200):\n") != std::string::npos);
  CHECK(t.find("  h19a, h19b\n") != std::string::npos);
  CHECK(t.find("h20a") == std::string::npos);
  CHECK(t.find("  ... 5 more groups (--json or --out lists every one)\n") != std::string::npos);
}

TEST_CASE("learning from recordings prints skipped recordings once per file and stops at the nearest when none fits",
          "[learn][text]") {
  search::ReplayLearnResult r;
  r.recordings = 4;
  for (const char* id : {"r1", "r2"})
    r.skipped.push_back({"v100.json", id, search::ReplaySkip::OtherDevice, fmt::format("v100.json: case {}", id)});
  r.skipped.push_back({"x.json", "r3", search::ReplaySkip::NoRecording, "x.json: case r3 has no recording"});
  search::ReplayNearMiss n;
  n.names = {"alg1"};
  n.members = 3;
  n.recordings_refuted = 2;
  n.counts_refuted = 1;
  n.first_case = "r4";
  n.first_file = "a100.json";
  n.where = "k1 block 3: predicted SM 4, observed SM 5";
  r.nearest = {n};
  r.mechanisms = {settled_issue()};
  const std::string t = r.text("a100");
  CHECK(count_of(t, "skipped ") == 2);
  CHECK(t.find(fmt::format("skipped 2 case(s) ({}), first: v100.json: case r1\n",
                           search::to_string(search::ReplaySkip::OtherDevice))) != std::string::npos);
  CHECK(t.find("skipped x.json: case r3 has no recording\n") != std::string::npos);
  CHECK(t.find("\nno candidate fits every recording of a100\n") != std::string::npos);
  CHECK(t.find("  alg1 (and 2 more acting alike; --json names some): 2 of 4 recording(s) refuted (1 in counts); "
               "first fails r4 (a100.json): k1 block 3: predicted SM 4, observed SM 5\n") != std::string::npos);
  CHECK(t.find("mechanisms:") == std::string::npos);  // nothing fits: no mechanism is settled by a fit
}

TEST_CASE("learning from recordings names the device file to use when the recordings carry another device",
          "[learn][text]") {
  search::ReplayLearnResult r;
  r.recordings = 2;
  r.device_differs = search::DeviceDifference{};
  r.device_differs->recordings = 2;
  r.device_differs->fields = {"gpc_of_tpc"};
  r.device_differs->first_file = "run/a.json";
  CHECK(r.text("h200", "docs/results/h200/h200-measured.json").find("It is docs/results/h200/h200-measured.json: try "
                                                                     "--device docs/results/h200/h200-measured.json\n") !=
        std::string::npos);
  CHECK(r.text("h200").find("Their device is the \"device\" object of run/a.json") != std::string::npos);
}

TEST_CASE("the rule search lists its nearest rules with their keys when none fits", "[learn][text]") {
  search::RuleSearchResult rs;
  rs.method = "every rule of the bound";
  rs.scope = "2 keys";
  rs.candidates = 40;
  search::NearMiss n;
  n.name = "alg1.held-min";
  n.hypothesis.selection = model::Selection::Rule;
  n.hypothesis.rule.keys = {{model::RuleFeature::Held, model::Prefer::Min}};
  n.cases_refuted = 1;
  n.blocks_misplaced = 2;
  n.first_case = "c";
  n.where = "w";
  rs.nearest = {n};
  const std::string t = rs.text(9);
  CHECK(t.find("40 rule candidate(s), 0 consistent with the 9 case(s) observed\n") != std::string::npos);
  CHECK(t.find(fmt::format("  alg1.held-min ({}): 1 case(s), 2 block(s); first fails c (w)\n",
                           model::rule_text(n.hypothesis.rule))) != std::string::npos);
}

TEST_CASE("learning from recordings shows the first six consistent groups by three names and counts the rest",
          "[learn][text]") {
  search::ReplayLearnResult r;
  r.recordings = 3;
  for (int g = 0; g < 8; ++g) {
    std::vector<std::string> names;
    for (int k = 0; k < (g == 0 ? 5 : 1); ++k) names.push_back(fmt::format("g{}m{}", g, k));
    r.consistent_groups.push_back(names);
    for (const auto& n : names) {
      model::Hypothesis h;
      h.name = n;
      r.consistent.push_back(h);
    }
  }
  r.mechanisms = {settled_issue()};
  const std::string t = r.text("a100");
  CHECK(t.find("\nconsistent with every recording: 12 candidates in 8 groups\n") != std::string::npos);
  CHECK(t.find("  g0m0, g0m1, g0m2, ... (5 in all)\n") != std::string::npos);
  CHECK(t.find("  g5m0\n") != std::string::npos);
  CHECK(t.find("g6m0") == std::string::npos);
  CHECK(t.find("  ... 2 more groups (--json lists every one)\n") != std::string::npos);
  CHECK(t.find("campaign: none (no corpus case splits the groups left)\n") != std::string::npos);
}
