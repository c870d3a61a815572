// The one front door from what a user writes after --hypothesis to hypotheses: shipped names, `all`, hypothesis
// files (with threshold intervals where the caller takes them) and composition names as learn prints them.
#pragma once
#include <string>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/thresholds.hpp"

namespace tbcheck::model {

// Resolves a comma list of names, "all", paths to hypothesis files, and composition names as learn prints them
// ("alg1+registers=pb"; named canonically, so the same composition spelt in another order is the same name).
// Errors about the list itself name `flag`, the option the user wrote it in.
std::vector<Hypothesis> resolve_hypotheses(const std::string& spec, const std::string& flag = "--hypothesis");
// The items of a comma list as --hypothesis takes it, empty ones dropped; an InputError when none is left.
std::vector<std::string> hypothesis_list_items(const std::string& spec, const std::string& flag = "--hypothesis");
// An InputError naming the first name given twice: result tables know a hypothesis by its name.
void check_distinct_hypothesis_names(const std::vector<std::string>& names, const std::string& flag = "--hypothesis");
void check_distinct_hypothesis_names(const std::vector<Hypothesis>& hs, const std::string& flag = "--hypothesis");
void check_distinct_hypothesis_names(const std::vector<RangedHypothesis>& hs, const std::string& flag = "--hypothesis");

// A comma list as resolve_hypotheses takes it; a file may give thresholds as intervals. A malformed interval
// is an InputError naming the file and the field.
std::vector<RangedHypothesis> resolve_ranged_hypotheses(const std::string& spec);

}  // namespace tbcheck::model
