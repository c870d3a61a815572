// The whole command line as a library function, so main() stays one line and the CLI fuzzer can
// call the same entry point in-process with generated argument vectors.
#pragma once
#include <string>
#include <vector>

namespace tbcheck::cli {

// Parses argv, runs the chosen command and returns its exit code: 0 ok, 1 a hypothesis failed or
// cases disagree, 2 bad input (named file, flag or field), 3 an internal error (a bug to report). A stop
// (model/stop.hpp) ends the process by its signal where main() installed the handlers, else returns 128 + it.
int tbcheck_main(int argc, char** argv);

// The message for a first argument that names no command: what was typed (control characters escaped)
// and the nearest of `commands` where one is close.
std::string unknown_command_message(const std::string& typed, const std::vector<std::string>& commands);

}  // namespace tbcheck::cli
