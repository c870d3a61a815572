// Catch2 v2 entry point for the tbcheck test binary.
// Test files mirror source files: test_<source>.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>

// catch_discover_tests (tests/CMakeLists.txt) cuts a test's name at ';', and ctest then runs a filter
// that matches nothing and reports it passed: such a test would never run in CI.
TEST_CASE("every test name survives ctest's discovery: no semicolon in it", "[tests]") {
  for (const auto& t : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO(t.name);
    CHECK(t.name.find(';') == std::string::npos);
  }
}
