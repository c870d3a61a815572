// Release times in the SMT encoding: a block starts at an event instant at or after its kernel's
// launch, its kernel the head there, and only after every earlier head since the previous start could not fit.
#include <algorithm>
#include <vector>

#include "encoder.hpp"
#include "tbcheck/model/controls.hpp"

namespace tbcheck::smt::detail {

bool Encoder::serves_before(int a, int b) const {
  const size_t au = static_cast<size_t>(a), bu = static_cast<size_t>(b);
  return rank_[au] != rank_[bu] ? rank_[au] < rank_[bu] : a < b;
}

std::vector<int> Encoder::left_at(int i) const {
  std::vector<int> out;
  for (size_t p = static_cast<size_t>(i); p < s_.pick_kernel.size(); ++p)
    if (std::find(out.begin(), out.end(), s_.pick_kernel[p]) == out.end()) out.push_back(s_.pick_kernel[p]);
  return out;
}

expr Encoder::fits_kernel(int i, int q, const Instant& t) {
  z3::expr_vector any(c_);
  for (auto& x : capacities(i, t, 1, q)) any.push_back(x.levels[0]);
  return local_ok(i, t, q) && z3::mk_or(any);
}

void Encoder::release_rules(int i) {
  const size_t iu = static_cast<size_t>(i);
  const int k = s_.kernel_of_block(i);
  const expr& st = d_.start[iu];
  const expr prev = i == 0 ? iv(0) : d_.start[iu - 1];
  auto rel = [&](int q) { return s_.release[static_cast<size_t>(q)]; };
  const std::vector<int> left = left_at(i);

  // An event instant: the previous start, a retirement, or a release (model/engine/src/simulate.cpp's `now` steps).
  z3::expr_vector when(c_);
  when.push_back(st == prev);
  for (int j = 0; j < i; ++j) when.push_back(st == end_[static_cast<size_t>(j)]);
  for (int64_t r : release_instants_) when.push_back(st == iv(r));
  out_.push_back(z3::mk_or(when));

  // Kernel k is the head at st: launched, and no kernel served before it that has blocks left is.
  out_.push_back(st >= iv(rel(k)));
  for (int q : left)
    if (q != k && serves_before(q, k)) out_.push_back(st < iv(rel(q)));

  // Waiting: over [prev, st) the head changes only at release instants, and each head's fit only grows
  // while blocks retire, so every head must have failed just before the end of its stretch. A stretch that
  // ends at release r has the head of the kernels launched before r (a concrete kernel, or none).
  for (int64_t r : release_instants_) {
    int head = -1;
    for (int q : left)
      if (rel(q) < r && (head < 0 || serves_before(q, head))) head = q;
    if (head < 0) continue;
    out_.push_back(z3::implies(prev < iv(r) && iv(r) <= st, !fits_kernel(i, head, before_time(i, iv(r)))));
  }
  // The last stretch ends at st: its head is the kernel served first among those launched before st.
  const Instant before = start_order_ ? before_time(i, st) : before_start(i);
  for (int q : left) {
    expr is_head = iv(rel(q)) < st;
    for (int q2 : left)
      if (q2 != q && serves_before(q2, q)) is_head = is_head && iv(rel(q2)) >= st;
    out_.push_back(z3::implies(st > prev && is_head, !fits_kernel(i, q, before)));
  }
  // Retirement start-order: dispatch points of st itself before the retirement block i follows, after the
  // launches of st, with k the head there (no kernel served before it is launched by st with blocks left).
  if (start_order_)
    out_.push_back(z3::implies(inner_[iu] && !same_point(i), !fits_kernel(i, k, before_start(i))));
}

}  // namespace tbcheck::smt::detail
