// The simulator's interpreter of selection rules (docs/rules.md): each candidate SM's key, compared key by key,
// least wins, the scan position last (smt/src/rule_pick.cpp is the twin).
#include <algorithm>
#include <limits>
#include <tuple>

#include "dispatcher.hpp"

namespace tbcheck::model {

void Dispatcher::rule_setup() {
  const Rule& r = h_.rule;
  if (!r.keys.empty()) {
    const RuleKey& lead = r.keys.front();
    const bool all_rooms = r.uses(RuleFeature::TpcRoom) || r.uses(RuleFeature::GpcServed);
    if (lead == RuleKey{RuleFeature::RrDistance, Prefer::Min}) rule_lead_ = RuleLead::Pointer;
    else if (lead == RuleKey{RuleFeature::Position, Prefer::Min}) rule_lead_ = RuleLead::First;
    else if (lead == RuleKey{RuleFeature::Room, Prefer::Max})
      rule_lead_ = r.keys.size() == 1 ? RuleLead::Room : all_rooms ? RuleLead::None : RuleLead::MostRoom;
  }
  rule_cand_.reserve(static_cast<size_t>(d_.sms));
  rule_room_.assign(static_cast<size_t>(d_.sms), 0);
  rule_tpc_room_.assign(static_cast<size_t>(d_.tpcs()), 0);
  rule_gpc_of_tpc_ = d_.gpc_of_tpc;  // empty without a map: check_feasibility refuses the keys that need one
  for (size_t t = 0; t < rule_gpc_of_tpc_.size(); ++t) {
    const auto g = static_cast<size_t>(rule_gpc_of_tpc_[t]);
    if (g >= rule_gpc_tpcs_.size()) rule_gpc_tpcs_.resize(g + 1);
    rule_gpc_tpcs_[g].push_back(static_cast<int>(t));
  }
}

// Keeps the candidates whose value (smaller is better) is least, in scan order, in one pass.
template <class F>
void Dispatcher::rule_keep_best(F&& value) {
  int64_t best = std::numeric_limits<int64_t>::max();
  size_t kept = 0;
  for (size_t c = 0; c < rule_cand_.size(); ++c) {
    const int p = rule_cand_[c];
    const int64_t v = value(p);
    if (v < best) {
      best = v;
      kept = 0;
    }
    if (v == best) rule_cand_[kept++] = p;  // kept <= c: never overwrites a candidate not yet read
  }
  rule_cand_.resize(kept);
}

int Dispatcher::rule_pick() {
  const auto stale = [&](int pos) { return stale_[static_cast<size_t>(order_[static_cast<size_t>(pos)])] != 0; };
  int pos = -1;
  int64_t most = 0;
  rule_cand_.clear();
  switch (rule_lead_) {  // the index's own answers, as round-robin and most-room take them (dispatch.cpp)
    case RuleLead::Pointer:
    case RuleLead::First: {
      const int from = rule_lead_ == RuleLead::Pointer ? rr_pointer_ : 0;
      while ((pos = index_.first_positive_from(from)) >= 0 && stale(pos)) refresh(order_[static_cast<size_t>(pos)]);
      return pos;
    }
    case RuleLead::Room:
    case RuleLead::MostRoom:
      std::tie(most, pos) = index_.best();
      while (most > 0 && stale(pos)) {
        refresh(order_[static_cast<size_t>(pos)]);
        std::tie(most, pos) = index_.best();
      }
      if (most <= 0) return -1;
      if (rule_lead_ == RuleLead::Room) return pos;
      // Every entry is exact or an upper bound: a stale one below the most room cannot reach it.
      index_.at_least(most, rule_cand_);
      {
        size_t kept = 0;
        for (int p : rule_cand_) {
          const int sm = order_[static_cast<size_t>(p)];
          if (stale_[static_cast<size_t>(sm)]) refresh(sm);
          if (index_.value(p) != most) continue;
          rule_room_[static_cast<size_t>(sm)] = most;
          rule_cand_[kept++] = p;
        }
        rule_cand_.resize(kept);
      }
      break;
    case RuleLead::None:
      // Every SM's room, exact: refresh_dirty ran before the pick, so only entries a commit left stale differ.
      for (int p = 0; p < d_.sms; ++p) {
        const int sm = order_[static_cast<size_t>(p)];
        if (stale_[static_cast<size_t>(sm)]) refresh(sm);
        const int64_t v = index_.value(p);
        rule_room_[static_cast<size_t>(sm)] = v > 0 ? v : 0;
        if (v > 0) rule_cand_.push_back(p);
      }
      if (rule_cand_.empty()) return -1;
      break;
  }
  return rule_rank(rule_lead_ == RuleLead::MostRoom ? 1 : 0);
}

int Dispatcher::rule_pick_in(const std::vector<int>& sms, const std::vector<int64_t>& blocks,
                             const std::vector<int64_t>& value) {
  rule_cand_.clear();
  for (int sm : sms)  // in scan order (gpc_sms_in_order), so positions ascend
    if (blocks[static_cast<size_t>(sm)] >= 1) rule_cand_.push_back(pos_of_[static_cast<size_t>(sm)]);
  if (rule_cand_.empty()) return -1;
  for (int sm = 0; sm < d_.sms; ++sm) rule_room_[static_cast<size_t>(sm)] = std::max<int64_t>(0, value[static_cast<size_t>(sm)]);
  return order_[static_cast<size_t>(rule_rank(0))];
}

int Dispatcher::rule_rank(size_t first_key) {
  const int n = d_.sms;
  const int per = d_.sms_per_tpc;
  bool tpc_room_known = false;
  auto tpc_room = [&](int t) -> int64_t {
    if (!tpc_room_known) {  // every SM's room is exact when a key reads it (RuleLead::None, or rule_pick_in)
      std::fill(rule_tpc_room_.begin(), rule_tpc_room_.end(), 0);
      for (int sm = 0; sm < n; ++sm) rule_tpc_room_[static_cast<size_t>(g_.tpc_of(sm))] += rule_room_[static_cast<size_t>(sm)];
      tpc_room_known = true;
    }
    return rule_tpc_room_[static_cast<size_t>(t)];
  };
  auto sm_at = [&](int p) { return order_[static_cast<size_t>(p)]; };
  auto tpc_at = [&](int p) { return g_.tpc_of(order_[static_cast<size_t>(p)]); };
  auto gpc_tpcs_at = [&](int p) -> const std::vector<int>& {
    return rule_gpc_tpcs_[static_cast<size_t>(rule_gpc_of_tpc_[static_cast<size_t>(tpc_at(p))])];
  };
  // Key by key, keep only the candidates with the best value; the first one left is the least position among equals.
  for (size_t i = first_key; i < h_.rule.keys.size() && rule_cand_.size() > 1; ++i) {
    const RuleKey& key = h_.rule.keys[i];
    int64_t sign = 1;
    switch (key.prefer) {
      case Prefer::Min: break;
      case Prefer::Max: sign = -1; break;
    }
    switch (key.feature) {
      case RuleFeature::Room: rule_keep_best([&](int p) { return sign * rule_room_[static_cast<size_t>(sm_at(p))]; }); break;
      case RuleFeature::Held: rule_keep_best([&](int p) { return sign * g_.sm(sm_at(p)).blocks; }); break;
      case RuleFeature::TpcRoom: rule_keep_best([&](int p) { return sign * tpc_room(tpc_at(p)); }); break;
      case RuleFeature::SingleTpcGpc:
        rule_keep_best([&](int p) { return sign * (gpc_tpcs_at(p).size() == 1 ? 1 : 0); });
        break;
      case RuleFeature::GpcServed:
        rule_keep_best([&](int p) {
          const int64_t level = tpc_room(tpc_at(p));
          int64_t served = 0;
          for (int u : gpc_tpcs_at(p))
            if (tpc_room(u) < level) ++served;
          return sign * served;
        });
        break;
      case RuleFeature::SmInTpc: rule_keep_best([&](int p) { return sign * (sm_at(p) - tpc_at(p) * per); }); break;
      case RuleFeature::TpcPosition:
        rule_keep_best([&](int p) { return sign * tpc_position_[static_cast<size_t>(tpc_at(p))]; });
        break;
      case RuleFeature::Gpc:
        rule_keep_best([&](int p) { return sign * rule_gpc_of_tpc_[static_cast<size_t>(tpc_at(p))]; });
        break;
      case RuleFeature::Tpc: rule_keep_best([&](int p) { return sign * tpc_at(p); }); break;
      case RuleFeature::Position: rule_keep_best([&](int p) { return sign * p; }); break;
      case RuleFeature::RrDistance: rule_keep_best([&](int p) { return sign * ((p - rr_pointer_ + n) % n); }); break;
    }
  }
  return rule_cand_.front();
}

}  // namespace tbcheck::model
