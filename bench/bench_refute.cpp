// bench_refute: oracle cost of refuting each wrong hypothesis when alg1 plays the device (sim:alg1):
// seed 000's random testing (scenarios until one refutes H) against the greedy synthesized suite.
// Cost is oracle time: the summed makespans (model time units) of the scenarios run, one repetition
// each; at the probe's default 20 ms per unit that is device seconds.
// Usage: bench_refute [seeds=10] [cap=5000 scenarios per seed] [random max duration=10 units].
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "bench_args.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/random.hpp"
#include "tbcheck/search/suite.hpp"

using namespace tbcheck;
using tbcheck::bench_support::positive_arg;

namespace {

struct Observed {
  model::Observation obs;
  long long makespan = 0;
};

Observed run_oracle(oracle::Oracle& o, const model::Scenario& s) {
  oracle::RunResult r = o.run(s, 1);
  return {r.observation, r.repetitions.at(0).makespan()};
}

// H is refuted when its prediction differs from the observation in some block (SM or start). A scenario
// H cannot run refutes nothing here (it would say "never placed", which no recording shows, but the
// suite and random testing are compared on schedules).
bool refutes(const Observed& o, const model::Scenario& s, const model::Hypothesis& h) {
  const auto p = model::try_simulate(s, h);
  return p && model::compare_recording(o.obs, s, *p, model::Level::Exact).verdict == model::Verdict::Fail;
}

}  // namespace

// A ratio, or "-" when the denominator is zero (nothing refuted, nothing run).
std::string ratio_text(double num, double den, const char* prefix = "") {
  return den > 0 ? fmt::format("{}{:.1f}x", prefix, num / den) : "-";
}

static int bench(int argc, char** argv) {
  if (argc > 4) throw model::InputError("arguments", "", "at most three");
  const int seeds = positive_arg(argc, argv, 1, 10, "seeds");
  const int cap = positive_arg(argc, argv, 2, 5000, "cap");
  const int max_duration = positive_arg(argc, argv, 3, 10, "max duration");
  const double ms_per_unit = 20.0;
  const model::Hypothesis& truth = *model::find_builtin_hypothesis("alg1");
  const model::Device& device = model::builtin_device("rtx3090", "bench", "device");
  auto oracle = oracle::make_oracle("sim:alg1", 0.0, 1, nullptr);

  // The wrong hypotheses: every other shipped one that can run on the device at all.
  std::vector<model::Hypothesis> wrong;
  std::vector<std::string> skipped;
  for (const auto& h : model::builtin_hypotheses()) {
    if (h.name == truth.name) continue;
    model::FeasibilityCheck why;
    if (model::try_simulate(model::Scenario{device, true, {model::Kernel{}}}, h, &why))
      wrong.push_back(h);
    else
      skipped.push_back(fmt::format("{} ({})", h.name, why.reason));
  }

  // Random testing: per seed, cases 0, 1, 2, ... of the generator until each H is refuted or the cap.
  search::RandomOptions ro;
  ro.must_run = wrong;
  ro.max_duration = max_duration;
  std::map<std::string, std::vector<std::optional<std::pair<long, long long>>>> random_cost;  // per H, per seed
  std::vector<long long> random_spent;  // per seed: units spent when it stopped (all refuted, or the cap)
  for (int seed = 1; seed <= seeds; ++seed) {
    std::map<std::string, std::pair<long, long long>> done;
    long long spent = 0;
    long n = 0;
    for (; n < cap && done.size() < wrong.size(); ++n) {
      auto rc = search::random_case(device, static_cast<uint64_t>(seed), static_cast<int>(n), ro);
      Observed o = run_oracle(*oracle, rc.c.scenario);
      spent += o.makespan;
      for (const auto& h : wrong)
        if (!done.count(h.name) && refutes(o, rc.c.scenario, h)) done[h.name] = {n + 1, spent};
    }
    for (const auto& h : wrong) {
      auto it = done.find(h.name);
      random_cost[h.name].push_back(it == done.end() ? std::nullopt : std::optional(it->second));
    }
    random_spent.push_back(spent);
    std::fprintf(stderr, "seed %d: %ld scenarios, %lld units\n", seed, n, spent);  // progress
  }

  // The synthesized suite: greedy cover over corpus/synth and corpus/paper, run in the order chosen.
  std::vector<model::Case> pool;
  for (const char* dir : {"corpus/synth", "corpus/paper"})
    for (auto& c : model::load_cases(std::string(TBCHECK_SOURCE_DIR) + "/" + dir)) pool.push_back(std::move(c));
  std::vector<model::Hypothesis> all = wrong;
  all.insert(all.begin(), truth);
  search::SuiteResult suite = search::greedy_suite(pool, all);
  std::map<std::string, std::pair<long, long long>> suite_cost;
  long long suite_total = 0;
  for (size_t i = 0; i < suite.chosen.size(); ++i) {
    const model::Case& c = pool[suite.chosen[i]];
    Observed o = run_oracle(*oracle, c.scenario);
    suite_total += o.makespan;
    for (const auto& h : wrong)
      if (!suite_cost.count(h.name) && refutes(o, c.scenario, h)) suite_cost[h.name] = {static_cast<long>(i + 1), suite_total};
  }

  fmt::print("bench_refute: ground truth sim:alg1 on {}; {} seeds of random testing (cap {} scenarios each, durations 1..{}); "
             "suite of {} cases from {} (corpus/synth + corpus/paper), total {} units\n",
             device.name, seeds, cap, max_duration, suite.chosen.size(), pool.size(), suite_total);
  fmt::print("cost = summed makespans of the scenarios run (model units; x {} ms = device seconds)\n\n", ms_per_unit);
  fmt::print("{:<22} {:>14} {:>16} {:>9} {:>12} {:>10} {:>9}\n", "wrong hypothesis", "random: cases", "random: units",
             "refuted", "suite: cases", "units", "ratio");
  double sum_random = 0, sum_suite = 0;
  std::vector<double> ratios;
  for (const auto& h : wrong) {
    const auto& rs = random_cost[h.name];
    double cases = 0, units = 0;
    int refuted = 0;
    for (const auto& r : rs)
      if (r) {
        cases += static_cast<double>(r->first);
        units += static_cast<double>(r->second);
        ++refuted;
      }
    std::string rc_text = refuted ? fmt::format("{:.1f}", cases / refuted) : "-";
    std::string ru_text = refuted ? fmt::format("{:.1f}", units / refuted) : fmt::format("> {}", "cap");
    auto s = suite_cost.find(h.name);
    std::string sc = s == suite_cost.end() ? "-" : std::to_string(s->second.first);
    std::string su = s == suite_cost.end() ? "not refuted" : std::to_string(s->second.second);
    std::string ratio = "-";
    if (refuted > 0 && refuted == static_cast<int>(rs.size()) && s != suite_cost.end() && s->second.second > 0) {
      double rt = units / refuted / static_cast<double>(s->second.second);
      ratios.push_back(rt);
      ratio = fmt::format("{:.1f}x", rt);
      sum_random += units / refuted;
      sum_suite += static_cast<double>(s->second.second);
    }
    fmt::print("{:<22} {:>14} {:>16} {:>9} {:>12} {:>10} {:>9}\n", h.name, rc_text, ru_text,
               fmt::format("{}/{}", refuted, rs.size()), sc, su, ratio);
  }
  // Hypotheses the device cannot run go under the table, not in it.
  if (!skipped.empty()) fmt::print("\nnot run on {}:\n", device.name);
  for (const auto& s : skipped) fmt::print("  {}\n", s);
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    fmt::print("\nper-H ratio (random mean units / suite units), over {} hypotheses both refute: min {:.1f}x, median {:.1f}x, "
               "max {:.1f}x; summed: {}\n",
               ratios.size(), ratios.front(), ratios[ratios.size() / 2], ratios.back(), ratio_text(sum_random, sum_suite));
  }
  // Overall 1: refuting every hypothesis that both methods refute in every seed; per seed, the cost when
  // the last of them fell, against the suite's cost when the last of the same ones fell.
  std::vector<std::string> common;
  for (const auto& h : wrong) {
    const auto& rs = random_cost[h.name];
    if (suite_cost.count(h.name) && std::all_of(rs.begin(), rs.end(), [](const auto& r) { return r.has_value(); }))
      common.push_back(h.name);
  }
  if (!common.empty()) {
    long long all_sum = 0, suite_common = 0;
    for (int k = 0; k < seeds; ++k) {
      long long worst = 0;
      for (const auto& n : common) worst = std::max(worst, random_cost[n][static_cast<size_t>(k)]->second);
      all_sum += worst;
    }
    for (const auto& n : common) suite_common = std::max(suite_common, suite_cost[n].second);
    const double mean = double(all_sum) / seeds;
    fmt::print("overall, refuting all {} that both refute: random {:.1f} units (mean of {} seeds) vs suite {} units: {}\n",
               common.size(), mean, seeds, suite_common, ratio_text(mean, double(suite_common)));
  }
  // Overall 2: every wrong hypothesis. Random testing that never refutes one within the cap spent at
  // least its capped run, so the ratio is a lower bound.
  long long suite_all = 0;
  for (const auto& [name, c] : suite_cost) suite_all = std::max(suite_all, c.second);
  if (suite_cost.size() == wrong.size()) {
    double spent = 0;
    for (long long x : random_spent) spent += double(x);
    spent /= seeds;
    const bool capped = common.size() < wrong.size();
    fmt::print("overall, refuting all {} wrong hypotheses: random {}{:.1f} units vs suite {} units: {}\n", wrong.size(),
               capped ? "> " : "", spent, suite_all, ratio_text(spent, double(suite_all), capped ? ">= " : ""));
  }
  return 0;
}

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "bench_refute: %s\nusage: bench_refute [seeds=10] [cap=5000 scenarios per seed] "
                         "[random max duration=10 units]\n", e.what());
    return 2;
  }
}
