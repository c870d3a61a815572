// Selection gpc-priority as Z3 constraints (seed 003; model/engine/src/fermi.cpp is the reference): the
// planning instant and first-wave plan of each kernel, then picks in the order blocks complete.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"
#include "fermi_encoding.hpp"

namespace tbcheck::smt::detail {

std::vector<expr> Encoder::fits(int i, const std::vector<SmCap>& caps, const std::string& what) {
  std::vector<expr> out;
  for (int s = 0; s < n_; ++s) out.push_back(define(fmt::format("{}{}_", what, s), i, caps[static_cast<size_t>(s)].levels[0]));
  return out;
}

expr Encoder::fits_on(const std::vector<expr>& fit, const expr& where) {
  std::vector<expr> xs;
  for (int s = 0; s < n_; ++s) xs.push_back(where == s && fit[static_cast<size_t>(s)]);
  return any_of(xs);
}

void Encoder::fermi_plan(int k, int first) {
  size_t ku = static_cast<size_t>(k);
  // Head-of-line blocking with one stream per kernel: k becomes the head when k - 1 dispatched its
  // last pick, and plans once local memory allows it (Algorithm 1 lines 1-3, checked before every pick).
  expr when = first == 0 ? iv(0) : d_.start[static_cast<size_t>(first - 1)];
  if (first > 0 && gpu_local_) {
    const expr head = when;
    when = fresh_int("T", k);
    out_.push_back(when >= head);
    std::vector<expr> at = {when == head};
    for (int j = 0; j < first; ++j) at.push_back(when == end_[static_cast<size_t>(j)]);
    out_.push_back(any_of(at));
    out_.push_back(local_ok(first, at_time(first, when)));
    // Nothing is dispatched while the head waits, so local memory only frees up: the first instant it allows.
    out_.push_back(when == head || !local_ok(first, before_time(first, when)));
  }
  plan_at_.push_back(when);
  // Room of SM s: min(r, blocks of the kernel s takes at T_k); on an idle GPU r everywhere (Section 4.1).
  std::vector<SmCap> caps = capacities(first, at_time(first, when), bmax_);
  std::vector<expr> room;
  for (int s = 0; s < n_; ++s)
    room.push_back(define(fmt::format("room{}_", s), first, smin(CAP0_[ku], count_if(caps[static_cast<size_t>(s)].levels))));
  wave_size_.push_back(define("wave", first, sum_of(room)));  // min with the kernel's blocks: the pick index
  detail::TermSource t{[this](int64_t v) { return iv(v); },
                       [this, first](const std::string& what, const expr& e) { return define(what, first, e); }};
  plan_.push_back(detail::fermi_wave_plan(t, gpc_of_sm_, room, s_.blocks[ku]));
  // "Planning a wave forgets the completions seen before it": only blocks ending after T_k count.
  taken_.assign(static_cast<size_t>(first), bv(false));
}

void Encoder::fermi_pick(int i, const std::vector<SmCap>& caps, const expr& lok) {
  size_t iu = static_cast<size_t>(i);
  const int k = s_.kernel_of_block(i);
  int first = 0;
  for (int q = 0; q < k; ++q) first += s_.blocks[static_cast<size_t>(q)];
  const int p = i - first;
  const expr& sm = d_.sm[iu];
  const expr& st = d_.start[iu];
  if (p == 0) fermi_plan(k, first);
  const expr& when = plan_at_[static_cast<size_t>(k)];
  const expr prev = p == 0 ? when : d_.start[iu - 1];
  if (p == 0) out_.push_back(st >= when);
  // First wave: min(blocks, room) picks go to their planned SMs, each waiting while its SM cannot hold
  // it (only when capacity is not additive); the rest reuse completions (Section 3).
  const expr in_wave = define("inwave", i, wave_size_[static_cast<size_t>(k)] > p);
  const expr& planned = plan_[static_cast<size_t>(k)][static_cast<size_t>(p)];
  // After the wave: "SMs are picked in the order of completing thread blocks". Completions since T_k,
  // not yet reused by this kernel, ordered by (end, dispatch sequence); the oldest whose SM holds the
  // block now is taken, else the block waits for the next instant.
  const std::vector<expr> fit = fits(i, caps, "fit");
  std::vector<expr> fit_before;
  if (i > 0) fit_before = fits(i, capacities(i, before_start(i), 1), "fitb");
  std::vector<expr> cand, cand_before;
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    const expr open = end_[ju] > when && !taken_[ju];
    cand.push_back(define(fmt::format("cand{}_", j), i, open && end_[ju] <= st && fits_on(fit, d_.sm[ju])));
    cand_before.push_back(open && end_[ju] < st && fits_on(fit_before, d_.sm[ju]));
  }
  std::vector<expr> take;
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    expr e = !in_wave && cand[ju];
    for (int o = 0; o < i; ++o) {
      if (o == j) continue;
      size_t ou = static_cast<size_t>(o);
      e = e && !(cand[ou] && (o < j ? end_[ou] <= end_[ju] : end_[ou] < end_[ju]));
    }
    take.push_back(define(fmt::format("take{}_", j), i, e));
  }
  for (int s = 0; s < n_; ++s) {
    std::vector<expr> reuse;
    for (int j = 0; j < i; ++j) reuse.push_back(take[static_cast<size_t>(j)] && d_.sm[static_cast<size_t>(j)] == s);
    const expr wave_ok = planned == s && fit[static_cast<size_t>(s)];
    out_.push_back(z3::implies(sm == s, lok && z3::ite(in_wave, wave_ok, any_of(reuse))));
  }
  // It waited only if it could not be dispatched just before (room and completions only grow while
  // the head waits, as nothing else is dispatched).
  if (i > 0) {
    const expr possible = z3::ite(in_wave, fits_on(fit_before, planned), any_of(cand_before));
    out_.push_back(st == prev || !(local_ok(i, before_start(i)) && possible));
  } else {
    out_.push_back(st == 0);
  }
  for (int j = 0; j < i; ++j) {
    size_t ju = static_cast<size_t>(j);
    taken_[ju] = define(fmt::format("taken{}_", j), i, taken_[ju] || take[ju]);
  }
  taken_.push_back(bv(false));
}

}  // namespace tbcheck::smt::detail
