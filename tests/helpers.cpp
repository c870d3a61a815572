// Running the tbcheck binary from tests (end-to-end checks of exit codes and messages).
// Uses popen from the repository root so relative corpus paths work as a user types them.
#include "helpers.hpp"
#include "shell.hpp"

#include <array>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>

namespace tbcheck::test {

RunResult run_tbcheck(const std::string& args) {
  // Wide: these tests read whole lines of content; the layout at a terminal's width is test_width.cpp's.
  return run_tbcheck(args, "100000");
}

RunResult run_tbcheck(const std::string& args, const std::string& columns) {
  std::string cmd = "cd '" + std::string(TBCHECK_SOURCE_DIR) + "' && COLUMNS='" + columns + "' '" +
                    std::string(TBCHECK_BINARY) + "' " + args + " 2>&1";
  return run_shell(cmd);
}

RunResult run_shell(const std::string& command) {
  RunResult r;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace tbcheck::test
