// Numbering gpc-ring as Z3 constraints: which block index each placement of a batch gets, the twin of
// model/src/numbering.cpp and of the simulator's Dispatcher::number_batch (model/src/dispatch.cpp).
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

z3::expr_vector Encoder::ring_numbering(const std::vector<int>& launch_of_pick, const std::vector<int>& first_label_of_pick,
                                        const Decisions& labelled) {
  const int np = static_cast<int>(ring_room_.size());
  auto clustered = [&](int k) { return static_cast<size_t>(k) < s_.cluster.size() && s_.cluster[static_cast<size_t>(k)]; };
  // Each pick's SM as its place in the ring order of its kernel's launch (a permutation of the SMs), computed
  // once per kernel and launch.
  std::vector<expr> rank;
  std::map<std::pair<int, int>, std::vector<int>> ranks;
  for (int p = 0; p < np; ++p) {
    const int k = s_.kernel_of_block(p);
    if (clustered(k)) {
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
  std::vector<int> taken(s_.blocks.size(), 0);
  for (int p = 0; p < np; ++p) {
    const int k = s_.kernel_of_block(p);
    const size_t pu = static_cast<size_t>(p);
    const int local = taken[static_cast<size_t>(k)]++;
    if (clustered(k)) {
      out_.push_back(labelled.sm[static_cast<size_t>(first_label_of_pick[pu] + local)] == d_.sm[pu]);
      continue;
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
