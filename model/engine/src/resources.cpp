// The resource mechanisms: one function per rule, each citing where it comes from.
// Capacity (how many blocks of a kernel an SM can still take) and commit/release must agree:
// a positive capacity always means the next block really fits.
#include "tbcheck/model/resources.hpp"

#include "tbcheck/model/options.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

namespace tbcheck::model {

// ---- needs of one block (Algorithm 1 lines 4-6; seed 002 thresholds) ----

BlockNeeds block_needs(const Kernel& k, const Device& d, const Hypothesis& h) {
  BlockNeeds n;
  n.warps = k.warps();
  // seed 002 Section III-C2: registers play no part at or below the threshold.
  bool regs_ignored = h.registers_ignore_at_or_below && k.regs <= *h.registers_ignore_at_or_below;
  n.regs_per_warp = regs_ignored ? 0 : k.regs_per_warp(d);
  // seed 002 Section III-C2: shared memory plays no part below the threshold (S includes the reserve).
  int s = k.smem_per_block(d);
  n.smem = (h.smem_ignore_below && s < *h.smem_ignore_below) ? 0 : s;
  switch (h.local) {
    case Local::Ignore: n.local = 0; break;
    case Local::GpuConfig: n.local = k.local; break;
  }
  switch (h.smem_config) {
    case SmemConfig::None: break;
    case SmemConfig::Tpc:
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: {
      // Mechanism 3: config_s = (blocks one empty SM holds) x S, rounded up to a supported configuration.
      int64_t blocks = GpuState::empty_sm_capacity(d, h, n).blocks;
      int64_t bytes = blocks * n.smem;
      if (h.smem_config == SmemConfig::SmFloor) bytes = std::max<int64_t>(bytes, kSmemConfigFloorBytes);
      n.config_s = d.config_at_least(bytes).value_or(d.max_smem_config_bytes());
      break;
    }
  }
  return n;
}

// ---- contiguous allocator (Mechanism 4: shared memory; pb-contiguous registers) ----

std::vector<Interval> ContiguousSpace::holes(int limit) const {
  std::vector<Interval> out;
  int at = 0;
  for (const auto& a : allocs_) {
    if (a.offset > at) out.push_back({at, a.offset - at});
    at = std::max(at, a.offset + a.size);
  }
  if (limit > at) out.push_back({at, limit - at});
  return out;
}

// True when the allocations leave no hole below the end of the last one (their sizes add up to its
// end): then the free tail is the only hole, the common case, answered without a scan.
static bool compact(const std::vector<Interval>& allocs, int used) {
  return allocs.empty() || used == allocs.back().offset + allocs.back().size;
}

int64_t ContiguousSpace::fits(int size, int limit) const {
  if (size <= 0) return kUnlimited;
  if (compact(allocs_, used_)) {
    int at = allocs_.empty() ? 0 : allocs_.back().offset + allocs_.back().size;
    return limit > at ? (limit - at) / size : 0;
  }
  int64_t n = 0;
  int at = 0;
  for (const auto& a : allocs_) {
    if (a.offset > at) n += (a.offset - at) / size;
    at = std::max(at, a.offset + a.size);
  }
  if (limit > at) n += (limit - at) / size;
  return n;
}

int ContiguousSpace::allocate(int size, int limit) {
  // A fresh space (every simulation starts with them) would otherwise grow 1, 2, 4, 8: one allocation instead.
  if (allocs_.capacity() == 0) allocs_.reserve(kReservedIntervals);
  if (size > 0 && compact(allocs_, used_)) {  // first fit is the tail
    int at = allocs_.empty() ? 0 : allocs_.back().offset + allocs_.back().size;
    if (limit - at < size) return -1;
    allocs_.push_back(Interval{at, size});
    used_ += size;
    return at;
  }
  int at = 0;
  size_t i = 0;
  for (; i < allocs_.size(); ++i) {
    if (allocs_[i].offset - at >= size) break;
    at = std::max(at, allocs_[i].offset + allocs_[i].size);
  }
  if (i == allocs_.size() && limit - at < size) return -1;
  allocs_.insert(allocs_.begin() + static_cast<long>(i), Interval{at, size});
  used_ += size;
  return at;
}

bool ContiguousSpace::allocate_run(int size, int count, int limit, int tag, std::vector<std::pair<int, int>>& out) {
  if (allocs_.capacity() == 0) allocs_.reserve(kReservedIntervals);
  // First fit of each chunk resumes where the last one ended: every hole below it was too small for `size` (or the
  // last chunk would have gone there) and allocating never widens a hole.
  size_t i = 0;  // the first interval at or after `at`
  int at = 0;
  if (compact(allocs_, used_) && !allocs_.empty()) {
    i = allocs_.size();
    at = allocs_.back().offset + allocs_.back().size;
  }
  size_t run = allocs_.size() + 1;  // the interval this call last started or extended (none yet)
  for (int c = 0; c < count; ++c) {
    while (i < allocs_.size() && allocs_[i].offset - at < size) {
      at = std::max(at, allocs_[i].offset + allocs_[i].size);
      ++i;
    }
    if (i == allocs_.size() && limit - at < size) return false;
    if (run + 1 == i && allocs_[run].offset + allocs_[run].size == at) {
      allocs_[run].size += size;  // next to this call's last chunk: one interval, released together
    } else {
      allocs_.insert(allocs_.begin() + static_cast<long>(i), Interval{at, size});
      out.emplace_back(tag, at);
      run = i++;
    }
    at += size;
    used_ += size;
  }
  return true;
}

void ContiguousSpace::release(int offset) {
  auto it = std::lower_bound(allocs_.begin(), allocs_.end(), offset,
                             [](const Interval& a, int off) { return a.offset < off; });
  if (it == allocs_.end() || it->offset != offset) throw std::logic_error("release of an unallocated interval");
  used_ -= it->size;
  allocs_.erase(it);
}

// ---- capacity ----

namespace {

// floor(a / b) for b > 0, 0 when a <= 0. The operands on the hot path fit 32 bits, where the
// division is several times cheaper than a 64-bit one.
int64_t floor_div(int64_t a, int64_t b) {
  if (a <= 0) return 0;
  if (a <= UINT32_MAX && b <= UINT32_MAX) return static_cast<uint32_t>(a) / static_cast<uint32_t>(b);
  return a / b;
}

// min(a, floor(b / c)) for a >= 0 and c > 0, with a multiplication instead of a division when a
// is the smaller one (the common case on the hot path: warp slots bind before registers).
int64_t min_floor_div(int64_t a, int64_t b, int64_t c) { return b >= a * c ? a : floor_div(b, c); }

// Warps of this block each PB can still take (room[0..PBs)): warp slots, and per-PB registers when
// pooled per PB (Mechanism 4, renaming: free fragments combine) or contiguous (pb-contiguous: holes
// only). The register option and the PB count (kPbs, or 0: l.pbs) are template arguments: this runs
// for every capacity on the hot path, where a loop of known length costs a fraction of a general one.
template <Registers kR, int kPbs>
void pb_warp_rooms(const SmLimits& l, const SmState& s, const BlockNeeds& n, int64_t* room) {
  const int pbs = kPbs > 0 ? kPbs : l.pbs, slots = l.warp_slots_per_pb;
  for (int j = 0; j < pbs; ++j) room[j] = std::max(slots - s.pb_warps[j], 0);
  if (n.regs_per_warp <= 0) return;
  const int regs = l.regs_per_pb, r = n.regs_per_warp;
  switch (kR) {
    case Registers::Sm: break;  // one pool per SM: sm_capacity folds it in
    case Registers::Pb:
      for (int j = 0; j < pbs; ++j) room[j] = min_floor_div(room[j], regs - s.pb_regs[j], r);
      break;
    case Registers::PbContiguous:
      for (int j = 0; j < pbs; ++j) room[j] = std::min(room[j], s.pb_reg_space[j].fits(r, regs));
      break;
  }
}

// Algorithm 1 lines 19-25 (Mechanism 2.1): warps placeable one after another from the pointer
// without redirect: min over PBs x PBs + the number of PBs from the pointer before the first minimal one.
template <int kPbs>
int64_t strict_rr_warps(const int64_t* room, int runtime_pbs, int pointer) {
  const int pbs = kPbs > 0 ? kPbs : runtime_pbs;
  int64_t m = room[0];
  for (int j = 1; j < pbs; ++j) m = std::min(m, room[j]);
  for (int j = 0, q = pointer; j < pbs; ++j, q = q + 1 == pbs ? 0 : q + 1)
    if (room[q] == m) return m * pbs + j;
  return m * pbs;
}

// The capacity rule, with the warps, registers and shared-memory options and the PB count (0: any)
// as template arguments so that each hypothesis runs code without their branches (with_mechanisms
// picks the instance).
template <Warps kW, Registers kR, Smem kS, int kPbs>
CapacityParts sm_capacity(const SmLimits& l, Capacity capacity, const SmState& s, const BlockNeeds& n,
                          int64_t smem_limit, bool config_blocked) {
  CapacityParts p;
  p.config_blocked = config_blocked;
  p.limit_b = l.max_blocks - s.blocks;
  p.limit_regs_w = kUnlimited;
  switch (kR) {
    case Registers::Sm:
      if (n.regs_per_warp > 0) p.limit_regs_w = floor_div(l.regs_per_sm - s.regs, n.regs_per_warp);
      break;
    case Registers::Pb:
    case Registers::PbContiguous: break;  // per PB: in pb_warp_rooms
  }
  int64_t warps = 0;
  int64_t room[kMaxPbs] = {};
  switch (kW) {
    case Warps::Sm: warps = l.max_warps - s.warps; break;
    case Warps::PbStrictRR:
      pb_warp_rooms<kR, kPbs>(l, s, n, room);
      warps = strict_rr_warps<kPbs>(room, l.pbs, s.pb_pointer);
      break;
    case Warps::PbAny:  // redirect lets a warp use any PB with room
      pb_warp_rooms<kR, kPbs>(l, s, n, room);
      for (int j = 0; j < (kPbs > 0 ? kPbs : l.pbs); ++j) warps += room[j];
      break;
  }
  p.limit_w = std::max<int64_t>(0, std::min(warps, p.limit_regs_w));
  if (n.smem == 0) {
    p.limit_s = kUnlimited;
  } else {
    switch (kS) {
      case Smem::Counted: p.limit_s = floor_div(smem_limit - s.smem, n.smem); break;
      // Every hole counts floor(hole / S), not only the largest (holes are disjoint).
      case Smem::ContiguousFirstFit: p.limit_s = s.smem_space.fits(n.smem, static_cast<int>(smem_limit)); break;
    }
  }
  // min(limit_b, limit_w / W, limit_s), clamped at 0 (limit_w >= 0; limit_b <= max blocks, so no overflow).
  const int64_t bs = std::min(p.limit_b, p.limit_s);
  p.blocks = config_blocked || bs <= 0 ? 0 : min_floor_div(bs, p.limit_w, n.warps);
  switch (capacity) {
    case Capacity::Blocks: p.value = p.blocks; break;
    case Capacity::Literal:  // Algorithm 1 line 28 as printed
      p.value = p.blocks == 0 ? 0 : std::min({p.limit_b, p.limit_w, p.limit_s});
      break;
  }
  return p;
}

// Calls f.template operator()<W, R, S, P>() with the hypothesis' warps, registers and shared-memory
// options and the PB count (4, the count of every device since Volta, or 0: any) as constants: the
// one place that maps them to specialised code.
template <Warps kW, Registers kR, Smem kS, class F>
decltype(auto) with_pbs(int pbs, F&& f) {
  if (pbs == 4) return f.template operator()<kW, kR, kS, 4>();
  return f.template operator()<kW, kR, kS, 0>();
}
template <Warps kW, Registers kR, class F>
decltype(auto) with_smem(Smem smem, int pbs, F&& f) {
  switch (smem) {
    case Smem::ContiguousFirstFit: return with_pbs<kW, kR, Smem::ContiguousFirstFit>(pbs, f);
    case Smem::Counted: break;
  }
  return with_pbs<kW, kR, Smem::Counted>(pbs, f);
}
template <Warps kW, class F>
decltype(auto) with_registers(const Hypothesis& h, int pbs, F&& f) {
  switch (h.registers) {
    case Registers::Pb: return with_smem<kW, Registers::Pb>(h.smem, pbs, f);
    case Registers::PbContiguous: return with_smem<kW, Registers::PbContiguous>(h.smem, pbs, f);
    case Registers::Sm: break;
  }
  return with_smem<kW, Registers::Sm>(h.smem, pbs, f);
}
template <class F>
decltype(auto) with_mechanisms(const Hypothesis& h, int pbs, F&& f) {
  switch (h.warps) {
    case Warps::PbStrictRR: return with_registers<Warps::PbStrictRR>(h, pbs, f);
    case Warps::PbAny: return with_registers<Warps::PbAny>(h, pbs, f);
    case Warps::Sm: break;
  }
  return with_registers<Warps::Sm>(h, pbs, f);
}

CapacityParts sm_capacity(const SmLimits& l, const Hypothesis& h, const SmState& s, const BlockNeeds& n,
                          int64_t smem_limit, bool config_blocked) {
  return with_mechanisms(h, l.pbs, [&]<Warps kW, Registers kR, Smem kS, int kPbs>() {
    return sm_capacity<kW, kR, kS, kPbs>(l, h.capacity, s, n, smem_limit, config_blocked);
  });
}

SmState empty_sm(const Device& d, const Hypothesis& h) {
  SmState s;
  switch (h.registers) {
    case Registers::Sm:
    case Registers::Pb: break;
    case Registers::PbContiguous: s.pb_reg_space.resize(static_cast<size_t>(d.pbs_per_sm)); break;
  }
  return s;
}

}  // namespace

CapacityParts capacity_of_state(const SmLimits& l, const Hypothesis& h, const SmState& s, const BlockNeeds& n,
                                int64_t smem_limit, bool config_blocked) {
  return sm_capacity(l, h, s, n, smem_limit, config_blocked);
}

SmLimits::SmLimits(const Device& d)
    : pbs(d.pbs_per_sm),
      warp_slots_per_pb(d.warp_slots_per_pb()),
      regs_per_pb(d.regs_per_pb()),
      max_blocks(d.max_blocks_per_sm),
      max_warps(d.max_warps_per_sm),
      regs_per_sm(d.regs_per_sm) {}

GpuState::GpuState(const Device& d, const Hypothesis& h)
    : d_(d),
      h_(h),
      lim_(d),
      max_config_(d.max_smem_config_bytes()),
      config_per_sm_(config_per_sm(h.smem_config)),
      ops_(with_mechanisms(h, d.pbs_per_sm, []<Warps kW, Registers kR, Smem kS, int kPbs>() {
        return Ops{&GpuState::capacity_value<kW, kR, kS, kPbs>, &GpuState::commit_as<kW, kR, kS, kPbs>,
                   &GpuState::release_as<kW, kR, kS, kPbs>};
      })),
      sms_(static_cast<size_t>(d.sms), empty_sm(d, h)),
      tpc_of_(static_cast<size_t>(d.sms)),
      config_(static_cast<size_t>(d.sms), d.max_smem_config_bytes()),
      tpc_blocks_(static_cast<size_t>(d.tpcs()), 0) {
  for (int sm = 0; sm < d.sms; ++sm) tpc_of_[sm] = d.tpc_of(sm);
}

bool GpuState::config_idle(int sm) const {
  switch (h_.smem_config) {
    case SmemConfig::None:
    case SmemConfig::Tpc: break;
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: return sms_[static_cast<size_t>(sm)].blocks == 0;
  }
  return tpc_idle(tpc_of_[sm]);
}

CapacityParts GpuState::empty_sm_capacity(const Device& d, const Hypothesis& h, const BlockNeeds& n) {
  return sm_capacity(SmLimits(d), h, empty_sm(d, h), n, d.max_smem_config_bytes(), false);
}

// Mechanism 3 (Algorithm 1 lines 26-27): an idle TPC (or SM) will be configured for this kernel, a busy
// one keeps its configuration; without the mechanism every SM has the device maximum.
int64_t GpuState::smem_limit(int sm, const BlockNeeds& n) const {
  switch (h_.smem_config) {
    case SmemConfig::None: break;
    case SmemConfig::Tpc:
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: return config_idle(sm) ? n.config_s : config_of(sm);
  }
  return max_config_;
}

CapacityParts GpuState::capacity_parts(int sm, const BlockNeeds& n) const {
  bool blocked = false;
  switch (h_.smem_config) {
    case SmemConfig::None: break;
    // Algorithm 1 lines 10-12: a busy TPC (or SM) configured below the kernel's config_s is skipped.
    case SmemConfig::Tpc:
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: blocked = !config_idle(sm) && n.config_s > config_of(sm); break;
  }
  return sm_capacity(lim_, h_, sms_[sm], n, smem_limit(sm, n), blocked);
}

// capacity_parts(sm, n).value, specialised. A blocked TPC gives 0 at once, as sm_capacity would.
template <Warps kW, Registers kR, Smem kS, int kPbs>
int64_t GpuState::capacity_value(int sm, const BlockNeeds& n) const {
  int64_t limit = max_config_;
  switch (h_.smem_config) {
    case SmemConfig::None: break;
    case SmemConfig::Tpc:
    case SmemConfig::Sm:
    case SmemConfig::SmFloor:
      if (!config_idle(sm)) {
        if (n.config_s > config_of(sm)) return 0;
        limit = config_of(sm);
      } else {
        limit = n.config_s;
      }
      break;
  }
  return sm_capacity<kW, kR, kS, kPbs>(lim_, h_.capacity, sms_[sm], n, limit, false).value;
}

Allocation GpuState::commit(int sm, const BlockNeeds& n) {
  Allocation a;
  commit(sm, n, a);
  return a;
}

// Commit and release specialised like capacity_value: the options' branches and the per-PB loops'
// length are settled at compile time.
template <Warps kW, Registers kR, Smem kS, int kPbs>
void GpuState::commit_as(int sm, const BlockNeeds& n, Allocation& a) {
  SmState& s = sms_[sm];
  const int tpc = tpc_of(sm);
  a.sm = sm;
  a.warps = n.warps;
  a.regs_per_warp = n.regs_per_warp;
  a.smem = n.smem;
  a.pb_warps.fill(0);
  a.smem_offset = -1;
  a.reg_pieces.clear();
  switch (h_.smem_config) {
    case SmemConfig::None: break;
    case SmemConfig::Tpc:
    case SmemConfig::Sm:
    case SmemConfig::SmFloor:
      if (config_idle(sm)) config_[static_cast<size_t>(config_unit(sm))] = n.config_s;  // Mechanism 3
      break;
  }
  switch (h_.local) {
    case Local::Ignore: break;
    case Local::GpuConfig:
      if (resident_ == 0) gpu_local_ = n.local;  // Algorithm 1 lines 1-3
      break;
  }
  const int pbs = kPbs > 0 ? kPbs : lim_.pbs;
  bool pb_regs = false;          // registers counted per PB
  bool contiguous_regs = false;  // registers allocated at addresses in each PB
  switch (kR) {
    case Registers::Sm: break;
    case Registers::Pb: pb_regs = n.regs_per_warp > 0; break;
    case Registers::PbContiguous: contiguous_regs = n.regs_per_warp > 0; break;
  }

  s.blocks += 1;
  if constexpr (kW == Warps::Sm) {
    s.warps += n.warps;
  } else if constexpr (kW == Warps::PbStrictRR) {
    // Mechanism 2.1: warp w goes to PB (p + w) mod PBs, so the PB j steps after the pointer gets W / PBs warps, one
    // more when j < W mod PBs.
    // Contiguous registers: the PB's warps take their chunks one after another (PBs' spaces are apart, so the
    // order among PBs does not matter), as allocate_run places them.
    const int base = n.warps / pbs, extra = n.warps % pbs;
    for (int j = 0, q = s.pb_pointer; j < pbs; ++j, q = q + 1 == pbs ? 0 : q + 1) {
      const int count = base + (j < extra ? 1 : 0);
      a.pb_warps[q] += count;
      s.pb_warps[q] += count;
      if (pb_regs) s.pb_regs[q] += count * n.regs_per_warp;
      if (contiguous_regs && count > 0 &&
          !s.pb_reg_space[static_cast<size_t>(q)].allocate_run(n.regs_per_warp, count, lim_.regs_per_pb, q, a.reg_pieces))
        throw std::logic_error("pb-contiguous commit found no register hole");
    }
  } else {
    // pb-any: warp by warp, each to the first PB at or after the pointer with room.
    static_assert(kW == Warps::PbAny);
    if (contiguous_regs) a.reg_pieces.reserve(static_cast<size_t>(n.warps));
    for (int w = 0; w < n.warps; ++w) {
      int64_t room[kMaxPbs] = {};
      pb_warp_rooms<kR, kPbs>(lim_, s, n, room);
      int j = 0;
      for (; j < pbs; ++j)
        if (room[(s.pb_pointer + j) % pbs] > 0) break;
      if (j == pbs) throw std::logic_error("pb-any commit found no PB with room");
      const int q = (s.pb_pointer + j) % pbs;
      s.pb_pointer = (q + 1) % pbs;
      a.pb_warps[q] += 1;
      s.pb_warps[q] += 1;
      if (pb_regs) s.pb_regs[q] += n.regs_per_warp;
      if (contiguous_regs) {
        int off = s.pb_reg_space[q].allocate(n.regs_per_warp, lim_.regs_per_pb);
        if (off < 0) throw std::logic_error("pb-contiguous commit found no register hole");
        a.reg_pieces.emplace_back(q, off);
      }
    }
  }
  switch (kW) {
    case Warps::Sm:
    case Warps::PbAny: break;  // pb-any moved the pointer warp by warp
    case Warps::PbStrictRR: {
      // Mechanism 2.2: one PB more when W is a multiple of the PB count.
      int step = n.warps + ((h_.skip_on_multiple_of_4 && n.warps % pbs == 0) ? 1 : 0);
      s.pb_pointer = (s.pb_pointer + step) % pbs;
      break;
    }
  }
  switch (kR) {
    case Registers::Sm: s.regs += n.warps * n.regs_per_warp; break;
    case Registers::Pb:
    case Registers::PbContiguous: break;  // per PB, above
  }
  if (n.smem > 0) {
    switch (kS) {
      case Smem::Counted: break;
      case Smem::ContiguousFirstFit:
        a.smem_offset = s.smem_space.allocate(n.smem, static_cast<int>(smem_limit(sm, n)));
        if (a.smem_offset < 0) throw std::logic_error("contiguous shared memory commit found no hole");
        break;
    }
    s.smem += n.smem;
  }
  tpc_blocks_[tpc] += 1;
  resident_ += 1;
}

template <Warps kW, Registers kR, Smem kS, int kPbs>
void GpuState::release_as(const Allocation& a) {
  SmState& s = sms_[a.sm];
  const int pbs = kPbs > 0 ? kPbs : lim_.pbs;
  s.blocks -= 1;
  switch (kW) {
    case Warps::Sm: s.warps -= a.warps; break;
    case Warps::PbStrictRR:
    case Warps::PbAny:
      for (int q = 0; q < pbs; ++q) s.pb_warps[q] -= a.pb_warps[q];
      break;
  }
  switch (kR) {
    case Registers::Sm: s.regs -= a.warps * a.regs_per_warp; break;
    case Registers::Pb:
      for (int q = 0; q < pbs; ++q) s.pb_regs[q] -= a.pb_warps[q] * a.regs_per_warp;
      break;
    case Registers::PbContiguous:
      for (const auto& [pb, offset] : a.reg_pieces) s.pb_reg_space[static_cast<size_t>(pb)].release(offset);
      break;
  }
  if (a.smem > 0) {
    switch (kS) {
      case Smem::Counted: break;
      case Smem::ContiguousFirstFit:
        if (a.smem_offset >= 0) s.smem_space.release(a.smem_offset);
        break;
    }
    s.smem -= a.smem;
  }
  tpc_blocks_[tpc_of(a.sm)] -= 1;
  resident_ -= 1;
}

std::string infeasibility_reason(const Kernel& k, const Device& d, const Hypothesis& h) {
  BlockNeeds n = block_needs(k, d, h);
  CapacityParts e = GpuState::empty_sm_capacity(d, h, n);
  if (e.blocks >= 1) return "";
  int64_t block_regs = int64_t{n.warps} * n.regs_per_warp;
  if (n.regs_per_warp > 0 && block_regs > d.regs_per_sm)
    return fmt::format("one block needs {} warps x {} registers = {} registers > {} per SM", n.warps, n.regs_per_warp,
                       block_regs, d.regs_per_sm);
  int per_pb = (n.warps + d.pbs_per_sm - 1) / d.pbs_per_sm;
  if (h.pb_registers() && n.regs_per_warp > 0 && int64_t{per_pb} * n.regs_per_warp > d.regs_per_pb())
    return fmt::format("one block puts {} warps x {} registers on a processing block > {} registers per PB", per_pb,
                       n.regs_per_warp, d.regs_per_pb());
  if (n.warps > d.max_warps_per_sm)
    return fmt::format("one block needs {} warps > {} per SM", n.warps, d.max_warps_per_sm);
  if (e.limit_s == 0)
    return fmt::format("one block needs {} bytes of shared memory > the largest configuration ({} KB)", n.smem,
                       d.smem_configs_kb.back());
  return fmt::format("no empty SM can hold one block (limit_b {}, limit_w {} warps for {} warps per block, limit_s {})",
                     e.limit_b, e.limit_w, n.warps, e.limit_s);
}

}  // namespace tbcheck::model
