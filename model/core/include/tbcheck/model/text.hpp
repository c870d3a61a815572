// Small text helpers shared by messages and reports (kept in model so error messages and
// human output format lists the same way).
#pragma once
#include <string>
#include <vector>

namespace tbcheck::model {

// "0, 2, ..., 80" for arithmetic runs longer than four, else the full list.
std::string format_int_list(const std::vector<int>& v);

// Why `name` cannot be printed as it is ("holds the control character 0x1b; ..."), or "" when it can: a
// name read from a file reaches the terminal in every table, so ESC, NUL or a newline in it could rewrite
// the user's screen. Loaders refuse such names as they refuse such case ids.
std::string unprintable_name_reason(const std::string& name);

}  // namespace tbcheck::model
