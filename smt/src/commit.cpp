// Commit of a block as Z3 terms: TPC and GPU openers, warps and registers per PB (strict round-robin,
// pb-any, pb-contiguous runs), the PB pointer and the shared-memory offset (GpuState::commit's twin).
#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"

namespace tbcheck::smt::detail {

void Encoder::commit(int i, const Instant& now, const std::vector<SmCap>& caps) {
  size_t iu = static_cast<size_t>(i);
  int k = s_.kernel_of_block(i);
  size_t ku = static_cast<size_t>(k);
  const expr& sm = d_.sm[iu];
  expr unit_idle = bv(true);
  if (config_span_ > 0) {
    for (int u = 0; u < units(); ++u) unit_idle = z3::ite(unit_of(sm) == u, !unit_busy(i, u, now), unit_idle);
  }
  opener_.push_back(define("opener", i, unit_idle));
  gpu_opener_.push_back(define("gpuopen", i, !gpu_busy(i, now)));
  block_regs_.push_back(h_.pb_registers() ? iv(0) : define("bregs", i, unary_times(W_[ku], R_[ku], dev_.max_warps_per_sm)));

  std::vector<expr> wq, rq;
  expr ptr_after = iv(0);
  if (h_.pb_warps()) {
    expr p = iv(0);
    for (int s = 0; s < n_; ++s) p = z3::ite(sm == s, pointer_before(i, s), p);
    p = define("ptr", i, p);
    switch (h_.warps) {
      case model::Warps::Sm: break;
      case model::Warps::PbStrictRR: {
        // Mechanism 2.1: warp w on PB (p + w) mod PBs; Mechanism 2.2: one more step when W % PBs == 0.
        for (int q = 0; q < pbs_; ++q)
          wq.push_back(define(fmt::format("w{}", q), i,
                              W_[ku] / pbs_ + z3::ite(z3::mod(iv(q) - p + pbs_, iv(pbs_)) < z3::mod(W_[ku], iv(pbs_)), iv(1), iv(0))));
        expr step = W_[ku];
        if (h_.skip_on_multiple_of_4) step = step + z3::ite(z3::mod(W_[ku], iv(pbs_)) == 0, iv(1), iv(0));
        ptr_after = z3::mod(p + step, iv(pbs_));
        break;
      }
      case model::Warps::PbAny: pb_any_commit(i, k, sm, p, caps, wq, ptr_after); break;
    }
    if (pb_regs_)
      for (int q = 0; q < pbs_; ++q)
        rq.push_back(define(fmt::format("r{}", q), i, unary_times(wq[static_cast<size_t>(q)], R_[ku], dev_.warp_slots_per_pb())));
  }
  wq_.push_back(wq);
  rq_.push_back(rq);
  rs_.emplace_back();
  re_.emplace_back();
  if (contiguous_regs()) contiguous_regs_commit(i, k, sm, caps, wq);
  ptr_after_.push_back(h_.pb_warps() ? define("ptra", i, ptr_after) : iv(0));

  if (contiguous_smem_) {
    // First fit: the lowest hole start whose hole takes S (Mechanism 4).
    expr off = iv(0);
    for (int s = 0; s < n_; ++s) {
      const auto& hs = caps[static_cast<size_t>(s)].holes;
      std::vector<expr> starts = {iv(0)};
      for (int j = 0; j < i; ++j) starts.push_back(off_[static_cast<size_t>(j)] + S_[static_cast<size_t>(s_.kernel_of_block(j))]);
      expr best = iv(int64_t{1} << 30);
      for (size_t b = 0; b < hs.size(); ++b)
        best = z3::ite(hs[b] >= S_[ku] && hs[b] > 0 && starts[b] < best, starts[b], best);
      off = z3::ite(sm == s, best, off);
    }
    off_.push_back(define("off", i, z3::ite(S_[ku] > 0, off, iv(0))));
  } else {
    off_.push_back(iv(0));
  }
}

void Encoder::contiguous_regs_commit(int i, int k, const expr& sm, const std::vector<SmCap>& caps, const std::vector<expr>& wq) {
  size_t ku = static_cast<size_t>(k);
  const expr& W = W_[ku];
  const expr& R = R_[ku];
  const int slots = dev_.warp_slots_per_pb();
  const int wmax = dev_.max_threads_per_block / model::kThreadsPerWarp;
  // Runs per PB: at most the warps the block can put on one PB.
  int kr = 0;
  const int wbound = W.is_numeral() ? static_cast<int>(W.get_numeral_int64()) : wmax;
  switch (h_.warps) {
    case model::Warps::Sm: throw std::logic_error("pb-contiguous registers without warps on PBs");
    case model::Warps::PbStrictRR: kr = (wbound + pbs_ - 1) / pbs_; break;
    case model::Warps::PbAny: kr = std::min(wbound, slots); break;
  }
  if (R.is_numeral() && R.get_numeral_int64() > 0)
    kr = std::min<int>(kr, static_cast<int>(dev_.regs_per_pb() / R.get_numeral_int64()));
  kr = std::max(kr, 1);
  std::vector<std::vector<expr>> starts_q, ends_q;
  for (int q = 0; q < pbs_; ++q) {
    size_t qu = static_cast<size_t>(q);
    const size_t nc = caps[0].pb_hstart[qu].size();
    std::vector<expr> hstart, nfit;
    for (size_t b = 0; b < nc; ++b) {
      expr st = iv(0), sz = iv(0);
      for (int s = 0; s < n_; ++s) {
        st = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_hstart[qu][b], st);
        sz = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_hsize[qu][b], sz);
      }
      hstart.push_back(define(fmt::format("hs{}_{}_", q, b), i, st));
      nfit.push_back(define(fmt::format("hn{}_{}_", q, b), i, z3::ite(R > 0, fits_count(sz, R, kr), iv(0))));
    }
    std::vector<expr> rs, re;
    expr prev = iv(-1);
    expr left = wq[qu];
    const expr big = iv(int64_t{1} << 30);
    for (int r = 0; r < kr; ++r) {
      expr start = big, n = iv(0);
      for (size_t b = 0; b < nc; ++b) {
        expr ok = nfit[b] >= 1 && hstart[b] > prev && hstart[b] < start;
        n = z3::ite(ok, nfit[b], n);
        start = z3::ite(ok, hstart[b], start);
      }
      start = define(fmt::format("rs{}_{}_", q, r), i, start);
      expr cnt = define(fmt::format("rc{}_{}_", q, r), i, smax(iv(0), smin(n, left)));
      left = left - cnt;
      prev = start;
      rs.push_back(start);
      re.push_back(define(fmt::format("re{}_{}_", q, r), i, start + unary_times(cnt, R, kr)));
    }
    starts_q.push_back(rs);
    ends_q.push_back(re);
  }
  rs_[static_cast<size_t>(i)] = std::move(starts_q);
  re_[static_cast<size_t>(i)] = std::move(ends_q);
}

void Encoder::pb_any_commit(int i, int k, const expr& sm, const expr& p0, const std::vector<SmCap>& caps,
                   std::vector<expr>& wq, expr& ptr_after) {
  size_t ku = static_cast<size_t>(k);
  std::vector<expr> room(static_cast<size_t>(pbs_), iv(0));
  for (int s = 0; s < n_; ++s)
    for (int q = 0; q < pbs_; ++q)
      room[static_cast<size_t>(q)] = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_room[static_cast<size_t>(q)],
                                             room[static_cast<size_t>(q)]);
  std::vector<expr> got(static_cast<size_t>(pbs_), iv(0));
  expr ptr = p0;
  const int wmax = dev_.max_threads_per_block / model::kThreadsPerWarp;
  for (int w = 0; w < wmax; ++w) {
    expr active = W_[ku] > w;
    // Target: first PB from the pointer with room left.
    expr target = iv(0);
    for (int pv = pbs_ - 1; pv >= 0; --pv) {
      expr tp = iv(pv);
      for (int o = pbs_ - 1; o >= 0; --o) {
        int q = (pv + o) % pbs_;
        tp = z3::ite(got[static_cast<size_t>(q)] < room[static_cast<size_t>(q)], iv(q), tp);
      }
      target = pv == pbs_ - 1 ? tp : z3::ite(ptr == pv, tp, target);
    }
    target = define(fmt::format("anyt{}", w), i, target);
    for (int q = 0; q < pbs_; ++q)
      got[static_cast<size_t>(q)] = got[static_cast<size_t>(q)] + z3::ite(active && target == q, iv(1), iv(0));
    ptr = z3::ite(active, z3::mod(target + 1, iv(pbs_)), ptr);
    if (w % 4 == 3) ptr = define(fmt::format("anyp{}", w), i, ptr);
  }
  for (int q = 0; q < pbs_; ++q) wq.push_back(define(fmt::format("w{}", q), i, got[static_cast<size_t>(q)]));
  ptr_after = ptr;
}

}  // namespace tbcheck::smt::detail
