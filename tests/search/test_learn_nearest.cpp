// Tests of search/learn_nearest.cpp: when none fits, candidates are ranked by the observed cases they fail, then
// by the blocks they misplace, with the first failing case and block named.
#include <catch2/catch.hpp>

#include "helpers.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/search/learn_nearest.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;
using tbcheck::test::source_path;

TEST_CASE("the nearest candidates fail the fewest observed cases, then misplace the fewest blocks", "[learn][nearest]") {
  auto cases = model::load_cases(source_path("corpus/paper/000-wang"));
  REQUIRE(cases.size() >= 3);
  cases.resize(3);
  const model::Hypothesis truth = hyp("alg1");
  std::vector<model::Observation> obs;
  std::vector<std::string> ids;
  for (const auto& c : cases) {
    obs.push_back(oracle::observation_of(model::simulate(c.scenario, truth), model::ObservationKind::Synthetic));
    ids.push_back(c.id);
  }
  std::vector<search::SeenCase> seen;
  for (size_t i = 0; i < cases.size(); ++i) seen.push_back({&cases[i].scenario, &obs[i]});
  const std::vector<model::Hypothesis> pool = {hyp("round-robin"), truth};
  auto near = search::nearest_misses(pool, seen, ids, 1);
  REQUIRE(near.size() == 1);  // the nearest of two
  CHECK(near[0].name == "alg1");
  CHECK(near[0].cases_refuted == 0);
  CHECK(near[0].first_case.empty());
  auto both = search::nearest_misses(pool, seen, ids, 2);
  REQUIRE(both.size() == 2);
  CHECK(both[1].name == "round-robin");
  CHECK((both[1].cases_refuted > 0 && both[1].blocks_misplaced > 0));
  CHECK(!both[1].first_case.empty());
  CHECK(both[1].where.find("predicted SM") != std::string::npos);
  // Ranked: no candidate after another fails fewer cases, or as many with fewer blocks misplaced.
  auto all = search::nearest_misses({hyp("round-robin"), hyp("most-room"), hyp("alg1-no-skip"), truth}, seen, ids, 10);
  REQUIRE(all.size() == 4);
  for (size_t i = 1; i < all.size(); ++i)
    CHECK((all[i - 1].cases_refuted < all[i].cases_refuted ||
           (all[i - 1].cases_refuted == all[i].cases_refuted && all[i - 1].blocks_misplaced <= all[i].blocks_misplaced)));
}
