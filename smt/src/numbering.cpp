// Numbering gpc-ring and gpc-carry as Z3 constraints: which block index each placement of a batch gets, the twin of
// model/engine/src/numbering.cpp and of the simulator's Dispatcher::number_batch (model/engine/src/dispatch.cpp).
// A batch is a kernel's picks at one dispatch point; within it, more room first, then the SM's ring rank.
#include <map>
#include <utility>
#include <vector>

#include "encoder.hpp"
#include "tbcheck/model/numbering.hpp"

namespace tbcheck::smt::detail {

void Encoder::ring_note(int i, const std::vector<SmCap>& caps) {
  // A clustered kernel's blocks are labelled in placement order (ring_numbering): its picks need no room or point.
  const size_t k = static_cast<size_t>(s_.kernel_of_block(i));
  if (k < s_.cluster.size() && s_.cluster[k]) {
    ring_room_.push_back(iv(0));
    ring_same_.push_back(bv(false));
    return;
  }
  const expr& sm = d_.sm[static_cast<size_t>(i)];
  expr room = iv(0);
  for (int s = n_ - 1; s >= 0; --s) room = z3::ite(sm == s, caps[static_cast<size_t>(s)].value, room);
  ring_room_.push_back(define("rroom", i, room));
  ring_same_.push_back(i == 0 ? bv(false) : same_point(i));
}

Encoder::CarryPicks Encoder::carry_picks(int first, int count) {
  CarryPicks out;
  for (int j = 0; j < count; ++j) {
    const int p = first + j;
    const expr& sm = d_.sm[static_cast<size_t>(p)];
    expr g = iv(0);
    for (int s = n_ - 1; s >= 0; --s) g = z3::ite(sm == s, iv(ring_gpc_of_sm_[static_cast<size_t>(s)]), g);
    out.gpc.push_back(define("rgpc", p, g));
    out.first_batch.push_back(j == 0 ? bv(true) : out.first_batch.back() && ring_same_[static_cast<size_t>(p)]);
  }
  return out;
}

std::vector<expr> Encoder::carry_ranks(int first, const CarryPicks& picks, const expr& pointer, bool first_launch) {
  const model::RingGpcs r = model::ring_gpcs(dev_, ring_gpc_of_sm_);
  const int G = static_cast<int>(r.sms.size());
  const int k = s_.kernel_of_block(first);
  const int count = static_cast<int>(picks.gpc.size());
  const std::vector<expr>& gpc = picks.gpc;
  const std::vector<expr>& fb = picks.first_batch;
  expr most = ring_room_[static_cast<size_t>(first)];
  for (int j = 1; j < count; ++j) {
    const expr& room = ring_room_[static_cast<size_t>(first + j)];
    most = z3::ite(fb[static_cast<size_t>(j)] && room > most, room, most);
  }
  most = define("rmost", first, most);
  std::vector<expr> any(static_cast<size_t>(G), bv(false)), first_pass(static_cast<size_t>(G), bv(false));
  for (int g = 0; g < G; ++g) {
    z3::expr_vector a(c_), f(c_);
    for (int j = 0; j < count; ++j) {
      const expr here = fb[static_cast<size_t>(j)] && gpc[static_cast<size_t>(j)] == g;
      a.push_back(here);
      f.push_back(here && ring_room_[static_cast<size_t>(first + j)] == most);
    }
    any[static_cast<size_t>(g)] = define("rany", first * G + g, z3::mk_or(a));
    first_pass[static_cast<size_t>(g)] = define("rfirst", first * G + g, z3::mk_or(f));
  }
  // The first GPC from `from` (a GPC) on that `present` marks; `from` itself where none does (the simulator's
  // next_from).
  auto next_from = [&](const std::vector<expr>& present, const expr& from) {
    expr out = iv(0);
    for (int v = G - 1; v >= 0; --v) {
      expr at = iv(v);
      for (int i = G - 1; i >= 0; --i) at = z3::ite(present[static_cast<size_t>((v + i) % G)], iv((v + i) % G), at);
      out = z3::ite(from == v, at, out);
    }
    return out;
  };
  const int grid = s_.blocks[static_cast<size_t>(k)];
  z3::expr_vector singles_first(c_);  // a single-TPC GPC takes a block in the first pass
  singles_first.push_back(bv(grid > model::kRingWholeGridAbove));
  for (int g = 0; g < G; ++g)
    if (r.single(g, dev_)) singles_first.push_back(first_pass[static_cast<size_t>(g)]);
  const expr whole = define("rwhole", first, z3::mk_or(singles_first));
  const expr at = next_from(first_pass, pointer);
  const expr after = z3::ite(at == G - 1, iv(0), at + 1);
  const expr start = define("rstart", first, z3::ite(whole, next_from(any, pointer), next_from(first_pass, after)));
  // The multi-TPC ring starts at the first multi-TPC GPC from `start` on; the single-TPC GPCs from the first or
  // half-way round (model::ring_carry_start).
  expr multi = iv(0);
  for (int v = G - 1; v >= 0; --v) {
    int m = 0;
    for (int i = 0; i < G; ++i)
      if (!r.single((v + i) % G, dev_)) {
        m = r.tier_pos[static_cast<size_t>((v + i) % G)];
        break;
      }
    multi = z3::ite(start == v, iv(m), multi);
  }
  const int half = r.singles / 2;
  const expr single = r.singles == 0 || grid > model::kRingWholeGridAbove
                          ? iv(0)
                          : (first_launch ? iv(half) : z3::ite(whole, iv(0), iv(half)));
  // Each pick's key: tier, then ring place within the tier, then SM, as gpc_ring_sm_rank orders the SMs.
  std::vector<expr> key;
  const int big = n_ * (G + 1);
  for (int j = 0; j < count; ++j) {
    const int p = first + j;
    const expr& sm = d_.sm[static_cast<size_t>(p)];
    expr place = iv(0);
    for (int s = n_ - 1; s >= 0; --s) {
      const int g = ring_gpc_of_sm_[static_cast<size_t>(s)];
      const bool is_single = r.single(g, dev_);
      const int n = is_single ? r.singles : r.multis;
      const int tp = r.tier_pos[static_cast<size_t>(g)];
      const expr& st = is_single ? single : multi;
      const expr ring = z3::ite(iv(tp) >= st, iv(tp) - st, iv(tp + n) - st);
      place = z3::ite(sm == s, (is_single ? iv(0) : iv(big)) + ring * n_ + s, place);
    }
    key.push_back(define("rkey", p, place));
  }
  return key;
}

expr Encoder::carry_pointer(int first, const CarryPicks& picks, const std::vector<expr>& key) {
  // The launch leaves the pointer after the GPC of its first batch's last-numbered block: the least room, and
  // among those the greatest key (the order number_batch sorts by), found by one pass over the batch rather than
  // through the labels.
  const int G = static_cast<int>(model::ring_gpcs(dev_, ring_gpc_of_sm_).sms.size());
  expr room = ring_room_[static_cast<size_t>(first)], best = key[0], gpc = picks.gpc[0];
  for (size_t j = 1; j < picks.gpc.size(); ++j) {
    const expr& r = ring_room_[static_cast<size_t>(first) + j];
    const expr later = picks.first_batch[j] && (r < room || (r == room && key[j] > best));
    room = z3::ite(later, r, room);
    best = z3::ite(later, key[j], best);
    gpc = z3::ite(later, picks.gpc[j], gpc);
  }
  gpc = define("rlast", first, gpc);
  return define("rpointer", first, z3::ite(gpc == G - 1, iv(0), gpc + 1));
}

z3::expr_vector Encoder::ring_numbering(const std::vector<int>& launch_of_pick, const std::vector<int>& first_label_of_pick,
                                        const Decisions& labelled) {
  const int np = static_cast<int>(ring_room_.size());
  auto clustered = [&](int k) { return static_cast<size_t>(k) < s_.cluster.size() && s_.cluster[static_cast<size_t>(k)]; };
  // Each pick's SM as its place in the ring order of its kernel's launch (a permutation of the SMs), computed
  // once per kernel and launch; under gpc-carry a key per pick from the start its launch takes (carry_ranks).
  std::vector<expr> rank;
  std::map<std::pair<int, int>, std::vector<int>> ranks;
  for (int p = 0; p < np; ++p) {
    const int k = s_.kernel_of_block(p);
    if (clustered(k) || ring_carry_) {
      rank.push_back(iv(0));
      continue;
    }
    const int launch = launch_of_pick[static_cast<size_t>(p)];
    auto [at, fresh] = ranks.try_emplace({k, launch});
    if (fresh)
      at->second = model::gpc_ring_sm_rank(dev_, ring_gpc_of_sm_, launch, s_.gpc_pointer, s_.blocks[static_cast<size_t>(k)]);
    const std::vector<int>& sm_rank = at->second;
    expr r = iv(0);
    for (int s = n_ - 1; s >= 0; --s) r = z3::ite(d_.sm[static_cast<size_t>(p)] == s, iv(sm_rank[static_cast<size_t>(s)]), r);
    rank.push_back(define("rrank", p, r));
  }
  std::vector<int> picks_of(s_.blocks.size(), 0);  // picks encoded per kernel (a prefix may hold fewer than its blocks)
  for (int p = 0; p < np; ++p) ++picks_of[static_cast<size_t>(s_.kernel_of_block(p))];
  expr pointer = iv(ring_carry_ ? model::ring_carry_fresh_pointer(dev_, ring_gpc_of_sm_, s_.gpc_pointer) : 0);
  bool first_launch = true;
  std::vector<int> taken(s_.blocks.size(), 0);
  for (int p = 0; p < np; ++p) {
    const int k = s_.kernel_of_block(p);
    const size_t pu = static_cast<size_t>(p);
    const int local = taken[static_cast<size_t>(k)]++;
    if (clustered(k)) {
      out_.push_back(labelled.sm[static_cast<size_t>(first_label_of_pick[pu] + local)] == d_.sm[pu]);
      continue;
    }
    const int count = picks_of[static_cast<size_t>(k)];
    if (ring_carry_ && local == 0) {
      const CarryPicks picks = carry_picks(p, count);
      const std::vector<expr> key = carry_ranks(p, picks, pointer, first_launch);
      for (int j = 0; j < count; ++j) rank[pu + static_cast<size_t>(j)] = key[static_cast<size_t>(j)];
      first_launch = false;
      pointer = carry_pointer(p, picks, key);
    }
    // The label counts the kernel's picks numbered before p: those of earlier batches, and those of p's batch
    // ahead of it by (more room, lower rank), placement order breaking a tie (the simulator's stable sort).
    std::vector<expr> ahead;
    int blocks_of_k = 1;
    expr same = bv(true);  // picks q..p form one batch: each pick after q is k's and at the previous one's point
    bool joined = true;
    for (int q = p - 1; q >= 0; --q) {
      if (s_.kernel_of_block(q) != k) {
        joined = false;
        continue;
      }
      ++blocks_of_k;
      const size_t qu = static_cast<size_t>(q);
      if (joined) same = same && ring_same_[qu + 1];
      const expr first = ring_room_[qu] > ring_room_[pu] || (ring_room_[qu] == ring_room_[pu] && rank[qu] <= rank[pu]);
      ahead.push_back(joined ? z3::ite(!same || first, iv(1), iv(0)) : iv(1));
    }
    same = bv(true);
    joined = true;
    for (int q = p + 1; q < np; ++q) {
      if (s_.kernel_of_block(q) != k) {
        joined = false;
        continue;
      }
      ++blocks_of_k;
      if (!joined) continue;  // a later batch: numbered after p
      const size_t qu = static_cast<size_t>(q);
      same = same && ring_same_[qu];
      const expr first = ring_room_[qu] > ring_room_[pu] || (ring_room_[qu] == ring_room_[pu] && rank[qu] < rank[pu]);
      ahead.push_back(z3::ite(same && first, iv(1), iv(0)));
    }
    const expr label = ahead.empty() ? iv(0) : define("rlabel", p, sum_of(ahead));
    const int first_label = first_label_of_pick[pu];
    for (int l = 0; l < blocks_of_k; ++l)
      out_.push_back(z3::implies(label == l, labelled.sm[static_cast<size_t>(first_label + l)] == d_.sm[pu]));
  }
  return take();  // with the definitions of the ranks and labels
}

}  // namespace tbcheck::smt::detail
