// The random generator of seed 000 Section III-A: reproducible across counts and platforms, kernels
// within the device limits, filled until the device cannot hold the last kernel, local memory cautioned.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include "helpers.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/search/random.hpp"

using namespace tbcheck;

TEST_CASE("Rng draws are fixed by the seed, unbiased in range, and not the library's distribution", "[random]") {
  search::Rng a(42), b(42), c(43);
  std::vector<int64_t> xa, xb, xc;
  for (int i = 0; i < 200; ++i) {
    xa.push_back(a.uniform(1, 6));
    xb.push_back(b.uniform(1, 6));
    xc.push_back(c.uniform(1, 6));
  }
  CHECK(xa == xb);
  CHECK(xa != xc);
  std::map<int64_t, int> seen;
  for (auto x : xa) {
    CHECK(x >= 1);
    CHECK(x <= 6);
    seen[x]++;
  }
  CHECK(seen.size() == 6);
  // Golden values: the mapping from std::mt19937_64 (whose sequence the standard fixes) is ours, so
  // these hold on every standard library.
  search::Rng g(7);
  std::vector<int64_t> first;
  for (int i = 0; i < 8; ++i) first.push_back(g.uniform(0, 999));
  std::mt19937_64 ref(7);
  std::vector<int64_t> expect;
  for (int i = 0; i < 8; ++i) {
    uint64_t x = ref();
    while (x < (0 - uint64_t{1000}) % 1000) x = ref();
    expect.push_back(static_cast<int64_t>(x % 1000));
  }
  CHECK(first == expect);
  search::Rng one(1);
  CHECK(one.uniform(5, 5) == 5);
}

TEST_CASE("random cases are reproducible and do not depend on how many are asked for", "[random]") {
  const auto& d = model::builtin_device("rtx3090", "test", "device");
  search::RandomOptions o;
  auto a = search::random_case(d, 7, 3, o), b = search::random_case(d, 7, 3, o);
  CHECK(a.c.to_json() == b.c.to_json());
  CHECK(search::random_case(d, 8, 3, o).c.to_json() != a.c.to_json());
  CHECK(search::random_case(d, 7, 4, o).c.to_json() != a.c.to_json());
  CHECK(search::random_case_id(d, 7, 3, 10) == "random-rtx3090-s7-0003");
  CHECK(search::random_case_id(d, 7, 3, 1000) == "random-rtx3090-s7-0003");
  CHECK(search::random_case_id(d, 7, 12345, 20000) == "random-rtx3090-s7-12345");
}

TEST_CASE("random kernels respect the device, the probe's registers, the local-memory caution and the fill rule",
          "[random]") {
  for (const char* name : {"rtx3090", "v100", "rtx2080ti"}) {
    const auto& d = model::builtin_device(name, "test", "device");
    auto regs = search::realizable_regs(d);
    std::set<int> regs_set(regs.begin(), regs.end());
    search::RandomOptions o;
    const auto& alg1 = test::hyp("alg1");
    int multi = 0;
    for (int i = 0; i < 40; ++i) {
      auto rc = search::random_case(d, 11, i, o);
      const auto& ks = rc.c.scenario.kernels;
      REQUIRE(!ks.empty());
      CHECK(rc.end == search::FillEnd::DeviceFull);
      multi += ks.size() > 1;
      // Round-trips through the loader, which checks every kernel against the device.
      auto back = model::case_from_json(rc.c.to_json(), "test");
      CHECK(back.scenario.kernels.size() == ks.size());
      for (const auto& k : ks) {
        CHECK(k.blocks >= 1);
        CHECK(k.blocks <= d.sms);
        CHECK(k.threads >= 1);
        CHECK(k.threads <= d.max_threads_per_block);
        CHECK(regs_set.count(k.regs) == 1);
        CHECK(k.smem % 128 == 0);
        CHECK(k.smem <= d.max_smem_per_block);
        CHECK(k.duration >= 1);
        CHECK(k.duration <= o.max_duration);
        CHECK(k.local <= ks[0].local);  // seed 000 III-B: the first kernel's local memory is not below the later ones'
        for (const auto& h : model::builtin_hypotheses())  // fermi and hopper need a GPC map, which none of these has
          if (!model::needs_gpc_map(h)) CHECK(model::check_feasibility({d, true, {k}}, h).runs());
      }
      // Every kernel but the last is resident at once; the last is the first that is not.
      model::Scenario forever = rc.c.scenario;
      for (auto& k : forever.kernels) k.duration = 1'000'000'000;
      auto sch = model::simulate(forever, alg1);
      for (size_t k = 0; k + 1 < ks.size(); ++k)
        for (const auto& b : sch.kernels[k].blocks) CHECK(b.start == 0);
      bool waits = false;
      for (const auto& b : sch.kernels.back().blocks) waits = waits || b.start > 0;
      CHECK(waits);
    }
    CHECK(multi > 10);  // the fill rule does append kernels, not only stop at the first
  }
}

TEST_CASE("tbcheck random writes loadable cases atomically and never over existing files without --force",
          "[random][cli]") {
  const std::string dir = (std::filesystem::temp_directory_path() / "tbcheck-test-random").string();
  std::filesystem::remove_all(dir);
  auto r = test::run_tbcheck("random --device v100 --count 5 --seed 3 --out '" + dir + "'");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  auto cases = model::load_cases(dir);
  REQUIRE(cases.size() == 5);
  CHECK(cases[0].id == "random-v100-s3-0000");
  CHECK(!cases[0].observation);
  const auto& d = model::builtin_device("v100", "test", "device");
  CHECK(cases[4].scenario.to_json() == search::random_case(d, 3, 4, {}).c.scenario.to_json());
  auto again = test::run_tbcheck("random --device v100 --count 5 --seed 3 --out '" + dir + "'");
  CHECK(again.exit_code == 2);
  CHECK(again.out.find("exists") != std::string::npos);
  CHECK(test::run_tbcheck("random --device v100 --count 5 --seed 3 --force --out '" + dir + "'").exit_code == 0);
  CHECK(test::run_tbcheck("random --device nosuch --count 1 --out '" + dir + "'").exit_code == 2);
  std::filesystem::remove_all(dir);
}
