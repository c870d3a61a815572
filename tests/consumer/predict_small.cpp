// The installed model library's use from docs/python.md: a shipped device and hypothesis, a small
// scenario built in code, its schedule. Prints {"scenario": ..., "schedule": ...} for run.cmake to check.
#include <iostream>
#include <tuple>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/simulator.hpp"

int main() {
  namespace model = tbcheck::model;
  model::Scenario sc;
  sc.device = model::builtin_device("rtx3090", "predict_small", "device");
  for (const auto& [name, blocks, duration] : {std::tuple{"k1", 90, 2}, {"k2", 40, 1}}) {
    model::Kernel k;
    k.name = name;
    k.blocks = blocks;
    k.threads = 256;
    k.smem = 20 * 1024;
    k.duration = duration;
    sc.kernels.push_back(k);
  }
  const model::Hypothesis* h = model::find_builtin_hypothesis("alg1");
  if (!h) return 1;
  const model::Schedule s = model::simulate(sc, *h);
  std::cout << model::json{{"scenario", sc.to_json()}, {"schedule", s.to_json()}}.dump() << "\n";
  return 0;
}
