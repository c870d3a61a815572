// Option predicates and effective_options (options.hpp): each switches exhaustively over its option, so a
// new value does not build until it says what it means here.
#include "tbcheck/model/options.hpp"

#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/simulator.hpp"

namespace tbcheck::model {

bool is_fermi(Selection s) {
  switch (s) {
    case Selection::RoundRobin:
    case Selection::MostRoom: return false;
    case Selection::GpcPriority: return true;
  }
  return false;
}

bool ranks_by_capacity(Selection s) {
  switch (s) {
    case Selection::MostRoom: return true;
    case Selection::RoundRobin:
    case Selection::GpcPriority: return false;
  }
  return true;
}

bool order_is_natural_on(Order o, const Device& d) { return sm_order(d, o) == sm_order(d, Order::Natural); }

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

Hypothesis effective_options(Hypothesis h, const Device& d) {
  if (order_is_natural_on(h.order, d)) h.order = Order::Natural;
  h.issue = issue_on(h.issue, d);
  if (!ranks_by_capacity(h.selection)) h.capacity = Capacity::Blocks;
  h.priority = priority_on(h.priority, d);
  if (!masks_act_on(d)) h.partition = Partition::AllowedSms;
  // With one register pool per SM, pb-any places exactly what sm does on a device where the check over
  // every SM state proves their capacity rules equal (docs/learn.md).
  if (pb_any_acts_as_sm(h, d)) h.warps = Warps::Sm;
  h.name.clear();
  h.source.clear();
  h.description.clear();
  h.file.clear();
  return h;
}

}  // namespace tbcheck::model
