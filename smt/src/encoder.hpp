// Internal to smt/: the encoder of one hypothesis over one symbolic scenario, split by the simulator's
// seams (state.cpp, capacity.cpp, dispatch.cpp, commit.cpp, fermi_pick.cpp; terms.cpp for term helpers).
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <z3++.h>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/smt/encoding.hpp"

namespace tbcheck::smt::detail {

using model::Hypothesis;
using z3::expr;

// The machine state an instant shows to the block being placed: per SM pools and per PB pools
// (the twin of model::SmState).
struct SmView {
  expr blocks, warps, regs, smem, pointer;
  std::vector<expr> pb_warps, pb_regs;
  std::vector<expr> alloc;  // per earlier block: resident here with a shared-memory allocation
  // registers pb-contiguous: per PB, the candidate hole starts and the hole sizes (0: no hole there).
  std::vector<std::vector<expr>> pb_hstart, pb_hsize;
};

// The dispatcher unrolled over the blocks in pick order. Each block's decision (dispatch.cpp) asks the
// state at its start instant (state.cpp), every SM's capacity there (capacity.cpp), the selection
// (generic_pick, or fermi_pick.cpp), and commits the block's resources (commit.cpp): the order in which
// model/engine/src/dispatch.cpp and model/engine/src/resources.cpp do it.
class Encoder {
 public:
  // Reads the hypothesis' options, each by an exhaustive switch (encoding.cpp).
  Encoder(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, std::string tag, SharedTerms* shared);

  // Group 0: kernel-level terms; group i + 1: the constraints of block i's decision.
  std::vector<z3::expr_vector> run_grouped();

  // ---- numbering.cpp: numbering gpc-ring (model/engine/src/numbering.cpp and Dispatcher::number_batch) ----
  // After run_grouped, under gpc-ring: the constraints that number the placements (the encoder's decisions, in
  // pick order) into `labelled`, the schedule by block index. Per pick: its kernel's launch index in the scenario
  // and the index in `labelled` of that kernel's block 0. Clustered kernels keep their placement order.
  z3::expr_vector ring_numbering(const std::vector<int>& launch_of_pick, const std::vector<int>& first_label_of_pick,
                                 const Decisions& labelled);
  bool numbered_by_ring() const { return ring_; }

 private:
  // resident(j): block j (j < i) occupies its SM at the instant.
  struct Instant {
    std::vector<expr> resident;
  };
  // An allocated interval [start, end) when `valid`.
  struct Interval {
    expr valid, start, end;
  };
  struct SmCap {
    std::vector<expr> levels;  // at least L blocks (or literal units) fit
    expr value;
    std::vector<expr> holes;
    std::vector<expr> pb_room;  // per PB, for pb-any's commit
    std::vector<std::vector<expr>> pb_hstart, pb_hsize;  // pb-contiguous: per PB register holes
    expr held;  // blocks resident on the SM (a rule's `held`)
  };

  // ---- terms.cpp: constants, sums and defined variables ----
  z3::expr_vector take() {
    z3::expr_vector v = out_;
    out_ = z3::expr_vector(c_);
    return v;
  }
  expr iv(int64_t v) { return s_.num(v); }
  expr bv(bool v) { return c_.bool_val(v); }
  expr count_if(const std::vector<expr>& conds);
  // n-ary addition for integers; bit-vectors have no n-ary add in the API, so a balanced bvadd tree.
  expr sum_of(const std::vector<expr>& xs);
  expr any_of(const std::vector<expr>& xs);
  // Signed min / max (z3::min on bit-vectors compares unsigned, wrong for a negative free count).
  static expr smin(const expr& a, const expr& b) { return z3::ite(a <= b, a, b); }
  static expr smax(const expr& a, const expr& b) { return z3::ite(a >= b, a, b); }
  expr fresh_int(const std::string& what, int i) { return s_.var(fmt::format("{}_{}_{}", tag_, what, i)); }
  // Defines a fresh variable equal to e: keeps terms shared instead of copied into every use.
  expr define(const std::string& what, int i, const expr& e0);
  // floor(free / r), capped at cap: a plain division when r is a constant, else unary levels
  // (x * r <= free for x = 1..cap) so that the term stays linear for a symbolic r.
  expr fits_count(const expr& free, const expr& r, int cap);
  // x * y for 0 <= x <= xmax without a nonlinear product: y added once per unit of x.
  expr unary_times(const expr& x, const expr& y, int xmax);

  // ---- state.cpp: the machine state at an instant, seen by block i (model::GpuState's twin) ----
  SmView empty_view();
  // Instant `when` (after its retirements) as block i sees it, for when >= start_{i-1}.
  Instant at_time(int i, const expr& when);
  // The instant `when` - 1, used only when nothing was dispatched between start_{i-1} and `when`.
  Instant before_time(int i, const expr& when);
  // Starts are monotone, so j < i is resident at start_i iff end_j > start_i; under retirement start-order
  // a block ending at start_i is still resident unless it is among the first cut_i to retire there.
  Instant at_start(int i);
  // The last dispatch point block i waited through: the instant before start_i, or under start-order the
  // point of start_i before the retirement that block i followed, when an earlier one had its own point.
  Instant before_start(int i);
  // Block i is offered at the dispatch point of block i - 1 (same instant and, under start-order, after
  // the same retirement): it did not wait.
  expr same_point(int i);
  // Retirement start-order: the retirement block i follows at its instant (cut_i, see block()).
  void retirement_cut(int i);
  SmView view(int i, int sm, const Instant& t);
  // The SM's PB pointer when block i is offered: set by the last earlier block on it; never reset.
  expr pointer_before(int i, int sm);
  // Holes among intervals (pb-contiguous registers): one candidate hole after each boundary (0 and the
  // end of each valid interval), running to the next valid interval or `limit`; size 0 when covered.
  std::pair<std::vector<expr>, std::vector<expr>> interval_holes(const std::vector<Interval>& iv_list, const expr& limit);
  // Contiguous holes of an SM (Mechanism 4): one candidate hole after each boundary (0 and the end of
  // each resident allocation), running to the next allocation or the configuration limit.
  std::vector<expr> holes(int i, const SmView& v, const expr& limit);
  // Mechanism 3's unit (a TPC under smem_config tpc, an SM under sm) at an instant: busy, and the
  // configuration its opener set; the simulator's GpuState::config_idle and config_of.
  expr unit_busy(int i, int unit, const Instant& t);
  expr unit_of(const expr& sm) { return config_span_ == 1 ? sm : sm / config_span_; }
  int units() const { return n_ / config_span_; }
  expr unit_config(int i, int unit);
  expr gpu_busy(int i, const Instant& t);
  // Algorithm 1 lines 1-3: the local-memory configuration allows block i now.
  // kernel: the kernel asking (-1: block i's own; release times ask for other kernels too).
  expr local_ok(int i, const Instant& t, int kernel = -1);

  // ---- capacity.cpp: needs of one block and capacity (model/engine/src/resources.cpp's block_needs, sm_capacity) ----
  // Per kernel: needs of one block (Algorithm 1 lines 4-6; seed 002 thresholds) and config_s.
  void kernel_terms();
  // Warps of R registers each PB can still take: warp slots and, pooled per PB, free registers
  // (Mechanism 4, renaming: fragments combine).
  std::vector<expr> pb_rooms(const SmView& v, const expr& R);
  // Indicator of "at least L blocks fit" for L = 1..lmax.
  // `smem_limit` is the SM's shared-memory configuration in bytes; `holes` the contiguous holes.
  std::vector<expr> capacity_levels(const SmView& v, int k, const expr& smem_limit, const std::vector<expr>& holes,
                                    int lmax, bool literal_units = false);
  // Capacity of every SM for block i at an instant; lmax 1 when only "fits" matters.
  // kernel: the kernel asking (-1: block i's own; release times ask for other kernels too).
  std::vector<SmCap> capacities(int i, const Instant& t, int lmax, int kernel = -1);

  // ---- dispatch.cpp: one dispatch decision (model/engine/src/dispatch.cpp's loop) ----
  void block(int i);
  // Selection and waiting rule of the generic dispatcher (round-robin, most-room, gpc-spread; issue paired).
  void generic_pick(int i, const std::vector<SmCap>& caps, const expr& lok);
  // gpc-spread's choice by SM id: the SM with room whose key is least (model/engine/src/dispatch.cpp's spread_pick).
  std::vector<expr> spread_pick(int i, const std::vector<SmCap>& caps);
  // Selection rule (rule_pick.cpp; model/engine/src/rule_pick.cpp is the reference): by SM id, the SM with room whose
  // key, compared key by key and then by scan position, is least.
  std::vector<expr> rule_pick(int i, const std::vector<SmCap>& caps);
  // By SM id: the SM with room for one block (caps' first level) that `less` ranks before every other SM with
  // room; the end of spread_pick and rule_pick.
  std::vector<expr> least_candidate(const std::vector<SmCap>& caps, const std::function<expr(int, int)>& less) const;
  // less(a, b): SM a's key is less than SM b's under the rule at block i's instant (scan position last); a
  // cluster's block ranks its GPC's SMs by it (cluster_pick.cpp).
  std::function<expr(int, int)> rule_order(int i, const std::vector<SmCap>& caps);
  // Thread block clusters (cluster_pick.cpp; model/engine/src/cluster.cpp is the reference): a cluster's leader waits
  // until a GPC has room for all its blocks and picks the GPC; its other blocks start with it on that GPC.
  void cluster_pick(int i, const std::vector<SmCap>& caps, const expr& lok);
  expr position_of(const expr& sm);
  // gpc-ring: the room pick i had on its SM and whether it was offered at pick i - 1's dispatch point.
  void ring_note(int i, const std::vector<SmCap>& caps);
  // gpc-carry, for the `count` picks of the kernel whose first pick is `first`: each one's GPC and whether it is in
  // the kernel's first batch; the keys that order them (its launch starting from `pointer`); the pointer the
  // launch leaves given those keys.
  struct CarryPicks {
    std::vector<expr> gpc, first_batch;
  };
  CarryPicks carry_picks(int first, int count);
  std::vector<expr> carry_ranks(int first, const CarryPicks& picks, const expr& pointer, bool first_launch);
  expr carry_pointer(int first, const CarryPicks& picks, const std::vector<expr>& key);

  // ---- release.cpp: release times, when kernels interleave in s_.pick_kernel's order ----
  // Block i's start: an event instant (a retirement, a release, or the previous start) at or after its
  // kernel's release, its kernel the head there, and every head before it (since the previous start)
  // unable to place a block (model/engine/src/simulate.cpp: releases are handled after retirements, before dispatch).
  void release_rules(int i);
  // Some SM takes a block of kernel q at the instant t, given blocks 0..i-1.
  expr fits_kernel(int i, int q, const Instant& t);
  // Kernel a goes before kernel b in the ready queue: (priority rank, list index).
  bool serves_before(int a, int b) const;
  // Kernels with blocks left at pick i (those that appear in pick_kernel[i..]).
  std::vector<int> left_at(int i) const;
  expr rr_pointer(int i);

  // ---- commit.cpp: TPC / GPU openers, PB warps and registers, pointer, offsets (GpuState::commit) ----
  void commit(int i, const Instant& now, const std::vector<SmCap>& caps);
  bool contiguous_regs() const { return contiguous_regs_; }
  // pb-contiguous (Mechanism 4 for registers, no renaming): the wq[q] warps of block i on PB q, all of R
  // registers, go one by one to the lowest-address hole of the PB that takes R. Consecutive warps fill
  // a hole from its start before moving on, so the block's registers on a PB are a few runs, each
  // starting at a hole start: run r takes min(fits in the r-th fitting hole by address, warps left).
  void contiguous_regs_commit(int i, int k, const expr& sm, const std::vector<SmCap>& caps, const std::vector<expr>& wq);
  // pb-any: warps dealt one by one to the first PB at or after the pointer with room; the pointer
  // moves past the PB that took the warp. Unrolled over the largest possible W.
  void pb_any_commit(int i, int k, const expr& sm, const expr& p0, const std::vector<SmCap>& caps,
                     std::vector<expr>& wq, expr& ptr_after);

  // ---- fermi_pick.cpp: selection gpc-priority, seed 003 (model/engine/src/fermi.cpp is the reference) ----
  // Blocks arrive here in pick order (encode_grouped permutes the decisions), so block i is the
  // (i - first)-th pick of its kernel and the dispatch sequence number is i.
  // Per SM: block i fits there under `caps` (at some instant), as one variable each, so that the
  // many terms asking it do not copy the capacity terms.
  std::vector<expr> fits(int i, const std::vector<SmCap>& caps, const std::string& what);
  // Block i fits the SM `where`, given fits() at some instant.
  expr fits_on(const std::vector<expr>& fit, const expr& where);
  // Kernel k becomes the head at its first pick `first`: the planning instant T_k, the room per SM and
  // the planned SM of every wave pick (Sections 3 and 4.1; concurrent kernels as model/engine/src/fermi.cpp).
  void fermi_plan(int k, int first);
  void fermi_pick(int i, const std::vector<SmCap>& caps, const expr& lok);

  z3::context& c_;
  const SymbolicScenario& s_;
  const Hypothesis& h_;
  const Decisions& d_;
  std::string tag_;
  const model::Device& dev_;
  z3::expr_vector out_;
  int n_ = 0, pbs_ = 4, bmax_ = 16;
  // The options as the encoder reads them, each set by an exhaustive switch in the constructor.
  bool fermi_ = false;            // selection gpc-priority: fermi_pick, not generic_pick
  bool pb_regs_ = false;          // registers pb: a pool per PB
  bool contiguous_regs_ = false;  // registers pb-contiguous (with warps on PBs)
  int config_span_ = 0;           // SMs per Mechanism 3 unit: sms_per_tpc (tpc), 1 (sm); 0: no configuration
  bool gpu_local_ = false;        // local gpu-config
  bool contiguous_smem_ = false;  // smem contiguous-first-fit
  bool start_order_ = false;      // retirement start-order: blocks ending together retire one at a time
  // start-order: per block, 1 + the pick index of the last block ending at start_i that retired before it
  // was placed (0 when none ends there); those retire in pick order, which is the order they started.
  std::vector<expr> cut_;
  // start-order: block i was placed after a retirement of its instant that was not the first there.
  std::vector<expr> inner_;
  std::vector<int> order_;
  std::vector<expr> W_, R_, S_, CFG_, LOC_;
  std::vector<expr> end_, opener_, gpu_opener_, block_regs_, ptr_after_, off_, pos_;
  std::vector<std::vector<expr>> wq_, rq_;
  // pb-contiguous: per block, per PB, the register runs [rs, re) it holds (re == rs: none).
  std::vector<std::vector<std::vector<expr>>> rs_, re_;
  SharedTerms* shared_ = nullptr;
  std::set<int> follower_;  // issue paired: blocks that join their leader's SM when it fits
  bool releases_ = false;   // some kernel is released after 0: s_.pick_kernel is the interleaving
  std::vector<int64_t> release_instants_;  // distinct, > 0, ascending
  std::vector<int> rank_;                  // per kernel, model::priority_rank
  // gpc-priority: the GPC of every SM; per kernel its planning instant, wave size and planned SM per
  // pick; per earlier block, whether the current kernel already reused its completion.
  std::vector<int> gpc_of_sm_;
  std::vector<expr> CAP0_, plan_at_, wave_size_, taken_;
  std::vector<std::vector<expr>> plan_;
  // clusters: the GPC of every SM, and the GPC each clustered block (by pick) went to
  std::vector<int> cluster_gpc_of_sm_;
  std::map<int, expr> cluster_gpc_;
  // numbering gpc-ring: the GPC of every SM, and per pick the room its SM had and its dispatch point's sameness
  bool ring_ = false;
  std::vector<int> ring_gpc_of_sm_;
  std::vector<expr> ring_room_, ring_same_;
  bool ring_carry_ = false;  // gpc-carry: each launch's start from the pointer the last one left
};

}  // namespace tbcheck::smt::detail
