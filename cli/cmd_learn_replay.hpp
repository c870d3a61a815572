// `learn --oracle replay:<recordings>` (cmd_learn_replay.cpp): learning from what a GPU was recorded doing,
// called by cmd_learn.cpp when the oracle names recordings instead of something that runs new scenarios.
#pragma once
#include <string>
#include <vector>

#include "common.hpp"
#include "tbcheck/search/learn_replay.hpp"

namespace tbcheck::cli {

bool is_replay_learning(const std::string& oracle_spec);  // "replay:<paths>"

// Exit 0 when some candidate fits every recording, 1 when none does; bad input throws model::InputError.
int learn_from_recordings_command(const model::Device& dev, const std::vector<model::Hypothesis>& hs,
                                  const std::vector<model::Case>& corpus, const std::string& oracle_spec,
                                  const search::ReplayLearnOptions& opt, const std::string& out_dir, bool json);

}  // namespace tbcheck::cli
