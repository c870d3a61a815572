// The machine state at an instant as Z3 terms, seen by the block being placed: residency, per-SM and
// per-PB pools, PB pointers, contiguous holes, TPC and GPU configuration (model::GpuState's twin).
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"

namespace tbcheck::smt::detail {

SmView Encoder::empty_view() {
  SmView v{iv(0), iv(0), iv(0), iv(0), iv(0), {}, {}, {}, {}, {}};
  for (int q = 0; q < pbs_; ++q) {
    v.pb_warps.push_back(iv(0));
    v.pb_regs.push_back(iv(0));
    if (contiguous_regs()) {
      v.pb_hstart.push_back({iv(0)});
      v.pb_hsize.push_back({iv(dev_.regs_per_pb())});
    }
  }
  return v;
}

Encoder::Instant Encoder::at_time(int i, const expr& when) {
  Instant t;
  for (int j = 0; j < i; ++j) t.resident.push_back(end_[static_cast<size_t>(j)] > when);
  return t;
}

Encoder::Instant Encoder::before_time(int i, const expr& when) {
  Instant t;
  for (int j = 0; j < i; ++j) t.resident.push_back(end_[static_cast<size_t>(j)] >= when);
  return t;
}

Encoder::Instant Encoder::at_start(int i) {
  const size_t iu = static_cast<size_t>(i);
  if (!start_order_) return at_time(i, d_.start[iu]);
  Instant t;
  for (int j = 0; j < i; ++j) {
    const expr& e = end_[static_cast<size_t>(j)];
    t.resident.push_back(e > d_.start[iu] || (e == d_.start[iu] && iv(j) >= cut_[iu]));
  }
  return t;
}

Encoder::Instant Encoder::before_start(int i) {
  const size_t iu = static_cast<size_t>(i);
  if (!start_order_) return before_time(i, d_.start[iu]);
  // Without an earlier retirement of its own instant (cut_i is the first one there, or 0) this is the
  // instant before start_i: every block ending at start_i is then resident.
  Instant t;
  for (int j = 0; j < i; ++j) {
    const expr& e = end_[static_cast<size_t>(j)];
    t.resident.push_back(e > d_.start[iu] || (e == d_.start[iu] && iv(j + 1) >= cut_[iu]));
  }
  return t;
}

expr Encoder::same_point(int i) {
  const size_t iu = static_cast<size_t>(i);
  const expr same = i == 0 ? d_.start[iu] == 0 : d_.start[iu] == d_.start[iu - 1];
  if (!start_order_ || i == 0) return same;
  return same && cut_[iu] == cut_[iu - 1];
}

void Encoder::retirement_cut(int i) {
  const size_t iu = static_cast<size_t>(i);
  const expr& st = d_.start[iu];
  expr cut = fresh_int("cut", i);
  z3::expr_vector any(c_), which(c_), inner(c_);
  for (int j = 0; j < i; ++j) {
    const expr tied = end_[static_cast<size_t>(j)] == st;
    any.push_back(tied);
    which.push_back(tied && cut == j + 1);
    inner.push_back(tied && iv(j + 1) < cut);
  }
  if (i == 0) {
    out_.push_back(cut == 0);
  } else {
    // Blocks ending at start_i retire one at a time and block i follows one of them; with none, 0.
    out_.push_back(z3::ite(z3::mk_or(any), z3::mk_or(which), cut == 0));
    // Within one instant the retirements go on in pick order: a later block never follows an earlier one.
    out_.push_back(z3::implies(st == d_.start[iu - 1], cut >= cut_[iu - 1]));
  }
  cut_.push_back(cut);
  inner_.push_back(i == 0 ? bv(false) : define("inner", i, z3::mk_or(inner)));
}

SmView Encoder::view(int i, int sm, const Instant& t) {
  SmView v = empty_view();
  std::vector<expr> blocks, warps, regs, smem;
  std::vector<std::vector<expr>> pbw(static_cast<size_t>(pbs_)), pbr(static_cast<size_t>(pbs_));
  std::vector<std::vector<Interval>> runs(static_cast<size_t>(pbs_));
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    int k = s_.kernel_of_block(j);
    expr here = t.resident[ju] && d_.sm[ju] == sm;
    blocks.push_back(z3::ite(here, iv(1), iv(0)));
    warps.push_back(z3::ite(here, W_[static_cast<size_t>(k)], iv(0)));
    regs.push_back(z3::ite(here, block_regs_[ju], iv(0)));
    smem.push_back(z3::ite(here, S_[static_cast<size_t>(k)], iv(0)));
    if (h_.pb_warps())
      for (int q = 0; q < pbs_; ++q) {
        pbw[static_cast<size_t>(q)].push_back(z3::ite(here, wq_[ju][static_cast<size_t>(q)], iv(0)));
        if (pb_regs_)
          pbr[static_cast<size_t>(q)].push_back(z3::ite(here, rq_[ju][static_cast<size_t>(q)], iv(0)));
      }
    v.alloc.push_back(here && S_[static_cast<size_t>(k)] > 0);
    if (contiguous_regs())
      for (int q = 0; q < pbs_; ++q)
        for (size_t r = 0; r < rs_[ju][static_cast<size_t>(q)].size(); ++r) {
          const expr& a = rs_[ju][static_cast<size_t>(q)][r];
          const expr& e = re_[ju][static_cast<size_t>(q)][r];
          runs[static_cast<size_t>(q)].push_back({here && e > a, a, e});
        }
  }
  if (contiguous_regs())
    for (int q = 0; q < pbs_; ++q) {
      auto [hs, hz] = interval_holes(runs[static_cast<size_t>(q)], iv(dev_.regs_per_pb()));
      v.pb_hstart[static_cast<size_t>(q)] = std::move(hs);
      v.pb_hsize[static_cast<size_t>(q)] = std::move(hz);
    }
  v.blocks = sum_of(blocks);
  v.warps = sum_of(warps);
  v.regs = sum_of(regs);
  v.smem = sum_of(smem);
  for (int q = 0; q < pbs_; ++q) {
    v.pb_warps[static_cast<size_t>(q)] = sum_of(pbw[static_cast<size_t>(q)]);
    v.pb_regs[static_cast<size_t>(q)] = sum_of(pbr[static_cast<size_t>(q)]);
  }
  v.pointer = pointer_before(i, sm);
  return v;
}

expr Encoder::pointer_before(int i, int sm) {
  if (!h_.pb_warps()) return iv(0);
  expr p = iv(0);
  for (int j = 0; j < i; ++j) p = z3::ite(d_.sm[static_cast<size_t>(j)] == sm, ptr_after_[static_cast<size_t>(j)], p);
  return p;
}

std::pair<std::vector<expr>, std::vector<expr>> Encoder::interval_holes(const std::vector<Interval>& iv_list, const expr& limit) {
  std::vector<expr> starts = {iv(0)};
  std::vector<expr> valid = {bv(true)};
  for (const auto& a : iv_list) {
    starts.push_back(a.end);
    valid.push_back(a.valid);
  }
  std::vector<expr> sizes;
  for (size_t b = 0; b < starts.size(); ++b) {
    expr covered = !valid[b] || starts[b] >= limit;
    expr next = limit;
    for (const auto& a : iv_list) {
      covered = covered || (a.valid && a.start <= starts[b] && starts[b] < a.end);
      next = z3::ite(a.valid && a.start >= starts[b] && a.start < next, a.start, next);
    }
    sizes.push_back(z3::ite(covered, iv(0), next - starts[b]));
  }
  return {starts, sizes};
}

std::vector<expr> Encoder::holes(int i, const SmView& v, const expr& limit) {
  std::vector<expr> starts = {iv(0)};
  std::vector<expr> valid = {bv(true)};
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    starts.push_back(off_[ju] + S_[static_cast<size_t>(s_.kernel_of_block(j))]);
    valid.push_back(v.alloc[ju]);
  }
  std::vector<expr> out;
  for (size_t b = 0; b < starts.size(); ++b) {
    expr covered = !valid[b] || starts[b] >= limit;
    expr next = limit;
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      expr oj = off_[ju];
      expr ej = off_[ju] + S_[static_cast<size_t>(s_.kernel_of_block(j))];
      covered = covered || (v.alloc[ju] && oj <= starts[b] && starts[b] < ej);
      next = z3::ite(v.alloc[ju] && oj >= starts[b] && oj < next, oj, next);
    }
    out.push_back(z3::ite(covered, iv(0), next - starts[b]));
  }
  return out;
}

expr Encoder::unit_busy(int i, int unit, const Instant& t) {
  std::vector<expr> any;
  for (int j = 0; j < i; ++j)
    any.push_back(t.resident[static_cast<size_t>(j)] && unit_of(d_.sm[static_cast<size_t>(j)]) == unit);
  if (any.empty()) return bv(false);
  z3::expr_vector v(c_);
  for (auto& x : any) v.push_back(x);
  return z3::mk_or(v);
}

expr Encoder::unit_config(int i, int unit) {
  expr cfg = iv(dev_.max_smem_config_bytes());
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    cfg = z3::ite(opener_[ju] && unit_of(d_.sm[ju]) == unit, CFG_[static_cast<size_t>(s_.kernel_of_block(j))], cfg);
  }
  return cfg;
}

expr Encoder::gpu_busy(int i, const Instant& t) {
  if (i == 0) return bv(false);
  z3::expr_vector v(c_);
  for (int j = 0; j < i; ++j) v.push_back(t.resident[static_cast<size_t>(j)]);
  return z3::mk_or(v);
}

expr Encoder::local_ok(int i, const Instant& t, int kernel) {
  if (!gpu_local_) return bv(true);
  expr cfg = iv(0);
  for (int j = 0; j < i; ++j)
    cfg = z3::ite(gpu_opener_[static_cast<size_t>(j)], LOC_[static_cast<size_t>(s_.kernel_of_block(j))], cfg);
  return !gpu_busy(i, t) || LOC_[static_cast<size_t>(kernel >= 0 ? kernel : s_.kernel_of_block(i))] <= cfg;
}

}  // namespace tbcheck::smt::detail
