// A fresh temporary folder per test, removed with everything in it at the end of the test; paths
// inside it as strings, and small files written into it.
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

namespace tbcheck::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag = "scratch") {
    path = std::filesystem::temp_directory_path() /
           ("tbcheck-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(serial()++));
    std::filesystem::remove_all(path);  // a leftover of an earlier process with the same pid
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  // Unique within the process, across threads; the pid makes it unique across processes.
  static std::atomic<int>& serial() {
    static std::atomic<int> n{0};
    return n;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string operator/(const std::string& rel) const { return (path / rel).string(); }
  // Writes `text` to `rel` (creating its folders) and returns the full path.
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path / rel).parent_path());
    std::ofstream(path / rel) << text;
    return (path / rel).string();
  }
};

}  // namespace tbcheck::test
