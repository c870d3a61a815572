// Strict JSON object reading with file + field-path error messages.
// Every loader goes through ObjectReader, so error wording is uniform across the tool.
#include "tbcheck/model/json_reader.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tbcheck::model {

std::string json_type_name(const json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "an integer";
  if (v.is_number_float()) return "a fractional number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

json parse_json_text(const std::string& text, const std::string& where) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(where, "", fmt::format("malformed JSON at byte {}: {}", e.byte, e.what()));
  } catch (const json::out_of_range& e) {  // 406: a number too large for a double, e.g. 6E5536
    throw InputError(where, "", fmt::format("unreadable JSON: {}", e.what()));
  }
}

json read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, "", "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path);
}

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
