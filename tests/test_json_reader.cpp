// Tests of model/src/json_reader.cpp: a key repeated in one object is an InputError naming its dotted
// path (no value wins silently), at any depth and inside arrays; distinct objects may reuse keys.
#include <catch2/catch.hpp>

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
