// The SMT twin of model/engine/src/rule_pick.cpp: a selection rule's key per SM as Z3 terms (constants folded), compared
// lexicographically as spread_pick compares gpc-spread's key, the scan position last.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"
#include "tbcheck/model/numbering.hpp"

namespace tbcheck::smt::detail {

std::function<expr(int, int)> Encoder::rule_order(int i, const std::vector<SmCap>& caps) {
  const int per = dev_.sms_per_tpc;
  const int tpcs = n_ / per;
  const std::vector<int>& gpc_of_tpc = dev_.gpc_of_tpc;  // the constructor refuses keys that need it on a device without
  std::vector<int> pos_of(static_cast<size_t>(n_), 0);
  for (int p = 0; p < n_; ++p) pos_of[static_cast<size_t>(order_[static_cast<size_t>(p)])] = p;
  std::vector<int> gpc_tpcs;
  for (int g : gpc_of_tpc) {
    if (g >= static_cast<int>(gpc_tpcs.size())) gpc_tpcs.resize(static_cast<size_t>(g) + 1, 0);
    gpc_tpcs[static_cast<size_t>(g)] += 1;
  }
  const std::vector<int> tpc_position = model::tpc_positions(gpc_of_tpc);

  std::vector<expr> room;
  for (int s = 0; s < n_; ++s) {
    const expr& v = caps[static_cast<size_t>(s)].value;
    room.push_back(z3::ite(v > 0, v, iv(0)));
  }
  std::optional<std::vector<expr>> tpc_room;  // defined once, when a key asks
  auto tpc_rooms = [&]() -> const std::vector<expr>& {
    if (!tpc_room) {
      tpc_room.emplace();
      for (int t = 0; t < tpcs; ++t) {
        std::vector<expr> parts;
        for (int s = t * per; s < (t + 1) * per; ++s) parts.push_back(room[static_cast<size_t>(s)]);
        tpc_room->push_back(define(fmt::format("rtr{}_", t), i, sum_of(parts)));
      }
    }
    return *tpc_room;
  };

  // One key's value per SM: a constant of the SM, or a term of the state at the instant.
  struct Values {
    std::vector<int64_t> constant;  // when the feature is a fixed number per SM
    std::vector<expr> term;
  };
  auto keys = std::make_shared<std::vector<Values>>();
  std::vector<model::Prefer> prefer;
  for (const model::RuleKey& key : h_.rule.keys) {
    Values v;
    auto each_constant = [&](auto f) {
      for (int s = 0; s < n_; ++s) v.constant.push_back(f(s, s / per));
    };
    switch (key.feature) {
      case model::RuleFeature::Room: v.term = room; break;
      case model::RuleFeature::Held:
        for (int s = 0; s < n_; ++s) v.term.push_back(caps[static_cast<size_t>(s)].held);
        break;
      case model::RuleFeature::TpcRoom:
        for (int s = 0; s < n_; ++s) v.term.push_back(tpc_rooms()[static_cast<size_t>(s / per)]);
        break;
      case model::RuleFeature::GpcServed: {
        std::vector<expr> served;  // per TPC
        for (int t = 0; t < tpcs; ++t) {
          std::vector<expr> parts;
          for (int u = 0; u < tpcs; ++u)
            if (gpc_of_tpc[static_cast<size_t>(u)] == gpc_of_tpc[static_cast<size_t>(t)])
              parts.push_back(z3::ite(tpc_rooms()[static_cast<size_t>(u)] < tpc_rooms()[static_cast<size_t>(t)], iv(1), iv(0)));
          served.push_back(sum_of(parts));
        }
        for (int s = 0; s < n_; ++s) v.term.push_back(served[static_cast<size_t>(s / per)]);
        break;
      }
      case model::RuleFeature::RrDistance: {
        const expr ptr = rr_pointer(i);
        for (int s = 0; s < n_; ++s) {
          const int p = pos_of[static_cast<size_t>(s)];
          v.term.push_back(z3::ite(ptr <= p, iv(p) - ptr, iv(p + n_) - ptr));
        }
        break;
      }
      case model::RuleFeature::SingleTpcGpc:
        each_constant([&](int, int t) { return gpc_tpcs[static_cast<size_t>(gpc_of_tpc[static_cast<size_t>(t)])] == 1 ? 1 : 0; });
        break;
      case model::RuleFeature::SmInTpc: each_constant([&](int s, int t) { return s - t * per; }); break;
      case model::RuleFeature::TpcPosition:
        each_constant([&](int, int t) { return tpc_position[static_cast<size_t>(t)]; });
        break;
      case model::RuleFeature::Gpc: each_constant([&](int, int t) { return gpc_of_tpc[static_cast<size_t>(t)]; }); break;
      case model::RuleFeature::Tpc: each_constant([&](int, int t) { return t; }); break;
      case model::RuleFeature::Position: each_constant([&](int s, int) { return pos_of[static_cast<size_t>(s)]; }); break;
    }
    keys->push_back(std::move(v));
    prefer.push_back(key.prefer);
  }

  // key(a) < key(b): built from the scan position backwards, each key deciding where it differs.
  return [this, keys, prefer, pos_of](int a, int b) {
    const size_t au = static_cast<size_t>(a), bu = static_cast<size_t>(b);
    expr rest = bv(pos_of[au] < pos_of[bu]);
    for (size_t k = keys->size(); k-- > 0;) {
      const bool max = prefer[k] == model::Prefer::Max;
      const Values& v = (*keys)[k];
      if (!v.constant.empty()) {
        const int64_t x = v.constant[au], y = v.constant[bu];
        if (x != y) rest = bv(max ? x > y : x < y);
        continue;
      }
      const expr& x = v.term[au];
      const expr& y = v.term[bu];
      rest = (max ? x > y : x < y) || (x == y && rest);
    }
    return rest;
  };
}

std::vector<expr> Encoder::rule_pick(int i, const std::vector<SmCap>& caps) { return least_candidate(caps, rule_order(i, caps)); }

}  // namespace tbcheck::smt::detail
