// Catch2 v2 entry point for the tbcheck test binary.
// Test files mirror source files: test_<source>.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
