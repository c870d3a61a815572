// Running the tbcheck binary from tests (end-to-end checks of exit codes and messages).
// Uses popen from the repository root so relative corpus paths work as a user types them.
#include "helpers.hpp"

#include <array>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace tbcheck::test {

RunResult run_tbcheck(const std::string& args) {
  std::string cmd = "cd '" + std::string(TBCHECK_SOURCE_DIR) + "' && '" + std::string(TBCHECK_BINARY) + "' " + args + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

ScratchDir::ScratchDir(const std::string& tag) {
  static std::atomic<int> serial{0};
  const auto p = std::filesystem::temp_directory_path() /
                 ("tbcheck-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  path = p.string();
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

}  // namespace tbcheck::test
