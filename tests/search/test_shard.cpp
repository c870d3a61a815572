// Tests of search/shard.cpp: the i/N split of distinguish's pairs, the checks merge makes of its
// shards, and sharded-then-merged distinguish against one run through the CLI.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "helpers.hpp"
#include "scratch.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/search/shard.hpp"

using namespace tbcheck;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A shard folder of n hypotheses' pairs split N ways, with made-up rows (a case for even positions).
void fake_shard(const std::string& dir, search::ShardSpec s, size_t n_hyps, const search::DistinguishBounds& b) {
  fs::create_directories(dir);
  std::vector<model::Hypothesis> hs;
  for (size_t i = 0; i < n_hyps; ++i) hs.push_back(test::hyp(i % 2 ? "alg1" : "olmedo"));
  const auto pairs = search::all_pairs(hs.size());
  const auto pos = search::shard_pairs(pairs.size(), s);
  std::vector<model::json> rows;
  for (size_t k : pos) {
    model::json row = {{"h1", fmt::format("h{}", pairs[k].first)}, {"h2", fmt::format("h{}", pairs[k].second)},
                       {"outcome", k % 3 ? "separated" : "unknown"}, {"minimality", "proved"}};
    if (k % 2 == 0) row["case"] = {{"id", fmt::format("synth-p{}", k)}, {"kernels", model::json::array()}};
    rows.push_back(row);
  }
  model::write_file_atomic(dir + "/" + search::kShardFile,
                           search::shard_json(s, "test", model::builtin_device("rtx3090", "", ""), hs, b, pos, rows).dump(1));
}

}  // namespace

TEST_CASE("shard spec i/N: 1 <= i <= N, anything else names --shard", "[shard]") {
  auto s = search::parse_shard("3/8");
  CHECK(s.index == 3);
  CHECK(s.count == 8);
  for (const char* bad : {"0/4", "5/4", "3", "a/b", "1/0", "-1/4", "1/4/2", "", "/4", "1/"})
    CHECK(test::error_of([&] { search::parse_shard(bad); }).where() == "--shard");
}

TEST_CASE("the shards of N partition the pairs, each the same every time", "[shard]") {
  for (size_t n_pairs : {0u, 1u, 6u, 55u, 78u})
    for (int count : {1, 2, 4, 7, 100}) {
      std::multiset<size_t> seen;
      for (int i = 1; i <= count; ++i) {
        auto p = search::shard_pairs(n_pairs, {i, count});
        CHECK(p == search::shard_pairs(n_pairs, {i, count}));
        CHECK(p.size() <= n_pairs / static_cast<size_t>(count) + 1);  // balanced
        seen.insert(p.begin(), p.end());
      }
      REQUIRE(seen.size() == n_pairs);
      size_t k = 0;
      for (size_t x : seen) CHECK(x == k++);  // each pair exactly once
    }
  CHECK(search::all_pairs(4) == std::vector<std::pair<size_t, size_t>>{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}});
}

TEST_CASE("merge: rows in pair order, cases as distinguish writes them, foreign or missing parts refused", "[shard]") {
  test::ScratchDir d("shard");
  search::DistinguishBounds b;
  for (int i = 1; i <= 3; ++i) fake_shard(d / std::to_string(i), {i, 3}, 5, b);
  // Given in any order, the rows come back in pair order.
  auto m = search::merge_shards({d / "3", d / "1", d / "2"});
  REQUIRE(m.pairs.size() == 10);
  for (size_t k = 0; k < 10; ++k) CHECK(m.pairs[k]["h1"] == fmt::format("h{}", search::all_pairs(5)[k].first));
  REQUIRE(m.cases.size() == 5);
  CHECK(m.cases[1].first == "synth-p2.json");
  CHECK(m.cases[1].second == search::case_file_text(m.pairs[2]["case"]));
  CHECK(m.timing_sensitive == 4);  // positions 0, 3, 6, 9 are unknown
  CHECK(m.device == "rtx3090");

  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "2"}); }).reason().find("part 3/3 is missing") != std::string::npos);
  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "1", d / "2", d / "3"}); }).field() == "shard.index");
  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "nothing"}); }).reason().find("shard.json") != std::string::npos);
  search::DistinguishBounds other = b;
  other.pair_budget_ms = 1234;
  fake_shard(d / "x3", {3, 3}, 5, other);
  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "2", d / "x3"}); }).field() == "bounds");
  fake_shard(d / "y2", {2, 4}, 5, b);
  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "y2"}); }).field() == "shard.count");
  // A case id that would leave the output folder.
  auto j = model::read_json_file(d / ("1/" + std::string(search::kShardFile)));
  j["pairs"][0]["case"]["id"] = "../escape";
  model::write_file_atomic(d / ("1/" + std::string(search::kShardFile)), j.dump());
  CHECK(test::error_of([&] { search::merge_shards({d / "1", d / "2", d / "3"}); }).reason().find("plain file name") != std::string::npos);
}

TEST_CASE("distinguish --shard over 3 parts, merged, equals one run but for timing", "[shard][cli]") {
  test::ScratchDir d("shard");
  // Small bounds (each structure a few Z3 queries), limits far above what they need.
  const std::string opts =
      "distinguish --device rtx3090 -H round-robin,most-room,olmedo,alg1,alg1-natural-order --max-kernels 2 --max-blocks 2 "
      "--max-blocks-per-kernel 1 --timeout 30 --pair-budget 0 -j 1 ";
  fs::create_directories(d / "single");
  auto single = test::run_tbcheck(opts + "--json --out " + (d / "single") + " 2>/dev/null");
  REQUIRE(single.exit_code == 0);
  for (int i = 1; i <= 3; ++i) {
    fs::create_directories(d / std::to_string(i));
    auto r = test::run_tbcheck(opts + fmt::format("--shard {}/3 --out ", i) + (d / std::to_string(i)));
    REQUIRE(r.exit_code == 0);
  }
  fs::create_directories(d / "merged");
  auto merged = test::run_tbcheck("merge " + (d / "2") + " " + (d / "3") + " " + (d / "1") + " --json --out " + (d / "merged"));
  REQUIRE(merged.exit_code == 0);
  auto strip = [](model::json j) {
    for (auto& p : j["pairs"]) {
      p.erase("solver_seconds");
      p.erase("wall_seconds");
      if (p.contains("case")) p["case"].erase("solver_seconds");
    }
    return j;
  };
  const auto a = strip(model::parse_json_text(single.out, "single")), b = strip(model::parse_json_text(merged.out, "merged"));
  CHECK(a["pairs"].size() == 10);
  CHECK(a == b);
  // The case files: the same names, and the same text line for line but the timing line.
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (l.find("\"solver_seconds\":") == std::string::npos) out.push_back(l);
    return out;
  };
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(d / "single")) {
    ++files;
    const std::string other = d / ("merged/" + e.path().filename().string());
    REQUIRE(fs::exists(other));
    CHECK(lines(slurp(e.path().string())) == lines(slurp(other)));
  }
  CHECK(files > 0);
  CHECK(std::distance(fs::directory_iterator(d / "merged"), fs::directory_iterator{}) == static_cast<long>(files));
  // Without --out a shard has nowhere to leave shard.json.
  auto r = test::run_tbcheck(opts + "--shard 1/3");
  CHECK(r.exit_code == 2);
  CHECK(r.out.find("--shard") != std::string::npos);
}
