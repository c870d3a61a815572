// The Z3 encoding: the dispatcher unrolled over the blocks of a fixed structure (blocks per kernel),
// each mechanism option as integer terms. Division by symbolic quantities is avoided throughout:
// "how many fit" is a sum of unary level indicators (L x W <= room), which keeps everything linear.
#include "tbcheck/smt/encoding.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "fermi_encoding.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/fermi.hpp"

namespace tbcheck::smt {

using model::Hypothesis;
using z3::expr;

const std::vector<int>& realizable_regs() { return model::probe_register_counts(); }

z3::solver make_solver(z3::context& c, unsigned timeout_ms, unsigned arith_solver) {
  z3::solver solver(c);
  z3::params p(c);
  p.set("timeout", timeout_ms);
  p.set("smt.arith.solver", arith_solver);
  solver.set(p);
  return solver;
}

void check_encodable(const Hypothesis& h) {
  // Every option has an encoding: issue paired / paired-cc8 / device in Encoder::block() (device's hand-out
  // passes in pick_order), selection gpc-priority
  // in Encoder::fermi_pick() (it needs the device's GPC map, checked when a scenario is encoded).
  (void)h;
}

std::vector<int> pick_order(const SymbolicScenario& s, const Hypothesis& h) {
  std::vector<int> out;
  int first = 0;
  for (size_t k = 0; k < s.blocks.size(); first += s.blocks[k], ++k) {
    if (h.selection != model::Selection::GpcPriority) {
      // Issue device (issue 14): the p-th placement is the block its hand-out pass gives it, so the
      // encoder's picks stay the paired decisions (leader, follower, ...) and only the labels move.
      const std::vector<int> index = h.hand_out_order(s.device, s.blocks[k]);
      for (int b = 0; b < s.blocks[k]; ++b) out.push_back(first + (index.empty() ? b : index[static_cast<size_t>(b)]));
      continue;
    }
    // seed 003 Section 4.2 (pick_block): 1-D grids in block order, 2-D grids along the multirows.
    const auto& g = k < s.grid.size() ? s.grid[k] : std::nullopt;
    for (int b : g ? model::fermi_block_order(g->first, g->second) : model::fermi_block_order(s.blocks[k], 1))
      out.push_back(first + b);
  }
  return out;
}

std::string_view to_string(Sort s) { return s == Sort::Int ? "int" : "bitvec"; }

static expr make_num(z3::context& c, Sort s, int64_t v) {
  return s == Sort::Int ? c.int_val(v) : c.bv_val(v, kBitVecWidth);
}
static expr make_var(z3::context& c, Sort s, const std::string& name) {
  return s == Sort::Int ? c.int_const(name.c_str()) : c.bv_const(name.c_str(), kBitVecWidth);
}
expr SymbolicScenario::num(int64_t v) const { return make_num(ctx(), sort, v); }
expr SymbolicScenario::var(const std::string& name) const { return make_var(ctx(), sort, name); }

int SymbolicScenario::total_blocks() const {
  int n = 0;
  for (int b : blocks) n += b;
  return n;
}

int SymbolicScenario::kernel_of_block(int i) const {
  for (size_t k = 0; k < blocks.size(); ++k) {
    if (i < blocks[k]) return static_cast<int>(k);
    i -= blocks[k];
  }
  return -1;
}

SymbolicScenario SymbolicScenario::make_symbolic(z3::context& c, const model::Device& d, const std::vector<int>& blocks,
                                                 const ParamBounds& b, const std::string& prefix, Sort sort) {
  SymbolicScenario s(c);
  s.sort = sort;
  s.device = d;
  s.blocks = blocks;
  s.grid.assign(blocks.size(), std::nullopt);
  for (size_t k = 0; k < blocks.size(); ++k) {
    auto name = [&](const char* what) { return fmt::format("{}_{}_k{}", prefix, what, k); };
    expr w = s.var(name("warps"));
    s.domain.push_back(w >= 1 && w <= std::min(b.max_warps, d.max_threads_per_block / 32));
    expr r = b.vary_regs ? s.var(name("regs")) : s.num(32);
    if (b.vary_regs) {
      z3::expr_vector options(c);
      for (int x : realizable_regs())
        if (x <= d.max_regs_per_thread) options.push_back(r == x);
      s.domain.push_back(z3::mk_or(options));
    }
    expr sm = s.num(0);
    if (b.vary_smem) {
      expr units = s.var(name("smem128"));
      s.domain.push_back(units >= 0 && units <= d.max_smem_per_block / 128);
      sm = units * 128;
    }
    expr dur = s.var(name("dur"));
    s.domain.push_back(dur >= 1 && dur <= b.max_duration);
    expr loc = s.num(0);
    if (b.max_local > 0) {
      loc = s.var(name("local"));
      s.domain.push_back(loc >= 0 && loc <= b.max_local);
    }
    s.warps.push_back(w);
    s.regs.push_back(r);
    s.smem.push_back(sm);
    s.duration.push_back(dur);
    s.local.push_back(loc);
  }
  return s;
}

SymbolicScenario SymbolicScenario::make_fixed(z3::context& c, const model::Scenario& sc, Sort sort) {
  SymbolicScenario s(c);
  s.sort = sort;
  s.device = sc.device;
  for (const auto& k : sc.kernels) {
    if (k.stream) throw Unsupported("the SMT engine gives every kernel its own stream; shared streams are not encoded");
    s.blocks.push_back(k.blocks);
    s.grid.push_back(k.grid);
    s.warps.push_back(s.num(k.warps()));
    s.regs.push_back(s.num(k.regs));
    s.smem.push_back(s.num(k.smem));
    s.duration.push_back(s.num(k.duration));
    s.local.push_back(s.num(k.local));
  }
  return s;
}

static int64_t value_of(const z3::model& m, const expr& e) {
  return m.eval(e, true).get_numeral_int64();
}

model::Scenario SymbolicScenario::decode(const z3::model& m) const {
  model::Scenario sc;
  sc.device = device;
  sc.device_builtin = false;
  for (size_t k = 0; k < blocks.size(); ++k) {
    model::Kernel kr;
    kr.name = fmt::format("k{}", k + 1);
    kr.blocks = blocks[k];
    if (k < grid.size()) kr.grid = grid[k];
    kr.threads = static_cast<int>(value_of(m, warps[k]) * 32);
    kr.regs = static_cast<int>(value_of(m, regs[k]));
    kr.smem = static_cast<int>(value_of(m, smem[k]));
    kr.duration = static_cast<int>(value_of(m, duration[k]));
    kr.local = static_cast<int>(value_of(m, local[k]));
    sc.kernels.push_back(kr);
  }
  return sc;
}

Decisions Decisions::fresh(z3::context& c, int blocks, const std::string& tag, Sort sort) {
  Decisions d;
  for (int i = 0; i < blocks; ++i) {
    d.sm.push_back(make_var(c, sort, fmt::format("{}_sm_{}", tag, i)));
    d.start.push_back(make_var(c, sort, fmt::format("{}_start_{}", tag, i)));
  }
  return d;
}

model::Schedule decode_schedule(const z3::model& m, const SymbolicScenario& s, const Decisions& d,
                                const std::string& hypothesis, const std::vector<std::string>& kernel_names) {
  model::Schedule out;
  out.hypothesis = hypothesis;
  out.device = s.device.name;
  out.sms = s.device.sms;
  int i = 0;
  for (size_t k = 0; k < s.blocks.size(); ++k) {
    model::KernelSchedule ks;
    ks.name = k < kernel_names.size() ? kernel_names[k] : fmt::format("k{}", k + 1);
    int64_t dur = value_of(m, s.duration[k]);
    for (int b = 0; b < s.blocks[k]; ++b, ++i) {
      int64_t st = value_of(m, d.start[static_cast<size_t>(i)]);
      ks.blocks.push_back({static_cast<int>(value_of(m, d.sm[static_cast<size_t>(i)])), st, st + dur});
    }
    out.kernels.push_back(std::move(ks));
  }
  return out;
}

namespace {

// The machine state an instant shows to the block being placed: per SM pools and per PB pools.
struct SmView {
  expr blocks, warps, regs, smem, pointer;
  std::vector<expr> pb_warps, pb_regs;
  std::vector<expr> alloc;  // per earlier block: resident here with a shared-memory allocation
  // registers pb-contiguous: per PB, the candidate hole starts and the hole sizes (0: no hole there).
  std::vector<std::vector<expr>> pb_hstart, pb_hsize;
};

class Encoder {
 public:
  Encoder(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, std::string tag, SharedTerms* shared)
      : c_(s.ctx()), s_(s), h_(h), d_(d), tag_(std::move(tag)), dev_(s.device), out_(c_), shared_(shared) {
    // Issue paired: the leaders depend only on the block counts, so which blocks are followers is
    // fixed before solving (see block()).
    for (size_t k = 0, first = 0; k < s_.blocks.size(); first += static_cast<size_t>(s_.blocks[k]), ++k)
      for (int b = 1; b < s_.blocks[k]; ++b)
        if (h_.leads_pair(dev_, s_.blocks[k], b - 1)) follower_.insert(static_cast<int>(first) + b);
    n_ = dev_.sms;
    pbs_ = dev_.pbs_per_sm;
    bmax_ = dev_.max_blocks_per_sm;
    order_.resize(static_cast<size_t>(n_));
    {
      int p = 0;
      if (h_.order == model::Order::EvenFirst) {
        for (int i = 0; i < n_; i += 2) order_[p++] = i;
        for (int i = 1; i < n_; i += 2) order_[p++] = i;
      } else {
        for (int i = 0; i < n_; ++i) order_[p++] = i;
      }
    }
    if (h_.selection == model::Selection::GpcPriority) {
      try {
        gpc_of_sm_ = model::fermi_gpc_of_sm(dev_, h_, "smt");
      } catch (const model::InputError& e) {  // said as the simulator says it, never a crash
        throw Unsupported(e.what());
      }
    }
  }

  // Group 0: kernel-level terms; group i + 1: the constraints of block i's decision.
  std::vector<z3::expr_vector> run_grouped() {
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

 private:
  z3::expr_vector take() {
    z3::expr_vector v = out_;
    out_ = z3::expr_vector(c_);
    return v;
  }
  expr iv(int64_t v) { return s_.num(v); }
  expr bv(bool v) { return c_.bool_val(v); }
  expr count_if(const std::vector<expr>& conds) {
    std::vector<expr> ones;
    for (const auto& x : conds) ones.push_back(z3::ite(x, iv(1), iv(0)));
    return sum_of(ones);
  }
  // n-ary addition for integers; bit-vectors have no n-ary add in the API, so a balanced bvadd tree.
  expr sum_of(const std::vector<expr>& xs) {
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
  // Signed min / max (z3::min on bit-vectors compares unsigned, wrong for a negative free count).
  static expr smin(const expr& a, const expr& b) { return z3::ite(a <= b, a, b); }
  static expr smax(const expr& a, const expr& b) { return z3::ite(a >= b, a, b); }
  expr fresh_int(const std::string& what, int i) { return s_.var(fmt::format("{}_{}_{}", tag_, what, i)); }
  // Defines a fresh variable equal to e: keeps terms shared instead of copied into every use.
  expr define(const std::string& what, int i, const expr& e0) {
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

  // ---- per kernel: needs of one block (Algorithm 1 lines 4-6; seed 002 thresholds) and config_s ----
  void kernel_terms() {
    for (size_t k = 0; k < s_.blocks.size(); ++k) {
      int ki = static_cast<int>(k);
      const int unit = dev_.reg_alloc_unit;
      expr r = ((s_.regs[k] * 32 + (unit - 1)) / unit) * unit;
      if (h_.registers_ignore_at_or_below) r = z3::ite(s_.regs[k] <= *h_.registers_ignore_at_or_below, iv(0), r);
      const int su = dev_.smem_alloc_unit;
      expr sz = ((s_.smem[k] + (su - 1)) / su) * su + dev_.smem_reserved_per_block;
      if (h_.smem_ignore_below) sz = z3::ite(sz < *h_.smem_ignore_below, iv(0), sz);
      W_.push_back(define("W", ki, s_.warps[k]));
      R_.push_back(define("R", ki, r));
      S_.push_back(define("S", ki, sz));
      LOC_.push_back(h_.local == model::Local::GpuConfig ? s_.local[k] : iv(0));
      // Blocks one empty SM holds (pointer 0, largest configuration): the feasibility of the
      // kernel and, x S rounded up to a configuration, Mechanism 3's config_s.
      SmView empty = empty_view();
      std::vector<expr> levels = capacity_levels(empty, ki, iv(dev_.max_smem_config_bytes()), {}, bmax_);
      expr cap0 = define("cap0", ki, count_if(levels));
      out_.push_back(cap0 >= 1);  // launchable: one block fits an empty SM
      CAP0_.push_back(cap0);
      if (h_.smem_config == model::SmemConfig::Tpc) {
        std::vector<expr> parts;
        for (const auto& l : levels) parts.push_back(z3::ite(l, S_[k], iv(0)));
        expr bytes = sum_of(parts);
        expr cfg = iv(dev_.max_smem_config_bytes());
        for (auto it = dev_.smem_configs_kb.rbegin(); it != dev_.smem_configs_kb.rend(); ++it)
          cfg = z3::ite(bytes <= *it * 1024, iv(*it * 1024), cfg);
        CFG_.push_back(define("cfg", ki, cfg));
      } else {
        CFG_.push_back(iv(0));
      }
    }
  }

  SmView empty_view() {
    SmView v{iv(0), iv(0), iv(0), iv(0), iv(0), {}, {}, {}, {}, {}};
    for (int q = 0; q < pbs_; ++q) {
      v.pb_warps.push_back(iv(0));
      v.pb_regs.push_back(iv(0));
      if (contiguous_regs()) {
        v.pb_hstart.push_back({iv(0)});
        v.pb_hsize.push_back({iv(dev_.regs_per_pb())});
      }
    }
    return v;
  }

  // Warps of R registers each PB can still take: warp slots and, pooled per PB, free registers
  // (Mechanism 4, renaming: fragments combine).
  std::vector<expr> pb_rooms(const SmView& v, const expr& R) {
    const int slots = dev_.warp_slots_per_pb();
    std::vector<expr> room;
    for (int q = 0; q < pbs_; ++q) {
      expr r = iv(slots) - v.pb_warps[static_cast<size_t>(q)];
      if (h_.registers == model::Registers::Pb)
        r = smin(r, fits_count(iv(dev_.regs_per_pb()) - v.pb_regs[static_cast<size_t>(q)], R, slots));
      if (contiguous_regs()) {
        // pb-contiguous: R-sized chunks that fit in the PB's register holes, counted once per hole.
        std::vector<expr> parts;
        for (const auto& hole : v.pb_hsize[static_cast<size_t>(q)]) parts.push_back(fits_count(hole, R, slots));
        r = smin(r, sum_of(parts));
      }
      room.push_back(r);
    }
    return room;
  }

  // ---- capacity: indicator of "at least L blocks fit" for L = 1..lmax ----
  // `smem_limit` is the SM's shared-memory configuration in bytes; `holes` the contiguous holes.
  std::vector<expr> capacity_levels(const SmView& v, int k, const expr& smem_limit, const std::vector<expr>& holes,
                                    int lmax, bool literal_units = false) {
    const expr& W = W_[static_cast<size_t>(k)];
    const expr& R = R_[static_cast<size_t>(k)];
    const expr& S = S_[static_cast<size_t>(k)];
    expr limit_b = iv(bmax_) - v.blocks;
    // Warps placeable (Algorithm 1 lines 14-23), registers folded in.
    expr limit_w = iv(0);
    if (h_.warps == model::Warps::Sm) {
      limit_w = iv(dev_.max_warps_per_sm) - v.warps;
    } else {
      std::vector<expr> room = pb_rooms(v, R);
      if (h_.warps == model::Warps::PbStrictRR) {
        expr m = room[0];
        for (int q = 1; q < pbs_; ++q) m = smin(m, room[static_cast<size_t>(q)]);
        // j: PBs from the pointer before the first one at the minimum (Algorithm 1 lines 19-23).
        expr j = iv(0);
        for (int p = pbs_ - 1; p >= 0; --p) {
          expr jp = iv(pbs_ - 1);
          for (int o = pbs_ - 1; o >= 0; --o) jp = z3::ite(room[static_cast<size_t>((p + o) % pbs_)] == m, iv(o), jp);
          j = p == pbs_ - 1 ? jp : z3::ite(v.pointer == p, jp, j);
        }
        limit_w = m * pbs_ + j;
      } else {
        limit_w = sum_of(room);
      }
    }
    if (!h_.pb_registers()) {
      limit_w = smin(limit_w, fits_count(iv(dev_.regs_per_sm) - v.regs, R, dev_.max_warps_per_sm));
    }
    // Contiguous shared memory: S-sized chunks that fit in the holes, counted once per hole.
    std::optional<expr> chunks;
    if (h_.smem == model::Smem::ContiguousFirstFit && !holes.empty()) {
      if (S.is_numeral()) {
        int64_t sv = S.get_numeral_int64();
        std::vector<expr> parts;
        if (sv > 0)
          for (const auto& hole : holes) parts.push_back(hole / static_cast<int>(sv));
        chunks = sv > 0 ? sum_of(parts) : iv(lmax);
      } else {
        std::vector<expr> fits;
        for (const auto& hole : holes)
          for (int m = 1; m <= lmax; ++m) fits.push_back(m * S <= hole);
        chunks = z3::ite(S == 0, iv(lmax), count_if(fits));
      }
    }
    std::vector<expr> levels;
    for (int L = 1; L <= lmax; ++L) {
      expr smem_ok = chunks ? (*chunks >= L) : (L * S <= smem_limit - v.smem);
      expr warp_ok = literal_units ? (limit_w >= L) : (L * W <= limit_w);
      levels.push_back(limit_b >= L && warp_ok && smem_ok);
    }
    return levels;
  }

  // ---- the machine state at an instant, seen by block i ----
  // resident(j): block j (j < i) occupies its SM at the instant.
  struct Instant {
    std::vector<expr> resident;
  };

  // Instant `when` (after its retirements) as block i sees it, for when >= start_{i-1}.
  Instant at_time(int i, const expr& when) {
    Instant t;
    for (int j = 0; j < i; ++j) t.resident.push_back(end_[static_cast<size_t>(j)] > when);
    return t;
  }
  // The instant `when` - 1, used only when nothing was dispatched between start_{i-1} and `when`.
  Instant before_time(int i, const expr& when) {
    Instant t;
    for (int j = 0; j < i; ++j) t.resident.push_back(end_[static_cast<size_t>(j)] >= when);
    return t;
  }
  // Starts are monotone, so j < i is resident at start_i iff end_j > start_i.
  Instant at_start(int i) { return at_time(i, d_.start[static_cast<size_t>(i)]); }
  Instant before_start(int i) { return before_time(i, d_.start[static_cast<size_t>(i)]); }  // when block i waited

  SmView view(int i, int sm, const Instant& t) {
    SmView v = empty_view();
    std::vector<expr> blocks, warps, regs, smem;
    std::vector<std::vector<expr>> pbw(static_cast<size_t>(pbs_)), pbr(static_cast<size_t>(pbs_));
    std::vector<std::vector<Interval>> runs(static_cast<size_t>(pbs_));
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      int k = s_.kernel_of_block(j);
      expr here = t.resident[ju] && d_.sm[ju] == sm;
      blocks.push_back(z3::ite(here, iv(1), iv(0)));
      warps.push_back(z3::ite(here, W_[static_cast<size_t>(k)], iv(0)));
      regs.push_back(z3::ite(here, block_regs_[ju], iv(0)));
      smem.push_back(z3::ite(here, S_[static_cast<size_t>(k)], iv(0)));
      if (h_.pb_warps())
        for (int q = 0; q < pbs_; ++q) {
          pbw[static_cast<size_t>(q)].push_back(z3::ite(here, wq_[ju][static_cast<size_t>(q)], iv(0)));
          if (h_.registers == model::Registers::Pb)
            pbr[static_cast<size_t>(q)].push_back(z3::ite(here, rq_[ju][static_cast<size_t>(q)], iv(0)));
        }
      v.alloc.push_back(here && S_[static_cast<size_t>(k)] > 0);
      if (contiguous_regs())
        for (int q = 0; q < pbs_; ++q)
          for (size_t r = 0; r < rs_[ju][static_cast<size_t>(q)].size(); ++r) {
            const expr& a = rs_[ju][static_cast<size_t>(q)][r];
            const expr& e = re_[ju][static_cast<size_t>(q)][r];
            runs[static_cast<size_t>(q)].push_back({here && e > a, a, e});
          }
    }
    if (contiguous_regs())
      for (int q = 0; q < pbs_; ++q) {
        auto [hs, hz] = interval_holes(runs[static_cast<size_t>(q)], iv(dev_.regs_per_pb()));
        v.pb_hstart[static_cast<size_t>(q)] = std::move(hs);
        v.pb_hsize[static_cast<size_t>(q)] = std::move(hz);
      }
    v.blocks = sum_of(blocks);
    v.warps = sum_of(warps);
    v.regs = sum_of(regs);
    v.smem = sum_of(smem);
    for (int q = 0; q < pbs_; ++q) {
      v.pb_warps[static_cast<size_t>(q)] = sum_of(pbw[static_cast<size_t>(q)]);
      v.pb_regs[static_cast<size_t>(q)] = sum_of(pbr[static_cast<size_t>(q)]);
    }
    v.pointer = pointer_before(i, sm);
    return v;
  }

  // The SM's PB pointer when block i is offered: set by the last earlier block on it; never reset.
  expr pointer_before(int i, int sm) {
    if (!h_.pb_warps()) return iv(0);
    expr p = iv(0);
    for (int j = 0; j < i; ++j) p = z3::ite(d_.sm[static_cast<size_t>(j)] == sm, ptr_after_[static_cast<size_t>(j)], p);
    return p;
  }

  // An allocated interval [start, end) when `valid`.
  struct Interval {
    expr valid, start, end;
  };
  // Holes among intervals (pb-contiguous registers): one candidate hole after each boundary (0 and the
  // end of each valid interval), running to the next valid interval or `limit`; size 0 when covered.
  std::pair<std::vector<expr>, std::vector<expr>> interval_holes(const std::vector<Interval>& iv_list, const expr& limit) {
    std::vector<expr> starts = {iv(0)};
    std::vector<expr> valid = {bv(true)};
    for (const auto& a : iv_list) {
      starts.push_back(a.end);
      valid.push_back(a.valid);
    }
    std::vector<expr> sizes;
    for (size_t b = 0; b < starts.size(); ++b) {
      expr covered = !valid[b] || starts[b] >= limit;
      expr next = limit;
      for (const auto& a : iv_list) {
        covered = covered || (a.valid && a.start <= starts[b] && starts[b] < a.end);
        next = z3::ite(a.valid && a.start >= starts[b] && a.start < next, a.start, next);
      }
      sizes.push_back(z3::ite(covered, iv(0), next - starts[b]));
    }
    return {starts, sizes};
  }

  // Contiguous holes of an SM (Mechanism 4): one candidate hole after each boundary (0 and the end of
  // each resident allocation), running to the next allocation or the configuration limit.
  std::vector<expr> holes(int i, const SmView& v, const expr& limit) {
    std::vector<expr> starts = {iv(0)};
    std::vector<expr> valid = {bv(true)};
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      starts.push_back(off_[ju] + S_[static_cast<size_t>(s_.kernel_of_block(j))]);
      valid.push_back(v.alloc[ju]);
    }
    std::vector<expr> out;
    for (size_t b = 0; b < starts.size(); ++b) {
      expr covered = !valid[b] || starts[b] >= limit;
      expr next = limit;
      for (int j = 0; j < i; ++j) {
        size_t ju = static_cast<size_t>(j);
        expr oj = off_[ju];
        expr ej = off_[ju] + S_[static_cast<size_t>(s_.kernel_of_block(j))];
        covered = covered || (v.alloc[ju] && oj <= starts[b] && starts[b] < ej);
        next = z3::ite(v.alloc[ju] && oj >= starts[b] && oj < next, oj, next);
      }
      out.push_back(z3::ite(covered, iv(0), next - starts[b]));
    }
    return out;
  }

  // TPC state at an instant: busy, and the configuration its opener set (Mechanism 3).
  expr tpc_busy(int i, int tpc, const Instant& t) {
    std::vector<expr> any;
    for (int j = 0; j < i; ++j)
      any.push_back(t.resident[static_cast<size_t>(j)] && tpc_of(d_.sm[static_cast<size_t>(j)]) == tpc);
    if (any.empty()) return bv(false);
    z3::expr_vector v(c_);
    for (auto& x : any) v.push_back(x);
    return z3::mk_or(v);
  }
  expr tpc_of(const expr& sm) { return dev_.sms_per_tpc == 1 ? sm : sm / dev_.sms_per_tpc; }
  expr tpc_config(int i, int tpc) {
    expr cfg = iv(dev_.max_smem_config_bytes());
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      cfg = z3::ite(opener_[ju] && tpc_of(d_.sm[ju]) == tpc, CFG_[static_cast<size_t>(s_.kernel_of_block(j))], cfg);
    }
    return cfg;
  }

  struct SmCap {
    std::vector<expr> levels;  // at least L blocks (or literal units) fit
    expr value;
    std::vector<expr> holes;
    std::vector<expr> pb_room;  // per PB, for pb-any's commit
    std::vector<std::vector<expr>> pb_hstart, pb_hsize;  // pb-contiguous: per PB register holes
  };

  // Capacity of every SM for block i at an instant; lmax 1 when only "fits" matters.
  std::vector<SmCap> capacities(int i, const Instant& t, int lmax) {
    int k = s_.kernel_of_block(i);
    size_t ku = static_cast<size_t>(k);
    std::vector<SmCap> caps;
    std::vector<expr> busy, cfg;
    if (h_.smem_config == model::SmemConfig::Tpc)
      for (int tp = 0; tp < dev_.tpcs(); ++tp) {
        busy.push_back(tpc_busy(i, tp, t));
        cfg.push_back(tpc_config(i, tp));
      }
    for (int sm = 0; sm < n_; ++sm) {
      SmView v = view(i, sm, t);
      expr limit = iv(dev_.max_smem_config_bytes());
      expr blocked = bv(false);
      if (h_.smem_config == model::SmemConfig::Tpc) {
        size_t tp = static_cast<size_t>(dev_.tpc_of(sm));
        limit = z3::ite(busy[tp], cfg[tp], CFG_[ku]);
        blocked = busy[tp] && CFG_[ku] > cfg[tp];
      }
      std::vector<expr> hs;
      if (h_.smem == model::Smem::ContiguousFirstFit) hs = holes(i, v, limit);
      std::vector<expr> lv = capacity_levels(v, k, limit, hs, lmax);
      for (auto& l : lv) l = l && !blocked;
      expr value = count_if(lv);
      if (h_.capacity == model::Capacity::Literal && lmax > 1) {
        std::vector<expr> lit = capacity_levels(v, k, limit, hs, lmax, true);
        value = z3::ite(lv[0], count_if(lit), iv(0));
      }
      std::vector<expr> room;
      if (h_.warps == model::Warps::PbAny) room = pb_rooms(v, R_[ku]);
      caps.push_back({lv, value, hs, room, v.pb_hstart, v.pb_hsize});
    }
    return caps;
  }

  expr gpu_busy(int i, const Instant& t) {
    if (i == 0) return bv(false);
    z3::expr_vector v(c_);
    for (int j = 0; j < i; ++j) v.push_back(t.resident[static_cast<size_t>(j)]);
    return z3::mk_or(v);
  }
  expr local_ok(int i, const Instant& t) {
    if (h_.local != model::Local::GpuConfig) return bv(true);
    expr cfg = iv(0);
    for (int j = 0; j < i; ++j)
      cfg = z3::ite(gpu_opener_[static_cast<size_t>(j)], LOC_[static_cast<size_t>(s_.kernel_of_block(j))], cfg);
    return !gpu_busy(i, t) || LOC_[static_cast<size_t>(s_.kernel_of_block(i))] <= cfg;
  }

  // ---- one dispatch decision ----
  void block(int i) {
    size_t iu = static_cast<size_t>(i);
    int k = s_.kernel_of_block(i);
    size_t ku = static_cast<size_t>(k);
    const expr& sm = d_.sm[iu];
    const expr& st = d_.start[iu];
    expr prev = i == 0 ? iv(0) : d_.start[iu - 1];
    end_.push_back(define("end", i, st + s_.duration[ku]));
    out_.push_back(sm >= 0 && sm < n_);
    out_.push_back(st >= prev);
    {
      // Implied by the semantics, stated for the solver: a block starts when the previous one did or
      // when some earlier block retires (nothing else changes the machine).
      z3::expr_vector when(c_);
      when.push_back(st == prev);
      for (int j = 0; j < i; ++j) when.push_back(st == end_[static_cast<size_t>(j)]);
      out_.push_back(z3::mk_or(when));
    }

    Instant now = at_start(i);
    const bool fermi = h_.selection == model::Selection::GpcPriority;
    std::vector<SmCap> caps = capacities(i, now, fermi ? 1 : bmax_);  // Fermi asks only "fits"
    expr lok = local_ok(i, now);

    if (fermi) {
      fermi_pick(i, caps, lok);
      pos_.push_back(iv(0));  // the round-robin pointer plays no part
    } else {
      generic_pick(i, caps, lok);
    }
    commit(i, now, caps);
  }

  // ---- selection gpc-priority: the Fermi dispatcher of seed 003 (model/src/fermi.cpp is the reference) ----
  // Blocks arrive here in pick order (encode_grouped permutes the decisions), so block i is the
  // (i - first)-th pick of its kernel and the dispatch sequence number is i.

  expr any_of(const std::vector<expr>& xs) {
    if (xs.empty()) return bv(false);
    z3::expr_vector v(c_);
    for (const auto& x : xs) v.push_back(x);
    return z3::mk_or(v);
  }
  // Per SM: block i fits there under `caps` (at some instant), as one variable each, so that the
  // many terms asking it do not copy the capacity terms.
  std::vector<expr> fits(int i, const std::vector<SmCap>& caps, const std::string& what) {
    std::vector<expr> out;
    for (int s = 0; s < n_; ++s) out.push_back(define(fmt::format("{}{}_", what, s), i, caps[static_cast<size_t>(s)].levels[0]));
    return out;
  }
  // Block i fits the SM `where`, given fits() at some instant.
  expr fits_on(const std::vector<expr>& fit, const expr& where) {
    std::vector<expr> xs;
    for (int s = 0; s < n_; ++s) xs.push_back(where == s && fit[static_cast<size_t>(s)]);
    return any_of(xs);
  }

  // Kernel k becomes the head at its first pick `first`: the planning instant T_k, the room per SM and
  // the planned SM of every wave pick (Sections 3 and 4.1; concurrent kernels as model/src/fermi.cpp).
  void fermi_plan(int k, int first) {
    size_t ku = static_cast<size_t>(k);
    // Head-of-line blocking with one stream per kernel: k becomes the head when k - 1 dispatched its
    // last pick, and plans once local memory allows it (Algorithm 1 lines 1-3, checked before every pick).
    expr when = first == 0 ? iv(0) : d_.start[static_cast<size_t>(first - 1)];
    if (first > 0 && h_.local == model::Local::GpuConfig) {
      const expr head = when;
      when = fresh_int("T", k);
      out_.push_back(when >= head);
      std::vector<expr> at = {when == head};
      for (int j = 0; j < first; ++j) at.push_back(when == end_[static_cast<size_t>(j)]);
      out_.push_back(any_of(at));
      out_.push_back(local_ok(first, at_time(first, when)));
      // Nothing is dispatched while the head waits, so local memory only frees up: the first instant it allows.
      out_.push_back(when == head || !local_ok(first, before_time(first, when)));
    }
    plan_at_.push_back(when);
    // Room of SM s: min(r, blocks of the kernel s takes at T_k); on an idle GPU r everywhere (Section 4.1).
    std::vector<SmCap> caps = capacities(first, at_time(first, when), bmax_);
    std::vector<expr> room;
    for (int s = 0; s < n_; ++s)
      room.push_back(define(fmt::format("room{}_", s), first, smin(CAP0_[ku], count_if(caps[static_cast<size_t>(s)].levels))));
    wave_size_.push_back(define("wave", first, sum_of(room)));  // min with the kernel's blocks: the pick index
    detail::TermSource t{[this](int64_t v) { return iv(v); },
                         [this, first](const std::string& what, const expr& e) { return define(what, first, e); }};
    plan_.push_back(detail::fermi_wave_plan(t, gpc_of_sm_, room, s_.blocks[ku]));
    // "Planning a wave forgets the completions seen before it": only blocks ending after T_k count.
    taken_.assign(static_cast<size_t>(first), bv(false));
  }

  void fermi_pick(int i, const std::vector<SmCap>& caps, const expr& lok) {
    size_t iu = static_cast<size_t>(i);
    const int k = s_.kernel_of_block(i);
    int first = 0;
    for (int q = 0; q < k; ++q) first += s_.blocks[static_cast<size_t>(q)];
    const int p = i - first;
    const expr& sm = d_.sm[iu];
    const expr& st = d_.start[iu];
    if (p == 0) fermi_plan(k, first);
    const expr& when = plan_at_[static_cast<size_t>(k)];
    const expr prev = p == 0 ? when : d_.start[iu - 1];
    if (p == 0) out_.push_back(st >= when);
    // First wave: min(blocks, room) picks go to their planned SMs, each waiting while its SM cannot hold
    // it (only when capacity is not additive); the rest reuse completions (Section 3).
    const expr in_wave = define("inwave", i, wave_size_[static_cast<size_t>(k)] > p);
    const expr& planned = plan_[static_cast<size_t>(k)][static_cast<size_t>(p)];
    // After the wave: "SMs are picked in the order of completing thread blocks". Completions since T_k,
    // not yet reused by this kernel, ordered by (end, dispatch sequence); the oldest whose SM holds the
    // block now is taken, else the block waits for the next instant.
    const std::vector<expr> fit = fits(i, caps, "fit");
    std::vector<expr> fit_before;
    if (i > 0) fit_before = fits(i, capacities(i, before_start(i), 1), "fitb");
    std::vector<expr> cand, cand_before;
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      const expr open = end_[ju] > when && !taken_[ju];
      cand.push_back(define(fmt::format("cand{}_", j), i, open && end_[ju] <= st && fits_on(fit, d_.sm[ju])));
      cand_before.push_back(open && end_[ju] < st && fits_on(fit_before, d_.sm[ju]));
    }
    std::vector<expr> take;
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      expr e = !in_wave && cand[ju];
      for (int o = 0; o < i; ++o) {
        if (o == j) continue;
        size_t ou = static_cast<size_t>(o);
        e = e && !(cand[ou] && (o < j ? end_[ou] <= end_[ju] : end_[ou] < end_[ju]));
      }
      take.push_back(define(fmt::format("take{}_", j), i, e));
    }
    for (int s = 0; s < n_; ++s) {
      std::vector<expr> reuse;
      for (int j = 0; j < i; ++j) reuse.push_back(take[static_cast<size_t>(j)] && d_.sm[static_cast<size_t>(j)] == s);
      const expr wave_ok = planned == s && fit[static_cast<size_t>(s)];
      out_.push_back(z3::implies(sm == s, lok && z3::ite(in_wave, wave_ok, any_of(reuse))));
    }
    // It waited only if it could not be dispatched just before (room and completions only grow while
    // the head waits, as nothing else is dispatched).
    if (i > 0) {
      const expr possible = z3::ite(in_wave, fits_on(fit_before, planned), any_of(cand_before));
      out_.push_back(st == prev || !(local_ok(i, before_start(i)) && possible));
    } else {
      out_.push_back(st == 0);
    }
    for (int j = 0; j < i; ++j) {
      size_t ju = static_cast<size_t>(j);
      taken_[ju] = define(fmt::format("taken{}_", j), i, taken_[ju] || take[ju]);
    }
    taken_.push_back(bv(false));
  }

  // Selection and waiting rule of the generic dispatcher (round-robin, most-room; issue paired).
  void generic_pick(int i, const std::vector<SmCap>& caps, const expr& lok) {
    size_t iu = static_cast<size_t>(i);
    const expr& sm = d_.sm[iu];
    const expr& st = d_.start[iu];
    expr prev = i == 0 ? iv(0) : d_.start[iu - 1];
    // Selection: the SM the hypothesis answers at start_i.
    std::vector<expr> chosen(static_cast<size_t>(n_), bv(false));  // by SM id
    if (h_.selection == model::Selection::MostRoom) {
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
    } else {  // round-robin: first position at or after the GPU-wide pointer with room
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
    }
    if (follower_.count(i)) {
      // Issue paired (issue 6): block i joins its leader's SM when it fits there at the leader's
      // instant; otherwise the selection places it like any block. The round-robin pointer needs no
      // case: the follower's position is its leader's, so pos + 1 is unchanged.
      const expr& leader_sm = d_.sm[iu - 1];
      expr fits = bv(false);
      for (int s = 0; s < n_; ++s) fits = fits || (leader_sm == s && caps[static_cast<size_t>(s)].levels[0]);
      expr joins = define("joins", i, st == d_.start[iu - 1] && lok && fits);
      for (int s = 0; s < n_; ++s)
        out_.push_back(z3::implies(sm == s, z3::ite(joins, leader_sm == s, chosen[static_cast<size_t>(s)]) && lok));
    } else {
      for (int s = 0; s < n_; ++s) out_.push_back(z3::implies(sm == s, chosen[static_cast<size_t>(s)] && lok));
    }
    pos_.push_back(position_of(sm));

    // It waited only if nothing fitted just before (fit only grows while blocks retire).
    if (i > 0) {
      Instant before = before_start(i);
      std::vector<SmCap> b = capacities(i, before, 1);
      z3::expr_vector any(c_);
      for (auto& x : b) any.push_back(x.levels[0]);
      out_.push_back(st == prev || !(local_ok(i, before) && z3::mk_or(any)));
    } else {
      out_.push_back(st == 0);
    }
  }

  // Commit: TPC / GPU openers, PB warps and registers, pointer, shared-memory offset.
  void commit(int i, const Instant& now, const std::vector<SmCap>& caps) {
    size_t iu = static_cast<size_t>(i);
    int k = s_.kernel_of_block(i);
    size_t ku = static_cast<size_t>(k);
    const expr& sm = d_.sm[iu];
    expr tpc_idle = bv(true);
    if (h_.smem_config == model::SmemConfig::Tpc) {
      for (int tp = 0; tp < dev_.tpcs(); ++tp) tpc_idle = z3::ite(tpc_of(sm) == tp, !tpc_busy(i, tp, now), tpc_idle);
    }
    opener_.push_back(define("opener", i, tpc_idle));
    gpu_opener_.push_back(define("gpuopen", i, !gpu_busy(i, now)));
    block_regs_.push_back(h_.pb_registers() ? iv(0) : define("bregs", i, unary_times(W_[ku], R_[ku], dev_.max_warps_per_sm)));

    std::vector<expr> wq, rq;
    expr ptr_after = iv(0);
    if (h_.pb_warps()) {
      expr p = iv(0);
      for (int s = 0; s < n_; ++s) p = z3::ite(sm == s, pointer_before(i, s), p);
      p = define("ptr", i, p);
      if (h_.warps == model::Warps::PbStrictRR) {
        // Mechanism 2.1: warp w on PB (p + w) mod PBs; Mechanism 2.2: one more step when W % PBs == 0.
        for (int q = 0; q < pbs_; ++q)
          wq.push_back(define(fmt::format("w{}", q), i,
                              W_[ku] / pbs_ + z3::ite(z3::mod(iv(q) - p + pbs_, iv(pbs_)) < z3::mod(W_[ku], iv(pbs_)), iv(1), iv(0))));
        expr step = W_[ku];
        if (h_.skip_on_multiple_of_4) step = step + z3::ite(z3::mod(W_[ku], iv(pbs_)) == 0, iv(1), iv(0));
        ptr_after = z3::mod(p + step, iv(pbs_));
      } else {
        pb_any_commit(i, k, sm, p, caps, wq, ptr_after);
      }
      if (h_.registers == model::Registers::Pb)
        for (int q = 0; q < pbs_; ++q)
          rq.push_back(define(fmt::format("r{}", q), i, unary_times(wq[static_cast<size_t>(q)], R_[ku], dev_.warp_slots_per_pb())));
    }
    wq_.push_back(wq);
    rq_.push_back(rq);
    rs_.emplace_back();
    re_.emplace_back();
    if (contiguous_regs()) contiguous_regs_commit(i, k, sm, caps, wq);
    ptr_after_.push_back(h_.pb_warps() ? define("ptra", i, ptr_after) : iv(0));

    if (h_.smem == model::Smem::ContiguousFirstFit) {
      // First fit: the lowest hole start whose hole takes S (Mechanism 4).
      expr off = iv(0);
      for (int s = 0; s < n_; ++s) {
        const auto& hs = caps[static_cast<size_t>(s)].holes;
        std::vector<expr> starts = {iv(0)};
        for (int j = 0; j < i; ++j) starts.push_back(off_[static_cast<size_t>(j)] + S_[static_cast<size_t>(s_.kernel_of_block(j))]);
        expr best = iv(int64_t{1} << 30);
        for (size_t b = 0; b < hs.size(); ++b)
          best = z3::ite(hs[b] >= S_[ku] && hs[b] > 0 && starts[b] < best, starts[b], best);
        off = z3::ite(sm == s, best, off);
      }
      off_.push_back(define("off", i, z3::ite(S_[ku] > 0, off, iv(0))));
    } else {
      off_.push_back(iv(0));
    }
  }

  bool contiguous_regs() const { return h_.registers == model::Registers::PbContiguous && h_.pb_warps(); }

  // pb-contiguous (Mechanism 4 for registers, no renaming): the wq[q] warps of block i on PB q, all of R
  // registers, go one by one to the lowest-address hole of the PB that takes R. Consecutive warps fill
  // a hole from its start before moving on, so the block's registers on a PB are a few runs, each
  // starting at a hole start: run r takes min(fits in the r-th fitting hole by address, warps left).
  void contiguous_regs_commit(int i, int k, const expr& sm, const std::vector<SmCap>& caps, const std::vector<expr>& wq) {
    size_t ku = static_cast<size_t>(k);
    const expr& W = W_[ku];
    const expr& R = R_[ku];
    const int slots = dev_.warp_slots_per_pb();
    const int wmax = dev_.max_threads_per_block / 32;
    // Runs per PB: at most the warps the block can put on one PB.
    int kr = 0;
    const int wbound = W.is_numeral() ? static_cast<int>(W.get_numeral_int64()) : wmax;
    if (h_.warps == model::Warps::PbStrictRR) kr = (wbound + pbs_ - 1) / pbs_;
    else kr = std::min(wbound, slots);
    if (R.is_numeral() && R.get_numeral_int64() > 0)
      kr = std::min<int>(kr, static_cast<int>(dev_.regs_per_pb() / R.get_numeral_int64()));
    kr = std::max(kr, 1);
    std::vector<std::vector<expr>> starts_q, ends_q;
    for (int q = 0; q < pbs_; ++q) {
      size_t qu = static_cast<size_t>(q);
      const size_t nc = caps[0].pb_hstart[qu].size();
      std::vector<expr> hstart, nfit;
      for (size_t b = 0; b < nc; ++b) {
        expr st = iv(0), sz = iv(0);
        for (int s = 0; s < n_; ++s) {
          st = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_hstart[qu][b], st);
          sz = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_hsize[qu][b], sz);
        }
        hstart.push_back(define(fmt::format("hs{}_{}_", q, b), i, st));
        nfit.push_back(define(fmt::format("hn{}_{}_", q, b), i, z3::ite(R > 0, fits_count(sz, R, kr), iv(0))));
      }
      std::vector<expr> rs, re;
      expr prev = iv(-1);
      expr left = wq[qu];
      const expr big = iv(int64_t{1} << 30);
      for (int r = 0; r < kr; ++r) {
        expr start = big, n = iv(0);
        for (size_t b = 0; b < nc; ++b) {
          expr ok = nfit[b] >= 1 && hstart[b] > prev && hstart[b] < start;
          n = z3::ite(ok, nfit[b], n);
          start = z3::ite(ok, hstart[b], start);
        }
        start = define(fmt::format("rs{}_{}_", q, r), i, start);
        expr cnt = define(fmt::format("rc{}_{}_", q, r), i, smax(iv(0), smin(n, left)));
        left = left - cnt;
        prev = start;
        rs.push_back(start);
        re.push_back(define(fmt::format("re{}_{}_", q, r), i, start + unary_times(cnt, R, kr)));
      }
      starts_q.push_back(rs);
      ends_q.push_back(re);
    }
    rs_[static_cast<size_t>(i)] = std::move(starts_q);
    re_[static_cast<size_t>(i)] = std::move(ends_q);
  }

  // floor(free / r), capped at cap: a plain division when r is a constant, else unary levels
  // (x * r <= free for x = 1..cap) so that the term stays linear for a symbolic r.
  expr fits_count(const expr& free, const expr& r, int cap) {
    if (r.is_numeral()) {
      int64_t rv = r.get_numeral_int64();
      if (rv == 0) return iv(cap);
      return smin(iv(cap), smax(iv(0), free) / static_cast<int>(rv));
    }
    std::vector<expr> lv;
    for (int x = 1; x <= cap; ++x) lv.push_back(x * r <= free);
    return count_if(lv);
  }

  // x * y for 0 <= x <= xmax without a nonlinear product: y added once per unit of x.
  expr unary_times(const expr& x, const expr& y, int xmax) {
    if (y.is_numeral() || x.is_numeral()) return x * y;
    std::vector<expr> parts;
    for (int v = 1; v <= xmax; ++v) parts.push_back(z3::ite(x >= v, y, iv(0)));
    return sum_of(parts);
  }

  expr position_of(const expr& sm) {
    expr p = iv(0);
    for (int q = n_ - 1; q >= 0; --q) p = z3::ite(sm == order_[static_cast<size_t>(q)], iv(q), p);
    return p;
  }
  expr rr_pointer(int i) {
    if (i == 0) return iv(0);
    return z3::mod(pos_[static_cast<size_t>(i - 1)] + 1, iv(n_));
  }

  // pb-any: warps dealt one by one to the first PB at or after the pointer with room; the pointer
  // moves past the PB that took the warp. Unrolled over the largest possible W.
  void pb_any_commit(int i, int k, const expr& sm, const expr& p0, const std::vector<SmCap>& caps,
                     std::vector<expr>& wq, expr& ptr_after) {
    size_t ku = static_cast<size_t>(k);
    std::vector<expr> room(static_cast<size_t>(pbs_), iv(0));
    for (int s = 0; s < n_; ++s)
      for (int q = 0; q < pbs_; ++q)
        room[static_cast<size_t>(q)] = z3::ite(sm == s, caps[static_cast<size_t>(s)].pb_room[static_cast<size_t>(q)],
                                               room[static_cast<size_t>(q)]);
    std::vector<expr> got(static_cast<size_t>(pbs_), iv(0));
    expr ptr = p0;
    const int wmax = dev_.max_threads_per_block / 32;
    for (int w = 0; w < wmax; ++w) {
      expr active = W_[ku] > w;
      // Target: first PB from the pointer with room left.
      expr target = iv(0);
      for (int pv = pbs_ - 1; pv >= 0; --pv) {
        expr tp = iv(pv);
        for (int o = pbs_ - 1; o >= 0; --o) {
          int q = (pv + o) % pbs_;
          tp = z3::ite(got[static_cast<size_t>(q)] < room[static_cast<size_t>(q)], iv(q), tp);
        }
        target = pv == pbs_ - 1 ? tp : z3::ite(ptr == pv, tp, target);
      }
      target = define(fmt::format("anyt{}", w), i, target);
      for (int q = 0; q < pbs_; ++q)
        got[static_cast<size_t>(q)] = got[static_cast<size_t>(q)] + z3::ite(active && target == q, iv(1), iv(0));
      ptr = z3::ite(active, z3::mod(target + 1, iv(pbs_)), ptr);
      if (w % 4 == 3) ptr = define(fmt::format("anyp{}", w), i, ptr);
    }
    for (int q = 0; q < pbs_; ++q) wq.push_back(define(fmt::format("w{}", q), i, got[static_cast<size_t>(q)]));
    ptr_after = ptr;
  }

  z3::context& c_;
  const SymbolicScenario& s_;
  const Hypothesis& h_;
  const Decisions& d_;
  std::string tag_;
  const model::Device& dev_;
  z3::expr_vector out_;
  int n_ = 0, pbs_ = 4, bmax_ = 16;
  std::vector<int> order_;
  std::vector<expr> W_, R_, S_, CFG_, LOC_;
  std::vector<expr> end_, opener_, gpu_opener_, block_regs_, ptr_after_, off_, pos_;
  std::vector<std::vector<expr>> wq_, rq_;
  // pb-contiguous: per block, per PB, the register runs [rs, re) it holds (re == rs: none).
  std::vector<std::vector<std::vector<expr>>> rs_, re_;
  SharedTerms* shared_ = nullptr;
  std::set<int> follower_;  // issue paired: blocks that join their leader's SM when it fits
  // gpc-priority: the GPC of every SM; per kernel its planning instant, wave size and planned SM per
  // pick; per earlier block, whether the current kernel already reused its completion.
  std::vector<int> gpc_of_sm_;
  std::vector<expr> CAP0_, plan_at_, wave_size_, taken_;
  std::vector<std::vector<expr>> plan_;
};

}  // namespace

std::vector<z3::expr_vector> encode_grouped(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d,
                                            const std::string& tag, SharedTerms* shared) {
  check_encodable(h);
  // The encoder sees the blocks in dispatch order (pick_order): a permuted view of the same variables.
  Decisions picked;
  for (int b : pick_order(s, h)) {
    picked.sm.push_back(d.sm[static_cast<size_t>(b)]);
    picked.start.push_back(d.start[static_cast<size_t>(b)]);
  }
  Encoder e(s, h, picked, tag, shared);
  auto groups = e.run_grouped();
  for (const auto& x : s.domain) groups[0].push_back(x);
  return groups;
}

z3::expr_vector encode(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, const std::string& tag,
                       SharedTerms* shared) {
  z3::expr_vector out(s.ctx());
  for (const auto& g : encode_grouped(s, h, d, tag, shared))
    for (const auto& x : g) out.push_back(x);
  return out;
}

}  // namespace tbcheck::smt
