// bench_trace: trace-driven judging on recordings a GPU could make. alg1 plays the device on random
// multi-wave scenarios twice: exactly (model durations, launches in list order) and perturbed (every
// block's duration jittered by up to 10%, the kernels launched in a shuffled order within a launch
// window the case states). Side by side, per wrong hypothesis: how often model timing refutes it on
// the exact recordings and trace timing on the perturbed ones (and on the exact ones, which separates
// what the judge loses from what the perturbation hides); and whether the true one passes.
// With bursts > 1 the kernels are launched in up to that many bursts 20-100 units apart (racing threads
// launch together, bursts come one after another): only kernels of one burst are shuffled, and later
// bursts meet a partly occupied GPU without tied retirements.
// max-orders bounds the simulations of each trace judgement (the judge's default otherwise): the exact
// recordings' groups of equal ends reach the default.
// Usage: bench_trace [cases=40] [seed=1] [bursts=1] [max-orders].
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include <fmt/format.h>

#include "bench_args.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/random.hpp"

using namespace tbcheck;
using tbcheck::bench_support::positive_arg;

namespace {

// Two to four kernels, each of up to two waves of blocks, durations 50..150 units so that a 10% jitter moves
// ends by several units; launched together, or in up to `bursts` bursts (the draws for bursts come last, so
// one burst gives the scenarios of the bench before bursts existed).
model::Scenario random_scenario(const model::Device& d, std::mt19937_64& rng, const std::vector<model::Hypothesis>& must_run,
                                int bursts) {
  const std::vector<int> regs = search::realizable_regs(d);
  const int threads[] = {128, 256, 512, 1024};
  const int smem[] = {0, 8192, 16384, 32768};
  while (true) {
    model::Scenario s;
    s.device = d;
    const int nk = std::uniform_int_distribution<int>(2, 4)(rng);
    for (int k = 0; k < nk; ++k) {
      model::Kernel kr;
      kr.name = fmt::format("k{}", k + 1);
      kr.blocks = std::uniform_int_distribution<int>(1, 2 * d.sms)(rng);
      kr.threads = threads[std::uniform_int_distribution<int>(0, 3)(rng)];
      kr.regs = regs[std::uniform_int_distribution<size_t>(0, regs.size() - 1)(rng)];
      kr.smem = smem[std::uniform_int_distribution<int>(0, 3)(rng)];
      kr.duration = std::uniform_int_distribution<int>(50, 150)(rng);
      s.kernels.push_back(kr);
    }
    if (bursts > 1) {
      std::vector<int> burst;
      for (int k = 0; k < nk; ++k) burst.push_back(std::uniform_int_distribution<int>(0, bursts - 1)(rng));
      std::sort(burst.begin(), burst.end());
      int64_t at = 0;
      for (int k = 0; k < nk; ++k) {
        if (k > 0 && burst[static_cast<size_t>(k)] != burst[static_cast<size_t>(k) - 1])
          at += std::uniform_int_distribution<int>(20, 100)(rng);
        s.kernels[static_cast<size_t>(k)].release = at;
      }
    }
    bool runs = true;
    for (const auto& h : must_run) runs = runs && model::check_feasibility(s, h).runs();
    if (runs) return s;
  }
}


}  // namespace

static int bench(int argc, char** argv) {
  if (argc > 5) throw model::InputError("arguments", "", "at most four");
  const int cases = positive_arg(argc, argv, 1, 40, "cases");
  const int seed = positive_arg(argc, argv, 2, 1, "seed");
  const int bursts = positive_arg(argc, argv, 3, 1, "bursts");
  const int max_orders = positive_arg(argc, argv, 4, static_cast<int>(model::kDefaultMaxOrders), "max-orders");
  const model::Hypothesis& truth = *model::find_builtin_hypothesis("alg1");
  const model::Device& device = model::builtin_device("xavier", "bench", "device");
  std::vector<model::Hypothesis> wrong, all = {truth};
  for (const auto& h : model::builtin_hypotheses()) {
    if (h.name == truth.name || h.selection == model::Selection::GpcPriority) continue;  // gpc-priority: no trace timing
    wrong.push_back(h);
    all.push_back(h);
  }
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  model::JudgeOptions model_timing, trace_timing;
  trace_timing.timing = model::Timing::Trace;
  trace_timing.max_orders = max_orders;
  struct Row {
    int refuted_exact = 0, refuted_trace = 0, unknown_trace = 0, refuted_trace_ordered = 0;
    int refuted_trace_exact = 0, unknown_trace_exact = 0;  // trace timing on the exact recordings
  };
  std::vector<Row> rows(wrong.size());
  int truth_trace_pass = 0, truth_model_pass_perturbed = 0, truth_unknown = 0;
  int64_t sims_trace = 0;
  for (int n = 0; n < cases; ++n) {
    const model::Scenario s = random_scenario(device, rng, all, bursts);
    // Exact: alg1's own schedule.
    model::Case exact;
    exact.id = fmt::format("exact-{}", n);
    exact.scenario = s;
    exact.observation = oracle::observation_of(model::simulate(s, truth), model::ObservationKind::Synthetic);
    // Perturbed: the launch order shuffled within each burst (kernels released together) and jittered block
    // durations.
    model::Scenario shuffled = s;
    for (auto first = shuffled.kernels.begin(); first != shuffled.kernels.end();) {
      const auto last = std::find_if(first, shuffled.kernels.end(),
                                     [&](const model::Kernel& k) { return k.release != first->release; });
      std::shuffle(first, last, rng);
      first = last;
    }
    std::vector<std::vector<int>> dur(shuffled.kernels.size());
    for (size_t k = 0; k < shuffled.kernels.size(); ++k)
      for (int b = 0; b < shuffled.kernels[k].blocks; ++b) {
        const double f = std::uniform_real_distribution<double>(0.9, 1.1)(rng);
        dur[k].push_back(std::max(1, static_cast<int>(shuffled.kernels[k].duration * f + 0.5)));
      }
    const model::EndTimeSource ends = [&](int k, int b, int64_t start) {
      return start + dur[static_cast<size_t>(k)][static_cast<size_t>(b)];
    };
    // The same jitter with the launch order known (the listed one): what the shuffle alone costs.
    std::vector<std::vector<int>> dur_listed(s.kernels.size());
    for (size_t k = 0; k < shuffled.kernels.size(); ++k)
      dur_listed[static_cast<size_t>(s.kernel_index(shuffled.kernels[k].name))] = dur[k];
    const model::EndTimeSource ends_listed = [&](int k, int b, int64_t start) {
      return start + dur_listed[static_cast<size_t>(k)][static_cast<size_t>(b)];
    };
    model::Case jittered;
    jittered.id = fmt::format("jittered-{}", n);
    jittered.scenario = s;
    jittered.observation = oracle::observation_of(*model::try_simulate(s, truth, nullptr, &ends_listed), model::ObservationKind::Synthetic);
    model::Case perturbed;
    perturbed.id = fmt::format("perturbed-{}", n);
    perturbed.scenario = s;
    perturbed.observation = oracle::observation_of(*model::try_simulate(shuffled, truth, nullptr, &ends), model::ObservationKind::Synthetic);
    // Kernels of one burst launch within the window (every order among them open); bursts lie further apart.
    perturbed.observation->resolution = model::Resolution{1, 1};

    const model::CaseResult t = model::evaluate(perturbed, truth, trace_timing);
    truth_trace_pass += t.at(model::Level::Exact) == model::Verdict::Pass;
    truth_unknown += t.at(model::Level::Exact) == model::Verdict::Unknown;
    sims_trace += t.orders_tried;
    truth_model_pass_perturbed += model::evaluate(perturbed, truth, model_timing).at(model::Level::Exact) == model::Verdict::Pass;
    for (size_t h = 0; h < wrong.size(); ++h) {
      rows[h].refuted_exact += model::evaluate(exact, wrong[h], model_timing).at(model::Level::Exact) == model::Verdict::Fail;
      const model::Verdict on_exact = model::evaluate(exact, wrong[h], trace_timing).at(model::Level::Exact);
      rows[h].refuted_trace_exact += on_exact == model::Verdict::Fail;
      rows[h].unknown_trace_exact += on_exact == model::Verdict::Unknown;
      const model::CaseResult w = model::evaluate(perturbed, wrong[h], trace_timing);
      rows[h].refuted_trace += w.at(model::Level::Exact) == model::Verdict::Fail;
      rows[h].unknown_trace += w.at(model::Level::Exact) == model::Verdict::Unknown;
      rows[h].refuted_trace_ordered +=
          model::evaluate(jittered, wrong[h], trace_timing).at(model::Level::Exact) == model::Verdict::Fail;
      sims_trace += w.orders_tried;
    }
  }
  fmt::print("bench_trace: {} random scenarios on {} (2-4 kernels launched {}, up to two waves each), seed {}\n",
             cases, device.name, bursts == 1 ? "together" : fmt::format("in up to {} bursts 20-100 units apart", bursts),
             seed);
  fmt::print("true hypothesis {}: passes {}/{} perturbed recordings under trace timing ({} unknown); "
             "{}/{} under model timing\n",
             truth.name, truth_trace_pass, cases, truth_unknown, truth_model_pass_perturbed, cases);
  fmt::print("{:<34} {:>22} {:>24} {:>8} {:>28} {:>22}\n", "wrong hypothesis", "refuted: model, exact",
             "refuted: trace, perturbed", "unknown", "trace, jittered, order known", "trace, exact (unknown)");
  int worse = 0, sum_exact = 0, sum_trace = 0, sum_unknown = 0;
  for (size_t h = 0; h < wrong.size(); ++h) {
    sum_exact += rows[h].refuted_exact;
    sum_trace += rows[h].refuted_trace;
    sum_unknown += rows[h].unknown_trace;
    fmt::print("{:<34} {:>22} {:>24} {:>8} {:>28} {:>22}\n", wrong[h].name,
               fmt::format("{}/{}", rows[h].refuted_exact, cases), fmt::format("{}/{}", rows[h].refuted_trace, cases),
               rows[h].unknown_trace, fmt::format("{}/{}", rows[h].refuted_trace_ordered, cases),
               fmt::format("{}/{} ({})", rows[h].refuted_trace_exact, cases, rows[h].unknown_trace_exact));
    worse += rows[h].refuted_trace < rows[h].refuted_exact;
  }
  fmt::print("hypotheses refuted less often under trace timing than under model timing: {} of {}\n", worse, wrong.size());
  // A perturbed recording that trace timing passes (not unknown) is reproduced by some admissible order, so no judge
  // that refutes only when every admissible order fails can refute it: with 0 unknown, the trace column is the most
  // any such judge refutes on these recordings.
  fmt::print("refutations summed over the wrong hypotheses: model timing, exact {}; trace timing, perturbed {} "
             "({} unknown{})\n",
             sum_exact, sum_trace, sum_unknown,
             sum_unknown == 0 ? ": the most a judge that refutes only when every admissible order fails can reach" : "");
  fmt::print("simulations over admissible orders under trace timing: {} ({:.1f} per case and hypothesis)\n", sims_trace,
             static_cast<double>(sims_trace) / (cases * static_cast<double>(wrong.size() + 1)));
  return 0;
}

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
