// A CUDA-oracle recording re-expressed in a finer time unit from the GPU timer's own times (the run
// metadata's raw_ns), so that retirements one model unit holds are ordered as the GPU ordered them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/observation.hpp"

namespace tbcheck::oracle {

// How many repetitions' ns times c keeps (0 without run metadata or raw_ns).
size_t kept_repetitions(const model::Case& c);
// Why c is no recording that can be retimed at all (no run metadata, no ns times, no recorded SMs), naming its
// file and the field; nullopt when it is one. A folder of recordings holds such cases (older runs, other
// oracles): `tbcheck retime` lists them instead of stopping.
std::optional<model::InputError> retime_refusal(const model::Case& c);

// c (a recording `tbcheck run --oracle cuda` wrote, its metadata keeping raw_ns) in units of `unit_ns`:
// durations and release times scaled by the run's unit over `unit_ns` (which must divide it), every block's
// start and end from repetition `repetition`'s ns times (0-based; 0 is the repetition the observation is),
// its SMs in the device's scheduler order as the oracle numbers them (for repetition 0 they must be the
// observation's), the tick the timer's step gives in the new unit. The id gains "-<unit_ns>ns" (and
// "-rep<n>", 1-based, for a later repetition); expectations about the coarser recording are dropped; the
// metadata is kept with the new unit, so a retimed case can be retimed again. InputError (naming the
// case's file and the field, or --unit-ns / --repetition) when it cannot be done.
model::Case retime_recording(const model::Case& c, int64_t unit_ns, size_t repetition = 0);
// retime_recording of every repetition the run kept, the metadata read once.
std::vector<model::Case> retime_every_repetition(const model::Case& c, int64_t unit_ns);

}  // namespace tbcheck::oracle
