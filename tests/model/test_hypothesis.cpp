// Hypothesis files: option values, "base", rejected combinations with their reasons, and the twelve
// shipped hypotheses with the options of the docs/design.md table.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/hypothesis_list.hpp"

using namespace tbcheck;
using namespace tbcheck::model;
using tbcheck::test::error_of;

namespace {

InputError hyp_error(const json& j) {
  return error_of([&] { hypothesis_from_json(j, "h.json"); });
}

// A complete hypothesis without base (the round-robin options).
json full() {
  return json::parse(R"({"name": "mine", "selection": "round-robin", "order": "natural", "warps": "sm",
      "skip_on_multiple_of_4": false, "registers": "sm", "registers_ignore_at_or_below": null, "smem": "counted",
      "smem_ignore_below": null, "smem_config": "none", "local": "ignore", "capacity": "blocks"})");
}

struct Row {
  const char* name;
  Selection selection;
  Order order;
  Warps warps;
  bool skip;
  Registers registers;
  std::optional<int> reg_ignore;
  Smem smem;
  std::optional<int> smem_ignore;
  SmemConfig config;
  Local local;
  Capacity capacity;
  Issue issue = Issue::Single;
  Priority priority = Priority::Ignore;
};

}  // namespace

TEST_CASE("hypothesis: the shipped hypotheses have the options of the docs/design.md table (and the paired-issue rows)", "[loaders][hypothesis]") {
  using S = Selection;
  using O = Order;
  using W = Warps;
  using R = Registers;
  using M = Smem;
  using C = SmemConfig;
  using L = Local;
  using P = Capacity;
  const std::optional<int> none;
  const std::vector<Row> table = {
      {"round-robin", S::RoundRobin, O::Natural, W::Sm, false, R::Sm, none, M::Counted, none, C::None, L::Ignore, P::Blocks},
      {"most-room", S::MostRoom, O::Natural, W::Sm, false, R::Sm, none, M::Counted, none, C::None, L::Ignore, P::Blocks},
      {"olmedo", S::MostRoom, O::EvenFirst, W::Sm, false, R::Sm, 32, M::Counted, 3072, C::None, L::Ignore, P::Blocks},
      {"alg1", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Blocks},
      {"alg1-literal", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Literal},
      {"alg1-no-skip", S::MostRoom, O::EvenFirst, W::PbStrictRR, false, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Blocks},
      {"alg1-pb-any", S::MostRoom, O::EvenFirst, W::PbAny, false, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Blocks},
      {"alg1-counted-smem", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::Counted, none, C::Tpc,
       L::GpuConfig, P::Blocks},
      {"alg1-no-tpc-config", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none,
       C::None, L::GpuConfig, P::Blocks},
      {"alg1-natural-order", S::MostRoom, O::Natural, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none,
       C::Tpc, L::GpuConfig, P::Blocks},
      {"alg1-contiguous-regs", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::PbContiguous, none,
       M::ContiguousFirstFit, none, C::Tpc, L::GpuConfig, P::Blocks},
      {"alg1-paired", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Blocks, Issue::FromDevice},
      {"fermi", S::GpcPriority, O::Natural, W::Sm, false, R::Sm, none, M::Counted, none, C::None, L::Ignore, P::Blocks},
      {"alg1-priority", S::MostRoom, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none, C::Tpc,
       L::GpuConfig, P::Blocks, Issue::Single, Priority::Strict},
      {"hopper", S::TpcPosition, O::EvenFirst, W::PbStrictRR, true, R::Pb, none, M::ContiguousFirstFit, none, C::SmFloor,
       L::GpuConfig, P::Blocks},
  };
  const auto& shipped = builtin_hypotheses();
  REQUIRE(shipped.size() == table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const Row& r = table[i];
    INFO(r.name);
    const Hypothesis& h = shipped[i];  // in the docs/design.md order
    CHECK(h.name == r.name);
    CHECK(h.file == std::string("builtin:") + r.name);
    CHECK(h.selection == r.selection);
    CHECK(h.order == r.order);
    CHECK(h.warps == r.warps);
    CHECK(h.skip_on_multiple_of_4 == r.skip);
    CHECK(h.registers == r.registers);
    CHECK(h.registers_ignore_at_or_below == r.reg_ignore);
    CHECK(h.smem == r.smem);
    CHECK(h.smem_ignore_below == r.smem_ignore);
    CHECK(h.smem_config == r.config);
    CHECK(h.local == r.local);
    CHECK(h.capacity == r.capacity);
    CHECK(h.issue == r.issue);
    CHECK(h.priority == r.priority);
    CHECK(h.partition == Partition::AllowedSms);  // masks honoured by every shipped hypothesis
    // Only the Hopper rule numbers its blocks itself.
    CHECK(h.numbering == (r.name == std::string("hopper") ? Numbering::GpcCarry : Numbering::Dispatch));
    CHECK_FALSE(h.source.empty());
    REQUIRE(find_builtin_hypothesis(r.name) != nullptr);
    CHECK(find_builtin_hypothesis(r.name)->name == r.name);
    // Each shipped file round-trips through its JSON shape.
    CHECK(hypothesis_from_json(h.to_json(), "again").same_options(h));
  }
  // No two shipped hypotheses choose the same options.
  for (size_t i = 0; i < shipped.size(); ++i)
    for (size_t k = i + 1; k < shipped.size(); ++k) {
      INFO(shipped[i].name << " vs " << shipped[k].name);
      CHECK_FALSE(shipped[i].same_options(shipped[k]));
    }
}

TEST_CASE("hypothesis: a complete file without base, and base with changes", "[loaders][hypothesis]") {
  Hypothesis h = hypothesis_from_json(full(), "h.json");
  CHECK(h.name == "mine");
  CHECK(h.same_options(test::hyp("round-robin")));

  Hypothesis b = hypothesis_from_json(json{{"name", "x"}, {"base", "alg1"}, {"warps", "pb-any"},
                                           {"skip_on_multiple_of_4", false}},
                                      "h.json");
  CHECK(b.name == "x");
  CHECK(b.same_options(test::hyp("alg1-pb-any")));
  CHECK_FALSE(b.same_options(test::hyp("alg1")));
  // Only the given fields change.
  Hypothesis c = hypothesis_from_json(json{{"name", "y"}, {"base", "olmedo"}, {"smem_ignore_below", nullptr}}, "h.json");
  CHECK_FALSE(c.smem_ignore_below.has_value());
  CHECK(c.registers_ignore_at_or_below == 32);
  CHECK(c.order == Order::EvenFirst);
  // to_json writes every field, nulls included.
  json j = c.to_json();
  CHECK(j["name"] == "y");
  CHECK(j["smem_ignore_below"].is_null());
  CHECK(j["registers_ignore_at_or_below"] == 32);
  CHECK(j["selection"] == "most-room");
  CHECK(j["issue"] == "single");  // optional in files, always written
  CHECK(j["priority"] == "ignore");  // so are the priority, partition and cluster mechanisms
  CHECK(j["partition"] == "allowed-sms");
  CHECK(j["cluster_gpc"] == "most-room");
  CHECK(j["retirement"] == "all-then-dispatch");  // optional too: files written before it keep today's reading
  CHECK(j["numbering"] == "dispatch");            // likewise: blocks numbered in placement order
  CHECK(j.size() == 21);
}

TEST_CASE("hypothesis: unknown option values list the valid ones", "[loaders][hypothesis]") {
  json j = full();
  j["selection"] = "fastest";
  InputError e = hyp_error(j);
  CHECK(e.where() == "h.json");
  CHECK(e.field() == "selection");
  CHECK(e.reason() == "unknown option 'fastest'; valid options are: round-robin, most-room, gpc-priority, gpc-spread, tpc-position, "
                      "or a rule {\"rule\": [...]} (docs/rules.md)");

  const std::vector<std::pair<std::string, std::string>> fields = {
      {"order", "natural, even-first"},
      {"warps", "sm, pb-strict-rr, pb-any"},
      {"registers", "sm, pb, pb-contiguous"},
      {"smem", "counted, contiguous-first-fit"},
      {"smem_config", "none, tpc, sm, sm-floor"},
      {"local", "ignore, gpu-config"},
      {"capacity", "blocks, literal"},
      {"issue", "single, paired, paired-cc8, device"}};
  for (const auto& [field, valid] : fields) {
    INFO(field);
    json k = full();
    k[field] = "bogus";
    InputError f = hyp_error(k);
    CHECK(f.field() == field);
    CHECK(f.reason() == "unknown option 'bogus'; valid options are: " + valid);
  }
}

TEST_CASE("hypothesis: unknown fields, wrong types, missing fields", "[loaders][hypothesis]") {
  json j = full();
  j["colour"] = "red";
  InputError e = hyp_error(j);
  CHECK(e.field() == "colour");
  CHECK(e.reason() ==
        "unknown field; valid fields are: name, base, source, description, selection, order, warps, "
        "skip_on_multiple_of_4, registers, registers_ignore_at_or_below, smem, smem_ignore_below, smem_config, local, "
        "capacity, issue, priority, partition, cluster_gpc, cluster_spread, retirement, numbering");

  json t = full();
  t["skip_on_multiple_of_4"] = "yes";
  InputError f = hyp_error(t);
  CHECK(f.field() == "skip_on_multiple_of_4");
  CHECK(f.reason() == "expected true or false, found a string");

  json u = full();
  u["registers_ignore_at_or_below"] = "32";
  InputError g = hyp_error(u);
  CHECK(g.field() == "registers_ignore_at_or_below");
  CHECK(g.reason() == "expected an integer, found a string");

  json m = full();
  m.erase("capacity");
  InputError h = hyp_error(m);
  CHECK(h.field() == "capacity");
  CHECK(h.reason() == "required field is missing (give every mechanism, or a \"base\" to start from)");

  json n = full();
  n.erase("name");
  InputError k = hyp_error(n);
  CHECK(k.field() == "name");
  CHECK(k.reason() == "required field is missing");

  json bad_name = full();
  bad_name["name"] = "a,b";
  CHECK(hyp_error(bad_name).field() == "name");

  InputError base = hyp_error(json{{"name", "x"}, {"base", "alg2"}});
  CHECK(base.field() == "base");
  CHECK_THAT(base.reason(), Catch::StartsWith("unknown hypothesis 'alg2'; shipped hypotheses are: round-robin, most-room, "
                                              "olmedo, alg1,"));

  InputError not_object = hyp_error(json::array());
  CHECK(not_object.reason() == "expected an object, found an array");
}

TEST_CASE("hypothesis: option combinations without a meaning are rejected", "[loaders][hypothesis]") {
  InputError pb = hyp_error(json{{"name", "x"}, {"base", "most-room"}, {"registers", "pb"}});
  CHECK(pb.field() == "registers");
  CHECK(pb.reason() ==
        "'pb' pools registers per processing block, which needs warps placed on PBs (warps: pb-strict-rr or pb-any), "
        "not warps: sm");
  InputError pbc = hyp_error(json{{"name", "x"}, {"base", "alg1"}, {"warps", "sm"}, {"skip_on_multiple_of_4", false},
                                  {"registers", "pb-contiguous"}});
  CHECK(pbc.field() == "registers");
  CHECK_THAT(pbc.reason(), Catch::StartsWith("'pb-contiguous' pools registers per processing block"));

  // alg1 with warps: pb-any keeps alg1's skip: rejected.
  InputError skip = hyp_error(json{{"name", "x"}, {"base", "alg1"}, {"warps", "pb-any"}});
  CHECK(skip.field() == "skip_on_multiple_of_4");
  CHECK(skip.reason() ==
        "the skip (Mechanism 2.2) moves the strict round-robin PB pointer; it needs warps: pb-strict-rr, not 'pb-any'");
  InputError skip_sm = hyp_error(json{{"name", "x"}, {"base", "most-room"}, {"skip_on_multiple_of_4", true}});
  CHECK(skip_sm.field() == "skip_on_multiple_of_4");
  CHECK_THAT(skip_sm.reason(), Catch::EndsWith("not 'sm'"));

  // gpc-priority (seed 003) is implemented; an SM scan order has no meaning under it.
  CHECK(hypothesis_from_json(json{{"name", "x"}, {"base", "most-room"}, {"selection", "gpc-priority"}}, "h.json")
            .selection == Selection::GpcPriority);
  InputError gpc = hyp_error(json{{"name", "x"}, {"base", "olmedo"}, {"selection", "gpc-priority"}});
  CHECK(gpc.field() == "order");
  CHECK_THAT(gpc.reason(), Catch::Contains("must be 'natural', not 'even-first'"));
}

TEST_CASE("hypothesis: set_option sets a mechanism as a file field would, and combination_error names the field", "[hypothesis]") {
  model::Hypothesis h = test::hyp("most-room");
  model::set_option(h, "warps", "pb-strict-rr");
  model::set_option(h, "skip_on_multiple_of_4", true);
  model::set_option(h, "smem_ignore_below", 3072);
  CHECK(h.warps == model::Warps::PbStrictRR);
  CHECK(h.skip_on_multiple_of_4);
  CHECK(h.smem_ignore_below == 3072);
  model::set_option(h, "smem_ignore_below", nullptr);
  CHECK(!h.smem_ignore_below);
  CHECK(!model::combination_error(h));
  CHECK_THROWS_AS(model::set_option(h, "warps", "fastest"), std::invalid_argument);
  CHECK_THROWS_AS(model::set_option(h, "no-such-mechanism", "x"), std::invalid_argument);
  CHECK_THROWS_AS(model::set_option(h, "skip_on_multiple_of_4", "yes"), std::invalid_argument);
  model::set_option(h, "warps", "pb-any");  // the skip needs strict round robin
  const auto e = model::combination_error(h);
  REQUIRE(e);
  CHECK(e->field == "skip_on_multiple_of_4");
  CHECK_THAT(e->reason, Catch::Contains("pb-strict-rr"));
}

TEST_CASE("hypothesis: files and name lists", "[loaders][hypothesis]") {
  auto dir = std::filesystem::temp_directory_path() / "tbcheck-test-hypothesis";
  std::filesystem::create_directories(dir);
  auto path = (dir / "mine.json").string();
  {
    std::ofstream out(path);
    out << R"({"name": "mine", "base": "alg1", "capacity": "literal"})";
  }
  Hypothesis h = load_hypothesis_file(path);
  CHECK(h.file == path);
  CHECK(h.same_options(test::hyp("alg1-literal")));

  std::vector<Hypothesis> two = resolve_hypotheses("alg1," + path);
  REQUIRE(two.size() == 2);
  CHECK(two[0].name == "alg1");
  CHECK(two[1].name == "mine");
  CHECK(resolve_hypotheses("all").size() == 15);
  CHECK(resolve_hypotheses("olmedo,most-room")[1].name == "most-room");

  InputError unknown = error_of([] { resolve_hypotheses("alg9"); });
  CHECK_THAT(unknown.reason(), Catch::StartsWith("unknown hypothesis 'alg9'; shipped hypotheses are: round-robin"));
  InputError twice = error_of([] { resolve_hypotheses("alg1,alg1"); });
  CHECK(twice.reason() == "hypothesis 'alg1' is given twice");
  InputError empty = error_of([] { resolve_hypotheses(""); });
  CHECK(empty.reason() == "no hypothesis given");

  {
    std::ofstream out(path);
    out << R"({"name": "mine", "base": "alg1", "capacity": "literal",})";
  }
  InputError bad = error_of([&] { load_hypothesis_file(path); });
  CHECK(bad.where() == path);
  CHECK_THAT(bad.reason(), Catch::StartsWith("malformed JSON at byte"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("hypothesis: the option table lists every option with its source", "[loaders][hypothesis]") {
  auto listed = [](std::string_view mechanism, std::string_view value) {
    for (const auto& o : option_table())
      if (o.mechanism == mechanism && o.value == value) return !o.cites.empty() && !o.meaning.empty();
    return false;
  };
  for (auto v : {Selection::RoundRobin, Selection::MostRoom, Selection::GpcPriority}) CHECK(listed("selection", to_string(v)));
  for (auto v : {Order::Natural, Order::EvenFirst}) CHECK(listed("order", to_string(v)));
  for (auto v : {Warps::Sm, Warps::PbStrictRR, Warps::PbAny}) CHECK(listed("warps", to_string(v)));
  for (auto v : {Registers::Sm, Registers::Pb, Registers::PbContiguous}) CHECK(listed("registers", to_string(v)));
  for (auto v : {Smem::Counted, Smem::ContiguousFirstFit}) CHECK(listed("smem", to_string(v)));
  for (auto v : {SmemConfig::None, SmemConfig::Tpc, SmemConfig::Sm}) CHECK(listed("smem_config", to_string(v)));
  for (auto v : {Local::Ignore, Local::GpuConfig}) CHECK(listed("local", to_string(v)));
  for (auto v : {Capacity::Blocks, Capacity::Literal}) CHECK(listed("capacity", to_string(v)));
  for (auto v : {Issue::Single, Issue::Paired, Issue::PairedCc8, Issue::FromDevice}) CHECK(listed("issue", to_string(v)));
  for (auto v : {Priority::Ignore, Priority::Strict, Priority::TwoLevel}) CHECK(listed("priority", to_string(v)));
  for (auto v : {Partition::AllowedSms, Partition::Ignore}) CHECK(listed("partition", to_string(v)));
  CHECK(listed("skip_on_multiple_of_4", "true"));
  CHECK(listed("registers_ignore_at_or_below", "<int>"));
  CHECK(listed("smem_ignore_below", "<int>"));
  CHECK_FALSE(listed("warps", "bogus"));
}

TEST_CASE("hypothesis: settings, table columns and keys come from the mechanism descriptors", "[hypothesis]") {
  const Hypothesis& alg1 = test::hyp("alg1");
  // Every mechanism key is a field of the file shape, in the same order, and has option_table rows.
  const auto keys = mechanism_keys();
  json j = alg1.to_json();
  for (auto k : keys) {
    INFO(k);
    CHECK(j.contains(std::string(k)));
    bool rows = false;
    for (const auto& o : option_table()) rows = rows || o.mechanism == k;
    CHECK(rows);
  }
  CHECK(j.size() == keys.size() + 3);  // name, source, description
  // option_settings: one per mechanism, the value as in the JSON, the row it chose.
  const auto settings = option_settings(alg1);
  REQUIRE(settings.size() == keys.size());
  for (size_t i = 0; i < settings.size(); ++i) {
    INFO(settings[i].mechanism);
    CHECK(settings[i].mechanism == keys[i]);
    REQUIRE(settings[i].row != nullptr);
    CHECK(settings[i].row->mechanism == keys[i]);
    const json& v = j[std::string(keys[i])];
    if (v.is_string()) CHECK(settings[i].value == v.get<std::string>());
    if (v.is_null()) CHECK((settings[i].value == "off" && !settings[i].on));
  }
  // The table: one column per enumerated mechanism (issue included, so alg1 and alg1-paired differ);
  // the skip flag shows in the warps column.
  auto cols = option_columns(alg1), paired = option_columns(test::hyp("alg1-paired"));
  REQUIRE(cols.size() == paired.size());
  bool differ = false;
  for (size_t i = 0; i < cols.size(); ++i) differ = differ || cols[i].cell != paired[i].cell;
  CHECK(differ);
  CHECK(cols.back().header == "numbering");  // the block numbering came last
  for (const auto& c : cols)
    if (c.header == "warps") CHECK(c.cell == "pb-strict-rr +skip");
  // Every enumerated value named in the table reads back to itself.
  for (const auto& o : option_table()) {
    if (o.value == "<int>" || o.value == "true") continue;
    json x = alg1.to_json();
    x["name"] = "t";
    x["selection"] = "most-room";
    x["order"] = "natural";
    x["issue"] = "single";
    x[std::string(o.mechanism)] = o.value;
    if (o.mechanism == "warps" && o.value != "pb-strict-rr") x["skip_on_multiple_of_4"] = false;
    if (o.mechanism == "warps" && o.value == "sm") x["registers"] = "sm";
    if (o.mechanism == "numbering" && o.value != "dispatch") x["selection"] = "tpc-position";  // it numbers a spread
    INFO(o.mechanism << ": " << o.value);
    if (o.mechanism == "selection" && o.value == "rule") {  // its object form (docs/rules.md); the name alone is refused
      x["selection"] = {{"rule", {{{"key", "room"}, {"prefer", "max"}}}}};
      CHECK(hypothesis_from_json(x, "t.json").to_json()["selection"] == x["selection"]);
      continue;
    }
    CHECK(hypothesis_from_json(x, "t.json").to_json()[std::string(o.mechanism)] == o.value);
  }
}

TEST_CASE("hypothesis: priority and partition are optional, defaulting to today's behaviour", "[loaders][hypothesis][controls]") {
  // A complete file written before the controls (no priority, no partition) loads with the defaults.
  Hypothesis h = hypothesis_from_json(full(), "old.json");
  CHECK(h.priority == Priority::Ignore);
  CHECK(h.partition == Partition::AllowedSms);
  json j = full();
  j["priority"] = "two-level";
  j["partition"] = "ignore";
  h = hypothesis_from_json(j, "new.json");
  CHECK(h.priority == Priority::TwoLevel);
  CHECK(h.partition == Partition::Ignore);
  CHECK(h.to_json()["priority"] == "two-level");
  j["priority"] = "fifo";
  auto e = test::error_of([&] { hypothesis_from_json(j, "bad.json"); });
  CHECK(e.field() == "priority");
  CHECK_THAT(e.reason(), Catch::Contains("ignore, strict, two-level"));
  // The files beside the shipped set load by path.
  CHECK(load_hypothesis_file(test::source_path("corpus/hypotheses-extra/alg1-two-level.json")).priority == Priority::TwoLevel);
  CHECK(load_hypothesis_file(test::source_path("corpus/hypotheses-extra/alg1-partition-ignore.json")).partition ==
        Partition::Ignore);
}

TEST_CASE("hypothesis: retirement is optional, and gpc-priority keeps all-then-dispatch", "[loaders][hypothesis][retirement]") {
  json j = {{"name", "s"}, {"base", "alg1"}, {"retirement", "start-order"}};
  CHECK(hypothesis_from_json(j, "t").retirement == Retirement::StartOrder);
  CHECK(hypothesis_from_json({{"name", "d"}, {"base", "alg1"}}, "t").retirement == Retirement::AllThenDispatch);
  json f = {{"name", "f"}, {"base", "fermi"}, {"retirement", "start-order"}};
  InputError e = hyp_error(f);
  CHECK(e.field() == "retirement");
  CHECK(e.reason().find("gpc-priority") != std::string::npos);
}

TEST_CASE("hypothesis: a file cannot take a shipped hypothesis's name with other options", "[loaders][hypothesis]") {
  tbcheck::test::TempDir t;
  const std::string f = t.write("alg1.json", R"({"name": "alg1", "base": "most-room"})");
  const auto e = tbcheck::test::error_of([&] { model::resolve_hypotheses(f); });
  CHECK(e.where() == f);
  CHECK(e.field() == "name");
  CHECK(e.reason().find("shipped hypothesis") != std::string::npos);
  // The shipped file itself (same options) still loads by path.
  CHECK(model::resolve_hypotheses(tbcheck::test::source_path("corpus/hypotheses/alg1.json")).at(0).name == "alg1");
  CHECK(model::resolve_hypotheses(t.write("mine.json", R"({"name": "mine", "base": "most-room"})")).at(0).name == "mine");
}

TEST_CASE("docs/design.md's option table is the one the mechanism descriptors generate", "[hypothesis][docs]") {
  std::ifstream in(test::source_path("docs/design.md"));
  REQUIRE(in);
  std::string line, table;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("| mechanism (JSON field) |", 0) == 0) inside = true;
    if (inside && line.rfind("|", 0) != 0) break;
    if (inside) table += line + "\n";
  }
  INFO("regenerate with: build/cli/tbcheck hypotheses --options --markdown (and paste it over the table)");
  CHECK(table == option_table_markdown());
}

TEST_CASE("hypothesis: a name with a control character is refused naming the field, never echoed", "[loaders][hypothesis]") {
  for (const std::string& name : {std::string("x\033[2J"), std::string("x\0y", 3), std::string("x\ny"), std::string("x\x7f")}) {
    auto e = hyp_error(json{{"name", name}, {"base", "alg1"}});
    CHECK(e.field() == "name");
    CHECK_THAT(e.reason(), Catch::Contains("control character 0x"));
    for (char ch : std::string(e.what())) CHECK((static_cast<unsigned char>(ch) >= 0x20 && ch != 0x7f));
  }
}
