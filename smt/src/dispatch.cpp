// One dispatch decision as Z3 constraints: when block i starts, which SM the generic selection answers
// (round-robin, most-room; paired issue), and that it waited only while nothing fitted (model/engine/src/dispatch.cpp's loop).
#include <array>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"
#include "tbcheck/model/numbering.hpp"

namespace tbcheck::smt::detail {

std::vector<z3::expr_vector> Encoder::run_grouped() {
  std::vector<z3::expr_vector> groups;
  kernel_terms();
  groups.push_back(take());
  const int nb = s_.total_blocks();
  for (int i = 0; i < nb; ++i) {
    block(i);
    groups.push_back(take());
  }
  return groups;
}

void Encoder::block(int i) {
  size_t iu = static_cast<size_t>(i);
  int k = s_.kernel_of_block(i);
  size_t ku = static_cast<size_t>(k);
  const expr& sm = d_.sm[iu];
  const expr& st = d_.start[iu];
  expr prev = i == 0 ? iv(0) : d_.start[iu - 1];
  end_.push_back(define("end", i, st + s_.duration[ku]));
  if (start_order_) retirement_cut(i);
  out_.push_back(sm >= 0 && sm < n_);
  out_.push_back(st >= prev);
  if (releases_) {
    release_rules(i);  // release.cpp: the event instants include releases; heads change at them
  } else {
    // Implied by the semantics, stated for the solver: a block starts when the previous one did or
    // when some earlier block retires (nothing else changes the machine).
    z3::expr_vector when(c_);
    when.push_back(st == prev);
    for (int j = 0; j < i; ++j) when.push_back(st == end_[static_cast<size_t>(j)]);
    out_.push_back(z3::mk_or(when));
  }

  Instant now = at_start(i);
  std::vector<SmCap> caps = capacities(i, now, fermi_ ? 1 : bmax_);  // Fermi asks only "fits"
  expr lok = local_ok(i, now);

  if (fermi_) {
    fermi_pick(i, caps, lok);
    pos_.push_back(iv(0));  // the round-robin pointer plays no part
  } else if (ku < s_.cluster.size() && s_.cluster[ku]) {
    cluster_pick(i, caps, lok);
  } else {
    generic_pick(i, caps, lok);
  }
  if (ring_) ring_note(i, caps);
  commit(i, now, caps);
}

void Encoder::generic_pick(int i, const std::vector<SmCap>& caps, const expr& lok) {
  size_t iu = static_cast<size_t>(i);
  const expr& sm = d_.sm[iu];
  const expr& st = d_.start[iu];
  // Selection: the SM the hypothesis answers at start_i.
  std::vector<expr> chosen(static_cast<size_t>(n_), bv(false));  // by SM id
  switch (h_.selection) {
    case model::Selection::GpcPriority: throw std::logic_error("gpc-priority reached generic_pick");
    case model::Selection::GpcSpread:
    case model::Selection::TpcPosition: chosen = spread_pick(i, caps); break;
    case model::Selection::Rule: chosen = rule_pick(i, caps); break;
    case model::Selection::MostRoom:
      for (int p = 0; p < n_; ++p) {
        int s = order_[static_cast<size_t>(p)];
        expr best = caps[static_cast<size_t>(s)].value >= 1;
        for (int q = 0; q < n_; ++q) {
          if (q == p) continue;
          const expr& other = caps[static_cast<size_t>(order_[static_cast<size_t>(q)])].value;
          best = best && (q < p ? caps[static_cast<size_t>(s)].value > other : caps[static_cast<size_t>(s)].value >= other);
        }
        chosen[static_cast<size_t>(s)] = best;
      }
      break;
    case model::Selection::RoundRobin: {  // first position at or after the GPU-wide pointer with room
      expr ptr = rr_pointer(i);
      for (int p = 0; p < n_; ++p) {
        int s = order_[static_cast<size_t>(p)];
        expr pick = bv(false);
        for (int from = 0; from < n_; ++from) {
          expr ok = ptr == from && caps[static_cast<size_t>(s)].levels[0];
          for (int q = from; q != p; q = (q + 1) % n_) ok = ok && !caps[static_cast<size_t>(order_[static_cast<size_t>(q)])].levels[0];
          pick = pick || ok;
        }
        chosen[static_cast<size_t>(s)] = pick;
      }
      break;
    }
  }
  if (follower_.count(i)) {
    // Paired issue: block i joins its leader's SM when it fits there at the leader's
    // instant; otherwise the selection places it like any block. The round-robin pointer needs no
    // case: the follower's position is its leader's, so pos + 1 is unchanged.
    const expr& leader_sm = d_.sm[iu - 1];
    expr fits = bv(false);
    for (int s = 0; s < n_; ++s) fits = fits || (leader_sm == s && caps[static_cast<size_t>(s)].levels[0]);
    expr joins = define("joins", i, same_point(i) && lok && fits);
    for (int s = 0; s < n_; ++s)
      out_.push_back(z3::implies(sm == s, z3::ite(joins, leader_sm == s, chosen[static_cast<size_t>(s)]) && lok));
  } else {
    for (int s = 0; s < n_; ++s) out_.push_back(z3::implies(sm == s, chosen[static_cast<size_t>(s)] && lok));
  }
  pos_.push_back(position_of(sm));

  // It waited only if nothing fitted just before (fit only grows while blocks retire); with release
  // times, release_rules states it for every head since the previous start.
  if (releases_) {
  } else if (i > 0) {
    Instant before = before_start(i);
    std::vector<SmCap> b = capacities(i, before, 1);
    z3::expr_vector any(c_);
    for (auto& x : b) any.push_back(x.levels[0]);
    out_.push_back(same_point(i) || !(local_ok(i, before) && z3::mk_or(any)));
  } else {
    out_.push_back(st == 0);
  }
}

std::vector<expr> Encoder::spread_pick(int i, const std::vector<SmCap>& caps) {
  const std::vector<int>& gpc_of_tpc = dev_.gpc_of_tpc;  // check_feasibility refuses a device without one
  const int per = dev_.sms_per_tpc;
  const int tpcs = n_ / per;
  // Room for this kernel on each SM and TPC at the instant (the simulator's capacity_of).
  std::vector<expr> room, tpc_room;
  for (int s = 0; s < n_; ++s) {
    const expr& v = caps[static_cast<size_t>(s)].value;
    room.push_back(z3::ite(v > 0, v, iv(0)));
  }
  for (int t = 0; t < tpcs; ++t) {
    std::vector<expr> parts;
    for (int s = t * per; s < (t + 1) * per; ++s) parts.push_back(room[static_cast<size_t>(s)]);
    tpc_room.push_back(define(fmt::format("tr{}_", t), i, sum_of(parts)));
  }
  std::vector<int> gpc_tpcs, pos_of(static_cast<size_t>(n_), 0);
  for (int g : gpc_of_tpc) {
    if (g >= static_cast<int>(gpc_tpcs.size())) gpc_tpcs.resize(static_cast<size_t>(g) + 1, 0);
    gpc_tpcs[static_cast<size_t>(g)] += 1;
  }
  for (int p = 0; p < n_; ++p) pos_of[static_cast<size_t>(order_[static_cast<size_t>(p)])] = p;
  // The key's terms per SM: room (more first), tier (a constant), TPC room (more first), the GPC's turns
  // taken at that room; then the constants GPC, TPC and scan position.
  std::vector<expr> served;
  for (int s = 0; s < n_; ++s) {
    const int t = s / per;
    std::vector<expr> parts;
    for (int u = 0; u < tpcs; ++u)
      if (gpc_of_tpc[static_cast<size_t>(u)] == gpc_of_tpc[static_cast<size_t>(t)])
        parts.push_back(z3::ite(tpc_room[static_cast<size_t>(u)] < tpc_room[static_cast<size_t>(t)], iv(1), iv(0)));
    served.push_back(sum_of(parts));
  }
  auto constants = [&](int s) {
    const int t = s / per;
    const int g = gpc_of_tpc[static_cast<size_t>(t)];
    return std::array<int, 4>{gpc_tpcs[static_cast<size_t>(g)] == 1 ? 0 : 1, g, t, pos_of[static_cast<size_t>(s)]};
  };
  // tpc-position: after room and tier every term is a constant of the SM: its place in its TPC, its TPC's place
  // in its GPC, then GPC, TPC and scan position (model/engine/src/dispatch.cpp's key).
  const bool by_position = h_.selection == model::Selection::TpcPosition;
  const std::vector<int> tpc_position = by_position ? model::tpc_positions(gpc_of_tpc) : std::vector<int>{};
  auto position_key = [&](int s) {
    const int t = s / per;
    const auto c = constants(s);
    return std::array<int, 5>{s - t * per, tpc_position[static_cast<size_t>(t)], c[1], c[2], c[3]};
  };
  auto less = [&](int a, int b) {  // key(a) < key(b), lexicographically
    const auto ca = constants(a), cb = constants(b);
    const size_t au = static_cast<size_t>(a), bu = static_cast<size_t>(b);
    const size_t ta = static_cast<size_t>(a / per), tb = static_cast<size_t>(b / per);
    const expr tail = bv(std::array<int, 3>{ca[1], ca[2], ca[3]} < std::array<int, 3>{cb[1], cb[2], cb[3]});
    const expr after_tier = tpc_room[ta] > tpc_room[tb] ||
                            (tpc_room[ta] == tpc_room[tb] && (served[au] < served[bu] || (served[au] == served[bu] && tail)));
    const expr from_tier = ca[0] != cb[0] ? bv(ca[0] < cb[0]) : by_position ? bv(position_key(a) < position_key(b)) : after_tier;
    return room[au] > room[bu] || (room[au] == room[bu] && from_tier);
  };
  return least_candidate(caps, less);
}

std::vector<expr> Encoder::least_candidate(const std::vector<SmCap>& caps,
                                           const std::function<expr(int, int)>& less) const {
  std::vector<expr> chosen;
  for (int s = 0; s < n_; ++s) {
    expr best = caps[static_cast<size_t>(s)].levels[0];
    for (int o = 0; o < n_; ++o)
      if (o != s) best = best && z3::implies(caps[static_cast<size_t>(o)].levels[0], less(s, o));
    chosen.push_back(best);
  }
  return chosen;
}

expr Encoder::position_of(const expr& sm) {
  expr p = iv(0);
  for (int q = n_ - 1; q >= 0; --q) p = z3::ite(sm == order_[static_cast<size_t>(q)], iv(q), p);
  return p;
}

expr Encoder::rr_pointer(int i) {
  if (i == 0) return iv(0);
  return z3::mod(pos_[static_cast<size_t>(i - 1)] + 1, iv(n_));
}

}  // namespace tbcheck::smt::detail
