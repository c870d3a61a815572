// Option predicates and effective_options (model/options.hpp): each predicate checked against what the
// engines do for every value the descriptor lists, so a new value is covered without an edit here.
#include <catch2/catch.hpp>

#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tbcheck/model/controls.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/effective.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/simulator.hpp"

using namespace tbcheck;
using namespace tbcheck::model;

namespace {

// Every value the descriptor lists for an enumerated mechanism, set on a copy of `base`.
std::vector<Hypothesis> each_value(const Hypothesis& base, std::string_view mechanism) {
  std::vector<Hypothesis> out;
  for (const auto& row : option_table())
    if (row.mechanism == mechanism) {
      Hypothesis h = base;
      if (mechanism == "selection" && row.value == "rule")  // a rule is given by its keys (docs/rules.md)
        set_option(h, mechanism, json{{"rule", {{{"key", "room"}, {"prefer", "max"}}}}});
      else
        set_option(h, mechanism, std::string(row.value));
      out.push_back(h);
    }
  return out;
}

Device device_with_sms(int sms) {
  Device d = builtin_device("rtx3090", "test", "");
  d.sms = sms;
  d.sms_per_tpc = 1;
  d.gpc_of_tpc.clear();
  return d;
}

Scenario one_block_on(const Device& d) {
  return scenario_from_json(json{{"device", d.to_json()},
                                 {"kernels", {{{"name", "k"}, {"blocks", 1}, {"threads", 32}, {"regs", 32}, {"smem", 0},
                                               {"duration", 1}}}}},
                            "probe");
}

}  // namespace

TEST_CASE("options: a selection is refused without a GPC map exactly where its row needs one, and only gpc-priority is Fermi's", "[hypothesis][options]") {
  Device d = device_with_sms(4);
  for (const auto& h : each_value(Hypothesis{}, "selection")) {
    INFO(to_string(h.selection));
    const FeasibilityCheck f = check_feasibility(one_block_on(d), h);
    CHECK(is_fermi(h.selection) == (h.selection == Selection::GpcPriority));
    for (const auto& row : option_table())
      if (row.mechanism == "selection" && row.value == to_string(h.selection))
        CHECK((f.status == Feasibility::NoGpcMap) == (row.needs == OptionNeeds::GpcMap));
  }
}

TEST_CASE("options: on two SMs an order counts as natural only when it scans SM 0 then SM 1", "[hypothesis][options]") {
  // effective_options once took every order to be natural on at most 2 SMs: an order scanning 1, 0 there
  // (docs/extending.md's `reverse`) would have been merged with natural. Every order value, on 1 to 8 SMs.
  for (int sms = 1; sms <= 8; ++sms) {
    const Device d = device_with_sms(sms);
    std::vector<int> natural(static_cast<size_t>(sms));
    std::iota(natural.begin(), natural.end(), 0);
    for (const auto& h : each_value(Hypothesis{}, "order")) {
      INFO(to_string(h.order) << " on " << sms << " SMs");
      const bool scans_natural = sm_order(d, h.order) == natural;
      CHECK(order_is_natural_on(h.order, d) == scans_natural);
      CHECK((effective_options(h, d).order == Order::Natural) == scans_natural);
    }
  }
  CHECK(order_is_natural_on(Order::EvenFirst, device_with_sms(2)));
  CHECK_FALSE(order_is_natural_on(Order::EvenFirst, device_with_sms(3)));
}

TEST_CASE("options: the issue rule as it acts on a device keeps every pair leader and hand-out order", "[hypothesis][options]") {
  for (const char* cc : {"7.0", "8.6"})
    for (bool pairs : {false, true})
      for (int pass : {1, 2}) {
        Device d = device_with_sms(4);
        d.cc = cc;
        d.issue_pairs = pairs;
        d.issue_pass = pass;
        d.issue_pass_from = pass > 1 ? 2 : 0;
        for (const auto& h : each_value(Hypothesis{}, "issue")) {
          const Hypothesis e = effective_options(h, d);
          INFO(to_string(h.issue) << " as " << to_string(e.issue) << " on cc " << cc << ", pairs " << pairs
                                  << ", pass " << pass);
          for (int n = 1; n <= 3 * d.sms + 12; ++n) {
            CHECK(h.hand_out_order(d, n) == e.hand_out_order(d, n));
            for (int b = 0; b < n; ++b) CHECK(h.leads_pair(d, n, b) == e.leads_pair(d, n, b));
          }
        }
      }
}

TEST_CASE("options: priority rules act alike on a device exactly when priority_on says so", "[hypothesis][options]") {
  for (int levels : {1, 2, 3}) {
    Device d = device_with_sms(4);
    d.stream_priorities.reset();
    if (levels > 1) d.stream_priorities = PriorityRange{0, -(levels - 1), "test"};
    // Every assignment of the range's values (or none) to three kernels.
    std::vector<std::optional<int>> values = {std::nullopt};
    for (int p = 0; p > -levels && levels > 1; --p) values.push_back(p);
    std::vector<std::vector<std::optional<int>>> vectors;
    for (const auto& a : values)
      for (const auto& b : values)
        for (const auto& c : values) vectors.push_back({a, b, c});
    const auto hs = each_value(Hypothesis{}, "priority");
    for (const auto& x : hs)
      for (const auto& y : hs) {
        bool differ = false;
        for (const auto& v : vectors) differ = differ || kernels_by_priority(v, d, x.priority) != kernels_by_priority(v, d, y.priority);
        INFO(to_string(x.priority) << " vs " << to_string(y.priority) << " with " << levels << " level(s)");
        CHECK(differ == (priority_on(x.priority, d) != priority_on(y.priority, d)));
        CHECK((effective_options(x, d).priority == effective_options(y, d).priority) == !differ);
      }
  }
}

TEST_CASE("options: effective_options sets what cannot act on the device and keeps what can", "[hypothesis][options]") {
  const Hypothesis alg1 = *find_builtin_hypothesis("alg1");
  const Device one_tpc = device_with_sms(1), four = device_with_sms(4);
  Hypothesis ignore = alg1;
  ignore.partition = Partition::Ignore;
  CHECK(effective_options(ignore, one_tpc).same_options(effective_options(alg1, one_tpc)));  // no second TPC to mask
  CHECK_FALSE(effective_options(ignore, four).same_options(effective_options(alg1, four)));
  // The capacity value matters only to a selection that ranks SMs by it.
  for (const auto& h : each_value(alg1, "selection")) {
    Hypothesis literal = h;
    literal.capacity = Capacity::Literal;
    INFO(to_string(h.selection));
    CHECK(effective_options(literal, four).same_options(effective_options(h, four)) == !ranks_by_capacity(h.selection));
  }
  CHECK(effective_options(alg1, four).name.empty());
}

