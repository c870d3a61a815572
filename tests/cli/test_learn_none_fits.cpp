// When no candidate fits, learn names what comes close (issue 44): in oracle mode (a simulated device none of
// the candidates is) and in replay mode (H200 recordings that carry a measured device), text and --json.
#include <catch2/catch.hpp>

#include <regex>

#include "helpers.hpp"

using namespace tbcheck;

TEST_CASE("learn with a simulated oracle that no candidate is names the nearest and their first wrong block", "[cli][learn]") {
  const std::string args =
      "learn --device rtx3090 --hypotheses round-robin,most-room --oracle sim:alg1 --corpus corpus/paper --no-synthesis";
  auto r = test::run_tbcheck(args);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("nearest (fewest observed cases refuted") != std::string::npos);
  // "  round-robin: 1 case(s), 574 block(s); first fails <case> (kernel k1 block 1: predicted SM a at t, observed SM b ...".
  CHECK(std::regex_search(r.out, std::regex(R"(round-robin: \d+ case\(s\), \d+ block\(s\); first fails)")));
  CHECK(std::regex_search(r.out, std::regex(R"(kernel \w+ block \d+:\s+predicted SM \d+ at \d+,\s+observed SM \d+)")));

  auto j = test::run_tbcheck(args + " --json");
  REQUIRE(j.exit_code == 1);
  const auto doc = nlohmann::json::parse(j.out);
  REQUIRE(doc.at("nearest").size() == 2);
  CHECK(doc.at("nearest")[0].at("where").get<std::string>().find("predicted SM") != std::string::npos);
}

TEST_CASE("learn from recordings none fits: nearest groups, first wrong block, and the device the recordings carry",
          "[cli][learn]") {
  // The run3 recordings were made on the measured H200 (docs/results/h200/h200-measured.json), not the built-in one.
  const std::string args =
      "learn --device h200 --oracle replay:corpus/hw/h200/2026-11-26-run3 --hypotheses round-robin,most-room,alg1";
  auto r = test::run_tbcheck(args);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("no candidate fits every recording of h200") != std::string::npos);
  CHECK(r.out.find("nearest (fewest recordings refuted") != std::string::npos);
  CHECK(std::regex_search(r.out, std::regex(R"(most-room: \d+ of 89 recording\(s\) refuted)")));
  CHECK(std::regex_search(r.out, std::regex(R"(block \d+:\s+predicted SM \d+,\s+observed SM \d+)")));
  CHECK(r.out.find("carry a device that differs from the one given") != std::string::npos);
  CHECK(r.out.find("try --device docs/results/h200/h200-measured.json") != std::string::npos);

  auto j = test::run_tbcheck(args + " --json");
  REQUIRE(j.exit_code == 1);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK(doc.at("consistent").empty());  // the fields learn printed before stay
  REQUIRE(doc.at("nearest").size() == 3);
  int last = -1;
  for (const auto& n : doc.at("nearest")) {  // nearest first
    CHECK(n.at("recordings_refuted").get<int>() >= last);
    last = n.at("recordings_refuted").get<int>();
    CHECK(!n.at("first_case").get<std::string>().empty());
  }
  CHECK(doc.at("device_differs").at("recordings") == 89);
  CHECK(doc.at("device_differs").at("device_file") == "docs/results/h200/h200-measured.json");
  const auto fields = doc.at("device_differs").at("fields").get<std::vector<std::string>>();
  CHECK(std::find(fields.begin(), fields.end(), "smid_of_sm") != fields.end());

  // Given the device the recordings carry, the note goes away.
  auto m = test::run_tbcheck("learn --device docs/results/h200/h200-measured.json --oracle replay:corpus/hw/h200/2026-11-26-run3 "
                             "--hypotheses round-robin --json");
  const auto md = nlohmann::json::parse(m.out);
  CHECK(md.at("device_differs").is_null());
}
