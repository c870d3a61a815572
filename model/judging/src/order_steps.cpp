// The stepwise order search (order_steps.hpp): the stepping Scheduler driven by a recording's retirements, copied
// at each tied retirement to try every block that may come next; each dispatch is judged as it happens.
#include "order_steps.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <optional>
#include <tuple>

#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/scheduler.hpp"

namespace tbcheck::model::detail {
namespace {

constexpr int64_t kNever = INT64_MAX;
constexpr int kMaxDepth = 2000;

class StepSearch {
 public:
  StepSearch(const StepProblem& p, int64_t max_steps) : p_(p), max_(max_steps) {}

  StepResult run() {
    StepResult out;
    if (!prepare()) return out;
    std::optional<State> root = start();
    if (!root) return out;
    const Found f = explore(std::move(*root));
    out.steps = steps_;
    switch (f) {
      case Found::Yes:
        out.outcome = StepOutcome::Reproduced;
        out.choice = std::move(found_choice_);
        break;
      case Found::No: out.outcome = StepOutcome::NoOrder; break;
      case Found::Bound: out.outcome = StepOutcome::BoundReached; break;
      case Found::Outside: out.outcome = StepOutcome::NotApplicable; break;
    }
    return out;
  }

 private:
  // One point of the search: the scheduler and everything the judge has seen so far.
  struct State {
    explicit State(Scheduler s) : sch(std::move(s)) {}
    Scheduler sch;
    int64_t now = 0;
    size_t launched = 0;  // arranged kernels launched so far
    // Dispatched blocks outside tie groups, by end: (end, flat block), earliest at the front of the heap.
    std::vector<std::pair<int64_t, int>> ends;
    size_t gi = 0;  // the first tie group not wholly retired
    int slot = 0;   // how many of its members have retired
    std::vector<std::vector<int>> choice;  // per group: its members in retirement order so far
    std::vector<char> together;            // per group: retiring together (equal ends)
    std::vector<char> decided;             // per group: together or one at a time, chosen
    std::vector<char> dispatched;          // per flat block
    std::vector<int64_t> seq;              // per flat block: dispatch sequence (the retire queue's bucket order)
    int64_t next_seq = 0;
    size_t undispatched = 0;
    size_t front = 0;              // leading entries of by_rec_ dispatched
    std::vector<size_t> sm_front;  // per recorded SM: leading entries of on_sm_ dispatched
    size_t late_front = 0;         // leading entries of by_late_ dispatched
    int64_t at_time = -1;
    std::vector<int> at_now;  // blocks dispatched at at_time
  };
  enum class Found { Yes, No, Bound, Outside };
  enum class Step { Decide, Pass, Fail, Bound, Outside };

  struct Block {
    int kp = 0, b = 0;  // arranged kernel, block index
    int rec_sm = 0;
    int64_t rec_start = 0, rec_end = 0;
    int group = -1, member = 0;
    size_t need_cross = 0, need_sm = 0;  // entries of by_rec_ / on_sm_[rec_sm] that must be dispatched before it
    int64_t late = kNever;                // dispatched at or after this instant: later than the hardware
  };

  int flat(int kp, int b) const { return static_cast<int>(offset_[static_cast<size_t>(kp)]) + b; }
  // The flat block of a tie group's member m.
  int member_flat(const TieGroup& g, int m) const {
    const auto [k, b] = g.members[static_cast<size_t>(m)];
    return flat(kp_of_case_[static_cast<size_t>(k)], b);
  }
  // The judge's sort of recorded starts: start, case kernel, block.
  std::tuple<int64_t, int, int> rec_key(const Block& x) const {
    return {x.rec_start, p_.case_index[static_cast<size_t>(x.kp)], x.b};
  }

  bool prepare() {
    const Scenario& s = *p_.arranged;
    if (s.gpc_pointer != 0 || !Scheduler::support(s.device, *p_.h).runs()) return false;
    const size_t nk = s.kernels.size();
    offset_.assign(nk + 1, 0);
    for (size_t kp = 0; kp < nk; ++kp) offset_[kp + 1] = offset_[kp] + static_cast<size_t>(s.kernels[kp].blocks);
    blocks_.resize(offset_[nk]);
    std::vector<int64_t> all_ends;
    int sms = 0;
    for (size_t kp = 0; kp < nk; ++kp) {
      const std::string& name = s.kernels[kp].name;
      auto sm = p_.o->sm_of_block.find(name);
      auto st = p_.o->start_of_block.find(name);
      auto en = p_.o->end_of_block.find(name);
      const size_t n = static_cast<size_t>(s.kernels[kp].blocks);
      if (sm == p_.o->sm_of_block.end() || st == p_.o->start_of_block.end() || en == p_.o->end_of_block.end() ||
          sm->second.size() != n || st->second.size() != n || en->second.size() != n)
        return false;
      for (size_t b = 0; b < n; ++b) {
        Block& x = blocks_[offset_[kp] + b];
        x.kp = static_cast<int>(kp);
        x.b = static_cast<int>(b);
        x.rec_sm = sm->second[b];
        x.rec_start = st->second[b];
        x.rec_end = en->second[b];
        sms = std::max(sms, x.rec_sm + 1);
        all_ends.push_back(x.rec_end);
      }
      rank_.push_back(priority_rank(s.kernels[kp].priority, s.device, p_.h->priority));
    }
    if (sms > s.device.sms) return false;
    kp_of_case_.assign(nk, 0);
    for (size_t kp = 0; kp < nk; ++kp) kp_of_case_[static_cast<size_t>(p_.case_index[kp])] = static_cast<int>(kp);
    for (size_t g = 0; g < p_.groups->size(); ++g) {
      const TieGroup& tg = (*p_.groups)[g];
      for (size_t m = 0; m < tg.members.size(); ++m) {
        Block& x = blocks_[static_cast<size_t>(member_flat(tg, static_cast<int>(m)))];
        x.group = static_cast<int>(g);
        x.member = static_cast<int>(m);
      }
    }
    std::sort(all_ends.begin(), all_ends.end());
    for (Block& x : blocks_) {
      // A block dispatched at or after its own retirement instant would retire a unit after it started (the
      // simulator's floor): outside this search, unless the judge refuses such a dispatch anyway, which it does
      // when the block was recorded starting a tick or more before the first end it may be given.
      const int64_t first_end = x.group < 0 ? x.rec_end : (*p_.groups)[static_cast<size_t>(x.group)].ends.front();
      if (x.rec_start + p_.tick > first_end) return false;
      auto after = std::lower_bound(all_ends.begin(), all_ends.end(), x.rec_start + p_.tick);
      x.late = after == all_ends.end() ? kNever : p_.scale * *after;
    }
    // The recorded start order and each SM's share of it.
    by_rec_.resize(blocks_.size());
    std::iota(by_rec_.begin(), by_rec_.end(), 0);
    std::sort(by_rec_.begin(), by_rec_.end(), [&](int a, int b) {
      return rec_key(blocks_[static_cast<size_t>(a)]) < rec_key(blocks_[static_cast<size_t>(b)]);
    });
    on_sm_.assign(static_cast<size_t>(s.device.sms), {});
    for (int i : by_rec_) on_sm_[static_cast<size_t>(blocks_[static_cast<size_t>(i)].rec_sm)].push_back(i);
    std::vector<int64_t> starts;
    for (int i : by_rec_) starts.push_back(blocks_[static_cast<size_t>(i)].rec_start);
    for (Block& x : blocks_) {
      x.need_cross = static_cast<size_t>(std::upper_bound(starts.begin(), starts.end(), x.rec_start - p_.cross_gap) -
                                         starts.begin());
      const auto& mine = on_sm_[static_cast<size_t>(x.rec_sm)];
      x.need_sm = static_cast<size_t>(std::partition_point(mine.begin(), mine.end(), [&](int i) {
                                        return blocks_[static_cast<size_t>(i)].rec_start <= x.rec_start - p_.tick;
                                      }) -
                                      mine.begin());
    }
    by_late_.resize(blocks_.size());
    std::iota(by_late_.begin(), by_late_.end(), 0);
    std::stable_sort(by_late_.begin(), by_late_.end(),
                     [&](int a, int b) { return blocks_[static_cast<size_t>(a)].late < blocks_[static_cast<size_t>(b)].late; });
    return true;
  }

  std::optional<State> start() {
    const Scenario& s = *p_.arranged;
    State st(Scheduler(s.device, *p_.h));
    const size_t ng = p_.groups->size();
    st.choice.assign(ng, {});
    st.together.assign(ng, 0);
    st.decided.assign(ng, 0);
    st.dispatched.assign(blocks_.size(), 0);
    st.seq.assign(blocks_.size(), 0);
    st.undispatched = blocks_.size();
    st.sm_front.assign(on_sm_.size(), 0);
    return st;
  }

  // The instant of the next retirement of the first unretired tie group.
  int64_t slot_time(const State& st) const {
    if (st.gi >= p_.groups->size()) return kNever;
    const TieGroup& g = (*p_.groups)[st.gi];
    if (st.together[st.gi]) return p_.scale * g.ends.front();
    return p_.scale * g.ends[static_cast<size_t>(st.slot)] + st.slot;
  }

  void next_group(State& st) const {
    if (static_cast<size_t>(st.slot) == (*p_.groups)[st.gi].members.size()) {
      ++st.gi;
      st.slot = 0;
    }
  }

  void retire(State& st, int i) const {
    const Block& x = blocks_[static_cast<size_t>(i)];
    st.sch.retire(x.kp, x.b, st.now);
  }

  // Retires the earliest block outside tie groups whose end has come, if one has.
  bool retire_earliest_due(State& st) const {
    if (st.ends.empty() || st.ends.front().first > st.now) return false;
    std::pop_heap(st.ends.begin(), st.ends.end(), std::greater<>());
    retire(st, st.ends.back().second);
    st.ends.pop_back();
    return true;
  }

  // Retires the tie group's member due now: the chosen one, or under `together` every member (start-order
  // hypotheses one at a time, in dispatch order, each followed by a dispatch).
  void retire_slot(State& st) const {
    const TieGroup& g = (*p_.groups)[st.gi];
    if (!st.together[st.gi]) {
      retire(st, member_flat(g, st.choice[st.gi][static_cast<size_t>(st.slot)]));
      ++st.slot;
    } else if (p_.h->retirement == Retirement::AllThenDispatch) {
      for (size_t m = 0; m < g.members.size(); ++m) retire(st, member_flat(g, static_cast<int>(m)));
      st.slot = static_cast<int>(g.members.size());
    } else {
      // The not yet retired member dispatched first; st.choice holds the retired ones.
      int best = -1;
      for (size_t m = 0; m < g.members.size(); ++m) {
        const auto& done = st.choice[st.gi];
        if (std::find(done.begin(), done.end(), static_cast<int>(m)) != done.end()) continue;
        if (best < 0 || st.seq[static_cast<size_t>(member_flat(g, static_cast<int>(m)))] <
                            st.seq[static_cast<size_t>(member_flat(g, best))])
          best = static_cast<int>(m);
      }
      st.choice[st.gi].push_back(best);
      retire(st, member_flat(g, best));
      ++st.slot;
    }
    next_group(st);
  }

  // (priority rank, arranged kernel, block): the order of blocks dispatched at one instant.
  std::tuple<int, int, int> same_instant_key(int i) const {
    const Block& x = blocks_[static_cast<size_t>(i)];
    return {rank_[static_cast<size_t>(x.kp)], x.kp, x.b};
  }

  // The blocks just dispatched: each on its recorded SM (else false), then noted for the judgement of the instant.
  bool record_dispatches(State& st, const std::vector<Placement>& placed) const {
    if (st.at_time != st.now) {
      st.at_time = st.now;
      st.at_now.clear();
    }
    for (const Placement& pl : placed) {
      const int i = flat(pl.kernel, pl.block);
      const Block& x = blocks_[static_cast<size_t>(i)];
      if (pl.sm != x.rec_sm) return false;
      st.dispatched[static_cast<size_t>(i)] = 1;
      st.seq[static_cast<size_t>(i)] = st.next_seq++;
      --st.undispatched;
      st.at_now.push_back(i);
      if (x.group < 0) {
        st.ends.emplace_back(p_.scale * x.rec_end, i);
        std::push_heap(st.ends.begin(), st.ends.end(), std::greater<>());
      }
      size_t& f = st.sm_front[static_cast<size_t>(x.rec_sm)];
      const auto& mine = on_sm_[static_cast<size_t>(x.rec_sm)];
      while (f < mine.size() && st.dispatched[static_cast<size_t>(mine[f])]) ++f;
    }
    while (st.front < by_rec_.size() && st.dispatched[static_cast<size_t>(by_rec_[st.front])]) ++st.front;
    return true;
  }

  // The judge's dispatch order on the instant that ends: every block the recording shows starting enough earlier
  // (across SMs by the dispatch skew, on one SM by a tick) dispatched before it, at an earlier instant or at this
  // one ahead of it in the dispatcher's order of one instant. Judged once the instant is over, since under
  // start-order retirement a later dispatch of the same instant may still come ahead.
  bool judge_instant(const State& st) const {
    for (const int i : st.at_now) {
      const Block& x = blocks_[static_cast<size_t>(i)];
      if (st.front < x.need_cross || st.sm_front[static_cast<size_t>(x.rec_sm)] < x.need_sm) return false;
      if (x.need_cross == 0 && x.need_sm == 0) continue;
      for (const int j : st.at_now) {
        if (j == i) continue;
        const Block& y = blocks_[static_cast<size_t>(j)];
        const bool required =
            among_first(y, by_rec_, x.need_cross) ||
            (y.rec_sm == x.rec_sm && among_first(y, on_sm_[static_cast<size_t>(y.rec_sm)], x.need_sm));
        if (required && same_instant_key(j) > same_instant_key(i)) return false;
      }
    }
    return true;
  }

  // Whether y lies among the first n entries of a list in recorded start order (by_rec_, or an SM's on_sm_).
  bool among_first(const Block& y, const std::vector<int>& in_start_order, size_t n) const {
    return n > 0 && rec_key(y) <= rec_key(blocks_[static_cast<size_t>(in_start_order[n - 1])]);
  }

  // Runs st's clock until a tied retirement needs choosing, every block is dispatched as recorded, or one is not.
  Step advance(State& st) {
    const Scenario& s = *p_.arranged;
    std::vector<Placement>& placed = placed_;
    while (true) {
      if (++steps_ > max_) return Step::Bound;
      // Not later than the hardware: an undispatched block now would start at or after its bound.
      while (st.late_front < by_late_.size() && st.dispatched[static_cast<size_t>(by_late_[st.late_front])])
        ++st.late_front;
      if (st.late_front < by_late_.size() && blocks_[static_cast<size_t>(by_late_[st.late_front])].late <= st.now)
        return Step::Fail;
      const bool slot_due = slot_time(st) == st.now;
      if (slot_due) {
        const size_t gi = st.gi;
        const bool undecided = !st.decided[gi] || (!st.together[gi] && st.choice[gi].size() == static_cast<size_t>(st.slot));
        if (undecided) return Step::Decide;
      }
      switch (p_.h->retirement) {
        case Retirement::AllThenDispatch:
          while (retire_earliest_due(st)) continue;
          if (slot_due) retire_slot(st);
          break;
        case Retirement::StartOrder:
          // Ends outside tie groups and a tie group's slots never share an instant; one block at a time.
          if (!retire_earliest_due(st) && slot_due) {
            retire_slot(st);
          }
          break;
      }
      while (st.launched < s.kernels.size() && s.kernels[st.launched].release <= st.now) {
        if (st.sch.launch(s.kernels[st.launched], st.now).kernel != static_cast<int>(st.launched)) return Step::Outside;
        ++st.launched;
      }
      placed.clear();
      st.sch.place(st.now, placed);
      if (!record_dispatches(st, placed)) return Step::Fail;
      int64_t next = slot_time(st);
      if (!st.ends.empty()) next = std::min(next, st.ends.front().first);
      if (st.launched < s.kernels.size()) next = std::min(next, s.kernels[st.launched].release);
      if ((next != st.now || st.undispatched == 0) && !judge_instant(st)) return Step::Fail;
      if (st.undispatched == 0) return Step::Pass;  // later retirements dispatch nothing the judge reads
      if (next == kNever) return Step::Outside;     // a stall: the whole-simulation search reports it
      st.now = next;
    }
  }

  // The members that may retire next in the group due: every one not yet retired whose recorded end no earlier
  // retirement's lies a tick or more beyond. Those on the SM the next recorded dispatch waits for first.
  std::vector<int> candidates(const State& st) const {
    const TieGroup& g = (*p_.groups)[st.gi];
    const auto& done = st.choice[st.gi];
    std::vector<char> gone(g.members.size(), 0);
    for (int m : done) gone[static_cast<size_t>(m)] = 1;
    std::vector<int> order;
    const auto& start_order = (*p_.by_start)[st.gi];
    if (!start_order.empty()) order = start_order;
    else {
      order.resize(g.members.size());
      std::iota(order.begin(), order.end(), 0);
    }
    std::vector<int> out;
    for (int m : order) {
      if (gone[static_cast<size_t>(m)]) continue;
      bool free = true;
      for (int a = 0; a < m && free; ++a)
        free = gone[static_cast<size_t>(a)] || g.ends[static_cast<size_t>(m)] - g.ends[static_cast<size_t>(a)] < p_.tick;
      if (free) out.push_back(m);
    }
    if (st.front < by_rec_.size()) {
      const int want = blocks_[static_cast<size_t>(by_rec_[st.front])].rec_sm;
      std::stable_partition(out.begin(), out.end(),
                            [&](int m) { return blocks_[static_cast<size_t>(member_flat(g, m))].rec_sm == want; });
    }
    return out;
  }

  // Every group's whole order once every block is dispatched as recorded: the retirements not yet chosen follow
  // in recorded order (they dispatch nothing); a group never reached keeps the model's reading (together where
  // its ends are equal).
  std::vector<std::vector<int>> completed(const State& st) const {
    std::vector<std::vector<int>> out(st.choice.size());
    for (size_t g = 0; g < out.size(); ++g) {
      const TieGroup& tg = (*p_.groups)[g];
      if (st.together[g] || (!st.decided[g] && tg.ends.front() == tg.ends.back())) continue;
      out[g] = st.choice[g];
      std::vector<char> in(tg.members.size(), 0);
      for (int m : out[g]) in[static_cast<size_t>(m)] = 1;
      for (size_t m = 0; m < tg.members.size(); ++m)
        if (!in[m]) out[g].push_back(static_cast<int>(m));
    }
    return out;
  }

  Found explore(State st) {
    // One level of recursion per tied retirement chosen: a recording with more than this many before its last
    // dispatch is left to the enumeration rather than risk the stack.
    if (depth_ >= kMaxDepth) return Found::Outside;
    struct Level {
      int& d;
      explicit Level(int& x) : d(++x) {}
      ~Level() { --d; }
    } level(depth_);
    switch (advance(st)) {
      case Step::Pass:
        found_choice_ = completed(st);
        return Found::Yes;
      case Step::Fail: return Found::No;
      case Step::Bound: return Found::Bound;
      case Step::Outside: return Found::Outside;
      case Step::Decide: break;
    }
    // Equal ends retire together (the model's reading) first, then one at a time in each order left open.
    const size_t gi = st.gi;
    const TieGroup& g = (*p_.groups)[gi];
    if (!st.decided[gi] && g.ends.front() == g.ends.back()) {
      State t = st;
      t.decided[gi] = 1;
      t.together[gi] = 1;
      if (++steps_ > max_) return Found::Bound;
      const Found f = explore(std::move(t));
      if (f != Found::No) return f;
    }
    const std::vector<int> next = candidates(st);
    for (size_t c = 0; c < next.size(); ++c) {
      if (++steps_ > max_) return Found::Bound;
      State t = c + 1 < next.size() ? State(st) : State(std::move(st));  // the last choice takes st itself
      t.decided[gi] = 1;
      t.choice[gi].push_back(next[c]);
      const Found f = explore(std::move(t));
      if (f != Found::No) return f;
    }
    return Found::No;
  }

  const StepProblem& p_;
  int64_t max_;
  int64_t steps_ = 0;
  int depth_ = 0;
  std::vector<size_t> offset_;  // arranged kernel -> its first flat block
  std::vector<Block> blocks_;
  std::vector<int> rank_;        // per arranged kernel
  std::vector<int> kp_of_case_;  // case kernel -> arranged kernel
  std::vector<int> by_rec_;      // flat blocks in recorded start order
  std::vector<std::vector<int>> on_sm_;
  std::vector<int> by_late_;  // flat blocks by their bound
  std::vector<Placement> placed_;
  std::vector<std::vector<int>> found_choice_;
};

}  // namespace

StepResult search_orders_stepwise(const StepProblem& p, int64_t max_steps) { return StepSearch(p, max_steps).run(); }

}  // namespace tbcheck::model::detail
