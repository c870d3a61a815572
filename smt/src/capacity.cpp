// Needs of one block and the capacity rule as Z3 terms: the twins of model/engine/src/resources.cpp's block_needs
// and sm_capacity, one exhaustive switch per option (a new option value does not compile until encoded).
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/resources.hpp"

namespace tbcheck::smt::detail {

void Encoder::kernel_terms() {
  for (size_t k = 0; k < s_.blocks.size(); ++k) {
    int ki = static_cast<int>(k);
    const int unit = dev_.reg_alloc_unit;
    expr r = ((s_.regs[k] * model::kThreadsPerWarp + (unit - 1)) / unit) * unit;
    if (h_.registers_ignore_at_or_below) r = z3::ite(s_.regs[k] <= *h_.registers_ignore_at_or_below, iv(0), r);
    const int su = dev_.smem_alloc_unit;
    expr sz = ((s_.smem[k] + (su - 1)) / su) * su + dev_.smem_reserved_per_block;
    if (h_.smem_ignore_below) sz = z3::ite(sz < *h_.smem_ignore_below, iv(0), sz);
    W_.push_back(define("W", ki, s_.warps[k]));
    R_.push_back(define("R", ki, r));
    S_.push_back(define("S", ki, sz));
    LOC_.push_back(gpu_local_ ? s_.local[k] : iv(0));
    // Blocks one empty SM holds (pointer 0, largest configuration): the feasibility of the
    // kernel and, x S rounded up to a configuration, Mechanism 3's config_s.
    SmView empty = empty_view();
    std::vector<expr> levels = capacity_levels(empty, ki, iv(dev_.max_smem_config_bytes()), {}, bmax_);
    expr cap0 = define("cap0", ki, count_if(levels));
    out_.push_back(cap0 >= 1);  // launchable: one block fits an empty SM
    CAP0_.push_back(cap0);
    if (config_span_ > 0) {
      std::vector<expr> parts;
      for (const auto& l : levels) parts.push_back(z3::ite(l, S_[k], iv(0)));
      expr bytes = sum_of(parts);
      if (h_.smem_config == model::SmemConfig::SmFloor)  // model::kSmemConfigFloorBytes (resources.hpp)
        bytes = z3::ite(bytes < iv(model::kSmemConfigFloorBytes), iv(model::kSmemConfigFloorBytes), bytes);
      expr cfg = iv(dev_.max_smem_config_bytes());
      for (auto it = dev_.smem_configs_kb.rbegin(); it != dev_.smem_configs_kb.rend(); ++it)
        cfg = z3::ite(bytes <= *it * 1024, iv(*it * 1024), cfg);
      CFG_.push_back(define("cfg", ki, cfg));
    } else {
      CFG_.push_back(iv(0));
    }
  }
}

std::vector<expr> Encoder::pb_rooms(const SmView& v, const expr& R) {
  const int slots = dev_.warp_slots_per_pb();
  std::vector<expr> room;
  for (int q = 0; q < pbs_; ++q) {
    expr r = iv(slots) - v.pb_warps[static_cast<size_t>(q)];
    if (pb_regs_)
      r = smin(r, fits_count(iv(dev_.regs_per_pb()) - v.pb_regs[static_cast<size_t>(q)], R, slots));
    if (contiguous_regs()) {
      // pb-contiguous: R-sized chunks that fit in the PB's register holes, counted once per hole.
      std::vector<expr> parts;
      for (const auto& hole : v.pb_hsize[static_cast<size_t>(q)]) parts.push_back(fits_count(hole, R, slots));
      r = smin(r, sum_of(parts));
    }
    room.push_back(r);
  }
  return room;
}

std::vector<expr> Encoder::capacity_levels(const SmView& v, int k, const expr& smem_limit, const std::vector<expr>& holes,
                                  int lmax, bool literal_units) {
  const expr& W = W_[static_cast<size_t>(k)];
  const expr& R = R_[static_cast<size_t>(k)];
  const expr& S = S_[static_cast<size_t>(k)];
  expr limit_b = iv(bmax_) - v.blocks;
  // Warps placeable (Algorithm 1 lines 14-23), registers folded in.
  expr limit_w = iv(0);
  switch (h_.warps) {
    case model::Warps::Sm: limit_w = iv(dev_.max_warps_per_sm) - v.warps; break;
    case model::Warps::PbAny: limit_w = sum_of(pb_rooms(v, R)); break;
    case model::Warps::PbStrictRR: {
      std::vector<expr> room = pb_rooms(v, R);
      expr m = room[0];
      for (int q = 1; q < pbs_; ++q) m = smin(m, room[static_cast<size_t>(q)]);
      // j: PBs from the pointer before the first one at the minimum (Algorithm 1 lines 19-23).
      expr j = iv(0);
      for (int p = pbs_ - 1; p >= 0; --p) {
        expr jp = iv(pbs_ - 1);
        for (int o = pbs_ - 1; o >= 0; --o) jp = z3::ite(room[static_cast<size_t>((p + o) % pbs_)] == m, iv(o), jp);
        j = p == pbs_ - 1 ? jp : z3::ite(v.pointer == p, jp, j);
      }
      limit_w = m * pbs_ + j;
      break;
    }
  }
  switch (h_.registers) {
    case model::Registers::Sm:
      limit_w = smin(limit_w, fits_count(iv(dev_.regs_per_sm) - v.regs, R, dev_.max_warps_per_sm));
      break;
    case model::Registers::Pb:
    case model::Registers::PbContiguous: break;  // per PB, in pb_rooms
  }
  // Contiguous shared memory: S-sized chunks that fit in the holes, counted once per hole.
  std::optional<expr> chunks;
  if (contiguous_smem_ && !holes.empty()) {
    if (S.is_numeral()) {
      int64_t sv = S.get_numeral_int64();
      std::vector<expr> parts;
      if (sv > 0)
        for (const auto& hole : holes) parts.push_back(hole / static_cast<int>(sv));
      chunks = sv > 0 ? sum_of(parts) : iv(lmax);
    } else {
      std::vector<expr> fits;
      for (const auto& hole : holes)
        for (int m = 1; m <= lmax; ++m) fits.push_back(m * S <= hole);
      chunks = z3::ite(S == 0, iv(lmax), count_if(fits));
    }
  }
  std::vector<expr> levels;
  for (int L = 1; L <= lmax; ++L) {
    expr smem_ok = chunks ? (*chunks >= L) : (L * S <= smem_limit - v.smem);
    expr warp_ok = literal_units ? (limit_w >= L) : (L * W <= limit_w);
    levels.push_back(limit_b >= L && warp_ok && smem_ok);
  }
  return levels;
}

std::vector<Encoder::SmCap> Encoder::capacities(int i, const Instant& t, int lmax, int kernel) {
  int k = kernel >= 0 ? kernel : s_.kernel_of_block(i);
  size_t ku = static_cast<size_t>(k);
  std::vector<SmCap> caps;
  std::vector<expr> busy, cfg;
  if (config_span_ > 0)
    for (int u = 0; u < units(); ++u) {
      busy.push_back(unit_busy(i, u, t));
      cfg.push_back(unit_config(i, u));
    }
  for (int sm = 0; sm < n_; ++sm) {
    SmView v = view(i, sm, t);
    expr limit = iv(dev_.max_smem_config_bytes());
    expr blocked = bv(false);
    if (config_span_ > 0) {
      size_t tp = static_cast<size_t>(sm / config_span_);
      limit = z3::ite(busy[tp], cfg[tp], CFG_[ku]);
      blocked = busy[tp] && CFG_[ku] > cfg[tp];
    }
    std::vector<expr> hs;
    if (contiguous_smem_) hs = holes(i, v, limit);
    // Partition allowed-sms: an SM outside the kernel's TPC mask counts as full.
    if (ku < s_.tpcs.size() && !model::sm_allowed(s_.tpcs[ku], dev_, sm, h_.partition)) blocked = bv(true);
    std::vector<expr> lv = capacity_levels(v, k, limit, hs, lmax);
    for (auto& l : lv) l = l && !blocked;
    expr value = count_if(lv);
    switch (h_.capacity) {
      case model::Capacity::Blocks: break;
      case model::Capacity::Literal:
        if (lmax > 1) {
          std::vector<expr> lit = capacity_levels(v, k, limit, hs, lmax, true);
          value = z3::ite(lv[0], count_if(lit), iv(0));
        }
        break;
    }
    std::vector<expr> room;
    switch (h_.warps) {
      case model::Warps::Sm:
      case model::Warps::PbStrictRR: break;
      case model::Warps::PbAny: room = pb_rooms(v, R_[ku]); break;  // for pb_any_commit
    }
    caps.push_back({lv, value, hs, room, v.pb_hstart, v.pb_hsize, v.blocks});
  }
  return caps;
}

}  // namespace tbcheck::smt::detail
