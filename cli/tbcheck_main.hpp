// The whole command line as a library function, so main() stays one line and the CLI fuzzer can
// call the same entry point in-process with generated argument vectors.
#pragma once

namespace tbcheck::cli {

// Parses argv, runs the chosen command and returns its exit code: 0 ok, 1 a hypothesis failed or
// cases disagree, 2 bad input (named file, flag or field), 3 an internal error (a bug to report).
int tbcheck_main(int argc, char** argv);

}  // namespace tbcheck::cli
