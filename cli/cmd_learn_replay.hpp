// `learn --oracle replay:<recordings>` (cmd_learn_replay.cpp): learning from what a GPU was recorded doing,
// called by cmd_learn.cpp when the oracle names recordings instead of something that runs new scenarios.
#pragma once
#include <string>
#include <vector>

#include "common.hpp"
#include "tbcheck/search/learn_replay.hpp"
#include "tbcheck/search/learn_rules.hpp"

namespace tbcheck::cli {

bool is_replay_learning(const std::string& oracle_spec);  // "replay:<paths>"

// When learn goes on to search selection rules (search/learn_rules.hpp): `auto` after the composition space when
// nothing in it fits, `always` after any space (bases: the consistent candidates, else the nearest), `off`.
enum class RuleSearchMode { Auto, Always, Off };
struct RuleSearchFlags {
  std::string mode = "auto";  // a RuleSearchMode's name (checked by CLI11)
  search::RuleBound bound;
  RuleSearchMode parsed() const;
  bool wanted(search::LearnSpace space, bool something_fits) const;
};
void add_rule_search_options(CLI::App* app, RuleSearchFlags& f);

// Exit 0 when some candidate fits every recording, 1 when none does; bad input throws model::InputError.
int learn_from_recordings_command(const model::Device& dev, const std::vector<model::Hypothesis>& hs,
                                  const std::vector<model::Case>& corpus, const std::string& oracle_spec,
                                  const search::ReplayLearnOptions& opt, const std::string& out_dir, bool json,
                                  const RuleSearchFlags& rules);

}  // namespace tbcheck::cli
