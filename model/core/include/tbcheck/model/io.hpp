// File input with the real reason for every refusal, and file output that never leaves a half-written
// file nor loses a record to a race (a hidden temporary beside the target, renamed or linked into place).
#pragma once
#include <cstdint>
#include <string>

namespace tbcheck::model {

// Input files are read whole; larger ones are refused before any allocation.
inline constexpr int64_t kMaxInputBytes = int64_t{1} << 30;

enum class InputKind { File, Directory };
// What an input path is, following symbolic links; anything else is an InputError with the real
// reason: no such file, a dangling symbolic link (naming its target), too many levels of symbolic
// links, permission denied, not a regular file. `flag` names the option it came from ("" for none).
InputKind input_kind(const std::string& path, const std::string& flag);
// The one place input files are opened: the whole text of a regular file (a directory, FIFO or
// device is refused without blocking, as is a file over kMaxInputBytes).
std::string read_input_file(const std::string& path, const std::string& flag);

// Writes `content` to `path` atomically; an InputError names the path and the reason on failure.
// Missing parent folders are created at the write (so a command that fails earlier creates nothing).
// With `no_overwrite`, an existing file is never replaced, also when another process creates it between
// any check and the write (renameat2 RENAME_NOREPLACE, or link(2) where the file system lacks it): the
// content is then kept as `<stem>.2<ext>` (`.3`, ...) and the InputError names that file.
// Without `no_overwrite` the file is replaced, except a file under a `corpus/hw/` folder (recorded
// hardware), which is never replaced.
// Only regular files or new paths are written: a device node, FIFO or socket at `path` is an InputError
// (also with --force), so a rename never replaces one with a regular file.
void write_file_atomic(const std::string& path, const std::string& content, bool no_overwrite = false);
// Writes `content` to `path` only when nothing is there (atomically across processes, as the no-overwrite
// write); returns false, writing nothing, when the name is taken.
bool write_file_if_absent(const std::string& path, const std::string& content);

// Checks, before a command does its work, that `path` can be written: not a directory, not an
// existing file unless `force` (and never a file under `corpus/hw/`), its folder writable or creatable.
// `flag` is the option the user gave (e.g. "--svg"); the InputError names it.
void check_output_file(const std::string& path, bool force, const std::string& flag);
// The same for an output folder: an existing writable folder, or a missing one whose nearest existing
// ancestor is a writable folder (it is created at the first write).
void check_output_dir(const std::string& dir, const std::string& flag);
// Text a command writes into JSON (a path, a name) must be UTF-8: refused before any work, naming `flag`,
// shown with U+FFFD where its bytes are not UTF-8; `what` says where it goes ("the config's plugin path").
void check_json_text(const std::string& text, const std::string& flag, const std::string& what);

// Unlinks the temporaries this process has open (async-signal-safe: only unlink(2)); for the stop path
// (stop.hpp), which ends the process right after.
void remove_open_temporaries() noexcept;

// True for the hidden temporaries write_file_atomic makes (".<name>.tbcheck-tmp.<pid>.<n>"), which
// loaders skip.
bool is_temporary_name(const std::string& filename);
// True when `path` lies under a folder `corpus/hw/` (recorded hardware results).
bool is_hardware_record(const std::string& path);

// A string usable as a file name and case id: letters, digits, '.', '_' and '-' kept, the rest '-'
// ("sim:alg1" -> "sim-alg1").
std::string file_safe(const std::string& s);
// Checks that a case id can name a file in an output folder and be printed: not empty, not "." or "..",
// no control character (NUL, newline, ESC, ...), no '/' or '\\', at most 200 characters (so
// `<id>.<oracle>.json` stays under NAME_MAX). `where` and `field` name the file and field the id came from.
// Every case loader applies it to a case's id.
void check_case_id(const std::string& id, const std::string& where, const std::string& field);

}  // namespace tbcheck::model
