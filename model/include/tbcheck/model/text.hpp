// Small text helpers shared by messages and reports (kept in model so error messages and
// human output format lists the same way).
#pragma once
#include <string>
#include <vector>

namespace tbcheck::model {

// "0, 2, ..., 80" for arithmetic runs longer than four, else the full list.
std::string format_int_list(const std::vector<int>& v);

}  // namespace tbcheck::model
