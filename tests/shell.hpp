// Running a shell command line from tests (tests/helpers.cpp): what it writes on stdout and its exit code.
// Redirect inside the command to capture stderr; run_tbcheck builds its command line on this.
#pragma once
#include <string>

#include "helpers.hpp"

namespace tbcheck::test {

RunResult run_shell(const std::string& command);

}  // namespace tbcheck::test
