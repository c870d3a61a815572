// Learn's case pool (search/src/learn_pool.cpp): each case's class table, kept in two bytes a slot until a class
// number needs four, reads back every value it was given.
#include <catch2/catch.hpp>

#include <climits>
#include <vector>

#include "../../search/src/learn_internal.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"

using namespace tbcheck;
using tbcheck::search::learn_detail::ClassTable;
using tbcheck::search::learn_detail::kCannotRun;
using tbcheck::search::learn_detail::kDeferred;
using tbcheck::search::learn_detail::kNotSimulated;

TEST_CASE("a case's class table keeps every value, widening when a class number outgrows two bytes", "[learn][pool]") {
  ClassTable t;
  CHECK(t.empty());
  t.resize(5, kNotSimulated);
  REQUIRE(t.size() == 5);
  for (size_t i = 0; i < 5; ++i) CHECK(t[i] == kNotSimulated);
  t.set(0, kCannotRun);
  t.set(1, kDeferred);
  t.set(2, INT16_MAX);
  CHECK(t[0] == kCannotRun);
  CHECK(t[1] == kDeferred);
  CHECK(t[2] == INT16_MAX);
  // A class number past two bytes: the table widens and keeps what it held.
  t.set(3, INT16_MAX + 1);
  CHECK(t[0] == kCannotRun);
  CHECK(t[1] == kDeferred);
  CHECK(t[2] == INT16_MAX);
  CHECK(t[3] == INT16_MAX + 1);
  CHECK(t[4] == kNotSimulated);
  t.resize(7, kNotSimulated);  // machines added by a refit
  REQUIRE(t.size() == 7);
  CHECK(t[6] == kNotSimulated);
  t.set(6, 1'000'000);
  CHECK(t[6] == 1'000'000);
  CHECK(t[3] == INT16_MAX + 1);
}

TEST_CASE("an empty class table widened by its first value holds it", "[learn][pool]") {
  ClassTable t;
  t.resize(3, 70'000);  // a fill that needs four bytes
  REQUIRE(t.size() == 3);
  CHECK(t[2] == 70'000);
  t.set(1, 2);
  CHECK(t[1] == 2);
}

TEST_CASE("field values read without JSON are the values a hypothesis file writes", "[learn][pool]") {
  // The learner names each mechanism's values as a file writes them ("off": no threshold); it reads them from
  // option_settings rather than to_json for speed, so every composition is held to the JSON form.
  const model::Device& d = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  const auto fields = model::mechanism_fields();
  const auto space = model::compositions_for(d);
  size_t compared = 0;
  for (size_t i = 0; i < space.size(); i += 13) {
    model::Hypothesis h = space[i];
    if (i % 2) h.registers_ignore_at_or_below = 40 + static_cast<int>(i % 50);  // off the enumerated values
    const model::json j = h.to_json();
    std::vector<std::string> want;
    for (const auto& f : fields) {
      const model::json& x = j.contains(f) ? j[f] : model::json();
      want.push_back(x.is_string() ? x.get<std::string>() : x.is_null() ? "off" : x.dump());
    }
    REQUIRE(search::learn_detail::field_values(h, fields) == want);
    ++compared;
  }
  CHECK(compared > 10000);
  // A field order other than the descriptors' reads the same values.
  std::vector<std::string> reversed(fields.rbegin(), fields.rend());
  const auto forward = search::learn_detail::field_values(space[7], fields);
  const auto backward = search::learn_detail::field_values(space[7], reversed);
  CHECK(std::vector<std::string>(backward.rbegin(), backward.rend()) == forward);
}
