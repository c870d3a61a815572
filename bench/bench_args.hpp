// Positional arguments of the benchmarks: one parser, so every bench refuses a bad count the same way
// (exit 2 with the argument named) instead of dividing by zero.
#pragma once
#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"

namespace tbcheck::bench_support {

// Positional argument i as a positive integer, or `fallback` when absent; anything else (--help, 0, "x")
// is an InputError, so no run divides by zero seeds.
inline int positive_arg(int argc, char** argv, int i, int fallback, const char* what) {
  if (argc <= i) return fallback;
  const std::string t = argv[i];
  if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoi(t) == 0)
    throw model::InputError(fmt::format("argument {}", i), what, fmt::format("'{}' is not a positive integer", t));
  return std::stoi(t);
}

}  // namespace tbcheck::bench_support
