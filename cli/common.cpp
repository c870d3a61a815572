// The JSON envelope and printing shared by all commands.
// Machine output always names the schema version and the tool version first.
#include "common.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::cli {

nlohmann::json envelope() {
  return {{"schema_version", kSchemaVersion}, {"tool", {{"name", "tbcheck"}, {"version", TBCHECK_VERSION}}}};
}

// nlohmann::json keeps object keys sorted, which would put "cases" before "schema_version"; the
// envelope's keys go first and the rest keep their order.
void print_json(const nlohmann::json& j) {
  // Text that is not UTF-8 (a file name read from a folder, say) is written with U+FFFD rather than
  // ending the command with an internal error after its work is done, as in the files commands write.
  if (!j.is_object()) {
    fmt::print("{}", model::json_file_text(j, 2));
    return;
  }
  nlohmann::ordered_json out;
  for (const char* k : {"schema_version", "tool"})
    if (j.contains(k)) out[k] = nlohmann::ordered_json(j.at(k));
  for (const auto& [k, v] : j.items())
    if (k != "schema_version" && k != "tool") out[k] = nlohmann::ordered_json(v);
  fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

namespace {

struct Range {
  bool integer = false, lo_open = false;
  double lo = 0, hi = 0;            // floating flags
  long long lo_int = 0;             // integer flags
  unsigned long long hi_int = 0;
};

// The one parser of every numeric flag. CLI11 alone would read "0x10" as 16 and "010" as 8 (strtoll
// with base 0) and answer "1e3" for an integer flag with a bare "Could not convert". Each check below
// returns an error text that states the accepted range, or "" after rewriting the value into the plain
// decimal CLI11 then converts without surprise.

std::string range_text(const Range& r) {
  if (r.integer) return fmt::format("a whole number from {} to {}", r.lo_int, r.hi_int);
  return r.lo_open ? fmt::format("a number above {:g} and at most {:g}", r.lo, r.hi)
                   : fmt::format("a number from {:g} to {:g}", r.lo, r.hi);
}

std::string parse_integer(std::string& s, const Range& r) {
  const std::string accepted = range_text(r);
  if (s.empty()) return fmt::format("no value; expected {}", accepted);
  if (s.find_first_of("xXpP \t\n\v\f\r") != std::string::npos)
    return fmt::format("'{}' is not a decimal number; expected {}", s, accepted);
  size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;
  const bool negative = s[0] == '-';
  if (i == s.size() || s.find_first_not_of("0123456789", i) != std::string::npos) {
    double x = 0;  // say what it is when it is a number at all: "1.5", "1e3", "nan"
    char* end = nullptr;
    errno = 0;
    x = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return fmt::format("'{}' is not a number; expected {}", s, accepted);
    if (!std::isfinite(x) && errno != ERANGE) return fmt::format("{} is not a finite number; expected {}", s, accepted);
    return fmt::format("{} is not a whole number written in digits; expected {}", s, accepted);
  }
  unsigned long long mag = 0;
  for (; i < s.size(); ++i) {
    const unsigned d = static_cast<unsigned>(s[i] - '0');
    if (mag > (std::numeric_limits<unsigned long long>::max() - d) / 10)
      return fmt::format("{} is too large; expected {}", s, accepted);
    mag = mag * 10 + d;
  }
  if (negative) {
    if (r.lo_int >= 0 && mag != 0) return fmt::format("{} is not between {} and {}", s, r.lo_int, r.hi_int);
    if (mag > static_cast<unsigned long long>(std::numeric_limits<long long>::max()) + 1ULL)
      return fmt::format("{} is too large a negative number; expected {}", s, accepted);
    const long long v = mag == 0 ? 0 : static_cast<long long>(0ULL - mag);
    if (v < r.lo_int) return fmt::format("{} is not between {} and {}", s, r.lo_int, r.hi_int);
    s = std::to_string(v);
    return "";
  }
  if (mag > r.hi_int || (r.lo_int > 0 && mag < static_cast<unsigned long long>(r.lo_int)))
    return fmt::format("{} is not between {} and {}", s, r.lo_int, r.hi_int);
  s = std::to_string(mag);
  return "";
}

std::string parse_floating(std::string& s, const Range& r) {
  const std::string accepted = range_text(r);
  if (s.empty()) return fmt::format("no value; expected {}", accepted);
  // strtod also reads hexadecimal ("0x10" = 16) and skips leading blanks; a flag takes plain decimal only.
  if (s.find_first_of("xXpP \t\n\v\f\r") != std::string::npos)
    return fmt::format("'{}' is not a decimal number; expected {}", s, accepted);
  errno = 0;
  char* end = nullptr;
  const double x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return fmt::format("'{}' is not a number; expected {}", s, accepted);
  if (errno == ERANGE && std::isinf(x)) return fmt::format("{} is too large; expected {}", s, accepted);
  if (!std::isfinite(x)) return fmt::format("{} is not a finite number; expected {}", s, accepted);
  if (errno == ERANGE) return fmt::format("{} is too close to 0 to be represented as a number", s);
  const bool ok = (r.lo_open ? x > r.lo : x >= r.lo) && x <= r.hi;
  if (!ok) return r.lo_open ? fmt::format("{} is not above {:g} (at most {:g})", s, r.lo, r.hi)
                            : fmt::format("{} is not between {:g} and {:g}", s, r.lo, r.hi);
  s = fmt::format("{}", x);  // shortest text that reads back as the same double
  return "";
}

CLI::Validator range_check(const Range& r) {
  CLI::Validator v(
      [r](std::string& s) -> std::string { return r.integer ? parse_integer(s, r) : parse_floating(s, r); },
      r.integer ? fmt::format("INTEGER in [{}, {}]", r.lo_int, r.hi_int)
                : r.lo_open ? fmt::format("NUMBER in ({:g}, {:g}]", r.lo, r.hi) : fmt::format("NUMBER in [{:g}, {:g}]", r.lo, r.hi));
  v.name(kNumberValidator);
  return v;
}

}  // namespace

CLI::Validator number_in(double lo, double hi) { return range_check(Range{false, false, lo, hi, 0, 0}); }
CLI::Validator number_above(double lo, double hi) { return range_check(Range{false, true, lo, hi, 0, 0}); }
CLI::Validator integer_in(long long lo, unsigned long long hi) { return range_check(Range{true, false, 0, 0, lo, hi}); }

model::JudgeOptions JudgingFlags::options() const {
  model::JudgeOptions o;
  o.timing = model::timing_from_string(timing, "--timing");
  o.max_orders = max_orders;
  return o;
}

void add_judging_options(CLI::App* app, JudgingFlags& f, const std::string& prefix) {
  app->add_option("--timing", f.timing,
                  prefix + "model (default): the hypothesis' durations time the whole schedule; trace: where a recording "
                           "has every block's start and end, blocks retire at their recorded ends and the hypothesis only "
                           "places them (the report names the timing that judged each case)")
      ->check(CLI::IsMember({"model", "trace"}));
  app->add_option("--max-orders", f.max_orders,
                  prefix + "Simulations per case over the launch and retirement orders its recording did not observe "
                           "(its resolution) before the verdict is unknown (default 2000)")
      ->check(integer_in(1, 100000000));
}

std::vector<std::string> new_case_files(const std::string& dir, const std::vector<std::string>& ids,
                                        const std::string& flag) {
  model::check_output_dir(dir, flag);
  std::vector<std::string> paths;
  for (const auto& id : ids) {
    paths.push_back((std::filesystem::path(dir) / (id + ".json")).string());
    std::error_code ec;
    if (std::filesystem::exists(std::filesystem::symlink_status(paths.back(), ec)))
      throw model::InputError(paths.back(), flag,
                              fmt::format("already exists; a recorded case is never overwritten (remove it or give "
                                          "another {})",
                                          flag));
    if (std::find(paths.begin(), paths.end() - 1, paths.back()) != paths.end() - 1)
      throw model::InputError(paths.back(), flag, fmt::format("two cases have the id {}", id));
    model::check_output_file(paths.back(), false, flag);
  }
  return paths;
}

std::string default_output_dir(const std::string& dir, const std::string& flag) {
  std::error_code ec;
  if (!std::filesystem::is_directory("corpus/paper", ec))
    throw model::InputError(flag, "",
                            fmt::format("not given, and this is not the repository root (no corpus/paper here), where "
                                        "the default {} is; give {} <folder>",
                                        dir, flag));
  return dir;
}

std::vector<std::string> default_corpus(const std::vector<std::string>& folders) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& f : folders)
    if (std::filesystem::is_directory(f, ec)) out.push_back(f);
  return out;
}

std::vector<std::string> require_default_corpus(const std::vector<std::string>& folders, const std::string& flag) {
  auto out = default_corpus(folders);
  if (out.empty())
    throw model::InputError(flag, "", fmt::format("not given, and no {} folder here (run from the repository root, or give {})",
                                                  folders.front(), flag));
  return out;
}

}  // namespace tbcheck::cli
