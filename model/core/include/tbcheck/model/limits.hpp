// The largest times a kernel may have, shared by the scenario loader and the importers that convert
// foreign units into them (so both refuse the same values, before any narrowing conversion).
#pragma once
#include <cstdint>

namespace tbcheck::model {

// Largest duration and release time a kernel may have, in time units.
inline constexpr int64_t kMaxDurationUnits = 1'000'000'000;
inline constexpr int64_t kMaxReleaseUnits = int64_t{1} << 40;

}  // namespace tbcheck::model
