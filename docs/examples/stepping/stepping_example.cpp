// A toy cycle-level simulator with tbcheck's block scheduler in its clock loop (docs/stepping.md): kernels
// launched, placements asked for every cycle, blocks retired when they finish; checked against simulate().
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scheduler.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck::model;

int main() {
  const Device gpu = builtin_device("rtx3090", "example", "device");
  const Hypothesis& policy = *find_builtin_hypothesis("alg1");
  Scheduler scheduler(gpu, policy);

  // The program the toy simulator runs: three kernels; the third is launched at cycle 4 on the first's stream.
  Scenario program;
  program.device = gpu;
  auto kernel = [](const char* name, int blocks, int threads, int regs, int smem, int cycles) {
    Kernel k;
    k.name = name;
    k.blocks = blocks;
    k.threads = threads;
    k.regs = regs;
    k.smem = smem;
    k.duration = cycles;  // in this toy, every block runs this many cycles
    return k;
  };
  program.kernels = {kernel("a", 150, 512, 64, 0, 6), kernel("b", 100, 256, 32, 32 * 1024, 3),
                     kernel("c", 90, 1024, 32, 0, 2)};
  program.kernels[0].stream = 1;
  program.kernels[2].stream = 1;
  program.kernels[2].release = 4;

  std::map<int64_t, std::vector<std::pair<int, int>>> finishing;  // cycle -> (kernel, block), in placement order
  std::vector<std::vector<BlockPlacement>> trace(program.kernels.size());
  for (size_t k = 0; k < program.kernels.size(); ++k) trace[k].resize(static_cast<size_t>(program.kernels[k].blocks));
  size_t launched = 0;
  int placed = 0, total = program.total_blocks();
  for (int64_t cycle = 0; placed < total || scheduler.in_flight() > 0; ++cycle) {
    // 1. The host launched these kernels this cycle.
    while (launched < program.kernels.size() && program.kernels[launched].release <= cycle) {
      const Launch l = scheduler.launch(program.kernels[launched++], cycle);
      if (!l.accepted()) {
        std::printf("refused: %s\n", l.check.reason.c_str());
        return 1;
      }
    }
    // 2. Blocks whose last warp exited this cycle, and 3. placements, as the retirement option says.
    std::vector<std::pair<int, int>> done = std::move(finishing[cycle]);
    finishing.erase(cycle);
    auto place = [&] {
      for (const Placement& p : scheduler.place(cycle).placements) {
        const int64_t end = cycle + program.kernels[static_cast<size_t>(p.kernel)].duration;
        trace[static_cast<size_t>(p.kernel)][static_cast<size_t>(p.block)] = {p.sm, cycle, end};
        finishing[end].push_back({p.kernel, p.block});
        ++placed;
      }
    };
    switch (policy.retirement) {
      case Retirement::AllThenDispatch:
        for (auto [k, b] : done) scheduler.retire(k, b, cycle);
        place();
        break;
      case Retirement::StartOrder:  // one at a time in placement order, each followed by placements
        if (done.empty()) place();
        for (auto [k, b] : done) {
          scheduler.retire(k, b, cycle);
          place();
        }
        break;
    }
  }

  // The same program through simulate(): the stepping scheduler is the same dispatcher.
  const Schedule reference = simulate(program, policy);
  bool same = true;
  int64_t last = 0;
  for (size_t k = 0; k < trace.size(); ++k) {
    same = same && trace[k] == reference.kernels[k].blocks;
    for (const auto& b : trace[k]) last = std::max(last, b.end);
  }
  std::printf("%d blocks on %d SMs, last block ends at cycle %lld\n", placed, gpu.sms, static_cast<long long>(last));
  std::printf("block 0 of c: SM %d at cycle %lld\n", trace[2][0].sm, static_cast<long long>(trace[2][0].start));
  std::printf("matches simulate(): %s\n", same ? "yes" : "no");
  return same ? 0 : 1;
}
