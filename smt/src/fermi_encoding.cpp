// pick_sm of seed 003 (Section 4.1) as Z3 terms: model::fermi_first_wave's loop unrolled per pick, with
// a whole-GPC step split into one pick per member SM so that every pick is one step of the unrolling.
#include "fermi_encoding.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace tbcheck::smt::detail {

using z3::expr;

std::vector<expr> fermi_wave_plan(const TermSource& t, const std::vector<int>& gpc_of_sm, const std::vector<expr>& room,
                                  int blocks) {
  const int sms = static_cast<int>(gpc_of_sm.size());
  std::vector<expr> plan;
  if (sms == 0 || blocks <= 0) return plan;
  z3::context& c = room.front().ctx();
  const int gpcs = *std::max_element(gpc_of_sm.begin(), gpc_of_sm.end()) + 1;
  std::vector<std::vector<int>> members(static_cast<size_t>(gpcs));  // ascending %smid, as the simulator
  std::vector<int> pos(static_cast<size_t>(sms));                    // position of an SM among its GPC's
  for (int s = 0; s < sms; ++s) {
    auto& m = members[static_cast<size_t>(gpc_of_sm[static_cast<size_t>(s)])];
    pos[static_cast<size_t>(s)] = static_cast<int>(m.size());
    m.push_back(s);
  }
  auto one = [&](const expr& b) { return z3::ite(b, t.num(1), t.num(0)); };
  auto any = [&](const std::vector<expr>& xs) {
    z3::expr_vector v(c);
    for (const auto& x : xs) v.push_back(x);
    return xs.empty() ? c.bool_val(false) : z3::mk_or(v);
  };
  auto add = [&](const std::vector<expr>& xs) {
    if (xs.empty()) return t.num(0);
    expr s = xs[0];
    for (size_t k = 1; k < xs.size(); ++k) s = s + xs[k];
    return s;
  };

  // The loop's state before each pick: room left per SM, the round-robin pointer per GPC (a position in
  // members), and whether a whole-GPC step is under way, on which GPC, at which member position.
  std::vector<expr> left = room;
  std::vector<expr> pointer(static_cast<size_t>(gpcs), t.num(0));
  expr in_whole = c.bool_val(false), cur_gpc = t.num(0), cur_pos = t.num(-1);
  std::vector<expr> has_room_now;
  for (const auto& r : room) has_room_now.push_back(one(r > 0));
  // "SMs" of the switch rule: the SMs with room in the plan (on an idle GPU, all of them).
  const expr with_room = t.define("fw_with_room", add(has_room_now));

  for (int p = 0; p < blocks; ++p) {
    std::vector<expr> has;
    for (int s = 0; s < sms; ++s) has.push_back(left[static_cast<size_t>(s)] > 0);
    // A whole-GPC step under way sends to the next member (ascending %smid) with room left: sending
    // lowers only the sent SM's room, so the step's remaining targets are those it saw when it began.
    std::vector<expr> cont(static_cast<size_t>(sms), c.bool_val(false));
    for (int s = 0; s < sms; ++s) {
      const int g = gpc_of_sm[static_cast<size_t>(s)];
      expr e = in_whole && cur_gpc == g && cur_pos < pos[static_cast<size_t>(s)] && has[static_cast<size_t>(s)];
      for (int q : members[static_cast<size_t>(g)])
        if (pos[static_cast<size_t>(q)] < pos[static_cast<size_t>(s)]) e = e && (cur_pos >= pos[static_cast<size_t>(q)] || !has[static_cast<size_t>(q)]);
      cont[static_cast<size_t>(s)] = e;
    }
    const expr continuing = any(cont);
    // A new step: "max_cluster = priorities.index(max_prio)" (Section 4.1), the lowest-indexed GPC of
    // highest priority, as a one-hot (beat lower indices strictly, higher ones weakly). A GPC's
    // priority is exactly its room left (r x SMs at the start, lowered by every block sent).
    std::vector<expr> prio;
    for (int g = 0; g < gpcs; ++g) {
      std::vector<expr> xs;
      for (int s : members[static_cast<size_t>(g)]) xs.push_back(left[static_cast<size_t>(s)]);
      prio.push_back(add(xs));
    }
    std::vector<expr> best;
    for (int g = 0; g < gpcs; ++g) {
      expr b = c.bool_val(true);
      for (int o = 0; o < gpcs; ++o)
        if (o != g) b = b && (o < g ? prio[static_cast<size_t>(g)] > prio[static_cast<size_t>(o)] : prio[static_cast<size_t>(g)] >= prio[static_cast<size_t>(o)]);
      best.push_back(b);
    }
    // Whole-GPC steps while more blocks of the kernel remain (this one included) than SMs with room
    // (Section 4.1, the 28x1 and 42x1 tables; model/engine/src/fermi.cpp explains the reading).
    const expr whole = t.num(blocks - p) > with_room;
    std::vector<expr> sent;
    for (int s = 0; s < sms; ++s) {
      const size_t su = static_cast<size_t>(s);
      const int g = gpc_of_sm[su];
      const auto& m = members[static_cast<size_t>(g)];
      const int n = static_cast<int>(m.size());
      // s is the first member with room left from position f on, cyclically.
      auto first_from = [&](int f) {
        expr e = has[su];
        for (int q = f; q != pos[su]; q = (q + 1) % n) e = e && !has[static_cast<size_t>(m[static_cast<size_t>(q)])];
        return e;
      };
      // Single step: the next SM of the GPC in round-robin order of %smid that still has room.
      std::vector<expr> rr;
      for (int f = 0; f < n; ++f) rr.push_back(pointer[static_cast<size_t>(g)] == f && first_from(f));
      const expr fresh = best[static_cast<size_t>(g)] && z3::ite(whole, first_from(0), any(rr));
      sent.push_back(t.define(fmt::format("fw_sent{}_{}", p, s), cont[su] || (!continuing && fresh)));
    }
    expr sm = t.num(0), gpc = cur_gpc, at = cur_pos;
    for (int s = sms - 1; s >= 0; --s) {
      sm = z3::ite(sent[static_cast<size_t>(s)], t.num(s), sm);
      gpc = z3::ite(sent[static_cast<size_t>(s)], t.num(gpc_of_sm[static_cast<size_t>(s)]), gpc);
      at = z3::ite(sent[static_cast<size_t>(s)], t.num(pos[static_cast<size_t>(s)]), at);
    }
    plan.push_back(t.define(fmt::format("fw_sm{}", p), sm));
    if (p + 1 == blocks) break;
    // Commit the pick: the sent SM loses one block of room; a single step moves its GPC's pointer past
    // it; a whole step (new or continued) records where it is.
    for (int s = 0; s < sms; ++s)
      left[static_cast<size_t>(s)] =
          t.define(fmt::format("fw_left{}_{}", p, s), left[static_cast<size_t>(s)] - one(sent[static_cast<size_t>(s)]));
    const expr single = !continuing && !whole;
    for (int g = 0; g < gpcs; ++g) {
      const auto& m = members[static_cast<size_t>(g)];
      expr ptr = pointer[static_cast<size_t>(g)];
      for (int s : m)
        ptr = z3::ite(single && sent[static_cast<size_t>(s)],
                      t.num((pos[static_cast<size_t>(s)] + 1) % static_cast<int>(m.size())), ptr);
      pointer[static_cast<size_t>(g)] = t.define(fmt::format("fw_ptr{}_{}", p, g), ptr);
    }
    in_whole = t.define(fmt::format("fw_whole{}", p), continuing || whole);
    cur_gpc = t.define(fmt::format("fw_gpc{}", p), gpc);
    cur_pos = t.define(fmt::format("fw_pos{}", p), at);
  }
  return plan;
}

}  // namespace tbcheck::smt::detail
