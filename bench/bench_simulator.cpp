// Simulator throughput: a deterministic ~1M-block, ~2000-kernel scenario on h100-sxm under several hypotheses (placements/s,
// ratio to round-robin), the same kernels with clusters and priorities (--hash: behaviour digest; --stepping: Scheduler;
// --rules: the shipped rankings hard-wired beside the same rankings as rules).
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/rule.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/scheduler.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck::model;

namespace {

// splitmix64: fully specified, so the scenario is the same with every compiler and standard library
// (std::uniform_int_distribution is not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int uniform(int lo, int hi) {  // inclusive
    return lo + static_cast<int>(next() % static_cast<uint64_t>(hi - lo + 1));
  }
  double unit() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t s_;
};

// The probe kernel's register variants (docs/design.md, Oracle): 24, 32, ..., 248, 255.
std::vector<int> reg_variants() {
  std::vector<int> v;
  for (int r = 24; r <= 248; r += 8) v.push_back(r);
  v.push_back(255);
  return v;
}

struct GenParams {
  std::string device = "h100-sxm";
  int kernels = 2000;
  int max_blocks = 1000;
  int max_smem = 48 * 1024;
  int max_local = 0;
  uint64_t seed = 1;
};

bool feasible_everywhere(const Kernel& k, const Device& d) {
  for (const auto& h : builtin_hypotheses())
    if (!infeasibility_reason(k, d, h).empty()) return false;
  return true;
}

// Many kernels of mixed sizes; registers biased low (cube of a uniform) and redrawn lower until one
// block fits an empty SM under every shipped hypothesis; about 30% of kernels share 64 streams.
Scenario make_scenario(const GenParams& p) {
  Scenario s;
  s.device = builtin_device(p.device, "bench", "device");
  s.device_builtin = true;
  Rng rng(p.seed);
  const std::vector<int> regs = reg_variants();
  for (int i = 0; i < p.kernels; ++i) {
    Kernel k;
    k.name = fmt::format("k{}", i);
    k.blocks = rng.uniform(1, p.max_blocks);
    k.threads = rng.uniform(32, std::min(1024, s.device.max_threads_per_block));
    double u = rng.unit();
    int ri = static_cast<int>(u * u * u * static_cast<double>(regs.size()));
    k.regs = regs[static_cast<size_t>(std::min<int>(ri, static_cast<int>(regs.size()) - 1))];
    k.smem = rng.uniform(0, 9) < 3 ? 0 : rng.uniform(0, std::min(p.max_smem, s.device.max_smem_per_block));
    k.local = p.max_local > 0 && rng.uniform(0, 3) == 0 ? rng.uniform(0, p.max_local) : 0;
    k.duration = rng.uniform(1, 20);
    if (rng.uniform(0, 9) < 3) k.stream = rng.uniform(0, 63);
    while (!feasible_everywhere(k, s.device)) {
      if (k.regs > regs.front()) {
        k.regs = *(std::lower_bound(regs.begin(), regs.end(), k.regs) - 1);
      } else {
        k.threads = std::max(32, k.threads / 2);
        k.smem /= 2;
      }
    }
    s.kernels.push_back(std::move(k));
  }
  return s;
}

// FNV-1a over every block's (SM, start, end) in kernel and block order.
uint64_t schedule_hash(const Schedule& sch) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xffU;
      h *= 0x100000001b3ULL;
    }
  };
  for (const auto& k : sch.kernels) {
    mix(static_cast<int64_t>(k.blocks.size()));
    for (const auto& b : k.blocks) {
      mix(b.sm);
      mix(b.start);
      mix(b.end);
    }
  }
  return h;
}

const Hypothesis& hypothesis(const std::string& name) {
  const Hypothesis* h = find_builtin_hypothesis(name);
  if (!h) throw std::runtime_error("no shipped hypothesis " + name);
  return *h;
}

void print_hash_line(const std::string& label, const Scenario& s, const Hypothesis& h) {
  FeasibilityCheck why;
  if (const auto sch = try_simulate(s, h, &why))
    fmt::print("{:<34} {:<22} {:016x} makespan {}\n", label, h.name, schedule_hash(*sch), sch->makespan());
  else
    fmt::print("{:<34} {:<22} input error: {}\n", label, h.name, why.message("scenario"));
}

// The differential check: a digest of every schedule of the benchmark scenario, three smaller
// generated scenarios (rtx3090 with local memory, xavier, quadro6000) and every corpus/paper
// case, under every shipped hypothesis and round-robin variants of alg1. Identical output before
// and after an optimization means identical behaviour on all of them.
// as_rules: every hypothesis whose selection is a ranking runs as its rule (model::selection_as_rule), name
// kept, so the output is byte for byte the plain one exactly when the rule engine places every block alike.
int run_hash(const GenParams& bench, bool as_rules) {
  std::vector<std::pair<std::string, Scenario>> scenarios;
  scenarios.emplace_back("bench", make_scenario(bench));
  GenParams g3090;
  g3090.device = "rtx3090";
  g3090.kernels = 300;
  g3090.max_blocks = 200;
  g3090.max_smem = 99 * 1024;
  g3090.max_local = 4096;
  g3090.seed = bench.seed + 1;
  scenarios.emplace_back("rtx3090-local", make_scenario(g3090));
  GenParams gx;
  gx.device = "xavier";
  gx.kernels = 400;
  gx.max_blocks = 40;
  gx.seed = bench.seed + 2;
  scenarios.emplace_back("xavier-small", make_scenario(gx));
  GenParams gq;  // one SM per "TPC", 2 PBs per SM
  gq.device = "quadro6000";
  gq.kernels = 400;
  gq.max_blocks = 60;
  gq.max_local = 2048;
  gq.seed = bench.seed + 3;
  scenarios.emplace_back("quadro6000-small", make_scenario(gq));
  std::string paper = std::string(TBCHECK_SOURCE_DIR) + "/corpus/paper";
  for (const auto& c : load_cases(paper)) scenarios.emplace_back(c.id, c.scenario);
  // The shipped hypotheses, plus round-robin selection over alg1's mechanisms (no shipped hypothesis
  // combines them) so that both selection paths meet every resource mechanism.
  std::vector<Hypothesis> hyps = builtin_hypotheses();
  for (const char* base : {"alg1", "alg1-pb-any", "alg1-contiguous-regs", "alg1-literal", "alg1-no-skip", "olmedo"}) {
    json j = {{"name", std::string("rr-") + base}, {"base", base}, {"selection", "round-robin"}};
    hyps.push_back(hypothesis_from_json(j, "bench"));
  }
  if (as_rules)
    for (auto& h : hyps)
      if (auto r = selection_as_rule(h.selection)) {
        h.selection = Selection::Rule;
        h.rule = *r;
      }
  for (const auto& [label, s] : scenarios)
    for (const auto& h : hyps) print_hash_line(label, s, h);
  return 0;
}

// --rules: each shipped ranking hard-wired and as its rule, one after the other in every repetition, on the
// benchmark scenario (gpc-spread and tpc-position on h100-sxm-assumed-gpcs, which has the GPC map they need).
int run_rules(const Scenario& plain, int reps) {
  Scenario mapped = plain;
  mapped.device = builtin_device("h100-sxm-assumed-gpcs", "bench", "device");
  struct Pair {
    std::string label;
    const Scenario* scenario;
    Hypothesis hard;
    Rule rule;
  };
  auto with = [](std::string base, Selection sel, std::optional<Order> order = std::nullopt) {
    Hypothesis h = hypothesis(base);
    h.selection = sel;
    if (order) h.order = *order;
    return h;
  };
  const Rule general_most_room{{{RuleFeature::Room, Prefer::Max}, {RuleFeature::Position, Prefer::Min}}};
  const std::vector<Pair> pairs = {
      {"round-robin", &plain, with("round-robin", Selection::RoundRobin), *selection_as_rule(Selection::RoundRobin)},
      {"most-room natural", &plain, with("most-room", Selection::MostRoom), *selection_as_rule(Selection::MostRoom)},
      {"most-room even-first", &plain, with("most-room", Selection::MostRoom, Order::EvenFirst),
       *selection_as_rule(Selection::MostRoom)},
      {"alg1 (most-room)", &plain, with("alg1", Selection::MostRoom), *selection_as_rule(Selection::MostRoom)},
      // The same ranking with a key that never decides: the interpreter's key-by-key path, not the index's answer.
      {"most-room, general path", &plain, with("most-room", Selection::MostRoom), general_most_room},
      {"gpc-spread", &mapped, with("most-room", Selection::GpcSpread), *selection_as_rule(Selection::GpcSpread)},
      {"tpc-position", &mapped, with("most-room", Selection::TpcPosition), *selection_as_rule(Selection::TpcPosition)},
  };
  fmt::print("\nselections hard-wired and as rules (best of {}; rule/hard >= 0.8 is the goal):\n", reps);
  fmt::print("{:<24} {:<20} {:>9} {:>13} {:>13} {:>10} {:>6}\n", "selection", "device", "blocks", "hard M/s", "rule M/s",
             "rule/hard", "same");
  for (const auto& p : pairs) {
    Hypothesis rule = p.hard;
    rule.selection = Selection::Rule;
    rule.rule = p.rule;
    double best_hard = 1e300, best_rule = 1e300;
    uint64_t hash_hard = 0, hash_rule = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      hash_hard = schedule_hash(simulate(*p.scenario, p.hard));
      auto t1 = std::chrono::steady_clock::now();
      hash_rule = schedule_hash(simulate(*p.scenario, rule));
      auto t2 = std::chrono::steady_clock::now();
      best_hard = std::min(best_hard, std::chrono::duration<double>(t1 - t0).count());
      best_rule = std::min(best_rule, std::chrono::duration<double>(t2 - t1).count());
    }
    const double nb = p.scenario->total_blocks();
    fmt::print("{:<24} {:<20} {:>9} {:>13.2f} {:>13.2f} {:>10.2f} {:>6}\n", p.label, p.scenario->device.name,
               p.scenario->total_blocks(), nb / best_hard / 1e6, nb / best_rule / 1e6, best_hard / best_rule,
               hash_hard == hash_rule ? "yes" : "NO");
    fmt::print("{:<24} rule: {}\n", "", rule_text(p.rule));
  }
  return 0;
}

// The benchmark scenario with controls. Clusters: on h100-sxm-assumed-gpcs (h100-sxm with an
// assumed GPC map), each kernel launched with 1-D clusters of 1, 2, 4 or 8 blocks (its block count rounded
// up to whole clusters). Priorities: every kernel on a priority in [0, -5] (a stream's kernels share one).
Scenario with_clusters(const Scenario& plain, uint64_t seed) {
  Scenario s = plain;
  s.device = builtin_device("h100-sxm-assumed-gpcs", "bench", "device");
  Rng rng(seed ^ 0xc1u);
  for (auto& k : s.kernels) {
    const int c = 1 << rng.uniform(0, 3);
    k.blocks = (k.blocks + c - 1) / c * c;
    k.cluster = std::array<int, 3>{c, 1, 1};
  }
  return s;
}

Scenario with_priorities(const Scenario& plain, uint64_t seed) {
  Scenario s = plain;
  s.device.stream_priorities = PriorityRange{0, -5, "bench: CUDA's usual range"};
  Rng rng(seed ^ 0x9fu);
  for (auto& k : s.kernels) k.priority = k.stream ? -(*k.stream % 6) : -rng.uniform(0, 5);
  return s;
}

// A simulator's own list of blocks in flight, by end time (the shape of simulate()'s retire queue:
// appends to the last end used, emptied lists reused).
class Ending {
 public:
  void push(int64_t end, std::pair<int, int> block) {
    if (end != last_end_) {
      auto [it, fresh] = lists_.try_emplace(end);
      if (fresh && !spare_.empty()) {
        it->second = std::move(spare_.back());
        spare_.pop_back();
      }
      last_end_ = end;
      last_ = &it->second;
    }
    last_->push_back(block);
  }
  bool empty() const { return lists_.empty(); }
  int64_t next() const { return lists_.begin()->first; }
  // Moves the blocks ending at t (placement order) into out.
  void take(int64_t t, std::vector<std::pair<int, int>>& out) {
    out.clear();
    auto it = lists_.find(t);
    if (it == lists_.end()) return;
    out.swap(it->second);
    spare_.push_back(std::move(it->second));
    lists_.erase(it);
    if (t == last_end_) last_end_ = -1;
  }

 private:
  std::map<int64_t, std::vector<std::pair<int, int>>> lists_;
  std::vector<std::vector<std::pair<int, int>>> spare_;
  int64_t last_end_ = -1;
  std::vector<std::pair<int, int>>* last_ = nullptr;
};

// The scenario through the stepping Scheduler as a simulator's event loop drives it (docs/stepping.md):
// launches at release times, retirements at start + duration in the hypothesis' retirement order, and one
// place() per instant (per retirement under start-order). Returns the schedule it placed.
Schedule step_scenario(const Scenario& s, const Hypothesis& h) {
  Scheduler sch(s.device, h);
  Schedule out;
  out.hypothesis = h.name;
  out.device = s.device.name;
  out.sms = s.device.sms;
  for (const auto& k : s.kernels) out.kernels.push_back({k.name, std::vector<BlockPlacement>(static_cast<size_t>(k.blocks))});
  Ending ending;
  std::vector<std::pair<int, int>> now_ending;
  std::vector<Placement> placed;  // reused: place() appends to it
  auto place = [&](int64_t t) {
    placed.clear();
    sch.place(t, placed);
    for (const Placement& p : placed) {
      const int64_t end = t + s.kernels[static_cast<size_t>(p.kernel)].duration;
      out.kernels[static_cast<size_t>(p.kernel)].blocks[static_cast<size_t>(p.block)] = {p.sm, t, end};
      ending.push(end, {p.kernel, p.block});
    }
  };
  size_t launched = 0;
  int64_t t = 0;
  while (true) {
    while (launched < s.kernels.size() && s.kernels[launched].release <= t) {
      if (!sch.launch(s.kernels[launched], t).accepted()) throw std::runtime_error("a kernel was refused");
      ++launched;
    }
    ending.take(t, now_ending);
    switch (h.retirement) {
      case Retirement::AllThenDispatch:
        for (auto [k, b] : now_ending) sch.retire(k, b, t);
        place(t);
        break;
      case Retirement::StartOrder:
        if (now_ending.empty()) place(t);
        for (auto [k, b] : now_ending) {
          sch.retire(k, b, t);
          place(t);
        }
        break;
    }
    const bool more = launched < s.kernels.size();
    if (ending.empty() && !more) break;
    t = ending.empty() ? s.kernels[launched].release
        : more         ? std::min(ending.next(), s.kernels[launched].release)
                       : ending.next();
  }
  return out;
}

// --stepping: placements per second of simulate() and of the stepping Scheduler driven by an event loop
// (step_scenario) on the same scenario, interleaved per repetition, and whether they place alike.
int run_stepping(const Scenario& s, const std::vector<std::string>& hyps, int reps) {
  const int blocks = s.total_blocks();
  fmt::print("{:<22} {:>9} {:>16} {:>16} {:>18} {:>6}\n", "hypothesis", "blocks", "simulate M/s", "stepping M/s",
             "stepping/simulate", "same");
  for (const auto& name : hyps) {
    const Hypothesis& h = hypothesis(name);
    double best_sim = 1e300, best_step = 1e300;
    uint64_t hash_sim = 0, hash_step = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      hash_sim = schedule_hash(simulate(s, h));
      auto t1 = std::chrono::steady_clock::now();
      hash_step = schedule_hash(step_scenario(s, h));
      auto t2 = std::chrono::steady_clock::now();
      best_sim = std::min(best_sim, std::chrono::duration<double>(t1 - t0).count());
      best_step = std::min(best_step, std::chrono::duration<double>(t2 - t1).count());
    }
    fmt::print("{:<22} {:>9} {:>16.2f} {:>16.2f} {:>18.2f} {:>6}\n", name, blocks, blocks / best_sim / 1e6,
               blocks / best_step / 1e6, best_sim / best_step, hash_sim == hash_step ? "yes" : "NO");
  }
  return 0;
}

struct Row {
  std::string hypothesis;
  int blocks = 0;
  double seconds = 0;  // best of the repetitions
  double rate = 0;     // placements per second
  int64_t makespan = 0;
};

int usage() {
  std::fprintf(stderr,
               "usage: bench_simulator [--reps N] [--kernels N] [--seed S] [--hypotheses a,b,...] [--controls] [--hash]\n"
               "                       [--stepping] [--rules]\n"
               "  default: 3 repetitions of ~1M blocks (2000 kernels) on h100-sxm under\n"
               "  alg1, round-robin, most-room, alg1-contiguous-regs\n"
               "  --hash: print a digest of every schedule (bench scenario, generated scenarios,\n"
               "          corpus/paper cases) under every shipped hypothesis and round-robin variants\n"
               "          of alg1, for differential checks\n"
               "  --stepping: simulate() against the stepping Scheduler (model/scheduler.hpp) on the\n"
               "          same scenario: placements/s of each, their ratio, identical schedules\n"
               "  --rules: each shipped ranking hard-wired beside the same ranking as a rule\n"
               "          (docs/rules.md): placements/s of each, their ratio, identical schedules;\n"
               "          with --hash, every ranking runs as its rule (the digest must not change)\n");
  return 2;
}

}  // namespace

// --controls: the same kernels with with_priorities' stream priorities and a TPC mask of half
// the device on every fourth kernel, drawn from a generator of their own so the kernels stay the plain
// scenario's.
void add_controls(Scenario& s, uint64_t seed) {
  s = with_priorities(s, seed);
  s.device_builtin = false;
  Rng rng(0x17);
  std::vector<int> half;
  for (int t = 0; t < s.device.tpcs(); t += 2) half.push_back(t);
  for (auto& k : s.kernels)
    if (rng.uniform(0, 3) == 0) k.tpcs = half;
}

int main(int argc, char** argv) try {
  GenParams p;
  int reps = 3;
  bool hash = false, controls = false, stepping = false, rules = false;
  std::vector<std::string> hyps = {"alg1", "round-robin", "most-room", "alg1-contiguous-regs"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--reps") reps = std::max(1, std::stoi(value()));
    else if (a == "--kernels") p.kernels = std::max(1, std::stoi(value()));
    else if (a == "--seed") p.seed = std::stoull(value());
    else if (a == "--hash") hash = true;
    else if (a == "--controls") controls = true;
    else if (a == "--stepping") stepping = true;
    else if (a == "--rules") rules = true;
    else if (a == "--hypotheses") {
      hyps.clear();
      std::string list = value();
      size_t at = 0;
      while (at <= list.size()) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos) comma = list.size();
        if (comma > at) hyps.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else return usage();
  }
  if (hash) return run_hash(p, rules);

  Scenario s = make_scenario(p);
  if (controls) add_controls(s, p.seed);
  const int blocks = s.total_blocks();
  fmt::print("scenario: device {}, {} kernels, {} blocks, seed {}, best of {} repetitions\n", s.device.name,
             s.kernels.size(), blocks, p.seed, reps);
  if (stepping) return run_stepping(s, hyps, reps);
  if (rules) return run_rules(s, reps);
  std::vector<Row> rows;
  for (const auto& name : hyps) {
    const Hypothesis& h = hypothesis(name);
    Row r;
    r.hypothesis = name;
    r.blocks = blocks;
    r.seconds = 1e300;
    for (int i = 0; i < reps; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      Schedule sch = simulate(s, h);
      auto t1 = std::chrono::steady_clock::now();
      r.seconds = std::min(r.seconds, std::chrono::duration<double>(t1 - t0).count());
      r.makespan = sch.makespan();
    }
    r.rate = blocks / r.seconds;
    rows.push_back(r);
  }
  // Controls: the same kernels with clusters or priorities, beside plain alg1 in this run.
  struct ControlRow {
    std::string label;
    const Scenario* scenario;
    std::string hypothesis;
  };
  const Scenario clustered = with_clusters(s, p.seed), prioritized = with_priorities(s, p.seed);
  const std::vector<ControlRow> control_rows = {
      {"plain", &s, "alg1"},
      {"plain", &s, "most-room"},
      {"plain", &s, "round-robin"},
      {"clusters", &clustered, "alg1"},
      {"clusters", &clustered, "alg1-priority"},
      {"clusters", &clustered, "most-room"},
      {"clusters", &clustered, "round-robin"},
      {"priorities", &prioritized, "alg1-priority"},
      {"priorities", &prioritized, "alg1"},
  };
  fmt::print("\ncontrols (clusters on {}: {} blocks):\n{:<11} {:<14} {:>9} {:>9} {:>14} {:>7} {:>9}\n",
             clustered.device.name, clustered.total_blocks(), "scenario", "hypothesis", "blocks", "seconds",
             "placements/s M", "x alg1", "makespan");
  double alg1_rate = 0;
  for (const auto& c : control_rows) {
    const Hypothesis& h = hypothesis(c.hypothesis);
    const int nb = c.scenario->total_blocks();
    double best = 1e300;
    int64_t makespan = 0;
    std::string refused;
    for (int i = 0; i < reps && refused.empty(); ++i) {
      auto t0 = std::chrono::steady_clock::now();
      FeasibilityCheck why;
      if (const auto sch = try_simulate(*c.scenario, h, &why)) makespan = sch->makespan();
      else refused = why.reason;
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (!refused.empty()) {
      fmt::print("{:<11} {:<14} refused: {}\n", c.label, c.hypothesis, refused.substr(0, 120));
      continue;
    }
    const double rate = nb / best;
    if (c.label == "plain" && c.hypothesis == "alg1") alg1_rate = rate;
    fmt::print("{:<11} {:<14} {:>9} {:>9.3f} {:>14.2f} {:>7} {:>9}\n", c.label, c.hypothesis, nb, best, rate / 1e6,
               alg1_rate > 0 ? fmt::format("{:.2f}", rate / alg1_rate) : "-", makespan);
  }
  fmt::print("\n");

  double rr_rate = 0;
  for (const auto& r : rows)
    if (r.hypothesis == "round-robin") rr_rate = r.rate;
  fmt::print("{:<22} {:>9} {:>9} {:>14} {:>13} {:>9}\n", "hypothesis", "blocks", "seconds", "placements/s M",
             "x round-robin", "makespan");
  for (const auto& r : rows) {
    std::string ratio = rr_rate > 0 ? fmt::format("{:.2f}", r.rate / rr_rate) : "-";
    fmt::print("{:<22} {:>9} {:>9.3f} {:>14.2f} {:>13} {:>9}\n", r.hypothesis, r.blocks, r.seconds, r.rate / 1e6, ratio,
               r.makespan);
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_simulator: %s\n", e.what());
  return 2;
}
