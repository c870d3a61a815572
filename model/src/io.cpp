// Atomic file writes: temporary file in the same directory, flushed, then renamed.
// A failure removes the temporary so no partial output is left behind.
#include "tbcheck/model/io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"

namespace tbcheck::model {

void write_file_atomic(const std::string& path, const std::string& content, bool no_overwrite) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target(path);
  if (no_overwrite && fs::exists(target, ec))
    throw InputError(path, "", "already exists and is never overwritten (recorded results are kept)");
  fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) throw InputError(path, "", fmt::format("directory '{}' does not exist", dir.string()));
  std::random_device rd;
  fs::path tmp = dir / fmt::format(".{}.tmp{:08x}", target.filename().string(), rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(path, "", fmt::format("cannot create a file in '{}': {}", dir.string(), std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      throw InputError(path, "", "write failed (disk full?)");
    }
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path, "", fmt::format("cannot rename into place: {}", ec.message()));
  }
}

std::string file_safe(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
                    ch == '_' || ch == '-';
    out.push_back(ok ? ch : '-');
  }
  return out;
}

}  // namespace tbcheck::model
