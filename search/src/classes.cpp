// One-kernel structures decided by exhaustive simulation (classes.hpp): warps and registers take every
// value of the query's domain, shared memory one value per class, the duration 1.
#include "classes.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "tbcheck/model/resources.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/smt/synthesis.hpp"
#include "witness.hpp"

namespace tbcheck::search::detail {

std::string_view to_string(Enumerated e) {
  switch (e) {
    case Enumerated::Separates: return "separates";
    case Enumerated::Inseparable: return "inseparable";
    case Enumerated::NotCovered: return "not covered";
    case Enumerated::OverLimit: return "over the limit";
  }
  return "?";
}

namespace {

// What the rules read of a block's shared memory S in a one-kernel structure (the argument is in
// docs/synthesis.md): whether each hypothesis ignores it, whether it is zero, and how many S fit in
// each configuration the device offers (every limit and every rounding of config_s is one of those).
using SmemSignature = std::tuple<std::vector<bool>, bool, std::vector<int>>;

SmemSignature smem_signature(int smem, const std::vector<const model::Hypothesis*>& hs, const model::Device& d) {
  model::Kernel k;
  k.smem = smem;
  const int s = k.smem_per_block(d);
  std::vector<bool> ignored;
  for (const auto* h : hs) ignored.push_back(h->smem_ignore_below && s < *h->smem_ignore_below);
  std::vector<int> fit;
  if (s > 0)
    for (int kb : d.smem_configs_kb) fit.push_back(kb * 1024 / s);
  return {ignored, s == 0, fit};
}

std::vector<int> domain_regs(const model::Device& d, const smt::ParamBounds& params) {
  if (!params.vary_regs) return {32};
  std::vector<int> regs;
  for (int x : smt::realizable_regs())
    if (x <= d.max_regs_per_thread) regs.push_back(x);
  return regs;
}

int domain_max_warps(const model::Device& d, const smt::ParamBounds& params) {
  return std::min(params.max_warps, d.max_threads_per_block / model::kThreadsPerWarp);
}

// The class index of every shared-memory value of the domain, by its 128-byte units.
std::vector<int> class_of_units(const std::vector<std::vector<int>>& classes) {
  std::vector<int> out;
  for (size_t c = 0; c < classes.size(); ++c)
    for (int x : classes[c]) {
      const size_t u = static_cast<size_t>(x / 128);
      if (out.size() <= u) out.resize(u + 1, -1);
      out[u] = static_cast<int>(c);
    }
  return out;
}

// A schedule of one kernel, exactly: 11 bits per block (SM below 64, start below 32), at most 5 blocks.
std::optional<uint64_t> pack(const model::Schedule& sch) {
  const auto& blocks = sch.kernels.front().blocks;
  if (blocks.size() > 5) return std::nullopt;
  uint64_t out = 0;
  for (const auto& b : blocks) {
    if (b.sm < 0 || b.sm >= 64 || b.start < 0 || b.start >= 32) return std::nullopt;
    out = (out << 11) | (static_cast<uint64_t>(b.sm) << 5) | static_cast<uint64_t>(b.start);
  }
  return out;
}

// The one-kernel scenario of the enumeration, duration 1.
model::Scenario one_kernel(const model::Device& d, int blocks) {
  model::Scenario s;
  s.device = d;
  s.device_builtin = false;
  s.kernels.resize(1);
  model::Kernel& k = s.kernels.front();
  k.name = "k1";
  k.blocks = blocks;
  k.duration = 1;
  return s;
}

}  // namespace

std::vector<std::vector<int>> smem_classes(const std::vector<const model::Hypothesis*>& hs, const model::Device& d,
                                           const smt::ParamBounds& params) {
  if (!params.vary_smem) return {{0}};
  std::map<SmemSignature, size_t> index;
  std::vector<std::vector<int>> out;
  for (int units = 0; units <= d.max_smem_per_block / 128; ++units) {
    const int smem = units * 128;
    auto [it, fresh] = index.emplace(smem_signature(smem, hs, d), out.size());
    if (fresh) out.emplace_back();
    out[it->second].push_back(smem);
  }
  return out;
}

model::Kernel class_representative(const model::Kernel& k, const std::vector<std::vector<int>>& classes) {
  model::Kernel r = k;
  r.duration = 1;
  for (const auto& c : classes)
    for (int x : c)
      if (x == k.smem) r.smem = c.front();
  return r;
}

const OneKernelTables::Table& OneKernelTables::table(const model::Hypothesis& h, const model::Device& d, int blocks,
                                                     const smt::ParamBounds& params) {
  // Keyed by what the schedules depend on: the options (not the name), the device, the structure and
  // the parameter ranges.
  std::string options;
  for (const auto& x : model::option_settings(h)) options += fmt::format("{}={};", x.mechanism, x.value);
  const std::string key = fmt::format("{}|{}|{}|{},{},{}", options, d.to_json().dump(), blocks, params.max_warps,
                                      params.vary_regs, params.vary_smem);
  std::promise<std::shared_ptr<const Table>> mine;
  {
    std::unique_lock<std::mutex> lock(m_);
    auto it = tables_.find(key);
    if (it != tables_.end()) {
      auto answer = it->second;
      lock.unlock();  // wait for another thread's table without holding the cache
      return *answer.get();
    }
    tables_.emplace(key, mine.get_future().share());
  }
  auto t = std::make_shared<Table>();
  t->classes = smem_classes({&h}, d, params);
  t->regs = domain_regs(d, params);
  t->max_warps = domain_max_warps(d, params);
  t->packed.reserve(t->classes.size() * static_cast<size_t>(t->max_warps) * t->regs.size());
  model::Scenario s = one_kernel(d, blocks);
  model::Kernel& k = s.kernels.front();
  for (const auto& c : t->classes)
    for (int w = 1; w <= t->max_warps; ++w)
      for (int x : t->regs) {
        k.threads = w * model::kThreadsPerWarp;
        k.regs = x;
        k.smem = c.front();
        uint64_t v = kNotRun;
        if (auto sch = model::try_simulate(s, h)) {
          auto p = pack(*sch);
          if (!p) t->exact = false;
          v = p.value_or(kNotRun);
        }
        t->packed.push_back(v);
      }
  mine.set_value(t);
  return *t;  // the future's copy keeps it alive as long as the cache
}

namespace {

// Why the argument of docs/synthesis.md does not cover a structure ("" when it does).
std::string not_covered(const std::vector<const model::Hypothesis*>& hs, const smt::ParamBounds& params) {
  if (!params.priorities.empty() || !params.tpcs.empty() || !params.clusters.empty())
    return "a structure with stream priorities, TPC masks or clusters";
  if (params.max_local > 0) return "local memory varies";
  // Whether the argument covers a selection is decided here for each one, so a new selection says so.
  for (const auto* h : hs)
    switch (h->selection) {
      case model::Selection::GpcPriority: return fmt::format("{} selects by the GPC map (gpc-priority)", h->name);
      case model::Selection::GpcSpread: return fmt::format("{} selects by the GPC map (gpc-spread)", h->name);
      case model::Selection::TpcPosition: return fmt::format("{} selects by the GPC map (tpc-position)", h->name);
      case model::Selection::Rule: return fmt::format("{} selects by a rule (docs/rules.md)", h->name);
      case model::Selection::RoundRobin:
      case model::Selection::MostRoom: break;
    }
  return "";
}

}  // namespace

ConstantSchedule constant_one_kernel_schedule(OneKernelTables& tables, const model::Hypothesis& h,
                                              const model::Device& d, int blocks, const smt::ParamBounds& params) {
  ConstantSchedule r;
  if (!not_covered({&h}, params).empty()) return r;
  const OneKernelTables::Table& t = tables.table(h, d, blocks, params);
  if (!t.exact) return r;
  std::optional<uint64_t> only;
  for (uint64_t v : t.packed) {
    if (v == OneKernelTables::kNotRun) continue;
    if (only && *only != v) {
      r.outcome = Constancy::Varies;
      return r;
    }
    only = v;
  }
  if (!only) {  // h runs no kernel of the domain: nothing to state
    r.outcome = Constancy::Varies;
    return r;
  }
  for (int i = 0; i < blocks; ++i) {  // pack() put the first block in the highest bits
    const uint64_t b = (*only >> (11 * (blocks - 1 - i))) & 0x7ff;
    r.schedule.emplace_back(static_cast<int>(b >> 5), static_cast<int64_t>(b & 31));
  }
  // The table holds duration 1; with longer durations a start after 0 moves with them.
  for (const auto& [sm, start] : r.schedule)
    if (start != 0 && params.max_duration > 1) {
      r.outcome = Constancy::Varies;
      r.schedule.clear();
      return r;
    }
  r.outcome = Constancy::Constant;
  return r;
}

EnumerationResult enumerate_one_kernel(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                       const model::Device& d, int blocks, const smt::ParamBounds& params,
                                       OneKernelTables* tables) {
  EnumerationResult r;
  r.reason = not_covered({&h1, &h2}, params);
  if (!r.reason.empty()) return r;
  const auto classes = smem_classes({&h1, &h2}, d, params);
  const std::vector<int> regs = domain_regs(d, params);
  const int max_w = domain_max_warps(d, params);
  const OneKernelTables::Table* t1 = tables ? &tables->table(h1, d, blocks, params) : nullptr;
  const OneKernelTables::Table* t2 = tables ? &tables->table(h2, d, blocks, params) : nullptr;
  if (t1 && !(t1->exact && t2->exact)) t1 = t2 = nullptr;  // a schedule beyond the packing: simulate directly
  std::vector<int> c1, c2;
  if (t1) {
    c1 = class_of_units(t1->classes);
    c2 = class_of_units(t2->classes);
  }
  model::Scenario s = one_kernel(d, blocks);
  model::Kernel& k = s.kernels.front();
  // Smallest kernels first, so that a witness found is a small one.
  for (const auto& c : classes)
    for (int w = 1; w <= max_w; ++w)
      for (size_t j = 0; j < regs.size(); ++j) {
        k.threads = w * model::kThreadsPerWarp;
        k.regs = regs[j];
        k.smem = c.front();
        ++r.representatives;
        if (t1) {
          // Each hypothesis' schedule of this kernel is its table's entry for the class of this shared
          // memory under that hypothesis alone (a coarser class than the pair's).
          auto at = [&](const OneKernelTables::Table& t, const std::vector<int>& cls) {
            const size_t u = static_cast<size_t>(c.front() / 128);
            return t.packed[(static_cast<size_t>(cls[u]) * static_cast<size_t>(max_w) + static_cast<size_t>(w - 1)) *
                                regs.size() + j];
          };
          const uint64_t a = at(*t1, c1), b = at(*t2, c2);
          if (a == OneKernelTables::kNotRun || b == OneKernelTables::kNotRun || a == b) continue;
        }
        if (separates(s, h1, h2)) {
          r.outcome = Enumerated::Separates;
          r.witness = s;
          return r;
        }
        if (t1) {  // the tables said the schedules differ; the simulators disagree with them
          r.reason = fmt::format("internal: the one-kernel tables and the simulators disagree on {}", s.to_json().dump());
          return r;
        }
      }
  r.outcome = Enumerated::Inseparable;
  return r;
}

model::Kernel NeedsRepresentatives::kernel(long long i) const {
  model::Kernel k;
  k.blocks = 1;
  k.duration = 1;
  const long long per_warp = static_cast<long long>(regs.size() * smem.size());
  k.threads = static_cast<int>(i / per_warp + 1) * model::kThreadsPerWarp;
  k.regs = regs[static_cast<size_t>((i % per_warp) / static_cast<long long>(smem.size()))];
  k.smem = smem[static_cast<size_t>(i % static_cast<long long>(smem.size()))];
  return k;
}

NeedsRepresentatives needs_representatives(const model::Hypothesis& h1, const model::Hypothesis& h2,
                                           const model::Device& d, const smt::ParamBounds& params) {
  // block_needs reads registers and shared memory only as R and S or 0 where a threshold ignores them,
  // so values giving both hypotheses the same R (S) are one; config_s is a function of W, R and S.
  auto regs_read = [&](const model::Kernel& k) {
    return std::pair{model::block_needs(k, d, h1).regs_per_warp, model::block_needs(k, d, h2).regs_per_warp};
  };
  auto smem_read = [&](const model::Kernel& k) {
    return std::pair{model::block_needs(k, d, h1).smem, model::block_needs(k, d, h2).smem};
  };
  NeedsRepresentatives out;
  out.max_warps = domain_max_warps(d, params);
  model::Kernel k;
  std::set<std::pair<int, int>> seen_r, seen_s;
  for (int x : domain_regs(d, params)) {
    k.regs = x;
    if (seen_r.insert(regs_read(k)).second) out.regs.push_back(x);
  }
  k.regs = 32;
  const int max_units = params.vary_smem ? d.max_smem_per_block / 128 : 0;
  for (int units = 0; units <= max_units; ++units) {
    k.smem = units * 128;
    if (seen_s.insert(smem_read(k)).second) out.smem.push_back(k.smem);
  }
  return out;
}

int common_divisor(const std::vector<int>& durations) {
  int g = 0;
  for (int x : durations) g = std::gcd(g, x);
  return g;
}

std::vector<std::vector<int>> duration_tuples(int kernels, int max_duration) {
  // A tuple with gcd g > 1 separates exactly when the tuple divided by g does (common_divisor).
  std::vector<std::vector<int>> out;
  std::vector<int> t(static_cast<size_t>(kernels), 1);
  for (;;) {
    if (common_divisor(t) == 1) out.push_back(t);
    size_t i = 0;
    while (i < t.size() && t[i] == max_duration) t[i++] = 1;
    if (i == t.size()) break;
    ++t[i];
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::accumulate(a.begin(), a.end(), 0) < std::accumulate(b.begin(), b.end(), 0);
  });
  return out;
}

EnumerationResult enumerate_structure(const model::Hypothesis& h1, const model::Hypothesis& h2, const model::Device& d,
                                      const std::vector<int>& blocks, const smt::ParamBounds& params,
                                      long long max_scenarios, OneKernelTables* tables) {
  if (blocks.size() == 1) return enumerate_one_kernel(h1, h2, d, blocks.front(), params, tables);
  EnumerationResult r;
  r.reason = not_covered({&h1, &h2}, params);
  if (!r.reason.empty()) return r;
  const NeedsRepresentatives reps = needs_representatives(h1, h2, d, params);
  const long long n = reps.size();
  const auto durations = duration_tuples(static_cast<int>(blocks.size()), params.max_duration);
  long long size = static_cast<long long>(durations.size());
  for (size_t i = 0; i < blocks.size(); ++i) size = n > 0 && size > LLONG_MAX / n ? LLONG_MAX : size * n;
  r.size = size;
  if (size > max_scenarios) {
    r.outcome = Enumerated::OverLimit;
    r.reason = fmt::format("the complete enumeration needs {} scenarios ({} kernels of {} representatives each, {} "
                           "duration tuples), over the limit of {}",
                           size == LLONG_MAX ? std::string("more than 9.2e18") : fmt::format("{:.3g}", static_cast<double>(size)),
                           blocks.size(), n, durations.size(), max_scenarios);
    return r;
  }
  model::Scenario s;
  s.device = d;
  s.device_builtin = false;
  s.kernels.resize(blocks.size());
  if (n == 0) {  // an empty domain has no scenario to separate
    r.outcome = Enumerated::Inseparable;
    return r;
  }
  std::vector<long long> at(blocks.size(), 0);  // the representative of each kernel, first kernel slowest
  for (;;) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      model::Kernel& k = s.kernels[i];
      k = reps.kernel(at[i]);
      k.name = fmt::format("k{}", i + 1);
      k.blocks = blocks[i];
    }
    for (const auto& t : durations) {
      for (size_t i = 0; i < blocks.size(); ++i) s.kernels[i].duration = t[i];
      ++r.representatives;
      if (separates(s, h1, h2)) {
        r.outcome = Enumerated::Separates;
        r.witness = s;
        return r;
      }
    }
    size_t i = blocks.size();
    while (i > 0 && at[i - 1] + 1 == n) at[--i] = 0;
    if (i == 0) break;
    ++at[i - 1];
  }
  r.outcome = Enumerated::Inseparable;
  return r;
}

}  // namespace tbcheck::search::detail
