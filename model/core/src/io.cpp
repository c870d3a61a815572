// Atomic file writes: a hidden temporary named after the process in the target's folder, written, then
// renamed over the target or, with no overwrite, placed without replacing.
// Temporaries are removed on failure and on SIGINT/SIGTERM/SIGHUP; those a killed process left are
// removed by the next write into the folder.
#include "tbcheck/model/io.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/model/stop.hpp"

namespace tbcheck::model {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTmpTag = ".tbcheck-tmp.";

// The temporaries this process has open, for the signal handler: fixed storage (a handler may not
// allocate), a slot is claimed (1) while its path is copied and armed (2) once the handler may read it.
constexpr int kSlots = 64;
constexpr size_t kSlotPath = 4096;
struct Slot {
  std::atomic<int> state{0};
  char path[kSlotPath];
};
Slot g_slots[kSlots];

extern "C" void remove_temporaries_and_reraise(int sig) {
  remove_open_temporaries();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

void remove_open_temporaries() noexcept {
  for (auto& s : g_slots)
    if (s.state.load() == 2) ::unlink(s.path);
}

namespace {

// Handlers only where nobody installed one (an embedding program keeps its own).
void install_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_temporaries_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Registers a temporary; returns its slot or -1 when all are taken (the file is then only removed
// by the normal paths and by the next write's stale cleanup).
int register_temporary(const std::string& path) {
  if (path.size() >= kSlotPath) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1)) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2);
    return i;
  }
  return -1;
}
void unregister_temporary(int slot) {
  if (slot >= 0) g_slots[slot].state.store(0);
}

// Removes temporaries in `dir` whose process is gone (a run killed by SIGKILL or a power cut); done
// once per folder per process so that writing many files into one folder stays linear.
void remove_stale_temporaries(const fs::path& dir) {
  static std::mutex m;
  static std::set<std::string> done;
  {
    std::lock_guard<std::mutex> lock(m);
    if (!done.insert(dir.string()).second) return;
  }
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (!is_temporary_name(name)) continue;
    const size_t at = name.find(kTmpTag) + std::strlen(kTmpTag);
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + at, &end, 10);
    if (end == name.c_str() + at || *end != '.' || pid <= 0 || pid == static_cast<long>(::getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    ::unlink((dir / name).c_str());
  }
  ::closedir(d);
}

// Places `tmp` at `target` only when nothing is there, atomically across processes.
bool place_without_replacing(const fs::path& tmp, const fs::path& target) {
#ifdef RENAME_NOREPLACE
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return false;
#endif
  // File systems without RENAME_NOREPLACE: link(2) fails with EEXIST when the name is taken.
  if (::link(tmp.c_str(), target.c_str()) != 0) return false;
  ::unlink(tmp.c_str());
  return true;
}

std::string reason(int err) { return std::strerror(err); }

// The nearest existing ancestor of a folder that does not exist yet must be a writable folder.
void check_folder_writable(const fs::path& dir, const std::string& shown, const std::string& flag) {
  std::error_code ec;
  fs::path p = dir.empty() ? fs::path(".") : dir;
  while (!fs::exists(fs::symlink_status(p, ec)) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  if (!fs::exists(p, ec)) p = ".";
  if (!fs::is_directory(p, ec))
    throw InputError(shown, flag, fmt::format("'{}' is not a folder", p.string()));
  if (::access(p.c_str(), W_OK | X_OK) != 0)
    throw InputError(shown, flag, fmt::format("cannot write in '{}': {}", p.string(), reason(errno)));
}

// Only regular files (or new paths) are ever written: a rename over a device node, a FIFO or a socket would
// replace it with a regular file, and a directory cannot be replaced. A symbolic link is judged by what it
// names (the rename replaces the link itself, never its target).
void check_regular_or_new(const fs::path& target, const std::string& shown, const std::string& flag) {
  std::error_code ec;
  const auto lst = fs::symlink_status(target, ec);
  if (!fs::exists(lst)) return;
  const auto st = fs::is_symlink(lst) ? fs::status(target, ec) : lst;
  if (fs::is_directory(st)) throw InputError(shown, flag, "is a directory");
  if (fs::is_symlink(lst) && !fs::exists(st)) return;  // a dangling link: the rename replaces the link
  if (!fs::is_regular_file(st))
    throw InputError(shown, flag, "is not a regular file (a device, FIFO or socket); only regular files or new paths are written");
}

}  // namespace

bool is_temporary_name(const std::string& filename) {
  return !filename.empty() && filename[0] == '.' && filename.find(kTmpTag) != std::string::npos;
}

bool is_hardware_record(const std::string& path) {
  std::error_code ec;
  auto under_hw = [](const fs::path& p) {
    fs::path prev;
    for (const auto& part : p) {
      if (prev == "corpus" && part == "hw") return true;
      prev = part;
    }
    return false;
  };
  const fs::path abs = fs::absolute(path, ec).lexically_normal();
  if (under_hw(abs)) return true;
  const fs::path real = fs::weakly_canonical(path, ec);  // through symbolic links
  return !ec && under_hw(real);
}

void check_json_text(const std::string& text, const std::string& flag, const std::string& what) {
  try {
    (void)json(text).dump();
  } catch (const json::type_error&) {
    const std::string shown = json(text).dump(-1, ' ', false, json::error_handler_t::replace);
    throw InputError(shown.substr(1, shown.size() - 2), flag, fmt::format("is not valid UTF-8; {} is written into JSON", what));
  }
}

// An output path is echoed in reports and written into JSON, which holds only UTF-8.
void check_path_text(const std::string& path, const std::string& flag) { check_json_text(path, flag, "an output path"); }

void check_output_file(const std::string& path, bool force, const std::string& flag) {
  check_path_text(path, flag);
  std::error_code ec;
  const fs::path target(path);
  const auto st = fs::symlink_status(target, ec);
  check_regular_or_new(target, path, flag);
  if (fs::exists(st)) {
    if (is_hardware_record(path))
      throw InputError(path, flag, "is a recorded hardware result under corpus/hw/ and is never replaced (not even with --force)");
    if (!force) throw InputError(path, flag, "already exists (--force replaces it)");
  }
  check_folder_writable(target.has_parent_path() ? target.parent_path() : fs::path("."), path, flag);
}

void check_output_dir(const std::string& dir, const std::string& flag) {
  check_path_text(dir, flag);
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError(dir, flag, "is not a folder");
  check_folder_writable(fs::path(dir), dir, flag);
}

namespace {

enum class Existing { Replace, KeepBeside, Leave };

// The one writer behind write_file_atomic and write_file_if_absent; false only for Existing::Leave when
// the target was already there.
bool write_atomic(const std::string& path, const std::string& content, Existing existing) {
  // A stop asked for before this write begins ends the command without starting another file.
  throw_if_stopped();
  const bool no_overwrite = existing != Existing::Replace;
  std::error_code ec;
  const fs::path target(path);
  if (target.filename().empty()) throw InputError(path, "", "names a folder, not a file");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  check_regular_or_new(target, path, "");
  if (!no_overwrite && fs::exists(fs::symlink_status(target, ec)) && is_hardware_record(path))
    throw InputError(path, "", "is a recorded hardware result under corpus/hw/ and is never replaced");
  // Folders this write creates are removed again when it fails (a full disk, a stop), so that a command
  // that writes nothing leaves no empty output folder behind; a folder holding anything stays.
  struct CreatedFolders {
    fs::path deepest, top;
    bool keep = false;
    ~CreatedFolders() {
      if (keep || top.empty()) return;
      std::error_code e;
      for (fs::path p = deepest; fs::remove(p, e) && p != top; p = p.parent_path()) {
      }
    }
  } created;
  if (!fs::exists(dir, ec)) {
    fs::path top = dir;
    while (top.has_parent_path() && top.parent_path() != top && !fs::exists(top.parent_path(), ec)) top = top.parent_path();
    fs::create_directories(dir, ec);
    if (ec) throw InputError(path, "", fmt::format("cannot create the folder '{}': {}", dir.string(), ec.message()));
    created.deepest = dir;
    created.top = top;
  } else if (!fs::is_directory(dir, ec)) {
    throw InputError(path, "", fmt::format("'{}' is not a folder", dir.string()));
  }
  install_handlers_once();
  remove_stale_temporaries(dir);

  static std::atomic<unsigned> counter{0};
  const fs::path tmp =
      dir / fmt::format(".{}{}{}.{}", target.filename().string(), kTmpTag, ::getpid(), counter.fetch_add(1));
  const int slot = register_temporary(tmp.string());
  auto discard = [&] {
    ::unlink(tmp.c_str());
    unregister_temporary(slot);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    unregister_temporary(slot);
    throw InputError(path, "", fmt::format("cannot create a file in '{}': {}", dir.string(), reason(err)));
  }
  // Fault-injection hook of the reliability tests: stall with half the temporary written, so a test
  // can kill or race the process mid-write deterministically.
  const char* stall_env = std::getenv("TBCHECK_TEST_WRITE_STALL_MS");
  const long stall_ms = stall_env ? std::strtol(stall_env, nullptr, 10) : 0L;
  size_t done = 0;
  int err = 0;
  bool stalled = stall_ms <= 0;
  while (done < content.size()) {
    if (!stalled && done >= content.size() / 2) {
      stalled = true;
      ::usleep(static_cast<useconds_t>(stall_ms) * 1000);
    }
    const size_t chunk = stalled ? content.size() - done : content.size() / 2 - done;
    const ssize_t n = ::write(fd, content.data() + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      err = n < 0 ? errno : EIO;
      break;
    }
    done += static_cast<size_t>(n);
  }
  // Atomicity against a killed process needs no fsync (the page cache outlives it); a power cut does.
  // Only hardware records, which cannot be re-made by rerunning, pay for it (EINVAL: no fsync there).
  if (!err && is_hardware_record(path) && ::fsync(fd) != 0 && errno != EINVAL) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (err) {
    discard();
    throw InputError(path, "", fmt::format("write failed: {}", reason(err)));
  }
  // A stop that arrived while writing: the file is not yet complete as far as the user can tell (it is
  // not in place), so it is dropped rather than placed after the user asked to stop.
  if (const int sig = stop_signal()) {
    discard();
    throw Stopped{sig};
  }

  if (!no_overwrite) {
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      err = errno;
      discard();
      throw InputError(path, "", fmt::format("cannot rename into place: {}", reason(err)));
    }
    unregister_temporary(slot);
    created.keep = true;
    return true;
  }
  if (place_without_replacing(tmp, target)) {
    unregister_temporary(slot);
    created.keep = true;
    return true;
  }
  err = errno;
  if (err != EEXIST) {
    discard();
    throw InputError(path, "", fmt::format("cannot place the file: {}", reason(err)));
  }
  if (fs::is_directory(fs::status(target, ec))) {
    discard();
    throw InputError(path, "", "is a directory");
  }
  if (existing == Existing::Leave) {
    discard();
    return false;
  }
  // Someone else's file is there (an earlier run, or one racing this one): keep this content beside it.
  const std::string stem = target.stem().string(), ext = target.extension().string();
  for (int n = 2; n < 100; ++n) {
    const fs::path alt = dir / fmt::format("{}.{}{}", stem, n, ext);
    if (place_without_replacing(tmp, alt)) {
      unregister_temporary(slot);
      created.keep = true;
      throw InputError(path, "", fmt::format("already exists and is never overwritten; this result was kept as {}",
                                             alt.string()));
    }
    if (errno != EEXIST) break;
  }
  discard();
  throw InputError(path, "", "already exists and is never overwritten (no free alternative name either)");
}

}  // namespace

void write_file_atomic(const std::string& path, const std::string& content, bool no_overwrite) {
  write_atomic(path, content, no_overwrite ? Existing::KeepBeside : Existing::Replace);
}

bool write_file_if_absent(const std::string& path, const std::string& content) {
  return write_atomic(path, content, Existing::Leave);
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

void check_case_id(const std::string& id, const std::string& where, const std::string& field) {
  if (id.empty()) throw InputError(where, field, "an empty id cannot name a file");
  if (id == "." || id == "..") throw InputError(where, field, fmt::format("'{}' cannot name a file", id));
  for (const char ch : id)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
      throw InputError(where, field, fmt::format("holds the control character 0x{:02x}; an id is printed and names a file",
                                                 static_cast<unsigned char>(ch)));
  if (id.find_first_of("/\\") != std::string::npos)
    throw InputError(where, field, fmt::format("'{}' holds a path separator; an id names one file in the output folder", id));
  if (id.size() > 200) throw InputError(where, field, fmt::format("is {} characters long; at most 200", id.size()));
}

}  // namespace tbcheck::model
