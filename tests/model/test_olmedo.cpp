// Seed 002 (Olmedo et al.) in the corpus: the Table II / III grids generated from Equation 2, the
// load-balancing and Figure 5 cases, and a proof that Equations 2-3 equal most-room by warps.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "helpers.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

const char* const kGridFiles[] = {"corpus/paper/002-olmedo/table2-volta-grid.json",
                                  "corpus/paper/002-olmedo/table3-turing-grid.json"};
const char* const kSingleFiles[] = {"six-sms-occupied-2warp", "six-sms-occupied-4warp", "figure5-4-4warps",
                                    "figure5-4-5warps"};

// Equation 3 of seed 002 as printed (Equation 2 is z = 0); operands are positive, so C++ integer
// division is the floor. Written independently of scripts/gen_olmedo_grids.py.
bool eq3_same_sm(int mw, int z, int x, int y) { return (mw - z) - x >= (((mw - z) - y) / y + 1) * y; }
bool eq2_same_sm(int mw, int x, int y) { return eq3_same_sm(mw, 0, x, y); }

std::vector<Case> grid(const char* rel) { return load_cases(test::source_path(rel)); }

Case single(const std::string& stem) {
  auto cs = load_cases(test::source_path("corpus/paper/002-olmedo/" + stem + ".json"));
  REQUIRE(cs.size() == 1);
  return cs[0];
}

// A kernel of `blocks` blocks of `warps` full warps, 32 registers, no shared memory, its own stream.
Kernel kernel(std::string name, int blocks, int warps, int duration) {
  Kernel k;
  k.name = std::move(name);
  k.blocks = blocks;
  k.threads = 32 * warps;
  k.duration = duration;
  return k;
}

const Fact* block_fact(const Case& c, const std::string& kernel, int block) {
  for (const auto& f : c.observation->facts)
    if (f.kind == Fact::Kind::BlockOnSm && f.kernel == kernel && f.block == block) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("every Table II / III grid case passes under olmedo and alg1", "[olmedo]") {
  for (const char* file : kGridFiles) {
    std::vector<Case> cs = grid(file);
    REQUIRE(cs.size() == 32 * 32);
    for (const char* h : {"olmedo", "alg1"}) {
      int failed = 0;
      for (const auto& c : cs) {
        CaseResult r = evaluate(c, test::hyp(h));
        if (r.at(Level::Exact) != Verdict::Pass) {
          ++failed;
          INFO(c.id << " under " << h << ": " << r.first_failure(Level::Exact));
          CHECK(r.at(Level::Exact) == Verdict::Pass);
        }
      }
      INFO(file << " under " << h);
      CHECK(failed == 0);
    }
  }
}

TEST_CASE("the grid files are Equation 2 recomputed for every (x, y)", "[olmedo]") {
  const std::map<std::string, std::pair<std::string, int>> expected = {
      {kGridFiles[0], {"xavier", 64}}, {kGridFiles[1], {"rtx2080ti", 32}}};
  for (const char* file : kGridFiles) {
    INFO(file);
    auto [device, mw] = expected.at(file);
    std::set<std::pair<int, int>> seen;
    int same_count = 0;
    for (const auto& c : grid(file)) {
      INFO(c.id);
      const Scenario& s = c.scenario;
      REQUIRE(s.device.name == device);
      REQUIRE(s.device.max_warps_per_sm == mw);
      REQUIRE(s.kernels.size() == 2);
      const Kernel &k1 = s.kernels[0], &k2 = s.kernels[1];
      REQUIRE(k1.blocks == 1);
      REQUIRE(k2.blocks == 1);
      REQUIRE(k1.threads % 32 == 0);
      REQUIRE(k2.threads % 32 == 0);
      REQUIRE(k1.stream != k2.stream);
      REQUIRE(k1.duration > k2.duration);  // k1 is still resident when k2 is placed
      const int x = k1.warps(), y = k2.warps();
      REQUIRE(seen.insert({x, y}).second);
      const bool same = eq2_same_sm(mw, x, y);
      same_count += same;
      const Fact* f1 = block_fact(c, k1.name, 0);
      const Fact* f2 = block_fact(c, k2.name, 0);
      REQUIRE(f1);
      REQUIRE(f2);
      CHECK(f1->sm == 0);
      CHECK(f2->sm == (same ? 0 : 2));
      CHECK(c.id == fmt::format("olmedo-t{}-x{}-y{}", mw == 64 ? 2 : 3, x, y));
      CHECK(c.expect.at("olmedo") == Expect::Pass);
      CHECK(c.expect.at("alg1") == Expect::Pass);
      // Two blocks that cannot fit one SM together never share it under Equation 2.
      if (x + y > mw) CHECK_FALSE(same);
    }
    CHECK(seen.size() == 32 * 32);
    // Same-SM cells lie strictly above the diagonal (x < y), as the paper observes.
    for (int x = 1; x <= 32; ++x)
      for (int y = 1; y <= x; ++y) CHECK_FALSE(eq2_same_sm(mw, x, y));
    CHECK(same_count > 0);
  }
  // The paper's worked example (Figure 5, right): 64 - 4 >= 60.
  CHECK(eq2_same_sm(64, 4, 5));
  CHECK_FALSE(eq2_same_sm(64, 4, 4));
}

// Equations 2 and 3 are most-room by warps with even-first ties.
//
// Let a = mw - z be the free warps of an SM holding z warps. For integers a and y > 0,
// floor((a - y)/y) = floor(a/y) - 1, so the right-hand side of Equation 3 is floor(a/y) * y, and
// for an integer n, n >= floor(a/y) * y  <=>  floor(n/y) >= floor(a/y). Equation 3 therefore reads
//
//     floor((mw - z - x) / y) >= floor((mw - z) / y),
//
// i.e. the SM holding z + x warps can still take as many y-warp blocks as an SM holding z warps.
// That is exactly the most-room choice when every SM holds z warps, x went to SM 0 (first in the
// order) and "strictly greater replaces": SM 0 keeps the second block iff its capacity is not below
// any other SM's, and otherwise the next SM in even-first order with the best capacity (SM 2) wins.
// (Equation 2 is z = 0.) Two side conditions make the equivalence exact:
//  - y <= mw - z: with y > mw - z no SM can take the block now and Equation 3 degenerates
//    (its right-hand side is 0, so it always "holds");
//  - the block-slot limit B must not bind: SM 0 holds one block more than the others, so when
//    Equation 3 holds SM 0 wins only if floor((mw - z)/y) <= B - p - 1 (p pre-occupying blocks per
//    SM); when it fails the block-slot limit only widens SM 0's deficit. The loop checks that the
//    limit never binds in the tested domain (it would only for y <= 2 with mw - z >= 62).
//
// The scenario pre-occupies every SM with z warps (Equation 3's "mw - z" is the same for every SM
// it compares; with only SM 0 pre-occupied, x would not land on SM 0 at all), then launches x,
// then y, each kernel in its own stream, all resident together.
TEST_CASE("Eq. 2 and 3 are exactly most-room by warps with even-first ties", "[olmedo]") {
  const Hypothesis& olmedo = test::hyp("olmedo");
  for (int mw : {32, 64}) {
    Scenario base = test::scenario(fmt::format(
        R"({{"device": {{"name": "mini-mw{0}", "cc": "7.2", "sms": 4, "sms_per_tpc": 2, "pbs_per_sm": 4,
             "max_blocks_per_sm": 32, "max_warps_per_sm": {0}, "max_threads_per_block": 1024,
             "regs_per_sm": 65536, "reg_alloc_unit": 256, "max_regs_per_thread": 255,
             "smem_configs_kb": [0, 8, 16, 32, 64, 96], "smem_alloc_unit": 128,
             "smem_reserved_per_block": 0, "max_smem_per_block": 98304}},
            "kernels": [{{"name": "k", "blocks": 1, "threads": 32, "regs": 32, "smem": 0, "duration": 1}}]}})",
        mw));
    const Device& d = base.device;
    const int B = d.max_blocks_per_sm;
    int checked = 0, same_count = 0;
    for (int z = 0; z < mw; z += 8) {
      // z warps per SM as `pieces` blocks of at most 32 warps each.
      const int pieces = (z + 31) / 32;
      REQUIRE((pieces == 0 || z % pieces == 0));
      for (int x = 1; x <= 32 && z + x <= mw; ++x) {
        for (int y = 1; y <= 32 && y <= mw - z; ++y) {
          INFO("mw=" << mw << " z=" << z << " x=" << x << " y=" << y);
          Scenario s;
          s.device = d;
          s.device_builtin = false;
          if (pieces > 0) s.kernels.push_back(kernel("k0", d.sms * pieces, z / pieces, 3));
          s.kernels.push_back(kernel("kx", 1, x, 2));
          s.kernels.push_back(kernel("ky", 1, y, 1));
          Schedule sch = simulate(s, olmedo);
          const auto& ks = sch.kernels;
          // Premise: every SM holds z warps, x sits on SM 0, and everything starts at time 0.
          if (pieces > 0) {
            std::vector<int> per_sm(static_cast<size_t>(d.sms), 0);
            for (const auto& b : ks[0].blocks) {
              REQUIRE(b.start == 0);
              ++per_sm[static_cast<size_t>(b.sm)];
            }
            for (int n : per_sm) REQUIRE(n == pieces);
          }
          const BlockPlacement& bx = ks[ks.size() - 2].blocks.at(0);
          const BlockPlacement& by = ks[ks.size() - 1].blocks.at(0);
          REQUIRE(bx.sm == 0);
          REQUIRE(bx.start == 0);
          REQUIRE(by.start == 0);

          const bool eq3 = eq3_same_sm(mw, z, x, y);
          if (eq3) CHECK((mw - z) / y <= B - pieces - 1);  // the block-slot limit does not bind
          CHECK((by.sm == 0) == eq3);
          if (!eq3) CHECK(by.sm == 2);
          ++checked;
          same_count += eq3;
        }
      }
    }
    INFO("mw=" << mw);
    CHECK(checked > 1000);
    CHECK(same_count > 0);
  }
  // "A Turing SM with 0 scheduled warps (mw = 32, z = 0) behaves in the same way as a
  // Maxwell/Pascal/Volta SM with 32 warps already scheduled (mw = 64, z = 32)."
  for (int x = 1; x <= 32; ++x)
    for (int y = 1; y <= 32; ++y) CHECK(eq3_same_sm(32, 0, x, y) == eq3_same_sm(64, 32, x, y));
}

TEST_CASE("the seed-002 load-balancing and Figure 5 cases pass under olmedo and alg1", "[olmedo]") {
  for (const char* stem : kSingleFiles) {
    Case c = single(stem);
    for (const char* h : {"olmedo", "alg1"}) {
      CaseResult r = evaluate(c, test::hyp(h));
      INFO(stem << " under " << h << ": " << r.first_failure(Level::Exact));
      CHECK(r.at(Level::Exact) == Verdict::Pass);
    }
  }
}

TEST_CASE("round-robin fails the seed-002 cases on the second kernel, where the paper says so", "[olmedo]") {
  // Fact indices of the second kernel's placement facts (not the first kernel's even-first premise).
  const std::pair<const char*, std::vector<size_t>> cases[] = {
      {"six-sms-occupied-2warp", {1}}, {"six-sms-occupied-4warp", {1}}, {"figure5-4-5warps", {1, 2, 3}}};
  for (const auto& [stem, facts] : cases) {
    Case c = single(stem);
    REQUIRE(c.expect.at("round-robin") == Expect::Fail);
    CaseResult r = evaluate(c, test::hyp("round-robin"));
    INFO(stem);
    CHECK(r.at(Level::Exact) == Verdict::Fail);
    for (size_t i : facts) {
      INFO("fact " << i << ": " << c.observation->facts.at(i).describe());
      CHECK(r.fact_checks.at(i).verdict == Verdict::Fail);
    }
  }
  // Figure 5 (left) is called round-robin by the paper (with even IDs first); no expectation is set.
  CHECK(single("figure5-4-4warps").expect.count("round-robin") == 0);
}

TEST_CASE("every expectation recorded in corpus/paper/002-olmedo holds", "[olmedo]") {
  int n = 0;
  for (const auto& c : load_cases(test::source_path("corpus/paper/002-olmedo"))) {
    for (const auto& [h, e] : c.expect) {
      Verdict v = evaluate(c, test::hyp(h)).at(Level::Exact);
      INFO(c.id << " under " << h);
      CHECK(v == (e == Expect::Pass ? Verdict::Pass : Verdict::Fail));
      ++n;
    }
  }
  CHECK(n >= 2 * 2 * 32 * 32 + 8);
}
