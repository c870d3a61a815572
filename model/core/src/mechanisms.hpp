// The registry's parser, shared by the shipped set and hypothesis files (hypothesis.cpp): private to the core.
// `base_of` finds the hypothesis a file's "base" names (the shipped set while it is being loaded).
#pragma once
#include <functional>
#include <string>

#include "tbcheck/model/hypothesis.hpp"

namespace tbcheck::model {

Hypothesis parse_hypothesis(const json& j, const std::string& where,
                            const std::function<const Hypothesis*(const std::string&)>& base_of);

}  // namespace tbcheck::model
