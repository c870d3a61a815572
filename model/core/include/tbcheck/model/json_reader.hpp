// Strict reading of JSON objects: unknown keys, wrong types and out-of-range values become
// InputErrors that carry the file and the dotted field path (e.g. "kernels[2].threads").
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tbcheck/model/error.hpp"

namespace tbcheck::model {

using json = nlohmann::json;

// Parses text; a syntax error becomes an InputError naming the byte offset.
json parse_json_text(const std::string& text, const std::string& where);
// Reads and parses a file; a missing or unreadable file is an InputError.
json read_json_file(const std::string& path);

class ObjectReader {
 public:
  // Checks that `j` is an object whose keys are all in `allowed`; otherwise names the first
  // offending key and lists the valid ones.
  ObjectReader(const json& j, std::string where, std::string path, std::vector<std::string> allowed);

  bool has(std::string_view key) const;
  const json* get(std::string_view key) const;  // nullptr when absent (null counts as present)
  const json& require(std::string_view key) const;

  int64_t integer(std::string_view key, int64_t lo, int64_t hi) const;
  std::optional<int64_t> opt_integer(std::string_view key, int64_t lo, int64_t hi) const;
  std::string string(std::string_view key) const;
  std::optional<std::string> opt_string(std::string_view key) const;
  bool boolean(std::string_view key) const;
  std::vector<int64_t> int_array(std::string_view key, int64_t lo, int64_t hi) const;

  std::string field(std::string_view key) const;  // dotted path of a key
  const std::string& where() const { return where_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(std::string_view key, const std::string& reason) const;

  // Integer check usable for array elements and nested values.
  static int64_t as_integer(const json& v, int64_t lo, int64_t hi, const std::string& where,
                            const std::string& field);

 private:
  const json& j_;
  std::string where_, path_;
};

std::string json_type_name(const json& v);

// The text of a JSON file a command writes (`indent` as nlohmann's dump, then a newline). Text that is not
// UTF-8 (a path or file name a note quotes) is written with U+FFFD rather than ending the command with an
// internal error after its work is done, as `--json` output does.
std::string json_file_text(const json& j, int indent);

}  // namespace tbcheck::model
