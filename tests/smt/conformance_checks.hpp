// The conformance verdict the SMT tests over random scenarios share: no mismatch, every option encoded, every
// schedule unique, and at most a few scenarios left to Z3's timeout.
#pragma once
#include <catch2/catch.hpp>

#include <string>

#include "tbcheck/testing/conformance.hpp"

namespace tbcheck::test {

// `scenarios` were checked; at least `at_least_checked` of them must have been decided (the rest timed out).
inline void check_mostly_conforms(const smt::ConformanceReport& report, int scenarios, int at_least_checked) {
  INFO((report.mismatches.empty() ? std::string() : report.mismatches.front()));
  CHECK(report.mismatches.empty());
  CHECK_FALSE(report.unsupported);
  CHECK(report.not_unique == 0);
  CHECK(report.checked + report.unknown == scenarios);
  CHECK(report.checked >= at_least_checked);
}

}  // namespace tbcheck::test
