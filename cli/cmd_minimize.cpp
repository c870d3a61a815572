// `tbcheck minimize`: delta debugging of one case while two hypotheses still disagree
// (--keep-disagreement a,b) or a prediction still contradicts the case's observation (--keep-failure h).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/one_case.hpp"
#include "tbcheck/search/minimize.hpp"

namespace tbcheck::cli {
namespace {

struct Minimize : Command {
  std::string case_path, case_id, disagreement, failure, level_name, out_path;
  bool force = false, json = false;

  int run() override {
    if (disagreement.empty() == failure.empty())
      throw model::InputError(case_path, "--keep-disagreement/--keep-failure", "give exactly one of the two");
    const model::Case in = model::load_one_case(case_path, case_id, "minimize");
    search::MinimizeOptions o;
    if (!disagreement.empty()) {
      o.goal = search::MinimizeGoal::KeepDisagreement;
      o.hypotheses = with_flag("--hypothesis", "--keep-disagreement", [&] { return model::resolve_hypotheses(disagreement); });
      if (o.hypotheses.size() != 2)
        throw model::InputError(case_path, "--keep-disagreement",
                                fmt::format("expected two hypotheses (a,b), got {}", o.hypotheses.size()));
      if (!level_name.empty())
        throw model::InputError(case_path, "--level", "applies to --keep-failure only (disagreement is block by block)");
    } else {
      o.goal = search::MinimizeGoal::KeepFailure;
      o.hypotheses = with_flag("--hypothesis", "--keep-failure", [&] { return model::resolve_hypotheses(failure); });
      if (o.hypotheses.size() != 1)
        throw model::InputError(case_path, "--keep-failure", fmt::format("expected one hypothesis, got {}", o.hypotheses.size()));
      if (!level_name.empty()) o.level = model::level_from_string(level_name);
    }
    if (!out_path.empty()) model::check_output_file(out_path, force, "--out");  // before the work

    search::MinimizeResult r = search::minimize(in, o);
    std::string text = model::json_file_text(r.result.to_json(), 1);
    if (!out_path.empty()) model::write_file_atomic(out_path, text, /*no_overwrite=*/!force);

    if (json) {
      auto j = envelope();
      j["outcome"] = search::to_string(r.outcome);
      j["before"] = {{"kernels", r.before.kernels}, {"blocks", r.before.blocks}, {"duration", r.before.duration}};
      j["after"] = {{"kernels", r.after.kernels}, {"blocks", r.after.blocks}, {"duration", r.after.duration}};
      j["evaluations"] = r.evaluations;
      j["level"] = r.level ? nlohmann::json(model::to_string(*r.level)) : nlohmann::json();
      j["scope"] = r.scope;
      j["witness"] = r.witness;
      j["case"] = r.result.to_json();
      if (!out_path.empty()) j["written"] = out_path;
      print_json(j);
      return kExitOk;
    }
    say("before: {} kernels, {} blocks, summed duration {}\n", r.before.kernels, r.before.blocks, r.before.duration);
    say("after:  {} kernels, {} blocks, summed duration {} ({}, {} predicate evaluations)\n", r.after.kernels,
               r.after.blocks, r.after.duration, search::to_string(r.outcome), r.evaluations);
    if (r.level) say("level:  {}\n", model::to_string(*r.level));
    say("reductions: {}\nwitness: {}\n", r.scope, r.witness);
    if (out_path.empty()) say("\n{}", text);
    else say("written: {}\n", out_path);
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_minimize(CLI::App& app) {
  auto c = std::make_unique<Minimize>();
  c->app = app.add_subcommand("minimize", "Shrink a case (ddmin over kernels, then parameters) while a predicate holds");
  c->app->add_option("case", c->case_path, "One case or scenario file")->required();
  c->app->add_option("--case", c->case_id, "The id of the case to take from a collection file (e.g. an ntbs recording)");
  c->app->add_option("--keep-disagreement", c->disagreement, "Two hypotheses (a,b) whose schedules must still differ (this or --keep-failure is required)");
  c->app->add_option("--keep-failure", c->failure, "A hypothesis the case's observation must still contradict (this or --keep-disagreement is required)");
  c->app->add_option("--level", c->level_name, "With --keep-failure: exact, counts or sms (default: the coarsest failing)")
      ->check(CLI::IsMember({"exact", "counts", "sms"}));
  c->app->add_option("--out", c->out_path, "Write the minimized case here (atomic; no overwrite without --force)");
  c->app->add_flag("--force", c->force, "Replace an existing --out file");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
