// Z3 encoding of the dispatcher and of every mechanism option, assembled from a hypothesis' JSON
// options exactly as the simulator is, over a scenario whose kernel parameters may be symbolic.
#pragma once
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

// The layering guard: targets that must not see Z3 (the CLI) define TBCHECK_NO_Z3, so an include chain
// that brings Z3 to them stops the build here. Search's public headers include only smt/bounds.hpp.
#ifdef TBCHECK_NO_Z3
#error "Z3's headers reached a target that must not see them (TBCHECK_NO_Z3): include tbcheck/smt/bounds.hpp, not smt's Z3 headers"
#endif
#include <z3++.h>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"
#include "tbcheck/smt/bounds.hpp"

namespace tbcheck::smt {

// A mechanism option the SMT engine cannot encode (named, with the reason): reported as
// "unsupported", never silently approximated.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The solver every tbcheck query runs on: Z3's default solver with a wall-clock limit and, by default,
// the legacy arithmetic solver (smt.arith.solver=2). The encodings are linear integer constraints full
// of if-then-else; on them the legacy solver answered UNSAT 1.5-3.5x faster than Z3 4.8's default
// (arith.solver=6) and decided a query the default left unknown at 120 s (bench_distinguish's solver
// comparison, bench/RESULTS.md).
inline constexpr unsigned kArithSolver = 2;
// `resource_limit`, when not 0, is Z3's rlimit: a bound on the solver's own work counter, so a query that
// hits it says unknown on any machine at any load (a wall-clock timeout depends on both).
z3::solver make_solver(z3::context& c, unsigned timeout_ms, unsigned arith_solver = kArithSolver,
                       unsigned resource_limit = 0);

// Kernel parameters as Z3 terms: constants for a concrete scenario, variables for synthesis.
// Every kernel has its own stream, so blocks are dispatched kernel after kernel, each kernel's in list
// order (under gpc-priority in its pick_block order, seed 003 Section 4.2: see pick_order), unless a kernel
// released after 0 interleaves with them (kernel_sequences).
struct SymbolicScenario {
  model::Device device;
  Sort sort = Sort::Int;
  std::vector<int> blocks;                                  // per kernel (the fixed structure)
  std::vector<std::optional<std::pair<int, int>>> grid;     // per kernel: a 2-D grid (x, y), or none (1-D)
  std::vector<std::optional<std::array<int, 3>>> cluster;   // per kernel: thread block cluster dims, or none
  std::vector<z3::expr> warps, regs, smem, duration, local;  // per kernel; smem in bytes
  // The controls per kernel, concrete (a synthesis structure enumerates them): stream priority,
  // TPC mask (empty: all), release time (the launch instant; none in synthesis structures). With every
  // kernel released at 0, strict priorities are a stable reorder; later releases interleave kernels.
  std::vector<std::optional<int>> priority;
  std::vector<std::vector<int>> tpcs;
  std::vector<int64_t> release;
  // The kernel of each pick when kernels interleave (release times); empty: kernels one after another.
  std::vector<int> pick_kernel;
  // The launch-to-launch state numbering gpc-ring starts from (model::Scenario::gpc_pointer); 0 in synthesis.
  int gpc_pointer = 0;
  z3::expr_vector domain;                                   // constraints on the parameters

  explicit SymbolicScenario(z3::context& c) : domain(c) {}
  z3::context& ctx() const { return domain.ctx(); }
  int total_blocks() const;
  int kernel_of_block(int i) const;

  static SymbolicScenario make_symbolic(z3::context& c, const model::Device& d, const std::vector<int>& blocks,
                                        const ParamBounds& b, const std::string& prefix = "p", Sort sort = Sort::Int);
  // The scenario's parameters as constants. Kernels sharing a stream are Unsupported.
  static SymbolicScenario make_fixed(z3::context& c, const model::Scenario& s, Sort sort = Sort::Int);
  z3::expr num(int64_t v) const;                 // a constant of the scenario's sort
  z3::expr var(const std::string& name) const;   // a variable of the scenario's sort
  // A concrete scenario from a model (threads = 32 x warps, regs and smem as realised).
  model::Scenario decode(const z3::model& m) const;
};

// The schedule as decision variables: per block in list order, its SM and start instant.
struct Decisions {
  std::vector<z3::expr> sm, start;
  static Decisions fresh(z3::context& c, int blocks, const std::string& tag, Sort sort = Sort::Int);
};

// Terms shared between the encodings of several hypotheses over one scenario: every defined
// intermediate term is keyed by its (hash-consed) Z3 AST, so two hypotheses that compute the same
// term from the same inputs get the same variable, and the solver need not prove the two copies
// equal by arithmetic (what made UNSAT answers for near-identical hypotheses slow).
struct SharedTerms {
  std::unordered_map<unsigned, z3::expr> by_ast;
};

// The block (global index in list order) of each dispatch, in dispatch order: list order, kernels in
// the priority order of h (model::kernels_by_priority; for a scenario without release times), except that
// under gpc-priority a kernel's blocks are picked in fermi_block_order of its grid, and under issue device a
// kernel's placements are labelled by Hypothesis::hand_out_order.
std::vector<int> pick_order(const SymbolicScenario& s, const model::Hypothesis& h);

// Release times: the kernel of every dispatch, in dispatch order, for each order the
// dispatcher can take. One sequence (kernels_by_priority, each kernel's blocks in a row) when no kernel is
// released after 0; otherwise every interleaving in which each pick is the head kernel (best rank among
// the launched kernels with blocks left) for some choice of which picks happen before which release
// instant. The schedule decides which one holds: each order's encoding states its head conditions.
std::vector<std::vector<int>> kernel_sequences(const SymbolicScenario& s, const model::Hypothesis& h);

// pick_order for one kernel sequence of kernel_sequences (the p-th pick of kernel k is its p-th block).
std::vector<int> pick_order(const SymbolicScenario& s, const model::Hypothesis& h, const std::vector<int>& sequence);

// Constraints that hold exactly when `d` is the schedule hypothesis `h` gives the scenario
// (realisable kernels included: each kernel fits an empty SM under h). With several kernel sequences, a
// disjunction of one conjunction per sequence (its terms tagged apart, SharedTerms unused).
z3::expr_vector encode(const SymbolicScenario& s, const model::Hypothesis& h, const Decisions& d, const std::string& tag,
                       SharedTerms* shared = nullptr);

// The same constraints grouped: [0] kernel-level terms and parameter domains, [p + 1] the decision of
// block pick_order(s, h)[p] given the earlier picks (for incremental solving). Under numbering gpc-ring a block's
// index is known only once its batch is placed: [p + 1] decides placement p (its SM is placement_sm(s, tag, p), its
// start block pick_order(s, h)[p]'s, the same within a batch), and one last group numbers the placements into `d`.
std::vector<z3::expr_vector> encode_grouped(const SymbolicScenario& s, const model::Hypothesis& h, const Decisions& d,
                                            const std::string& tag, SharedTerms* shared = nullptr);
// The same for one kernel sequence of kernel_sequences: [p + 1] decides block pick_order(s, h, sequence)[p].
std::vector<z3::expr_vector> encode_grouped(const SymbolicScenario& s, const model::Hypothesis& h, const Decisions& d,
                                            const std::string& tag, const std::vector<int>& sequence,
                                            SharedTerms* shared = nullptr);

// Numbering gpc-ring: the SM variable of the encoder's p-th placement (encode_grouped).
z3::expr placement_sm(const SymbolicScenario& s, const std::string& tag, int p);

// Throws Unsupported when some option of h has no encoding (today none has not). encode() also throws
// Unsupported for gpc-priority on a device without a GPC map.
void check_encodable(const model::Hypothesis& h);

model::Schedule decode_schedule(const z3::model& m, const SymbolicScenario& s, const Decisions& d,
                                const std::string& hypothesis, const std::vector<std::string>& kernel_names);

// The probe kernel's register variants (seed 000 Section III-B): 24, 32, ..., 248, 255.
const std::vector<int>& realizable_regs();

}  // namespace tbcheck::smt
