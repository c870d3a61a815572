// Chrome trace-event JSON of a schedule (`tbcheck predict --trace`), for Perfetto or
// chrome://tracing: zooming, per-block details and search that a static SVG cannot give.
#pragma once
#include <nlohmann/json.hpp>

#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/schedule.hpp"

namespace tbcheck::report {

// Track id stride: SM i, lane j is tid i * trace_tid_stride(...) + j. It is 64 unless some SM
// needs more lanes, so tids stay readable ("SM 3" is tid 192) yet never collide.
int trace_tid_stride(const model::Schedule& s, const model::Scenario& sc);

// {"traceEvents": [...], "displayTimeUnit": "ms"}. One process (pid 1) is the device; each SM
// is a track "SM i" (lane 0) plus "SM i / lane j" tracks for blocks resident at the same time,
// because Perfetto drops X events on one track that overlap without nesting. Every placed block
// is one complete event (ph "X") named after its kernel, ts/dur = model units * us_per_unit
// microseconds, args {block, sm, lane, start, end} in model units. us_per_unit must be positive
// and finite (std::invalid_argument otherwise).
nlohmann::json chrome_trace(const model::Schedule& s, const model::Scenario& sc, double us_per_unit = 1000.0);

}  // namespace tbcheck::report
