// Term helpers of the Z3 encoder: constants of the scenario's sort, sums, counts, and defined variables
// (shared between the encodings of several hypotheses through SharedTerms); linear products by unary levels.
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"

namespace tbcheck::smt::detail {

expr Encoder::count_if(const std::vector<expr>& conds) {
  std::vector<expr> ones;
  for (const auto& x : conds) ones.push_back(z3::ite(x, iv(1), iv(0)));
  return sum_of(ones);
}

expr Encoder::sum_of(const std::vector<expr>& xs) {
  if (xs.empty()) return iv(0);
  if (s_.sort == Sort::Int) {
    z3::expr_vector v(c_);
    for (const auto& x : xs) v.push_back(x);
    return z3::sum(v);
  }
  std::vector<expr> level = xs;
  while (level.size() > 1) {
    std::vector<expr> next;
    for (size_t a = 0; a + 1 < level.size(); a += 2) next.push_back(level[a] + level[a + 1]);
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  return level[0];
}

expr Encoder::define(const std::string& what, int i, const expr& e0) {
  expr e = e0.simplify();
  if (e.is_numeral() || (e.is_bool() && (e.is_true() || e.is_false()))) return e;  // constants stay constants
  if (shared_) {
    auto it = shared_->by_ast.find(e.id());
    if (it != shared_->by_ast.end()) return it->second;  // defined (and constrained) by an earlier encoding
  }
  expr v = e.is_bool() ? c_.bool_const(fmt::format("{}_{}_{}", tag_, what, i).c_str()) : fresh_int(what, i);
  out_.push_back(v == e);
  if (shared_) shared_->by_ast.emplace(e.id(), v);
  return v;
}

expr Encoder::any_of(const std::vector<expr>& xs) {
  if (xs.empty()) return bv(false);
  z3::expr_vector v(c_);
  for (const auto& x : xs) v.push_back(x);
  return z3::mk_or(v);
}

expr Encoder::fits_count(const expr& free, const expr& r, int cap) {
  if (r.is_numeral()) {
    int64_t rv = r.get_numeral_int64();
    if (rv == 0) return iv(cap);
    return smin(iv(cap), smax(iv(0), free) / static_cast<int>(rv));
  }
  std::vector<expr> lv;
  for (int x = 1; x <= cap; ++x) lv.push_back(x * r <= free);
  return count_if(lv);
}

expr Encoder::unary_times(const expr& x, const expr& y, int xmax) {
  if (y.is_numeral() || x.is_numeral()) return x * y;
  std::vector<expr> parts;
  for (int v = 1; v <= xmax; ++v) parts.push_back(z3::ite(x >= v, y, iv(0)));
  return sum_of(parts);
}

}  // namespace tbcheck::smt::detail
