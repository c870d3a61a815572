// Tests of model/compositions.cpp: the enumerated space holds only valid compositions, every option of the
// table and every shipped hypothesis; neighbours are one or two changes away; seeded samples are stable.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>
#include <string_view>

#include "helpers.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/options.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"

using namespace tbcheck;
using tbcheck::test::hyp;

namespace {

const model::MechanismSpace& space_of(std::string_view mechanism) {
  for (const auto& m : model::mechanism_space())
    if (m.mechanism == mechanism) return m;
  throw std::logic_error("no mechanism " + std::string(mechanism));
}

}  // namespace

TEST_CASE("the composition space takes each mechanism's values from its descriptor", "[compositions]") {
  const auto& all = model::all_compositions();
  for (const auto& m : model::mechanism_space()) {
    std::set<std::string> seen;
    for (const auto& h : all) seen.insert(h.to_json()[std::string(m.mechanism)].dump());
    std::set<std::string> expected;
    for (const auto& v : m.values) {
      expected.insert(v.dump());
      if (m.enumeration != model::Enumeration::Every) break;  // the default only
    }
    INFO(m.mechanism);
    CHECK(seen == expected);
  }
}

TEST_CASE("the composition space is every valid combination, shipped ones under their names", "[compositions]") {
  const auto& all = model::all_compositions();
  REQUIRE(all.size() > 1000);  // thousands: the product of the options less what the loader rejects
  std::set<std::string> names;
  for (const auto& h : all) {
    CHECK(names.insert(h.name).second);  // names are unique, so each is a usable file name
    // Each one reads back through the loader with the same options.
    auto j = h.to_json();
    const model::Hypothesis back = model::hypothesis_from_json(j, "test");
    CHECK(back.same_options(h));
    // The loader's rule that PB registers need PB warps holds throughout.
    CHECK(!(h.pb_registers() && !h.pb_warps()));
  }
  // Every shipped hypothesis whose options the space takes is in it under its name; only hopper has options the
  // device-free space holds at their defaults (gpc-carry, where a device has a GPC map: the case below).
  std::set<std::string> outside;
  for (const auto& s : model::builtin_hypotheses()) {
    const auto j = s.to_json();
    bool in_space = true;
    for (const auto& m : model::mechanism_space()) {
      const auto& v = j.contains(std::string(m.mechanism)) ? j[std::string(m.mechanism)] : model::json(nullptr);
      in_space = in_space && (m.enumeration == model::Enumeration::Every
                                  ? std::find(m.values.begin(), m.values.end(), v) != m.values.end()
                                  : v == m.values.front());
    }
    auto it = std::find_if(all.begin(), all.end(), [&](const model::Hypothesis& h) { return h.same_options(s); });
    CHECK((it != all.end()) == in_space);
    if (!in_space) outside.insert(s.name);
    if (it != all.end()) CHECK(it->name == s.name);
  }
  CHECK(outside == std::set<std::string>{"hopper"});
  // Every named option of the table the space lists is used by some composition (the cluster options: on a device
  // with clusters), and one it leaves out (gpc-spread) by none.
  const auto with_clusters = model::compositions_for(model::builtin_device("h100-sxm-assumed-gpcs", "test", "device"));
  for (const auto& row : model::option_table()) {
    if (row.value == "<int>" || row.value == "true") continue;
    const auto& space = space_of(row.mechanism);
    if (space.enumeration == model::Enumeration::WhereNeedsMet) {  // the cluster options and the numbering
      INFO(row.mechanism << ": " << row.value);
      const bool listed = std::find(space.values.begin(), space.values.end(), model::json(std::string(row.value))) !=
                          space.values.end();
      CHECK(std::any_of(with_clusters.begin(), with_clusters.end(), [&](const model::Hypothesis& h) {
              return h.to_json()[std::string(row.mechanism)] == std::string(row.value);
            }) == listed);
      continue;
    }
    if (space.enumeration == model::Enumeration::HeldAtDefault) {  // the retirement reading
      INFO(row.mechanism << ": " << row.value);
      const bool in_space = std::any_of(all.begin(), all.end(), [&](const model::Hypothesis& h) {
        return h.to_json()[std::string(row.mechanism)] == std::string(row.value);
      });
      CHECK(in_space == (model::json(std::string(row.value)) == space.values.front()));
      continue;
    }
    const bool used = std::any_of(all.begin(), all.end(), [&](const model::Hypothesis& h) {
      auto j = h.to_json();
      return j.contains(std::string(row.mechanism)) && j[std::string(row.mechanism)] == std::string(row.value);
    });
    INFO(row.mechanism << ": " << row.value);
    const bool listed = std::find(space.values.begin(), space.values.end(), model::json(std::string(row.value))) !=
                        space.values.end();
    CHECK(used == listed);
  }
  // The documented thresholds appear, and a threshold outside the set does not.
  CHECK(std::any_of(all.begin(), all.end(), [](const auto& h) { return h.registers_ignore_at_or_below == 32; }));
  CHECK(std::any_of(all.begin(), all.end(), [](const auto& h) { return h.smem_ignore_below == 3072; }));
  CHECK(std::none_of(all.begin(), all.end(), [](const auto& h) { return h.smem_ignore_below == 1024; }));
}

TEST_CASE("the space leaves out exactly the combinations a hypothesis file is refused for", "[compositions]") {
  // Random points of the full product (cluster options at their defaults, as the space has them): the
  // loader accepts a point if and only if the space holds its options.
  const auto& all = model::all_compositions();
  const auto fields = model::mechanism_fields();
  std::vector<std::vector<model::json>> values;
  for (const auto& f : fields) {
    const auto& m = space_of(f);
    // Held mechanisms at their defaults, as the space has them.
    values.push_back(m.enumeration == model::Enumeration::Every ? m.values : std::vector<model::json>{m.values.front()});
    REQUIRE(!values.back().empty());
  }
  std::mt19937 rng(17);
  int accepted = 0, refused = 0;
  for (int draw = 0; draw < 3000; ++draw) {
    model::json j = {{"name", "x"}};
    for (size_t i = 0; i < fields.size(); ++i) j[fields[i]] = values[i][rng() % values[i].size()];
    INFO(j.dump());
    bool loads = true;
    model::Hypothesis h;
    try {
      h = model::hypothesis_from_json(j, "test");
    } catch (const model::InputError&) {
      loads = false;
    }
    const bool held = loads && std::any_of(all.begin(), all.end(), [&](const model::Hypothesis& c) { return c.same_options(h); });
    CHECK(held == loads);
    (loads ? accepted : refused) += 1;
  }
  CHECK(accepted > 100);  // both sides of the rule were exercised
  CHECK(refused > 100);
}

TEST_CASE("cluster options grow the space only on a device with clusters and a GPC map", "[compositions][cluster]") {
  const auto& all = model::all_compositions();
  CHECK(model::compositions_for(model::builtin_device("h100-sxm", "test", "device")).size() == all.size());  // no map
  CHECK(model::compositions_for(model::builtin_device("a100", "test", "device")).size() == all.size());      // CC 8.0
  const auto more = model::compositions_for(model::builtin_device("h100-sxm-assumed-gpcs", "test", "device"));
  CHECK(more.size() > all.size());
  std::set<std::string> names;
  for (const auto& h : more) CHECK(names.insert(h.name).second);
  // The cluster variants are of compositions the cluster rule is defined for: every generic selection, the
  // alg1 family's per-PB resources included, never gpc-priority.
  bool per_pb = false;
  for (size_t i = all.size(); i < more.size(); i += 97) CHECK(more[i].name == model::composition_name(more[i]));
  for (size_t i = all.size(); i < more.size(); ++i) {
    CHECK_FALSE(model::is_fermi(more[i].selection));
    per_pb = per_pb || more[i].warps == model::Warps::PbStrictRR;
  }
  CHECK(per_pb);
}

TEST_CASE("composition names say the changes from alg1", "[compositions]") {
  model::Hypothesis h = hyp("alg1");
  h.registers = model::Registers::PbContiguous;
  h.smem = model::Smem::Counted;
  CHECK(model::composition_name(h) == "alg1+registers=pb-contiguous+smem=counted");
  CHECK(model::composition_name(hyp("alg1-contiguous-regs")) == "alg1-contiguous-regs");
  CHECK(model::option_distance(h, hyp("alg1")) == 2);
  CHECK(model::option_distance(h, hyp("alg1-contiguous-regs")) == 1);
}

TEST_CASE("neighbours are the valid compositions one or two changes away, nearest first", "[compositions]") {
  const auto& h = hyp("alg1-contiguous-regs");
  auto n = model::neighbours(h, 2);
  REQUIRE(!n.empty());
  int last = 1;
  for (const auto& x : n) {
    const int d = model::option_distance(h, x);
    CHECK(d >= 1);
    CHECK(d <= 2);
    CHECK(d >= last);
    last = d;
  }
  auto has = [&](const std::string& name) {
    return std::any_of(n.begin(), n.end(), [&](const auto& x) { return x.name == name; });
  };
  CHECK(has("alg1"));                                                // registers back to pb
  CHECK(has("alg1+registers=pb-contiguous+smem=counted"));           // one change: smem
  CHECK(has("alg1+warps=pb-any+skip_on_multiple_of_4=false+registers=pb-contiguous"));  // two: warps and skip
  CHECK(model::neighbours(h, 1).size() < n.size());
}

TEST_CASE("neighbours from the cached option rows are those found by comparing every composition anew", "[compositions]") {
  // neighbours() compares against option rows built once per process; the reference here compares each
  // composition afresh with option_distance, in the space's order, nearest first.
  std::vector<model::Hypothesis> from = {hyp("alg1"), hyp("round-robin"), hyp("alg1-contiguous-regs"),
                                         model::all_compositions().back(), model::all_compositions()[777]};
  const auto& all = model::all_compositions();
  for (const auto& h : from) {
    std::vector<int> distance;
    for (const auto& c : all) distance.push_back(model::option_distance(h, c));
    for (int max_distance : {1, 2, 3}) {
      std::vector<std::string> want;
      for (int d = 1; d <= max_distance; ++d)
        for (size_t i = 0; i < all.size(); ++i)
          if (distance[i] == d) want.push_back(all[i].name);
      // Twice: the second call reads the rows the first one built.
      for (int round = 0; round < 2; ++round) {
        std::vector<std::string> got;
        for (const auto& n : model::neighbours(h, max_distance)) got.push_back(n.name);
        INFO(h.name << " within " << max_distance << ", round " << round);
        CHECK(got == want);
      }
    }
  }
}

TEST_CASE("seeded samples from the cached option rows are the draws over the compositions at that distance", "[compositions]") {
  const auto& alg1 = hyp("alg1");
  std::vector<const model::Hypothesis*> pool;
  for (const auto& c : model::all_compositions()) {
    const int d = model::option_distance(alg1, c);
    if (!model::find_builtin_hypothesis(c.name) && d >= 2 && d <= 3) pool.push_back(&c);
  }
  std::mt19937_64 rng(11);
  std::vector<std::string> want;
  while (want.size() < 8 && !pool.empty()) {
    const size_t k = static_cast<size_t>(rng() % pool.size());
    want.push_back(pool[k]->name);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(k));
  }
  std::vector<std::string> got;
  for (const auto& c : model::sample_compositions(alg1, 11, 8, 2, 3)) got.push_back(c.name);
  CHECK(got == want);
}

TEST_CASE("seeded samples of non-shipped compositions are stable and at the asked distance", "[compositions]") {
  const auto& alg1 = hyp("alg1");
  auto a = model::sample_compositions(alg1, 5, 6, 2, 3);
  auto b = model::sample_compositions(alg1, 5, 6, 2, 3);
  REQUIRE(a.size() == 6);
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].name == b[i].name);
    CHECK(model::find_builtin_hypothesis(a[i].name) == nullptr);
    const int d = model::option_distance(alg1, a[i]);
    CHECK(d >= 2);
    CHECK(d <= 3);
  }
  auto c = model::sample_compositions(alg1, 6, 6, 2, 3);
  bool differs = false;
  for (size_t i = 0; i < c.size(); ++i) differs = differs || c[i].name != a[i].name;
  CHECK(differs);
}

TEST_CASE("pb-any acts as sm under SM-pooled registers on the 4-PB devices, and the check can fail", "[compositions]") {
  for (const std::string dev : {"rtx3090", "h100-sxm"}) {
    const model::Device& d = model::builtin_device(dev, "test", "device");
    const auto r = model::pb_any_as_sm(d);
    INFO(r.summary());
    CHECK(r.verdict == model::StateCheck::Proved);
    // Every per-PB warp count 0..slots on 4 PBs, every block size: the space the check claims to cover.
    const int64_t states = 1LL * (d.warp_slots_per_pb() + 1) * (d.warp_slots_per_pb() + 1) * (d.warp_slots_per_pb() + 1) *
                           (d.warp_slots_per_pb() + 1);
    CHECK(r.compared >= states * (d.max_threads_per_block / model::kThreadsPerWarp));
    CHECK(r.to_json()["verdict"] == "proved");
  }
  // An SM pool larger than its PBs' warp slots holds warps pb-any cannot place: refuted, with the reason.
  model::Device odd = model::builtin_device("rtx3090", "test", "device");
  odd.name = "odd";
  odd.max_warps_per_sm = 50;
  const auto r = model::pb_any_as_sm(odd);
  CHECK(r.verdict == model::StateCheck::Refuted);
  CHECK_THAT(r.counterexample, Catch::Contains("odd"));
  CHECK(r.to_json()["verdict"] == "refuted");
}

TEST_CASE("a composition name as learn prints it reads back through --hypothesis", "[compositions][hypothesis]") {
  // Every composition name (a sample spread over the space) reads back, through the one front door the
  // commands use, to the same options; a shipped name stays the shipped hypothesis.
  const auto& all = model::all_compositions();
  int read = 0;
  for (size_t i = 0; i < all.size(); i += all.size() / 40) {
    const std::string name = model::composition_name(all[i]);
    if (name.find('+') == std::string::npos) continue;
    const auto hs = model::resolve_hypotheses(name);
    REQUIRE(hs.size() == 1);
    INFO(name);
    CHECK(hs[0].same_options(all[i]));
    CHECK(hs[0].name == name);
    ++read;
  }
  CHECK(read >= 20);
  // One the space names as a change of alg1 and a shipped hypothesis has: the same options either way.
  CHECK(model::resolve_hypotheses("alg1+issue=device")[0].same_options(*model::find_builtin_hypothesis("alg1-paired")));
  CHECK(model::resolve_hypotheses("alg1+issue=device")[0].name == "alg1-paired");
  // Named canonically: the same changes in another order are the same composition, so the same name.
  CHECK(model::resolve_hypotheses("alg1+smem=counted+registers=pb-contiguous")[0].name ==
        "alg1+registers=pb-contiguous+smem=counted");
  CHECK_THROWS_WITH(model::resolve_hypotheses("alg1+smem=counted+registers=pb-contiguous,"
                                              "alg1+registers=pb-contiguous+smem=counted"),
                    Catch::Contains("given twice"));
  // In a list beside a shipped name; a change without a value, or an unknown value, is refused naming it.
  CHECK(model::resolve_hypotheses("round-robin,alg1+registers=sm").size() == 2);
  CHECK_THROWS_WITH(model::resolve_hypotheses("alg1+registers"), Catch::Contains("mechanism=value"));
  CHECK_THROWS_WITH(model::resolve_hypotheses("alg1+registers=sideways"), Catch::Contains("registers"));
  CHECK_THROWS_WITH(model::resolve_hypotheses("no-such+registers=sm"), Catch::Contains("no-such"));
}

TEST_CASE("on a device with a GPC map the space holds hopper under its name and only valid numberings",
          "[compositions]") {
  // gpc-carry joins the space where a device has a GPC map, only on the selections that spread GPC by GPC (a
  // hypothesis file with another is refused), so learn can name the Hopper rule from recordings.
  const model::Device& mapped = model::builtin_device("h100-sxm-assumed-gpcs", "test", "device");
  const auto space = model::compositions_for(mapped);
  const model::Hypothesis& hopper = test::hyp("hopper");
  const auto it = std::find_if(space.begin(), space.end(), [&](const model::Hypothesis& h) { return h.same_options(hopper); });
  REQUIRE(it != space.end());
  CHECK(it->name == "hopper");
  size_t carried = 0;
  for (const auto& h : space) {
    CHECK_FALSE(model::combination_error(h));
    carried += h.numbering == model::Numbering::GpcCarry ? 1 : 0;
  }
  CHECK(carried > 0);
  // Without a map the numbering stays at its default.
  for (const auto& h : model::compositions_for(model::builtin_device("h100-sxm", "test", "device")))
    CHECK(h.numbering == model::Numbering::Dispatch);
}
