// How many synthesized cases rest on tied retirements: each case's two hypotheses re-simulated under the
// other reading (search::tie_robust), and those that move judged over every order (every_order_separates).
#include <cstdio>
#include <string>
#include <vector>

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/search/learn.hpp"
#include "tbcheck/search/ties.hpp"

using namespace tbcheck;

namespace {

// Learn's confirmation on `device`: alg1 against each composition one option away, witnessed as learn's
// synthesize does it for warp-placement pairs (the PB-hole search) and otherwise by distinguish_pair (learn
// tries a quick simulator search of its own first; distinguish_pair's pre-pass is the same kind of search).
// Before: the witness as found; after: through robust_witness, as learn and distinguish now use it.
void learn_confirmation(const std::string& device) {
  const model::Device& d = model::builtin_device(device, "--learn", "device");
  const model::Hypothesis& alg1 = *model::find_builtin_hypothesis("alg1");
  search::DistinguishBounds b;
  int pairs = 0, witnesses = 0, before = 0, after = 0, every_order = 0;
  for (const auto& n : model::neighbours(alg1, 1)) {
    if (model::option_distance(alg1, n) != 1) continue;
    ++pairs;
    bool moved = false;
    search::WitnessTies ties = search::WitnessTies::Robust;
    std::string detail;
    if (search::differ_in_warp_placement(alg1, n)) {
      auto w = search::pb_hole_search(alg1, n, d, 3000);
      if (!w) continue;
      moved = !search::tie_robust(w->scenario, {alg1, n}).robust();
      const search::RobustWitness r = search::robust_witness(w->scenario, alg1, n, b.params.max_duration);
      ties = r.ties;
      detail = r.orders.detail;
    } else {
      const search::PairResult r = search::distinguish_pair(alg1, n, d, b);
      if (r.outcome != search::PairOutcome::Separated || !r.witness) continue;
      moved = r.ties == search::WitnessTies::Staggered || r.ties == search::WitnessTies::EveryOrder ||
              r.ties == search::WitnessTies::Dependent;
      ties = r.ties;
      if (r.ties == search::WitnessTies::Dependent)
        detail = search::every_order_separates(r.witness->scenario, alg1, n).detail;
    }
    ++witnesses;
    before += moved;
    after += ties == search::WitnessTies::Dependent;
    every_order += ties == search::WitnessTies::EveryOrder;
    if (moved)
      std::printf("  alg1 / %s: %s%s%s\n", n.name.c_str(), std::string(search::to_string(ties)).c_str(),
                  detail.empty() ? "" : ": ", detail.c_str());
  }
  std::printf("learn confirmation on %s: %d neighbours of alg1, %d witnessed; tie-dependent as found %d, after "
              "robust_witness %d (%d separated under every order)\n",
              device.c_str(), pairs, witnesses, before, after, every_order);
}

int bench(int argc, char** argv) {
  std::vector<std::string> paths;
  // The hypotheses of the shipped witnesses that are not shipped themselves.
  std::vector<std::string> dirs = {std::string(TBCHECK_SOURCE_DIR) + "/corpus/hypotheses-extra",
                                   std::string(TBCHECK_SOURCE_DIR) + "/tests/data/cluster"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--learn") {
      if (i + 1 >= argc) throw model::InputError("command line", "--learn", "needs a device name");
      learn_confirmation(argv[++i]);
      return 0;
    }
    if (a == "--hypotheses-dir") {
      if (i + 1 >= argc) throw model::InputError("command line", "--hypotheses-dir", "needs a folder");
      dirs.push_back(argv[++i]);
    } else {
      paths.push_back(a);
    }
  }
  if (paths.empty())
    for (const char* p : {"/corpus/synth", "/corpus/synth-cluster"}) paths.push_back(std::string(TBCHECK_SOURCE_DIR) + p);
  int total = 0, sms = 0, dependent = 0;
  for (const auto& p : paths) {
    const search::TieCount c = search::count_tie_dependent(search::tie_subjects(p, dirs));
    std::printf("%s: %d cases, %d whose SMs move under the other reading of tied retirements (%d of them separated "
                "under every order), %d whose starts only move\n",
                p.c_str(), c.cases, c.sms_move, c.every_order, c.starts_move);
    for (const auto& d : c.dependent) std::printf("  %s\n", d.c_str());
    total += c.cases;
    sms += c.sms_move;
    dependent += c.tie_dependent();
  }
  std::printf("SMs move: %d of %d; tie-dependent (not separated under every order): %d of %d\n", sms, total, dependent,
              total);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "bench_ties: %s\nusage: bench_ties [case file or folder ...] [--hypotheses-dir DIR ...] | --learn DEVICE\n",
                 e.what());
    return 2;
  }
}
