// The random kernel generator of seed 000 Section III-A (see random.hpp), made reproducible:
// every draw goes through Rng, whose mapping from std::mt19937_64 output is written out here.
#include "tbcheck/search/random.hpp"

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::search {

Rng::Rng(uint64_t seed) : engine_(seed) {}

uint64_t Rng::next() { return engine_(); }

int64_t Rng::uniform(int64_t lo, int64_t hi) {
  // Rejection sampling: draws in the incomplete top bucket are redrawn, so every value in
  // [lo, hi] is exactly equally likely and the mapping is the same on every platform.
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<int64_t>(next());  // the full 64-bit range
  // 2^64 mod span values at the bottom are redrawn; the remaining 2^64 - threshold values are a whole
  // multiple of span.
  const uint64_t threshold = (0 - span) % span;
  uint64_t x = next();
  while (x < threshold) x = next();
  return lo + static_cast<int64_t>(x % span);
}

std::string_view to_string(FillEnd e) {
  switch (e) {
    case FillEnd::DeviceFull: return "device-full";
    case FillEnd::KernelCap: return "kernel-cap";
  }
  return "?";
}

std::vector<int> realizable_regs(const model::Device& d) {
  std::vector<int> v;
  for (int r : model::probe_register_counts())
    if (r <= d.max_regs_per_thread) v.push_back(r);
  return v;
}

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Local memory per thread of the probe kernel compiled for `regs`: its 256-int array minus the
// registers it may keep spills to local memory (seed 000 III-B: "where register usage is reduced,
// local memory usage increases proportionally"). An estimate; the CUDA oracle reads the real
// localSizeBytes of each variant. What matters to the model is only that it falls as regs rise.
int probe_local_bytes(int regs) { return 4 * std::max(0, 256 - regs); }

bool fits_empty_sm(const model::Kernel& k, const model::Scenario& base, const std::vector<model::Hypothesis>& hs) {
  for (const auto& h : hs)
    if (!model::infeasibility_reason(k, base.device, h).empty()) return false;
  return true;
}

// Whether every block of the last kernel starts at time 0 alongside all earlier kernels when no block
// ever retires: the device "can accommodate the next kernel concurrently" (seed 000 III-A).
bool last_fits_concurrently(const model::Scenario& s, const model::Hypothesis& judge) {
  model::Scenario forever = s;
  for (auto& k : forever.kernels) k.duration = 1'000'000'000;
  model::Schedule sch = model::simulate(forever, judge);
  for (const auto& b : sch.kernels.back().blocks)
    if (b.start != 0) return false;
  return true;
}

}  // namespace

std::string random_case_id(const model::Device& d, uint64_t seed, int index, int count) {
  // At least 4 digits, so the names of a seed do not change with --count below 10000.
  int width = std::max(4, static_cast<int>(std::to_string(std::max(count - 1, 0)).size()));
  return fmt::format("random-{}-s{}-{:0{}}", d.name, seed, index, width);
}

// Reading of Section III-A ("random kernels are continuously generated and dispatched to the GPGPU for
// concurrent execution across distinct CUDA streams ... until the GPGPU reaches its capacity and cannot
// accommodate the next kernel concurrently"): kernels are launched one after another, each in its own
// stream; the generator keeps launching while every block of the newest kernel becomes resident at once
// beside all earlier ones (judged, with no block ever retiring, by the judge hypothesis playing the
// device), and the first kernel the device cannot hold entirely is still launched: it is the one the
// paper's Table II cases end with (Case 2.2's kernel 3, Case 4.2's kernel 9), whose blocks must wait and
// whose placement shows the mechanisms. So every case ends with exactly one kernel that does not fit.
RandomCase random_case(const model::Device& d, uint64_t seed, int index, const RandomOptions& o) {
  const model::Hypothesis* judge = model::find_builtin_hypothesis(o.judge);
  if (!judge) throw model::InputError("random", "judge", fmt::format("unknown hypothesis '{}'", o.judge));
  const int max_blocks = o.max_blocks > 0 ? o.max_blocks : d.sms;
  if (o.min_blocks < 1 || max_blocks < o.min_blocks)
    throw model::InputError("random", "blocks", fmt::format("need 1 <= min ({}) <= max ({})", o.min_blocks, max_blocks));
  if (o.max_duration < 1) throw model::InputError("random", "max_duration", "must be at least 1");
  const std::vector<int> regs_set = realizable_regs(d);
  if (regs_set.empty()) throw model::InputError("random", "device", "no probe register variant fits the device");
  std::vector<model::Hypothesis> must_run = o.must_run;
  must_run.push_back(*judge);

  Rng rng(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(index) + 1)));
  RandomCase out;
  model::Case& c = out.c;
  c.scenario.device = d;
  c.scenario.device_builtin = true;
  size_t first_regs_at = 0;  // index into regs_set of the first kernel's registers
  for (int i = 0;; ++i) {
    if (i == o.max_kernels) {
      out.end = FillEnd::KernelCap;
      break;
    }
    model::Kernel k;
    bool found = false;
    for (int attempt = 0; attempt < 1000 && !found; ++attempt) {
      k = model::Kernel{};
      k.name = fmt::format("k{}", i + 1);
      k.blocks = static_cast<int>(rng.uniform(o.min_blocks, max_blocks));
      k.threads = static_cast<int>(rng.uniform(1, d.max_threads_per_block));
      // The paper's caution: a later kernel must not need more local memory than the first, or it would
      // wait for a local-memory reconfiguration of an idle GPU. Local memory falls as registers rise, so
      // later kernels draw registers at or above the first kernel's.
      size_t lo = i == 0 ? 0 : first_regs_at;
      size_t at = static_cast<size_t>(rng.uniform(static_cast<int64_t>(lo), static_cast<int64_t>(regs_set.size()) - 1));
      k.regs = regs_set[at];
      k.local = probe_local_bytes(k.regs);
      // Half the kernels use no shared memory (as most of Table II's do); the rest any 128-byte multiple.
      const int smem_steps = d.max_smem_per_block / 128;
      k.smem = rng.chance(1, 2) ? 0 : static_cast<int>(rng.uniform(1, std::max(1, smem_steps))) * 128;
      if (k.smem > d.max_smem_per_block) k.smem = d.max_smem_per_block;
      k.duration = static_cast<int>(rng.uniform(1, o.max_duration));
      found = fits_empty_sm(k, c.scenario, must_run);
      if (found && i == 0) first_regs_at = at;
    }
    if (!found)
      throw model::InputError("random", "device",
                              fmt::format("no random kernel fits an empty SM of {} under every hypothesis asked for", d.name));
    c.scenario.kernels.push_back(k);
    if (!last_fits_concurrently(c.scenario, *judge)) {
      out.end = FillEnd::DeviceFull;
      break;
    }
  }
  c.id = random_case_id(d, seed, index, 1);
  c.source = fmt::format("tbcheck random: seed 000 Section III-A generator, seed {}, case {}, fill judged by {}", seed,
                         index, judge->name);
  c.notes = out.end == FillEnd::DeviceFull
                ? "the last kernel is the first one the device could not hold beside the earlier kernels"
                : fmt::format("stopped at the cap of {} kernels before the device was full", o.max_kernels);
  return out;
}

}  // namespace tbcheck::search
