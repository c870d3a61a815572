// `tbcheck devices` and `tbcheck hypotheses`: what is built in, as tables or JSON.
// The option registry (with the paper section of every option) is shown by `hypotheses --options`.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {
namespace {

struct Devices : Command {
  bool json = false;
  int run() override {
    const auto& ds = model::builtin_devices();
    if (json) {
      auto j = envelope();
      j["devices"] = nlohmann::json::array();
      for (const auto& d : ds) j["devices"].push_back(d.to_json());
      print_json(j);
      return kExitOk;
    }
    // Short headers and the descriptions below the table keep it within report::output_width() columns; --json
    // has every field.
    report::Table t({"name", "cc", "SMs", "TPCs", "PBs", "blocks", "warps", "regs", "unit", "smem KB", "rsvd", "smem/blk"});
    for (size_t c : {2u, 3u, 4u, 5u, 6u, 7u, 8u, 10u, 11u}) t.right_align(c);
    t.wrap(9);
    for (const auto& d : ds)
      t.add({d.name, d.cc, std::to_string(d.sms), std::to_string(d.tpcs()), std::to_string(d.pbs_per_sm),
             std::to_string(d.max_blocks_per_sm), std::to_string(d.max_warps_per_sm), std::to_string(d.regs_per_sm),
             std::to_string(d.reg_alloc_unit), fmt::format("{}", fmt::join(d.smem_configs_kb, "/")),
             std::to_string(d.smem_reserved_per_block), std::to_string(d.max_smem_per_block)});
    say("{}Per SM: blocks, warps, registers; unit: register allocation unit; smem KB: shared memory\n"
               "configurations; rsvd: bytes reserved per block; smem/blk: most shared memory bytes per block.\n\n"
               "Descriptions:\n",
               t.render());
    size_t name_width = 0;
    for (const auto& d : ds) name_width = std::max(name_width, d.name.size());
    for (const auto& d : ds) {
      const auto lines = report::wrap_text(d.description, report::output_width() - name_width - 4);
      for (size_t i = 0; i < lines.size(); ++i)
        say("  {:<{}}  {}\n", i == 0 ? d.name : "", name_width, lines[i]);
    }
    return kExitOk;
  }
};

// One column per mechanism of the option registry, in its order, so a new mechanism shows up without
// touching this file. A field whose values are not names ("true", "<int>") refines the mechanism before
// it and is shown in that column when set: "pb-strict-rr +skip", "sm (ignore at or below 32)".
struct Hypotheses : Command {
  bool json = false, options = false, markdown = false;
  int run() override {
    if (markdown && !options) throw model::InputError("--markdown", "", "needs --options (it formats the option table)");
    if (options) return run_options();
    const auto& hs = model::builtin_hypotheses();
    if (json) {
      auto j = envelope();
      j["hypotheses"] = nlohmann::json::array();
      for (const auto& h : hs) j["hypotheses"].push_back(h.to_json());
      print_json(j);
      return kExitOk;
    }
    print_hypotheses(hs);
    say("\nA new hypothesis is a JSON file of these options (optionally \"base\": a shipped one); "
        "`tbcheck hypotheses --options` lists every option with its paper section.\n");
    return kExitOk;
  }
  // The shipped hypotheses, one row each, and where each comes from: what `hypotheses` shows, and what
  // `hypotheses --options` shows before the options (the README's tour promises both).
  static void print_hypotheses(const std::vector<model::Hypothesis>& hs) {
    std::vector<std::string> headers = {"name"};
    for (const auto& c : model::option_columns(model::Hypothesis{})) headers.emplace_back(c.header);
    report::Table t(headers);
    for (const auto& h : hs) {
      std::vector<std::string> row = {h.name};
      for (auto& c : model::option_columns(h)) row.push_back(std::move(c.cell));
      t.add(row);
    }
    say("{}\nSources:\n", t.render());
    size_t name_width = 0;
    for (const auto& h : hs) name_width = std::max(name_width, h.name.size());
    for (const auto& h : hs) say("  {:<{}}  {}\n", h.name, name_width, h.source);
  }
  int run_options() {
    if (markdown) {  // docs/design.md's tables and docs/rules.md's (tests keep the documents in step)
      fmt::print("{}\n{}\n{}", model::option_table_markdown(), model::shipped_rules_markdown(),
                 model::rule_feature_table_markdown());
      return kExitOk;
    }
    const auto& hs = model::builtin_hypotheses();
    if (json) {
      auto j = envelope();
      j["hypotheses"] = nlohmann::json::array();
      for (const auto& h : hs) j["hypotheses"].push_back(h.to_json());
      j["options"] = nlohmann::json::array();
      for (const auto& o : model::option_table())
        j["options"].push_back({{"mechanism", o.mechanism}, {"value", o.value}, {"cites", o.cites}, {"meaning", o.meaning}});
      // The rule language (docs/rules.md): its features, and the shipped rankings in its "selection" form.
      j["rule_features"] = nlohmann::json::array();
      for (const auto& f : model::rule_features())
        j["rule_features"].push_back({{"key", f.name},
                                      {"meaning", f.meaning},
                                      {"needs_gpc_map", f.needs_gpc_map},
                                      {"state", f.state == model::FeatureState::Pointer ? "round-robin pointer" : "none"}});
      j["selection_rules"] = nlohmann::json::object();
      for (model::Selection s : {model::Selection::RoundRobin, model::Selection::MostRoom, model::Selection::GpcSpread,
                                 model::Selection::TpcPosition})
        j["selection_rules"][std::string(model::to_string(s))] = model::rule_to_json(*model::selection_as_rule(s));
      print_json(j);
      return kExitOk;
    }
    say("Shipped hypotheses (each one option per mechanism):\n\n");
    print_hypotheses(hs);
    say("\nMechanism options (a hypothesis file picks one per mechanism; \"base\" starts from a shipped one):\n\n");
    report::Table t({"mechanism", "option", "from", "meaning"});
    t.wrap(2);
    t.wrap(3);
    for (const auto& o : model::option_table())
      t.add({std::string(o.mechanism), std::string(o.value), std::string(o.cites), std::string(o.meaning)});
    say("{}", t.render());
    say("\nSelection rules (docs/rules.md): \"selection\": {{\"rule\": [{{\"key\": K, \"prefer\": \"min\" or \"max\"}}, "
        "...]}} ranks the SMs with room by these keys in turn, then by scan position:\n\n");
    report::Table f({"key", "needs", "meaning"});
    f.wrap(2);
    for (const auto& x : model::rule_features())
      f.add({std::string(x.name), x.needs_gpc_map ? "a GPC map" : "-", std::string(x.meaning)});
    say("{}\nThe shipped selections as rules:\n\n", f.render());
    for (model::Selection s : {model::Selection::RoundRobin, model::Selection::MostRoom, model::Selection::GpcSpread,
                               model::Selection::TpcPosition})
      say("  {:<13} {}\n", model::to_string(s), model::rule_text(*model::selection_as_rule(s)));
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_devices(CLI::App& app) {
  auto c = std::make_unique<Devices>();
  c->app = app.add_subcommand("devices", "List the built-in devices and their per-SM limits");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

std::unique_ptr<Command> make_hypotheses(CLI::App& app) {
  auto c = std::make_unique<Hypotheses>();
  c->app = app.add_subcommand("hypotheses", "List the shipped hypotheses and their mechanism options");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  c->app->add_flag("--options", c->options, "The shipped hypotheses, then every mechanism option with the paper section it comes from");
  c->app->add_flag("--markdown", c->markdown, "With --options: the Markdown table docs/design.md shows");
  return c;
}

}  // namespace tbcheck::cli
