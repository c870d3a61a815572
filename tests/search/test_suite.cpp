// The greedy suite: chosen cases together separate every pair some case separates, each chosen
// case adds a pair, and a pair of identical hypotheses is reported as unseparated.
#include <catch2/catch.hpp>

#include <set>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/search/suite.hpp"

using namespace tbcheck;

TEST_CASE("suite over Table II separates every pair the cases separate", "[suite]") {
  auto cases = model::load_cases(test::source_path("corpus/paper/000-wang"));
  auto hs = model::resolve_hypotheses("all");
  auto r = search::greedy_suite(cases, hs);
  std::set<std::pair<size_t, size_t>> all, covered;
  for (const auto& c : cases)
    for (const auto& p : search::separated_pairs(c, hs)) all.insert(p);
  for (size_t i = 0; i < r.chosen.size(); ++i) {
    CHECK(!r.covers[i].empty());
    auto sep = search::separated_pairs(cases[r.chosen[i]], hs);
    for (const auto& p : r.covers[i]) {
      CHECK(std::find(sep.begin(), sep.end(), p) != sep.end());
      covered.insert(p);
    }
  }
  CHECK(covered == all);
  CHECK(r.separable_pairs == all.size());
  CHECK(r.chosen.size() < cases.size());
  CHECK(r.unseparated.size() + all.size() == hs.size() * (hs.size() - 1) / 2);
}

TEST_CASE("a renamed copy is never separated by any case", "[suite]") {
  auto cases = model::load_cases(test::source_path("corpus/paper/000-wang"));
  model::Hypothesis copy = test::hyp("alg1");
  copy.name = "alg1-copy";
  auto r = search::greedy_suite(cases, {test::hyp("alg1"), copy, test::hyp("alg1-no-skip")});
  REQUIRE(r.unseparated.size() == 1);
  CHECK(r.unseparated[0] == std::pair<size_t, size_t>{0, 1});
  CHECK(r.separable_pairs == 2);
}
