// Thread block clusters as Z3 constraints (model/engine/src/cluster.cpp is the reference): a cluster's leader starts
// at the first instant a GPC has room for the whole cluster and picks the GPC; its blocks share start and GPC.
#include <vector>

#include <fmt/format.h>

#include "encoder.hpp"
#include "tbcheck/model/cluster.hpp"

namespace tbcheck::smt::detail {

void Encoder::cluster_pick(int i, const std::vector<SmCap>& caps, const expr& lok) {
  const size_t iu = static_cast<size_t>(i);
  const int k = s_.kernel_of_block(i);  // pick order permutes blocks within a kernel only
  int first = 0;
  for (int j = 0; j < k; ++j) first += s_.blocks[static_cast<size_t>(j)];
  const auto& dims = *s_.cluster[static_cast<size_t>(k)];
  const int size = dims[0] * dims[1] * dims[2];
  const int rank = (i - first) % size;
  const expr& sm = d_.sm[iu];
  const expr& st = d_.start[iu];
  const int gpcs = model::gpc_count(cluster_gpc_of_sm_);

  // A GPC's room counts blocks (levels), whatever units the hypothesis ranks SMs by (capacity literal).
  bool literal = false;
  switch (h_.capacity) {
    case model::Capacity::Blocks: break;
    case model::Capacity::Literal: literal = true; break;
  }
  auto rooms = [&](const std::vector<SmCap>& cs) {
    std::vector<std::vector<expr>> parts(static_cast<size_t>(gpcs));
    for (int s = 0; s < n_; ++s) {
      const SmCap& c = cs[static_cast<size_t>(s)];
      parts[static_cast<size_t>(cluster_gpc_of_sm_[static_cast<size_t>(s)])].push_back(literal ? count_if(c.levels) : c.value);
    }
    std::vector<expr> out;
    for (auto& p : parts) out.push_back(p.empty() ? iv(0) : sum_of(p));
    return out;
  };

  if (rank == 0) {
    // The GPC: among those whose room holds the cluster, the most room (ties to the lowest index) or the lowest.
    const std::vector<expr> room = rooms(caps);
    std::vector<expr> chosen;
    for (int g = 0; g < gpcs; ++g) {
      const size_t gu = static_cast<size_t>(g);
      expr c = room[gu] >= size;
      for (int o = 0; o < gpcs; ++o) {
        if (o == g) continue;
        const size_t ou = static_cast<size_t>(o);
        switch (h_.cluster_gpc) {
          case model::ClusterGpc::MostRoom:
            c = c && (o < g ? room[gu] > room[ou] || room[ou] < size : room[gu] >= room[ou] || room[ou] < size);
            break;
          case model::ClusterGpc::LowestIndex:
            if (o < g) c = c && room[ou] < size;
            break;
        }
      }
      chosen.push_back(c);
    }
    expr gpc = iv(-1);
    for (int g = gpcs - 1; g >= 0; --g) gpc = z3::ite(chosen[static_cast<size_t>(g)], iv(g), gpc);
    cluster_gpc_.emplace(i, define("cgpc", i, gpc));
    out_.push_back(lok && cluster_gpc_.at(i) >= 0);
    // It waited only if no GPC had room just before (room only grows while blocks retire).
    if (i > 0) {
      Instant before = before_start(i);
      const std::vector<expr> b = rooms(capacities(i, before, bmax_));
      z3::expr_vector any(c_);
      for (const auto& r : b) any.push_back(r >= size);
      out_.push_back(same_point(i) || !(local_ok(i, before) && z3::mk_or(any)));
    } else {
      out_.push_back(st == 0);
    }
  } else {
    out_.push_back(same_point(i));
    cluster_gpc_.emplace(i, cluster_gpc_.at(i - 1));
  }

  // The SM within the GPC.
  const expr& gpc = cluster_gpc_.at(i);
  auto ok = [&](int s) {
    return gpc == cluster_gpc_of_sm_[static_cast<size_t>(s)] && caps[static_cast<size_t>(s)].levels[0];
  };
  std::vector<int> pos(static_cast<size_t>(n_));
  for (int p = 0; p < n_; ++p) pos[static_cast<size_t>(order_[static_cast<size_t>(p)])] = p;
  std::vector<expr> chosen(static_cast<size_t>(n_), bv(false));
  // chosen[s]: s has room and beats every other SM of the GPC with room, by `beats(s, t)`.
  auto best_by = [&](const auto& beats) {
    for (int s = 0; s < n_; ++s) {
      expr c = ok(s);
      for (int t = 0; t < n_; ++t)
        if (t != s) c = c && (!ok(t) || beats(static_cast<size_t>(s), static_cast<size_t>(t)));
      chosen[static_cast<size_t>(s)] = c;
    }
  };
  switch (h_.cluster_spread) {
    case model::ClusterSpread::OnePerSm: {
      std::vector<expr> on;  // blocks of this cluster already on each SM
      for (int s = 0; s < n_; ++s) {
        std::vector<expr> here;
        for (int j = i - rank; j < i; ++j) here.push_back(d_.sm[static_cast<size_t>(j)] == s);
        on.push_back(here.empty() ? iv(0) : count_if(here));
      }
      best_by([&](size_t s, size_t t) { return on[s] < on[t] || (on[s] == on[t] && bv(pos[s] < pos[t])); });
      break;
    }
    case model::ClusterSpread::Selection:
      switch (h_.selection) {
        case model::Selection::GpcPriority:  // refused in the constructor
        case model::Selection::GpcSpread:    // refused with clusters (model::cluster_unsupported)
        case model::Selection::TpcPosition:  // likewise
        case model::Selection::MostRoom:
          best_by([&](size_t s, size_t t) {
            return pos[t] < pos[s] ? caps[s].value > caps[t].value : caps[s].value >= caps[t].value;
          });
          break;
        case model::Selection::Rule: {  // the rule over the GPC's SMs (model: Dispatcher::rule_pick_in)
          const auto less = rule_order(i, caps);
          best_by([&](size_t s, size_t t) { return less(static_cast<int>(s), static_cast<int>(t)); });
          break;
        }
        case model::Selection::RoundRobin: {
          const expr ptr = rr_pointer(i);
          for (int p = 0; p < n_; ++p) {
            const int s = order_[static_cast<size_t>(p)];
            expr pick = bv(false);
            for (int from = 0; from < n_; ++from) {
              expr c = ptr == from && ok(s);
              for (int q = from; q != p; q = (q + 1) % n_) c = c && !ok(order_[static_cast<size_t>(q)]);
              pick = pick || c;
            }
            chosen[static_cast<size_t>(s)] = pick;
          }
          break;
        }
      }
      break;
  }
  for (int s = 0; s < n_; ++s) out_.push_back(z3::implies(sm == s, chosen[static_cast<size_t>(s)]));
  pos_.push_back(position_of(sm));
}

}  // namespace tbcheck::smt::detail
