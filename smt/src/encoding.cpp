// The Z3 encoding's entry points: symbolic scenarios, decisions, encode() and the Encoder's reading of the
// options; the encoder itself is in state.cpp, capacity.cpp, dispatch.cpp, commit.cpp and fermi_pick.cpp.
// Division by symbolic quantities is avoided throughout: "how many fit" is a sum of unary level
// indicators (L x W <= room), which keeps everything linear.
#include "tbcheck/smt/encoding.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "encoder.hpp"
#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/cluster.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/fermi.hpp"
#include "tbcheck/model/options.hpp"

namespace tbcheck::smt {

using model::Hypothesis;
using z3::expr;

const std::vector<int>& realizable_regs() { return model::probe_register_counts(); }

z3::solver make_solver(z3::context& c, unsigned timeout_ms, unsigned arith_solver, unsigned resource_limit) {
  z3::solver solver(c);
  z3::params p(c);
  p.set("timeout", timeout_ms);
  if (resource_limit != 0) p.set("rlimit", resource_limit);
  p.set("smt.arith.solver", arith_solver);
  // Z3's own SIGINT handler replaces the command's for the length of a check (and, restored by
  // concurrent checks out of order, can outlive its query: a crash); stops reach a query through
  // Z3_interrupt instead (solve_into).
  p.set("ctrl_c", false);
  solver.set(p);
  return solver;
}

void check_encodable(const Hypothesis& h) {
  // Every option has an encoding: issue paired / paired-cc8 / device in Encoder::block() (device's hand-out
  // passes in pick_order), selection gpc-priority
  // in Encoder::fermi_pick() (it needs the device's GPC map, checked when a scenario is encoded).
  (void)h;
}

namespace {

// The kernels in dispatch order under h's priority option (identity when it plays no part).
std::vector<int> kernel_order(const SymbolicScenario& s, const Hypothesis& h) {
  std::vector<std::optional<int>> prio = s.priority;
  prio.resize(s.blocks.size());
  return model::kernels_by_priority(prio, s.device, h.priority);
}

bool has_releases(const SymbolicScenario& s) {
  return std::any_of(s.release.begin(), s.release.end(), [](int64_t r) { return r > 0; });
}

// Dispatch orders are enumerated, so a scenario with many interleavings is refused rather than encoded
// as a formula too large to solve.
constexpr size_t kMaxSequences = 512;
constexpr size_t kMaxPrefixes = 200000;

}  // namespace

std::vector<std::vector<int>> kernel_sequences(const SymbolicScenario& s, const Hypothesis& h) {
  const std::vector<int> korder = kernel_order(s, h);  // (rank, index): the ready queue's order
  std::vector<int> seq;
  if (!has_releases(s)) {
    for (int k : korder) seq.insert(seq.end(), static_cast<size_t>(s.blocks[static_cast<size_t>(k)]), k);
    return {seq};
  }
  // Phase p: the instants from the p-th release instant on (0 first), the kernels launched by then eligible.
  std::vector<int64_t> phases = {0};
  for (int64_t r : s.release)
    if (r > 0) phases.push_back(r);
  std::sort(phases.begin(), phases.end());
  phases.erase(std::unique(phases.begin(), phases.end()), phases.end());
  std::vector<int> left = s.blocks;
  std::set<std::vector<int>> out;
  std::set<std::pair<std::vector<int>, size_t>> seen;
  auto too_many = [&] {
    return Unsupported(fmt::format("release times: the scenario has more than {} dispatch orders to encode; the "
                                   "SMT engine takes scenarios with fewer blocks or release instants",
                                   kMaxSequences));
  };
  std::function<void(size_t)> walk = [&](size_t phase) {
    if (!seen.insert({seq, phase}).second) return;
    if (seen.size() > kMaxPrefixes || out.size() > kMaxSequences) throw too_many();
    int head = -1;
    for (int k : korder)
      if (left[static_cast<size_t>(k)] > 0 && s.release[static_cast<size_t>(k)] <= phases[phase]) {
        head = k;
        break;
      }
    if (head >= 0) {  // the head places its next block in this phase
      seq.push_back(head);
      --left[static_cast<size_t>(head)];
      walk(phase);
      ++left[static_cast<size_t>(head)];
      seq.pop_back();
    }
    if (phase + 1 < phases.size()) walk(phase + 1);  // or the next release comes first
    else if (head < 0) out.insert(seq);               // every kernel is launched: none has blocks left
  };
  walk(0);
  if (out.size() > kMaxSequences) throw too_many();
  return {out.begin(), out.end()};
}

std::vector<int> pick_order(const SymbolicScenario& s, const Hypothesis& h, const std::vector<int>& sequence) {
  if (!has_releases(s)) return pick_order(s, h);  // the one sequence
  std::vector<int> first_of(s.blocks.size() + 1, 0);
  for (size_t k = 0; k < s.blocks.size(); ++k) first_of[k + 1] = first_of[k] + s.blocks[k];
  std::vector<std::vector<int>> index(s.blocks.size());
  for (size_t k = 0; k < s.blocks.size(); ++k) index[k] = h.hand_out_order(s.device, s.blocks[k]);
  std::vector<int> taken(s.blocks.size(), 0), out;
  for (int kk : sequence) {
    const size_t k = static_cast<size_t>(kk);
    const int b = taken[k]++;
    out.push_back(first_of[k] + (index[k].empty() ? b : index[k][static_cast<size_t>(b)]));
  }
  return out;
}

std::vector<int> pick_order(const SymbolicScenario& s, const Hypothesis& h) {
  std::vector<int> first_of(s.blocks.size() + 1, 0);
  for (size_t k = 0; k < s.blocks.size(); ++k) first_of[k + 1] = first_of[k] + s.blocks[k];
  std::vector<int> out;
  for (int kk : kernel_order(s, h)) {
    const size_t k = static_cast<size_t>(kk);
    const int first = first_of[k];
    bool fermi = false;
    switch (h.selection) {
      case model::Selection::RoundRobin:
      case model::Selection::MostRoom:
      case model::Selection::GpcSpread:
      case model::Selection::TpcPosition:
      case model::Selection::Rule: break;
      case model::Selection::GpcPriority: fermi = true; break;
    }
    if (!fermi) {
      // Device issue: the p-th placement is the block its hand-out pass gives it, so the
      // encoder's picks stay the paired decisions (leader, follower, ...) and only the labels move.
      const std::vector<int> index = k < s.cluster.size() && s.cluster[k]
                                         ? model::cluster_block_order(s.blocks[k], s.grid[k], s.cluster[k])
                                         : h.hand_out_order(s.device, s.blocks[k]);
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
  if (!pick_kernel.empty()) return i >= 0 && static_cast<size_t>(i) < pick_kernel.size() ? pick_kernel[static_cast<size_t>(i)] : -1;
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
  s.cluster.assign(blocks.size(), std::nullopt);
  for (size_t k = 0; k < blocks.size() && k < b.clusters.size(); ++k) s.cluster[k] = b.clusters[k];
  for (size_t k = 0; k < blocks.size() && k < b.grids.size(); ++k) s.grid[k] = b.grids[k];
  for (size_t k = 0; k < blocks.size(); ++k) {
    auto name = [&](const char* what) { return fmt::format("{}_{}_k{}", prefix, what, k); };
    expr w = s.var(name("warps"));
    s.domain.push_back(w >= 1 && w <= std::min(b.max_warps, d.max_threads_per_block / model::kThreadsPerWarp));
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
    s.priority.push_back(b.priorities.size() > k ? b.priorities[k] : std::nullopt);
    s.tpcs.push_back(b.tpcs.size() > k ? b.tpcs[k] : std::vector<int>{});
    s.release.push_back(0);
  }
  return s;
}

SymbolicScenario SymbolicScenario::make_fixed(z3::context& c, const model::Scenario& sc, Sort sort) {
  SymbolicScenario s(c);
  s.sort = sort;
  s.device = sc.device;
  std::set<int> streams;
  for (const auto& k : sc.kernels) {
    if (k.stream && !streams.insert(*k.stream).second)
      throw Unsupported("the SMT engine gives every kernel its own stream; shared streams are not encoded");
    s.blocks.push_back(k.blocks);
    s.grid.push_back(k.grid);
    s.cluster.push_back(k.cluster);
    s.warps.push_back(s.num(k.warps()));
    s.regs.push_back(s.num(k.regs));
    s.smem.push_back(s.num(k.smem));
    s.duration.push_back(s.num(k.duration));
    s.local.push_back(s.num(k.local));
    s.priority.push_back(k.priority);
    s.tpcs.push_back(k.tpcs);
    s.release.push_back(k.release);
  }
  s.gpc_pointer = sc.gpc_pointer;
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
    if (k < cluster.size()) kr.cluster = cluster[k];
    kr.threads = static_cast<int>(value_of(m, warps[k]) * model::kThreadsPerWarp);
    kr.regs = static_cast<int>(value_of(m, regs[k]));
    kr.smem = static_cast<int>(value_of(m, smem[k]));
    kr.duration = static_cast<int>(value_of(m, duration[k]));
    kr.local = static_cast<int>(value_of(m, local[k]));
    if (k < priority.size() && priority[k]) {
      kr.priority = priority[k];
      kr.stream = static_cast<int>(k);  // a priority belongs to a stream: one per kernel, as the engine has
    }
    if (k < tpcs.size()) kr.tpcs = tpcs[k];
    if (k < release.size()) kr.release = release[k];
    sc.kernels.push_back(kr);
  }
  sc.gpc_pointer = gpc_pointer;
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

namespace detail {

Encoder::Encoder(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, std::string tag, SharedTerms* shared)
    : c_(s.ctx()), s_(s), h_(h), d_(d), tag_(std::move(tag)), dev_(s.device), out_(c_), shared_(shared) {
  // Issue paired: the leaders depend only on the block counts, so which blocks are followers is
  // fixed before solving (see generic_pick()).
  switch (h_.issue) {
    case model::Issue::Single: break;
    case model::Issue::Paired:
    case model::Issue::PairedCc8:
    case model::Issue::FromDevice:  // leads_pair reads the device's issue_pairs
      for (size_t k = 0, first = 0; k < s_.blocks.size(); first += static_cast<size_t>(s_.blocks[k]), ++k)
        for (int b = 1; b < s_.blocks[k]; ++b)
          if (h_.leads_pair(dev_, s_.blocks[k], b - 1)) follower_.insert(static_cast<int>(first) + b);
      break;
  }
  if (!s_.pick_kernel.empty()) {
    // Release times (release.cpp): picks interleave kernels, so a follower is the next pick of its
    // leader's kernel only when that pick comes right after the leader (the simulator's pair_kernel).
    releases_ = true;
    for (int64_t r : s_.release)
      if (r > 0) release_instants_.push_back(r);
    std::sort(release_instants_.begin(), release_instants_.end());
    release_instants_.erase(std::unique(release_instants_.begin(), release_instants_.end()), release_instants_.end());
    for (size_t k = 0; k < s_.blocks.size(); ++k) rank_.push_back(model::priority_rank(s_.priority[k], dev_, h_.priority));
    follower_.clear();
    std::vector<int> taken(s_.blocks.size(), 0);
    for (size_t i = 0; i < s_.pick_kernel.size(); ++i) {
      const int k = s_.pick_kernel[i];
      const int b = taken[static_cast<size_t>(k)]++;
      switch (h_.issue) {
        case model::Issue::Single: break;
        case model::Issue::Paired:
        case model::Issue::PairedCc8:
        case model::Issue::FromDevice:
          if (i > 0 && s_.pick_kernel[i - 1] == k && h_.leads_pair(dev_, s_.blocks[static_cast<size_t>(k)], b - 1))
            follower_.insert(static_cast<int>(i));
          break;
      }
    }
  }
  n_ = dev_.sms;
  pbs_ = dev_.pbs_per_sm;
  bmax_ = dev_.max_blocks_per_sm;
  order_.resize(static_cast<size_t>(n_));
  {
    int p = 0;
    switch (h_.order) {
      case model::Order::EvenFirst:
        for (int i = 0; i < n_; i += 2) order_[p++] = i;
        for (int i = 1; i < n_; i += 2) order_[p++] = i;
        break;
      case model::Order::Natural:
        for (int i = 0; i < n_; ++i) order_[p++] = i;
        break;
    }
  }
  switch (h_.selection) {
    case model::Selection::RoundRobin:
    case model::Selection::MostRoom:
    case model::Selection::GpcSpread:
    case model::Selection::TpcPosition: break;
    case model::Selection::Rule:
      // Refused in the simulator's words (check_feasibility), never an index out of range.
      if (const model::FeatureInfo* needs = model::gpc_map_feature(h_.rule); needs && dev_.gpc_of_tpc.empty())
        throw Unsupported(model::input_error_message(
            "smt", "device", fmt::format("rule key '{}' needs the GPC of every SM; device {} has no GPC map", needs->name, dev_.name)));
      break;
    case model::Selection::GpcPriority:
      fermi_ = true;
      // Refused in the simulator's words, never a crash.
      if (dev_.gpc_of_tpc.empty())
        throw Unsupported(model::input_error_message("smt", "device", model::fermi_no_gpc_map_reason(dev_, h_)));
      gpc_of_sm_ = model::fermi_gpc_of_sm(dev_, h_, "smt");
      break;
  }
  // Numbering gpc-ring renumbers each batch by where its blocks landed and the room they had (numbering.cpp,
  // model/numbering.hpp): the encoder decides placements, ring_numbering labels them.
  switch (h_.numbering) {
    case model::Numbering::Dispatch: break;
    case model::Numbering::GpcRing:
    case model::Numbering::GpcCarry:
      if (dev_.gpc_of_tpc.empty())  // the simulator's check_feasibility refuses it too
        throw Unsupported(fmt::format("numbering {} under {}: the device has no GPC map", model::to_string(h_.numbering), h_.name));
      ring_ = true;
      ring_carry_ = h_.numbering == model::Numbering::GpcCarry;
      ring_gpc_of_sm_ = model::cluster_gpc_of_sm(dev_);
      break;
  }
  // Thread block clusters (cluster_pick.cpp): the rule the simulator follows, refused where it refuses.
  for (size_t k = 0; k < s_.blocks.size(); ++k) {
    if (k >= s_.cluster.size() || !s_.cluster[k]) continue;
    model::Scenario probe;
    probe.device = dev_;
    model::Kernel kr;
    kr.name = fmt::format("k{}", k + 1);
    kr.blocks = s_.blocks[k];
    kr.cluster = s_.cluster[k];
    probe.kernels.push_back(kr);
    if (std::string why = model::cluster_no_gpc_map(probe); !why.empty()) throw Unsupported(why);
    if (std::string why = model::cluster_unsupported(probe, h_); !why.empty())
      throw Unsupported(fmt::format("clusters under {}: {}", h_.name, why.substr(why.find(": ") + 2)));
    cluster_gpc_of_sm_ = model::cluster_gpc_of_sm(dev_);
  }
  switch (h_.registers) {
    case model::Registers::Sm: break;
    case model::Registers::Pb: pb_regs_ = true; break;
    case model::Registers::PbContiguous: contiguous_regs_ = h_.pb_warps(); break;
  }
  switch (h_.smem_config) {
    case model::SmemConfig::None: break;
    case model::SmemConfig::Tpc: config_span_ = dev_.sms_per_tpc; break;
    case model::SmemConfig::Sm:
    case model::SmemConfig::SmFloor: config_span_ = 1; break;
  }
  switch (h_.local) {
    case model::Local::Ignore: break;
    case model::Local::GpuConfig: gpu_local_ = true; break;
  }
  switch (h_.smem) {
    case model::Smem::Counted: break;
    case model::Smem::ContiguousFirstFit: contiguous_smem_ = true; break;
  }
  switch (h_.retirement) {
    case model::Retirement::AllThenDispatch: break;
    case model::Retirement::StartOrder:
      // As the simulator refuses it (scenario_support): seed 003's waves have no per-retirement dispatch.
      if (fermi_) throw Unsupported("retirement start-order under gpc-priority: the Fermi dispatcher (seed 003) has none");
      start_order_ = true;
      break;
  }
}

}  // namespace detail

z3::expr placement_sm(const SymbolicScenario& s, const std::string& tag, int p) {
  return s.var(fmt::format("{}_placed_sm_{}", tag, p));
}

namespace {

// Under numbering gpc-ring the encoder decides placements, not block indices: each unclustered pick gets an SM
// variable of its own (named from the tag), and a last group numbers them into `d` (numbering.cpp). Otherwise the
// picks are a permuted view of `d`.
Decisions placements(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, const std::string& tag,
                     const std::vector<int>& order) {
  std::vector<int> kernel_of(static_cast<size_t>(s.total_blocks()), 0);
  for (size_t k = 0, b = 0; k < s.blocks.size(); ++k)
    for (int j = 0; j < s.blocks[k]; ++j) kernel_of[b++] = static_cast<int>(k);
  Decisions picked;
  for (size_t p = 0; p < order.size(); ++p) {
    const size_t b = static_cast<size_t>(order[p]);
    const size_t k = static_cast<size_t>(kernel_of[b]);
    const bool ring = model::ring_numbered(h.numbering) && !(k < s.cluster.size() && s.cluster[k]);
    picked.sm.push_back(ring ? placement_sm(s, tag, static_cast<int>(p)) : d.sm[b]);
    picked.start.push_back(d.start[b]);
  }
  return picked;
}

// The encoder's groups, and under gpc-ring one more that numbers the placements into `d`.
std::vector<z3::expr_vector> run_numbered(detail::Encoder& e, const SymbolicScenario& s, const Decisions& d,
                                          const std::vector<int>& order) {
  auto groups = e.run_grouped();
  if (e.numbered_by_ring()) {
    std::vector<int> first_of(s.blocks.size() + 1, 0), kernel_of;
    for (size_t k = 0; k < s.blocks.size(); ++k) {
      first_of[k + 1] = first_of[k] + s.blocks[k];
      kernel_of.insert(kernel_of.end(), static_cast<size_t>(s.blocks[k]), static_cast<int>(k));
    }
    std::vector<int> launch, first_label;
    for (int b : order) {
      const int k = kernel_of[static_cast<size_t>(b)];
      launch.push_back(k);
      first_label.push_back(first_of[static_cast<size_t>(k)]);
    }
    groups.push_back(e.ring_numbering(launch, first_label, d));
  }
  return groups;
}

}  // namespace

std::vector<z3::expr_vector> encode_grouped(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d,
                                            const std::string& tag, const std::vector<int>& sequence,
                                            SharedTerms* shared) {
  if (!has_releases(s)) return encode_grouped(s, h, d, tag, shared);
  check_encodable(h);
  if (model::is_fermi(h.selection))  // as the simulator refuses it
    throw Unsupported("release times: the gpc-priority encoding (seed 003) plans waves from time 0 and has no "
                      "launch instants yet, as the simulator");
  for (size_t k = 0; k < s.cluster.size(); ++k)
    if (s.cluster[k])
      throw Unsupported("release times with thread block clusters: the SMT engine's cluster rule (cluster_pick) "
                        "assumes each kernel's blocks are picked in a row; only the simulator models them");
  const std::vector<int> order = pick_order(s, h, sequence);
  Decisions picked = placements(s, h, d, tag, order);
  // The kernels keep their list order; the encoder reads each pick's kernel from pick_kernel.
  SymbolicScenario ps = s;
  ps.priority.resize(s.blocks.size());
  ps.tpcs.resize(s.blocks.size());
  ps.release.resize(s.blocks.size(), 0);
  ps.pick_kernel = sequence;
  detail::Encoder e(ps, h, picked, tag, shared);
  auto groups = run_numbered(e, s, d, order);
  for (const auto& x : s.domain) groups[0].push_back(x);
  return groups;
}

std::vector<z3::expr_vector> encode_grouped(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d,
                                            const std::string& tag, SharedTerms* shared) {
  if (has_releases(s)) {
    const auto sequences = kernel_sequences(s, h);
    if (sequences.size() != 1)
      throw Unsupported(fmt::format("release times: {} dispatch orders; encode() takes their disjunction, "
                                    "encode_grouped one at a time",
                                    sequences.size()));
    return encode_grouped(s, h, d, tag, sequences[0], shared);
  }
  check_encodable(h);
  // The encoder sees the blocks in dispatch order (pick_order): a permuted view of the same variables,
  // over the kernels in priority order (a permuted view of the scenario's kernels).
  const std::vector<int> order = pick_order(s, h);
  Decisions picked = placements(s, h, d, tag, order);
  const std::vector<int> korder = kernel_order(s, h);
  SymbolicScenario ps(s.ctx());
  ps.sort = s.sort;
  ps.device = s.device;
  ps.gpc_pointer = s.gpc_pointer;
  for (int kk : korder) {
    const size_t k = static_cast<size_t>(kk);
    ps.blocks.push_back(s.blocks[k]);
    ps.grid.push_back(k < s.grid.size() ? s.grid[k] : std::nullopt);
    ps.cluster.push_back(k < s.cluster.size() ? s.cluster[k] : std::nullopt);
    ps.warps.push_back(s.warps[k]);
    ps.regs.push_back(s.regs[k]);
    ps.smem.push_back(s.smem[k]);
    ps.duration.push_back(s.duration[k]);
    ps.local.push_back(s.local[k]);
    ps.priority.push_back(k < s.priority.size() ? s.priority[k] : std::nullopt);
    ps.tpcs.push_back(k < s.tpcs.size() ? s.tpcs[k] : std::vector<int>{});
  }
  if (model::is_fermi(h.selection)) {
    bool masked = false;
    for (size_t k = 0; k < ps.tpcs.size(); ++k)
      for (int sm = 0; sm < s.device.sms; ++sm) masked = masked || !model::sm_allowed(ps.tpcs[k], s.device, sm, h.partition);
    if (masked || !std::is_sorted(korder.begin(), korder.end()))
      throw Unsupported(fmt::format("the gpc-priority encoding (seed 003) has no priority order (priority '{}') or "
                                    "TPC partition (partition '{}') yet, as the simulator",
                                    model::to_string(h.priority), model::to_string(h.partition)));
  }
  detail::Encoder e(ps, h, picked, tag, shared);
  auto groups = run_numbered(e, s, d, order);
  for (const auto& x : s.domain) groups[0].push_back(x);
  return groups;
}

z3::expr_vector encode(const SymbolicScenario& s, const Hypothesis& h, const Decisions& d, const std::string& tag,
                       SharedTerms* shared) {
  z3::expr_vector out(s.ctx());
  if (has_releases(s)) {
    // One conjunction per dispatch order, its terms named apart; shared terms would be constrained only
    // inside one disjunct, so none are shared.
    const auto sequences = kernel_sequences(s, h);
    z3::expr_vector alternatives(s.ctx());
    for (size_t n = 0; n < sequences.size(); ++n) {
      z3::expr_vector all(s.ctx());
      for (const auto& g : encode_grouped(s, h, d, fmt::format("{}_o{}", tag, n), sequences[n], nullptr))
        for (const auto& x : g) all.push_back(x);
      alternatives.push_back(z3::mk_and(all));
    }
    out.push_back(z3::mk_or(alternatives));
    return out;
  }
  for (const auto& g : encode_grouped(s, h, d, tag, shared))
    for (const auto& x : g) out.push_back(x);
  return out;
}

}  // namespace tbcheck::smt
