// What options mean on one device: the predicates the engines, search, smt and the CLI ask instead of comparing an
// option with a named value (the normaliser effective_options is the option space's: model/effective.hpp).
#pragma once
#include <vector>

#include "tbcheck/model/device.hpp"
#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

// Selection gpc-priority: the Fermi wave and completion order (model/fermi.hpp), not the generic dispatcher.
bool is_fermi(Selection s);
// Whether the selection ranks SMs by the capacity value (most-room, gpc-spread); the others ask only whether a block
// fits, which capacity blocks and literal answer alike (resources.cpp sm_capacity).
bool ranks_by_capacity(Selection s);
// Whether the selection spreads a kernel over the GPCs by the device's GPC map (gpc-spread, tpc-position): the
// selections that need the map, refuse clusters and whose blocks numbering gpc-ring can number.
bool uses_gpc_spread(Selection s);
// Whether Mechanism 3's configuration is held per SM (sm, sm-floor) rather than per TPC.
bool config_per_sm(SmemConfig c);
// The issue rule as it acts on d: paired-cc8 is paired or single by the compute capability, the device's
// own rule single without pairs and paired with passes of one decision.
Issue issue_on(Issue i, const Device& d);
// Stream priority levels the device's range has (1 without a range).
int priority_levels(const Device& d);
// The priority rule as it acts on d: two-level is strict where the range has two levels, and every rule
// is ignore with one level.
Priority priority_on(Priority p, const Device& d);
// Whether a TPC mask can confine a kernel on d: it needs a second TPC.
bool masks_act_on(const Device& d);

}  // namespace tbcheck::model
