// Option predicates (options.hpp): each switches exhaustively over its option, so a new value does not build
// until it says what it means here.
#include "tbcheck/model/options.hpp"

#include "tbcheck/model/device.hpp"

namespace tbcheck::model {

bool is_fermi(Selection s) {
  switch (s) {
    case Selection::RoundRobin:
    case Selection::MostRoom:
    case Selection::GpcSpread:
    case Selection::TpcPosition:
    case Selection::Rule: return false;
    case Selection::GpcPriority: return true;
  }
  return false;
}

bool uses_gpc_spread(Selection s) {
  switch (s) {
    case Selection::GpcSpread:
    case Selection::TpcPosition: return true;
    case Selection::RoundRobin:
    case Selection::MostRoom:
    case Selection::GpcPriority:
    case Selection::Rule: return false;  // a rule's needs are its keys' (model::gpc_map_feature)
  }
  return false;
}

bool config_per_sm(SmemConfig c) {
  switch (c) {
    case SmemConfig::Sm:
    case SmemConfig::SmFloor: return true;
    case SmemConfig::None:
    case SmemConfig::Tpc: return false;
  }
  return false;
}

bool ranks_by_capacity(Selection s) {
  switch (s) {
    case Selection::MostRoom:
    case Selection::GpcSpread:
    case Selection::TpcPosition:
    case Selection::Rule: return true;  // whether its keys read room or not: never merge two that may differ
    case Selection::RoundRobin:
    case Selection::GpcPriority: return false;
  }
  return true;
}

Issue issue_on(Issue i, const Device& d) {
  switch (i) {
    case Issue::Single:
    case Issue::Paired: return i;
    case Issue::PairedCc8: return d.cc_major() >= 8 ? Issue::Paired : Issue::Single;
    case Issue::FromDevice:  // passes of one decision are plain pairs
      if (!d.issue_pairs) return Issue::Single;
      return d.issue_pass <= 1 ? Issue::Paired : Issue::FromDevice;
  }
  return i;
}

int priority_levels(const Device& d) {
  return d.stream_priorities ? d.stream_priorities->least - d.stream_priorities->greatest + 1 : 1;
}

Priority priority_on(Priority p, const Device& d) {
  const int levels = priority_levels(d);
  switch (p) {
    case Priority::Ignore: return Priority::Ignore;
    case Priority::Strict: return levels >= 2 ? Priority::Strict : Priority::Ignore;
    case Priority::TwoLevel:  // strict where the range has no level between high and low
      return levels >= 3 ? Priority::TwoLevel : levels >= 2 ? Priority::Strict : Priority::Ignore;
  }
  return p;
}

bool masks_act_on(const Device& d) { return d.tpcs() >= 2; }

}  // namespace tbcheck::model
