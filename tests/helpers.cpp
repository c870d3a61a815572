// Running the tbcheck binary from tests (end-to-end checks of exit codes and messages).
// Uses popen from the repository root so relative corpus paths work as a user types them.
#include "helpers.hpp"

#include <array>
#include <cstdio>
#include <atomic>
#include <sys/wait.h>
#include <unistd.h>
#include <filesystem>

namespace tbcheck::test {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path = std::filesystem::temp_directory_path() /
         ("tbcheck-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string TempDir::write(const std::string& name, const std::string& text) const {
  const auto p = path / name;
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

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

}  // namespace tbcheck::test
