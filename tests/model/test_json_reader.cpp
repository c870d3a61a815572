// Tests of model/core/src/json_reader.cpp: a key repeated in one object is an InputError naming its dotted
// path (no value wins silently), at any depth and inside arrays; distinct objects may reuse keys.
#include <catch2/catch.hpp>

#include <chrono>

#include "helpers.hpp"

using namespace tbcheck;
using tbcheck::test::error_of;

TEST_CASE("a duplicate key is rejected with its dotted path", "[json_reader]") {
  auto top = error_of([] { model::parse_json_text(R"({"device": "a", "device": "b"})", "f.json"); });
  CHECK(top.where() == "f.json");
  CHECK(top.field() == "device");
  CHECK(top.reason().find("duplicate key") != std::string::npos);
  auto nested = error_of([] {
    model::parse_json_text(R"({"kernels": [{"name": "a"}, {"name": "b", "blocks": 41, "blocks": 2}]})", "f.json");
  });
  CHECK(nested.field() == "kernels[1].blocks");
  auto deep = error_of([] {
    model::parse_json_text(R"({"observation": {"sm_of_block": {"k": [1, 2], "k": [3]}}})", "f.json");
  });
  CHECK(deep.field() == "observation.sm_of_block.k");
}

TEST_CASE("the same key in different objects is fine", "[json_reader]") {
  auto j = model::parse_json_text(R"({"a": {"x": 1}, "b": {"x": 2}, "c": [{"x": 3}, {"x": 4}], "x": [[1], {"x": 5}]})", "f");
  CHECK(j["c"][1]["x"] == 4);
  CHECK(j["x"][1]["x"] == 5);
}

// The duplicate-key check once rode nlohmann's callback parser, which rescans the parent array at each
// object's end: a scenario of many kernels took quadratic time. Four times the objects must stay well
// under the sixteen times a quadratic pass takes (the best of three runs each, against machine noise).
TEST_CASE("parsing a long array of objects is linear in its length, duplicate check included", "[json_reader]") {
  auto text_of = [](int n) {
    std::string t = "[";
    for (int i = 0; i < n; ++i) t += std::string(i ? "," : "") + "{\"name\": \"k" + std::to_string(i) + "\", \"blocks\": 1}";
    return t + "]";
  };
  auto best_seconds = [](const std::string& text) {
    double best = 1e9;
    for (int r = 0; r < 3; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      (void)model::parse_json_text(text, "t");
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  const std::string small = text_of(20000), large = text_of(80000);
  const double ratio = best_seconds(large) / best_seconds(small);
  INFO("time ratio for 4x the objects: " << ratio);
  CHECK(ratio < 9.0);
  // Duplicates are still found, deep in the list.
  const std::string dup = large.substr(0, large.size() - 1) + ", {\"a\": 1, \"a\": 2}]";
  CHECK(error_of([&] { model::parse_json_text(dup, "t"); }).field() == "[80000].a");
}
