// Strict JSON object reading with file + field-path error messages.
// Every loader goes through ObjectReader, so error wording is uniform across the tool.
#include "tbcheck/model/json_reader.hpp"

#include "tbcheck/model/io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::model {

std::string json_file_text(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string json_type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number_float()) return "a fractional number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

namespace {

// A duplicate key would otherwise let the last value win silently. A SAX pass of its own (after the DOM
// parse) sees every key with the object it belongs to, so the dotted path of the duplicate can be named.
// (nlohmann's callback parser would do it in one pass, but it scans the parent array at every object's
// end: quadratic in a list of many objects, such as a scenario of a million kernels.)
class DuplicateKeyCheck : public nlohmann::json_sax<json> {
 public:
  explicit DuplicateKeyCheck(const std::string& where) : where_(where) {}
  bool null() override { return element_done(); }
  bool boolean(bool) override { return element_done(); }
  bool number_integer(number_integer_t) override { return element_done(); }
  bool number_unsigned(number_unsigned_t) override { return element_done(); }
  bool number_float(number_float_t, const string_t&) override { return element_done(); }
  bool string(string_t&) override { return element_done(); }
  bool binary(binary_t&) override { return element_done(); }
  bool start_object(std::size_t) override {
    frames_.push_back({false, 0, {}, {}});
    return true;
  }
  bool start_array(std::size_t) override {
    frames_.push_back({true, 0, {}, {}});
    return true;
  }
  bool end_object() override { return end_structure(); }
  bool end_array() override { return end_structure(); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (!f.keys.insert(k).second)
      throw InputError(where_, path_to(k), "duplicate key; each key may appear once in an object (no value wins silently)");
    f.key = k;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Frame {
    bool array;
    size_t index;
    std::string key;
    std::set<std::string> keys;
  };
  bool end_structure() {
    frames_.pop_back();
    return element_done();
  }
  bool element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  std::string path_to(const std::string& k) const {
    std::string p;
    for (size_t i = 0; i + 1 < frames_.size(); ++i) {
      if (frames_[i].array) p += fmt::format("[{}]", frames_[i].index);
      else p += (p.empty() ? "" : ".") + frames_[i].key;
    }
    return p + (p.empty() ? "" : ".") + k;
  }
  std::string where_;
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_text(const std::string& text, const std::string& where) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(where, "", fmt::format("malformed JSON at byte {}: {}", e.byte, e.what()));
  } catch (const json::out_of_range& e) {  // 406: a number too large for a double, e.g. 6E5536
    throw InputError(where, "", fmt::format("unreadable JSON: {}", e.what()));
  }
  DuplicateKeyCheck dup(where);
  json::sax_parse(text, &dup);
  return j;
}

InputKind input_kind(const std::string& path, const std::string& flag) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return InputKind::Directory;
    if (S_ISREG(st.st_mode)) return InputKind::File;
    throw InputError(path, flag, "is not a regular file (a device, FIFO or socket)");
  }
  const int err = errno;
  struct stat lst {};
  if (err == ENOENT && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    std::error_code ec;
    const auto to = std::filesystem::read_symlink(path, ec);
    throw InputError(path, flag, fmt::format("dangling symbolic link (to '{}', which does not exist)", to.string()));
  }
  if (err == ENOENT) throw InputError(path, flag, "no such file or directory");
  throw InputError(path, flag, std::strerror(err));  // ELOOP: "Too many levels of symbolic links", EACCES, ...
}

std::string read_input_file(const std::string& path, const std::string& flag) {
  if (input_kind(path, flag) == InputKind::Directory) throw InputError(path, flag, "is a directory (a file is expected here)");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path, flag, fmt::format("cannot open for reading: {}", std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(path, flag, "is not a regular file");
  }
  if (st.st_size > kMaxInputBytes) {
    ::close(fd);
    throw InputError(path, flag, fmt::format("is {} bytes; input files are limited to {} bytes (1 GiB)", st.st_size, kMaxInputBytes));
  }
  std::string text;
  text.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (true) {
    if (done == text.size()) text.resize(text.size() + 65536);  // the file may grow while read
    const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw InputError(path, flag, fmt::format("read failed: {}", std::strerror(err)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
    if (done > static_cast<size_t>(kMaxInputBytes)) {
      ::close(fd);
      throw InputError(path, flag, fmt::format("input files are limited to {} bytes (1 GiB)", kMaxInputBytes));
    }
  }
  ::close(fd);
  text.resize(done);
  return text;
}

json read_json_file(const std::string& path) { return parse_json_text(read_input_file(path, ""), path); }

ObjectReader::ObjectReader(const json& j, std::string where, std::string path, std::vector<std::string> allowed)
    : j_(j), where_(std::move(where)), path_(std::move(path)) {
  if (!j_.is_object())
    throw InputError(where_, path_.empty() ? "(top level)" : path_,
                     fmt::format("expected an object, found {}", json_type_name(j_)));
  for (const auto& [key, value] : j_.items()) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == key;
    if (!ok)
      throw InputError(where_, field(key), fmt::format("unknown field; valid fields are: {}", fmt::join(allowed, ", ")));
  }
}

std::string ObjectReader::field(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ObjectReader::fail(std::string_view key, const std::string& reason) const {
  throw InputError(where_, field(key), reason);
}

bool ObjectReader::has(std::string_view key) const { return j_.contains(std::string(key)); }

const json* ObjectReader::get(std::string_view key) const {
  auto it = j_.find(std::string(key));
  return it == j_.end() ? nullptr : &*it;
}

const json& ObjectReader::require(std::string_view key) const {
  const json* v = get(key);
  if (!v) fail(key, "required field is missing");
  return *v;
}

int64_t ObjectReader::as_integer(const json& v, int64_t lo, int64_t hi, const std::string& where,
                                 const std::string& field) {
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) throw InputError(where, field, fmt::format("{} is above the maximum {}", u, hi));
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else {
    throw InputError(where, field, fmt::format("expected an integer, found {}", json_type_name(v)));
  }
  if (x < lo) throw InputError(where, field, fmt::format("{} is below the minimum {}", x, lo));
  if (x > hi) throw InputError(where, field, fmt::format("{} is above the maximum {}", x, hi));
  return x;
}

int64_t ObjectReader::integer(std::string_view key, int64_t lo, int64_t hi) const {
  return as_integer(require(key), lo, hi, where_, field(key));
}

std::optional<int64_t> ObjectReader::opt_integer(std::string_view key, int64_t lo, int64_t hi) const {
  const json* v = get(key);
  if (!v || v->is_null()) return std::nullopt;
  return as_integer(*v, lo, hi, where_, field(key));
}

std::string ObjectReader::string(std::string_view key) const {
  const json& v = require(key);
  if (!v.is_string()) fail(key, fmt::format("expected a string, found {}", json_type_name(v)));
  return v.get<std::string>();
}

std::optional<std::string> ObjectReader::opt_string(std::string_view key) const {
  const json* v = get(key);
  if (!v || v->is_null()) return std::nullopt;
  if (!v->is_string()) fail(key, fmt::format("expected a string, found {}", json_type_name(*v)));
  return v->get<std::string>();
}

bool ObjectReader::boolean(std::string_view key) const {
  const json& v = require(key);
  if (!v.is_boolean()) fail(key, fmt::format("expected true or false, found {}", json_type_name(v)));
  return v.get<bool>();
}

std::vector<int64_t> ObjectReader::int_array(std::string_view key, int64_t lo, int64_t hi) const {
  const json& v = require(key);
  if (!v.is_array()) fail(key, fmt::format("expected an array of integers, found {}", json_type_name(v)));
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(as_integer(v[i], lo, hi, where_, fmt::format("{}[{}]", field(key), i)));
  return out;
}

}  // namespace tbcheck::model
