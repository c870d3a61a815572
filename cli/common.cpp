// The JSON envelope and printing shared by all commands.
// Machine output always names the schema version and the tool version first.
#include "common.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>

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

// The value as a double, or an error text; the whole string must be one number.
// strtod also reads hexadecimal ("0x10" = 16) and skips leading blanks; a flag takes plain decimal only.
std::string parse_number(const std::string& s, double& x) {
  if (s.empty() || s.find_first_of("xXpP \t\n\v\f\r") != std::string::npos)
    return fmt::format("'{}' is not a decimal number", s);
  errno = 0;
  char* end = nullptr;
  x = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return fmt::format("'{}' is not a number", s);
  if (!std::isfinite(x)) return fmt::format("{} is not a finite number", s);
  if (errno == ERANGE) return fmt::format("{} is too close to 0 to be represented as a number", s);
  return "";
}

CLI::Validator range_check(double lo, double hi, bool lo_open, bool integer) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        double x = 0;
        std::string err = parse_number(s, x);
        if (!err.empty()) return err;
        if (integer && x != std::floor(x)) return fmt::format("{} is not a whole number", s);
        const bool ok = (lo_open ? x > lo : x >= lo) && x <= hi;
        if (!ok) return lo_open ? fmt::format("{} is not above {:g} (at most {:g})", s, lo, hi)
                                : fmt::format("{} is not between {:g} and {:g}", s, lo, hi);
        return "";
      },
      lo_open ? fmt::format("NUMBER in ({:g}, {:g}]", lo, hi) : fmt::format("NUMBER in [{:g}, {:g}]", lo, hi));
}

}  // namespace

CLI::Validator number_in(double lo, double hi) { return range_check(lo, hi, false, false); }
CLI::Validator number_above(double lo, double hi) { return range_check(lo, hi, true, false); }
CLI::Validator integer_in(long long lo, long long hi) {
  return range_check(static_cast<double>(lo), static_cast<double>(hi), false, true);
}

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
