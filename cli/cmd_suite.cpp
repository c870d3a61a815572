// `tbcheck suite`: the fewest cases of a corpus that separate every separable pair of hypotheses,
// with the pairs each chosen case separates and the pairs no case separates.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/report/table.hpp"
#include "tbcheck/search/suite.hpp"

namespace tbcheck::cli {
namespace {

struct Suite : Command {
  std::vector<std::string> paths;
  std::string hypothesis_spec = "all";
  bool json = false;

  int run() override {
    auto hs = model::resolve_hypotheses(hypothesis_spec);
    std::vector<model::Case> cases;
    for (const auto& p : paths)
      for (auto& c : model::load_cases(p)) cases.push_back(std::move(c));
    if (cases.empty()) throw model::InputError(fmt::format("{}", fmt::join(paths, " ")), "", "no corpus cases found");
    // Every case simulated under every hypothesis: minutes on a large corpus. The line ends with the work.
    const search::SuiteResult r = [&] {
      report::Progress progress("suite", cases.size());
      return search::greedy_suite(cases, hs, [&] { progress.tick(); });
    }();
    auto pair_name = [&](const std::pair<size_t, size_t>& p) { return hs[p.first].name + " / " + hs[p.second].name; };
    if (json) {
      auto j = envelope();
      j["cases_considered"] = cases.size();
      j["separable_pairs"] = r.separable_pairs;
      j["suite"] = nlohmann::json::array();
      for (size_t i = 0; i < r.chosen.size(); ++i) {
        nlohmann::json pairs = nlohmann::json::array();
        for (const auto& p : r.covers[i]) pairs.push_back(pair_name(p));
        j["suite"].push_back({{"case", cases[r.chosen[i]].id}, {"file", cases[r.chosen[i]].file},
                              {"blocks", cases[r.chosen[i]].scenario.total_blocks()}, {"separates", pairs}});
      }
      j["unseparated"] = nlohmann::json::array();
      for (const auto& p : r.unseparated) j["unseparated"].push_back(pair_name(p));
      print_json(j);
      return kExitOk;
    }
    report::Table t({"#", "case", "blocks", "new pairs separated"});
    t.right_align(2);
    t.right_align(3);
    for (size_t i = 0; i < r.chosen.size(); ++i)
      t.add({std::to_string(i + 1), cases[r.chosen[i]].id, std::to_string(cases[r.chosen[i]].scenario.total_blocks()),
             std::to_string(r.covers[i].size())});
    size_t pairs = hs.size() * (hs.size() - 1) / 2;
    say("{} of {} cases separate all {} separable pairs (of {}):\n{}", r.chosen.size(), cases.size(), r.separable_pairs,
               pairs, t.render());
    if (!r.unseparated.empty()) {
      say("\nNo case separates {} pair(s):\n", r.unseparated.size());
      for (const auto& p : r.unseparated) say("  {}\n", pair_name(p));
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_suite(CLI::App& app) {
  auto c = std::make_unique<Suite>();
  c->app = app.add_subcommand("suite", "Fewest corpus cases that separate every separable pair of hypotheses");
  c->app->add_option("paths", c->paths, "Case files, collection files or directories")->required();
  c->app->add_option(kHypothesisOption, c->hypothesis_spec, "Comma list, 'all' (default) or hypothesis files");
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
