// `tbcheck learn --rules`: the rule search as a user runs it (cli/cmd_learn.cpp, cmd_learn_replay.cpp): a planted
// rule found and written as a hypothesis file that check and validate take; the flags refused with exit 2.
#include <catch2/catch.hpp>

#include <filesystem>

#include "helpers.hpp"

using namespace tbcheck;

TEST_CASE("learn finds a planted rule beyond its list and writes it as a file check and validate take", "[cli][learn][rules]") {
  test::TempDir tmp("learn-rules");
  const std::string out = (tmp.path / "found").string();
  const std::string args = "learn --device rtx3090 --oracle sim:" + test::source_path("docs/examples/rule-fewest-held.json") +
                           " --corpus " + test::source_path("corpus/paper") +
                           " --hypotheses alg1,most-room,alg1-paired --rules always --out " + out;
  auto r = test::run_tbcheck(args);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("none-survives") != std::string::npos);  // the list first: none fits
  CHECK(r.out.find("rule search: enumeration with pruning") != std::string::npos);
  CHECK(r.out.find("scope: rules of up to 2 key(s)") != std::string::npos);
  CHECK(r.out.find("identified: alg1.held-min.room-max") != std::string::npos);
  const std::string file = out + "/alg1.held-min.room-max.json";
  REQUIRE(std::filesystem::exists(file));
  auto v = test::run_tbcheck("validate " + test::source_path("corpus/paper/000-wang") + " -H " + file);
  INFO(v.out);
  CHECK((v.exit_code == 0 || v.exit_code == 1));  // judged, not refused
  CHECK(v.out.find("alg1.held-min.room-max") != std::string::npos);
  auto c = test::run_tbcheck("check " + file + " --corpus " + test::source_path("corpus/paper") + " --synthesize none");
  INFO(c.out);
  CHECK(c.exit_code != 2);
  CHECK(c.out.find("rule held:min room:max") != std::string::npos);

  // --json carries the search under rule_search.
  auto j = test::run_tbcheck(args + " --json --quiet");  // no progress lines in the JSON
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("outcome") == "none-survives");
  CHECK(doc.at("rule_search").at("learned").at("outcome") == "identified");
  CHECK(doc.at("rule_search").at("consistent").get<int>() >= 1);
}

TEST_CASE("learn --rules off leaves rules out of confirmation, and bad rule flags exit 2 naming the flag", "[cli][learn][rules]") {
  auto off = test::run_tbcheck("learn --device rtx3090 --oracle sim:alg1 --corpus " + test::source_path("corpus/paper") +
                               " --hypotheses alg1,most-room --rules off --no-synthesis --json");
  REQUIRE(off.exit_code <= 1);
  CHECK(nlohmann::json::parse(off.out).at("rule_search").is_null());
  for (const char* bad : {"--rules sometimes", "--rule-keys 0", "--rule-keys 5", "--rule-bases 0", "--rule-keys 1.5"}) {
    auto r = test::run_tbcheck(std::string("learn --device rtx3090 --oracle sim:alg1 ") + bad);
    INFO(bad << ": " << r.out);
    CHECK(r.exit_code == 2);
    CHECK(r.out.find(std::string(bad).substr(0, std::string(bad).find(' '))) != std::string::npos);
  }
}
