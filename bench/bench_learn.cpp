// bench_learn: steps and oracle device-seconds for `learn` to reach its answer when a composition two or three
// options from alg1 plays the device: the composition-space learner beside the shipped-list learner, clean and noisy.
// Usage: bench_learn [--devices rtx3090,h100-sxm] [--seed 1] [--per-distance 3] [--noise 0.1] [--reps 5]
//                    [--budget 30] [--distances 2,3] [--no-noise] [--check] [--thresholds N [--list]] [--speed]
//                    [--planted-rules N]
// --check (scripts/long.sh, the learn acceptance run): exit 1 unless every clean composition-space run
// names the composition or says none fits, and no run of either learner names a wrong one.
// --thresholds N: instead, N compositions per device one or two changes from alg1 whose thresholds are drawn
// outside the enumerated values (seed + 2000 x device position), learned over the composition space clean and
// under noise (with --list: N shipped hypotheses, drawn with the same seed, learned over the shipped list); --check then exits 1 unless every interval holds the truth, no run names a wrong composition,
// and at least 80% of the intervals are at most 4 steps of the device's granularity wide.
// --planted-rules N: instead, N rules of the ranking language per device, each given the mechanisms of a random
// shipped hypothesis (seed + 3000 x device position; 1 to 3 keys, none equal to a shorter rule or to a shipped
// selection), played by sim: learned over the shipped list, then, when none fits, the rule search (2 keys), as
// `tbcheck learn` runs them; a named rule that places some random scenario's blocks otherwise than the truth is
// wrong; --check then exits 1 on a wrong answer.
// --speed: instead, the same seeded compositions (devices default rtx3090,h100-sxm,h100-sxm-assumed-gpcs) learned
// over the device's composition space, clean, at the default 3 repetitions and 20 ms per model unit, once
// simulating every candidate on every case (sharing off) and once sharing simulations among candidates a case
// cannot tell apart (on learn's default jobs), each run in a child process that builds the space and reads the
// repository corpus itself, as `tbcheck learn` does, so that its time and peak RSS are what a user meets: wall time,
// device seconds, their ratio, peak RSS, and whether both gave the same answer; --check then exits 1 unless every answer is the same.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/thresholds.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/learn_rules.hpp"
#include "tbcheck/testing/conformance.hpp"

using namespace tbcheck;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t c = s.find(',', pos);
    if (c == std::string::npos) c = s.size();
    if (c > pos) out.push_back(s.substr(pos, c - pos));
    pos = c + 1;
  }
  return out;
}

struct Cell {
  std::string grade;
  size_t steps = 0;
  double device_s = 0, wall_s = 0;
};

Cell run(const std::vector<model::Hypothesis>& candidates, search::LearnSpace space, const model::Device& d,
         const std::vector<model::Case>& corpus, const std::string& oracle, const model::Hypothesis& truth, double noise,
         int reps, double budget, unsigned seed) {
  search::LearnOptions o;
  o.oracle_spec = oracle;
  o.space = space;
  o.noise = noise;
  o.repetitions = reps;
  o.seed = seed;
  o.synthesis_budget_s = budget;
  const auto t0 = std::chrono::steady_clock::now();
  search::LearnResult r = search::learn(candidates, d, corpus, o);
  Cell c;
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.grade = fmt::format("{}/{}", search::to_string(search::grade_answer(r, truth)), search::to_string(r.outcome));
  c.steps = r.steps.size();
  c.device_s = r.device_seconds;
  return c;
}

// Whether h can place one small block on d (gpc-priority without a GPC map cannot): only such a composition
// can play the device.
bool runs_on(const model::Device& d, const model::Hypothesis& h) {
  const model::Scenario probe = model::scenario_from_json(
      {{"device", d.to_json()},
       {"kernels", {{{"name", "probe"}, {"blocks", 1}, {"threads", 32}, {"regs", 32}, {"smem", 0}, {"duration", 1}}}}},
      "probe");
  return model::try_simulate(probe, h).has_value();
}

// One seeded acceptance draw: the composition playing the device and its hypothesis file (for the sim: oracle).
struct Draw {
  model::Hypothesis truth;
  std::string path;
};

// The draws of device `di` (its position in --devices) at distance `dist` from alg1: seed + distance + 1000 x the
// position, among the compositions that can place one block on the device (gpc-priority needs a GPC map), each
// written into `dir`.
std::vector<Draw> acceptance_draws(const model::Device& d, size_t di, int dist, uint64_t seed, int per_distance,
                                   const std::filesystem::path& dir) {
  const model::Hypothesis& alg1 = *model::find_builtin_hypothesis("alg1");
  const uint64_t draw = seed + static_cast<uint64_t>(dist) + 1000u * di;
  auto runs_on_device = [&](const model::Hypothesis& h) { return runs_on(d, h); };
  std::vector<Draw> out;
  for (auto& truth : model::sample_compositions(alg1, draw, per_distance, dist, dist, runs_on_device)) {
    const std::string path = (dir / (truth.name + ".json")).string();
    model::write_file_atomic(path, truth.to_json().dump(2) + "\n");
    out.push_back({std::move(truth), path});
  }
  return out;
}

// The thresholds bench (--thresholds): a composition near alg1 with its thresholds redrawn off the enumerated
// values, so the truth is outside the space and only bracketing can name it.
model::Hypothesis with_drawn_thresholds(model::Hypothesis h, const model::Device& d, std::mt19937_64& rng) {
  const auto which = rng() % 3;  // registers only, shared memory only, both
  h.registers_ignore_at_or_below.reset();
  h.smem_ignore_below.reset();
  if (which != 1) {
    int r = 32;
    while (r == 32) r = 24 + static_cast<int>(rng() % 231);  // 24..254
    h.registers_ignore_at_or_below = r;
  }
  if (which != 0) {
    const int top = d.max_smem_per_block + d.smem_reserved_per_block;
    int s = 3072;
    while (s == 3072) s = 1025 + static_cast<int>(rng() % static_cast<uint64_t>(top - 1024));
    h.smem_ignore_below = s;
  }
  h.name = model::composition_name(h);
  return h;
}

int thresholds_bench(const std::vector<std::string>& devices, const std::vector<model::Case>& corpus, uint64_t seed,
                     int count, double noise, int reps, double budget, bool with_noise, bool check, bool list) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tbcheck-bench-learn-thresholds-{}", seed);
  std::filesystem::create_directories(dir);
  const model::Hypothesis& alg1 = *model::find_builtin_hypothesis("alg1");
  const auto& space = list ? model::builtin_hypotheses() : model::all_compositions();
  fmt::print("thresholds drawn outside the enumerated values: {} {} per device, drawn with seed {} + 2000 x the "
             "device's position, learned over {}; noise {} over {} repetitions\n",
             count, list ? "shipped hypotheses" : "compositions one or two changes from alg1", seed,
             list ? "the shipped list" : "the composition space", noise, reps);
  fmt::print("cell: grade/outcome steps device-s wall-s, then each threshold's interval (width in granularity steps)\n\n");
  int runs = 0, wrong = 0, outside = 0, intervals = 0, narrow = 0, named = 0;
  size_t steps = 0;
  double device_s = 0;
  for (size_t di = 0; di < devices.size(); ++di) {
    const model::Device& d = model::builtin_device(devices[di], "bench_learn", "--devices");
    const uint64_t draw = seed + 2000u * di;
    std::mt19937_64 rng(draw);
    auto runs_on_device = [&](const model::Hypothesis& h) { return runs_on(d, h); };
    std::vector<model::Hypothesis> bases;
    if (list) {
      std::vector<model::Hypothesis> fit;
      for (const auto& h : model::builtin_hypotheses())
        if (runs_on_device(h)) fit.push_back(h);
      for (int k = 0; k < count && !fit.empty(); ++k) bases.push_back(fit[rng() % fit.size()]);
    } else {
      bases = model::sample_compositions(alg1, draw, count, 1, 2, runs_on_device);
    }
    for (auto base : bases) {
      const model::Hypothesis truth = with_drawn_thresholds(base, d, rng);
      const auto path = (dir / (truth.name + ".json")).string();
      model::write_file_atomic(path, truth.to_json().dump(2) + "\n");
      for (int noisy = 0; noisy < (with_noise ? 2 : 1); ++noisy) {
        search::LearnOptions o;
        o.oracle_spec = "sim:" + path;
        o.space = list ? search::LearnSpace::List : search::LearnSpace::Compositions;
        o.noise = noisy ? noise : 0.0;
        o.repetitions = noisy ? reps : 1;
        o.seed = noisy ? 7 : 1;
        o.synthesis_budget_s = budget;
        const auto t0 = std::chrono::steady_clock::now();
        const search::LearnResult r = search::learn(space, d, corpus, o);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto g = search::grade_answer(r, truth);
        ++runs;
        wrong += g == search::AnswerGrade::Wrong ? 1 : 0;
        named += g == search::AnswerGrade::Named ? 1 : 0;
        steps += r.steps.size();
        device_s += r.device_seconds;
        std::string ivs;
        for (const auto& iv : r.intervals) {
          const bool holds = iv.contains(model::threshold_of(truth, iv.option));
          ++intervals;
          outside += holds ? 0 : 1;
          narrow += iv.cuts() <= 4 ? 1 : 0;
          ivs += fmt::format("; {} {} ({}){}", iv.option.key, iv.range_text(), iv.cuts(), holds ? "" : " MISSES THE TRUTH");
        }
        fmt::print("{:<9} {:<5} {:<70} | {}/{} {:>2} {:>5.1f} {:>5.1f}{}\n", d.name, noisy ? "noisy" : "clean", truth.name,
                   search::to_string(g), search::to_string(r.outcome), r.steps.size(), r.device_seconds, wall, ivs);
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\ntotals: {} runs; {} named, {} wrong; {} intervals, {} miss the truth, {} ({:.0f}%) at most 4 steps wide; "
             "{} steps, {:.1f} device-s\n",
             runs, named, wrong, intervals, outside, narrow, intervals ? 100.0 * narrow / intervals : 0.0, steps, device_s);
  std::filesystem::remove_all(dir);
  const bool ok = wrong == 0 && outside == 0 && 5 * narrow >= 4 * intervals;
  if (check) fmt::print("check: {}\n", ok ? "no wrong answer; every interval holds the truth; at least 80% at most 4 steps wide"
                                           : "FAILED");
  return check && !ok ? 1 : 0;
}

// The planted-rules bench (--planted-rules): a device playing a rule outside the shipped selections.
// Whether a and b place every block of `n` random scenarios alike (both run each, or neither).
bool act_alike(const model::Hypothesis& a, const model::Hypothesis& b, const model::Device& d, int n) {
  for (int i = 0; i < n; ++i) {
    // A reduced device of 2 TPCs, given GPCs of one and two TPCs where the truth's keys read a GPC map.
    const model::Scenario s = smt::with_gpc_map(smt::random_small_scenario(977u * static_cast<unsigned>(i) + 5u, d), b);
    const auto x = model::try_simulate(s, a), y = model::try_simulate(s, b);
    if (x.has_value() != y.has_value()) return false;
    if (!x) continue;
    for (size_t k = 0; k < x->kernels.size(); ++k)
      for (size_t j = 0; j < x->kernels[k].blocks.size(); ++j)
        if (x->kernels[k].blocks[j].sm != y->kernels[k].blocks[j].sm ||
            x->kernels[k].blocks[j].start != y->kernels[k].blocks[j].start)
          return false;
  }
  return true;
}

int planted_rules_bench(const std::vector<std::string>& devices, const std::vector<model::Case>& corpus, uint64_t seed,
                        int count, double budget, bool check) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tbcheck-bench-learn-rules-{}", seed);
  std::filesystem::create_directories(dir);
  fmt::print("planted rules: {} per device (seed {} + 3000 x the device's position), each with a random shipped "
             "hypothesis's other mechanisms; learned over the shipped list, then the rule search (up to 2 keys); Z3 "
             "budget {} s per learn\n",
             count, seed, budget);
  fmt::print("cell: answer (named, wrong, none-within-bound, open) outcome, steps (list + rules), device-s, wall-s\n\n");
  int named = 0, wrong = 0, none = 0, open = 0, in_bound = 0, named_in_bound = 0;
  for (size_t di = 0; di < devices.size(); ++di) {
    const model::Device& d = model::builtin_device(devices[di], "bench_learn", "--devices");
    std::mt19937_64 rng(seed + 3000u * di);
    std::vector<model::Hypothesis> shipped;
    for (const auto& h : model::builtin_hypotheses())
      if (runs_on(d, h)) shipped.push_back(h);
    // 1, 2 and 3 keys equally often (three-key rules outnumber the others by far).
    std::vector<model::Rule> by_keys[3];
    for (const auto& r : search::enumerate_rules(d, 3).rules) by_keys[r.keys.size() - 1].push_back(r);
    for (int k = 0; k < count;) {
      const model::Hypothesis& base = shipped[rng() % shipped.size()];
      const auto& pool = by_keys[rng() % 3];
      const model::Rule& rule = pool[rng() % pool.size()];
      const auto own = model::selection_as_rule(base.selection);
      if (!(search::reduced_for(rule, base, d) == rule) || (own && *own == rule)) continue;
      ++k;
      model::Hypothesis truth = base;
      truth.selection = model::Selection::Rule;
      truth.rule = rule;
      truth.name = fmt::format("planted-{}-{}", d.name, k);
      const auto path = (dir / (truth.name + ".json")).string();
      model::write_file_atomic(path, truth.to_json().dump(2) + "\n");
      search::LearnOptions o;
      o.oracle_spec = "sim:" + path;
      o.repetitions = 1;
      o.synthesis_budget_s = budget;
      const auto t0 = std::chrono::steady_clock::now();
      const search::LearnResult first = search::learn(shipped, d, corpus, o);
      std::optional<search::RuleSearchResult> rs;
      if (first.outcome == search::LearnOutcome::NoneSurvives)
        rs = search::learn_rules(first, d, corpus, o, search::RuleBound{});
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const search::LearnResult& last = rs && rs->learned ? *rs->learned : first;
      std::string answer;
      if (rs && (!rs->learned || rs->learned->outcome == search::LearnOutcome::NoneSurvives)) {
        answer = "none-within-bound";
        ++none;
      } else if (last.outcome == search::LearnOutcome::Identified || last.outcome == search::LearnOutcome::Equivalent) {
        // Named when a survivor acts as the truth does: on the device's random scenarios, and on every observed case.
        bool alike = false;
        for (const auto& h : last.consistent) alike = alike || act_alike(h, truth, d, 40);
        answer = alike ? "named" : "WRONG";
        (alike ? named : wrong) += 1;
      } else {
        answer = "open";
        ++open;
      }
      const bool within = rule.keys.size() <= 2;
      in_bound += within ? 1 : 0;
      named_in_bound += within && answer == "named" ? 1 : 0;
      fmt::print("{:<9} {:<14} {:<44} {:<18} {:<14} {:>2}+{:<2} {:>5.1f} {:>6.1f}  {}\n", d.name, base.name,
                 model::rule_text(rule), answer, search::to_string(rs && !rs->learned ? first.outcome : last.outcome),
                 first.steps.size(), rs && rs->learned ? rs->learned->steps.size() : 0,
                 first.device_seconds + (rs && rs->learned ? rs->learned->device_seconds : 0.0), wall,
                 last.consistent.empty() ? std::string() : last.consistent.front().name);
      std::fflush(stdout);
    }
  }
  const int runs = named + wrong + none + open;
  fmt::print("\ntotals: {} runs; {} named, {} wrong, {} none within the bound, {} open; within the bound (1-2 keys): "
             "{} of {} named\n",
             runs, named, wrong, none, open, named_in_bound, in_bound);
  std::filesystem::remove_all(dir);
  if (check) fmt::print("check: {}\n", wrong == 0 ? "no wrong answer" : "FAILED: a wrong answer");
  return check && wrong > 0 ? 1 : 0;
}

// Everything a learn answer shows: each step (case, purpose, groups, who was dropped), the outcome, its reason,
// survivors, groups, mechanisms and intervals. Two runs with one signature gave the same answer by the same steps.
std::string answer_signature(const search::LearnResult& r) {
  std::string out;
  for (const auto& st : r.steps) {
    out += fmt::format("step {} {} {} {}:", st.index, search::to_string(st.purpose), st.case_id, st.origin);
    for (size_t g = 0; g < st.group_sizes.size(); ++g)
      out += fmt::format(" {}[{}]", st.group_sizes[g], fmt::join(st.groups[g], ","));
    out += fmt::format(" dropped {} [{}] left {} [{}] {}\n", st.dropped_count, fmt::join(st.dropped, ","),
                       st.survivor_count, fmt::join(st.survivors, ","), st.oracle_note);
  }
  out += fmt::format("{}: {}\nsurvivors {}\n", search::to_string(r.outcome), r.reason, fmt::join(r.survivors, ","));
  for (const auto& g : r.equivalence) out += fmt::format("group {}\n", fmt::join(g, ","));
  for (const auto& m : r.mechanisms)
    out += fmt::format("{} {} {} {}\n", m.mechanism, search::to_string(m.state), fmt::join(m.values, ","), m.settled_by);
  for (const auto& iv : r.intervals) out += iv.text() + "\n";
  return out;
}

struct SpeedRun {
  double wall_s = 0, cpu_s = 0, device_s = 0;
  long peak_kb = 0;
  size_t steps = 0;
  std::string outcome, signature;
};

// One learn run in a child process: its peak RSS (getrusage) is then its own, not the largest of the runs so far.
// The child times what a user of `tbcheck learn` waits for: the composition space built, the corpus read, the
// learner run.
SpeedRun speed_run(const model::Device& d, const std::string& corpus_dir, const std::string& oracle, bool share, int jobs) {
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("bench_learn: pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("bench_learn: fork failed");
  if (pid == 0) {
    close(fd[0]);
    search::LearnOptions o;  // the defaults: 3 repetitions, 20 ms per model unit
    o.oracle_spec = oracle;
    o.space = search::LearnSpace::Compositions;
    o.synthesis_budget_s = 30;
    o.share_simulations = share;
    o.jobs = jobs;
    const auto t0 = std::chrono::steady_clock::now();
    search::SpaceAndCorpus in = search::composition_space_and_corpus(d, {corpus_dir});
    const search::LearnResult r = search::learn(std::move(in.space), d, in.corpus, o);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    const double cpu = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                       static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    const std::string msg = fmt::format("{} {} {} {} {} {}\n{}", wall, cpu, r.device_seconds, u.ru_maxrss, r.steps.size(),
                                        search::to_string(r.outcome), answer_signature(r));
    for (size_t at = 0; at < msg.size();) {
      const ssize_t n = write(fd[1], msg.data() + at, msg.size() - at);
      if (n <= 0) _exit(1);
      at += static_cast<size_t>(n);
    }
    close(fd[1]);
    _exit(0);
  }
  close(fd[1]);
  std::string msg;
  char buf[65536];
  for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) msg.append(buf, static_cast<size_t>(n));
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  SpeedRun run;
  const size_t eol = msg.find('\n');
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || eol == std::string::npos) {
    run.outcome = "CRASHED";
    return run;
  }
  char outcome[64] = {0};
  if (std::sscanf(msg.c_str(), "%lf %lf %lf %ld %zu %63s", &run.wall_s, &run.cpu_s, &run.device_s, &run.peak_kb, &run.steps,
                  outcome) != 6)
    run.outcome = "UNREADABLE";
  else
    run.outcome = outcome;
  run.signature = msg.substr(eol + 1);
  return run;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int speed_bench(const std::vector<std::string>& devices, const std::vector<int>& distances, int per_distance,
                const std::string& corpus_dir, uint64_t seed, bool check) {
  const int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));  // learn's default
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tbcheck-bench-learn-speed-{}", seed);
  std::filesystem::create_directories(dir);
  fmt::print("learn's host time against its device time: the compositions of the main table (seed {} + d + 1000 i), "
             "learned over the device's composition space from the repository corpus (learn's default), clean, 3 "
             "repetitions, 20 ms per model unit; each run in a child process, timed from building the space and "
             "reading the corpus to the answer; 'every' simulates every candidate on every case, 'shared' shares a "
             "simulation among candidates the case cannot tell apart, {} job(s)\n",
             seed, jobs);
  fmt::print("cell: wall-s cpu-s (of the child, user + system) device-s wall/device peak-MB\n\n");
  fmt::print("{:<22} {:<72} {:>1} {:>5} {:<14} | {:<35} | {:<35} | {}\n", "device", "composition", "d", "steps",
             "outcome", "every candidate", "shared", "same answer");
  int differ = 0;
  for (size_t di = 0; di < devices.size(); ++di) {
    const model::Device& d = model::builtin_device(devices[di], "bench_learn", "--devices");
    std::vector<double> ratio[2], wall[2], cpu[2], peak[2];
    for (int dist : distances) {
      for (const auto& [truth, path] : acceptance_draws(d, di, dist, seed, per_distance, dir)) {
        SpeedRun runs[2];
        for (int share = 0; share < 2; ++share) {
          runs[share] = speed_run(d, corpus_dir, "sim:" + path, share == 1, share == 1 ? jobs : 1);
          const SpeedRun& r = runs[share];
          wall[share].push_back(r.wall_s);
          cpu[share].push_back(r.cpu_s);
          ratio[share].push_back(r.device_s > 0 ? r.wall_s / r.device_s : 0);
          peak[share].push_back(static_cast<double>(r.peak_kb) / 1024.0);
        }
        const bool same = runs[0].outcome == runs[1].outcome && runs[0].signature == runs[1].signature &&
                          runs[0].outcome != "CRASHED" && runs[0].outcome != "UNREADABLE";
        differ += same ? 0 : 1;
        std::string row = fmt::format("{:<22} {:<72} {:>1} {:>5} {:<14}", d.name, truth.name, dist, runs[1].steps,
                                      runs[1].outcome);
        for (const auto& r : runs)
          row += fmt::format(" | {:>6.1f} {:>6.1f} {:>5.2f} {:>6.1f} {:>6.0f}", r.wall_s, r.cpu_s, r.device_s,
                             r.device_s > 0 ? r.wall_s / r.device_s : 0.0, static_cast<double>(r.peak_kb) / 1024.0);
        fmt::print("{} | {}\n", row, same ? "yes" : "NO");
        std::fflush(stdout);
      }
    }
    fmt::print("{:<22} median {:>79} | {:>6.1f} {:>6.1f} {:>5} {:>6.1f} {:>6.0f} | {:>6.1f} {:>6.1f} {:>5} {:>6.1f} {:>6.0f} | "
               "largest peak {:.0f} / {:.0f} MB\n",
               d.name, "", median(wall[0]), median(cpu[0]), "", median(ratio[0]), median(peak[0]), median(wall[1]),
               median(cpu[1]), "", median(ratio[1]), median(peak[1]), peak[0].empty() ? 0.0 : *std::max_element(peak[0].begin(), peak[0].end()),
               peak[1].empty() ? 0.0 : *std::max_element(peak[1].begin(), peak[1].end()));
  }
  std::filesystem::remove_all(dir);
  if (check) fmt::print("check: {}\n", differ == 0 ? "every shared run gave the answer of simulating every candidate"
                                                    : fmt::format("{} run(s) gave another answer", differ));
  return check && differ > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> devices = {"rtx3090", "h100-sxm"};
  std::vector<int> distances = {2, 3};
  uint64_t seed = 1;
  int per_distance = 3, reps = 5;
  double noise = 0.1, budget = 30;
  bool with_noise = true, check = false;
  int thresholds = 0, planted = 0;
  bool list = false, speed = false, devices_given = false;
  int failures = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_learn: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--devices") {
      devices = split(next());
      devices_given = true;
    }
    else if (a == "--seed") seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--per-distance") per_distance = std::atoi(next().c_str());
    else if (a == "--noise") noise = std::atof(next().c_str());
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else if (a == "--budget") budget = std::atof(next().c_str());
    else if (a == "--distances") {
      distances.clear();
      for (const auto& x : split(next())) distances.push_back(std::atoi(x.c_str()));
    } else if (a == "--no-noise") with_noise = false;
    else if (a == "--check") check = true;
    else if (a == "--thresholds") thresholds = std::atoi(next().c_str());
    else if (a == "--list") list = true;
    else if (a == "--planted-rules") planted = std::atoi(next().c_str());
    else if (a == "--speed") speed = true;
    else {
      std::fprintf(stderr, "bench_learn: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  if (speed) {
    if (!devices_given) devices = {"rtx3090", "h100-sxm", "h100-sxm-assumed-gpcs"};
    return speed_bench(devices, distances, per_distance, std::string(TBCHECK_SOURCE_DIR) + "/corpus", seed, check);
  }
  std::vector<model::Case> corpus = model::load_cases(std::string(TBCHECK_SOURCE_DIR) + "/corpus");
  const std::string shared = std::string(TBCHECK_SOURCE_DIR) + "/../shared/external";
  const bool have_shared = std::filesystem::exists(shared);
  if (have_shared) {
    auto more = model::load_cases(shared);
    corpus.insert(corpus.end(), more.begin(), more.end());
  }
  if (planted > 0) return planted_rules_bench(devices, corpus, seed, planted, budget, check);
  if (thresholds > 0) return thresholds_bench(devices, corpus, seed, thresholds, noise, reps, budget, with_noise, check, list);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("tbcheck-bench-learn-{}", seed);
  std::filesystem::create_directories(dir);
  const auto& space = model::all_compositions();
  const auto& shipped = model::builtin_hypotheses();
  fmt::print("compositions for device i (0-based in --devices) at distance d drawn with seed {} + d + 1000 i\n", seed);
  fmt::print("corpus: {} cases (repository corpus{}); {} compositions, {} shipped; seed {}; noise {} over {} repetitions; "
             "Z3 budget {} s per run\n",
             corpus.size(), have_shared ? " and ../shared/external" : " only", space.size(), shipped.size(), seed, noise,
             reps, budget);
  fmt::print("cell: grade/outcome steps device-s wall-s\n\n");
  fmt::print("{:<9} {:<80} {:>1} | {:<30} | {:<30} | {:<30} | {:<30}\n", "device", "composition (seed " + std::to_string(seed) + ")",
             "d", "space, clean", "shipped list, clean", "space, noisy", "shipped list, noisy");
  struct Sum {
    size_t steps = 0, named = 0, wrong = 0, n = 0;
    double device_s = 0, wall_s = 0;
  };
  Sum sums[4];
  for (size_t di = 0; di < devices.size(); ++di) {
    const std::string& dn = devices[di];
    const model::Device& d = model::builtin_device(dn, "bench_learn", "--devices");
    for (int dist : distances) {
      for (const auto& [truth, path] : acceptance_draws(d, di, dist, seed, per_distance, dir)) {
        const std::string oracle = "sim:" + path;
        Cell cells[4];
        cells[0] = run(space, search::LearnSpace::Compositions, d, corpus, oracle, truth, 0.0, 1, budget, 1);
        cells[1] = run(shipped, search::LearnSpace::List, d, corpus, oracle, truth, 0.0, 1, budget, 1);
        if (with_noise) {
          cells[2] = run(space, search::LearnSpace::Compositions, d, corpus, oracle, truth, noise, reps, budget, 7);
          cells[3] = run(shipped, search::LearnSpace::List, d, corpus, oracle, truth, noise, reps, budget, 7);
        }
        std::string row = fmt::format("{:<9} {:<80} {:>1}", dn, truth.name, dist);
        for (int k = 0; k < (with_noise ? 4 : 2); ++k) {
          const Cell& c = cells[k];
          row += fmt::format(" | {:<17} {:>2} {:>5.1f} {:>4.1f}", c.grade, c.steps, c.device_s, c.wall_s);
          sums[k].steps += c.steps;
          sums[k].device_s += c.device_s;
          sums[k].wall_s += c.wall_s;
          sums[k].named += c.grade.rfind("named", 0) == 0 ? 1 : 0;
          sums[k].wrong += c.grade.rfind("WRONG", 0) == 0 ? 1 : 0;
          ++sums[k].n;
        }
        fmt::print("{}\n", row);
        for (int k = 0; k < (with_noise ? 4 : 2); ++k)
          failures += cells[k].grade.rfind("WRONG", 0) == 0 ? 1 : 0;
        if (cells[0].grade.rfind("named", 0) != 0 && cells[0].grade.rfind("none-fits", 0) != 0) ++failures;
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\ntotals (named / wrong of runs; steps; device-s; wall-s):\n");
  const char* labels[4] = {"space, clean", "shipped list, clean", "space, noisy", "shipped list, noisy"};
  for (int k = 0; k < (with_noise ? 4 : 2); ++k)
    fmt::print("  {:<20} {:>2} / {:>2} of {:>2}; {:>4} steps; {:>7.1f} device-s; {:>6.1f} s wall\n", labels[k],
               sums[k].named, sums[k].wrong, sums[k].n, sums[k].steps, sums[k].device_s, sums[k].wall_s);
  std::filesystem::remove_all(dir);
  if (check) fmt::print("check: {}\n", failures == 0 ? "every answer named the composition or said none fits; none wrong"
                                                      : fmt::format("{} failing answer(s)", failures));
  return check && failures > 0 ? 1 : 0;
}
