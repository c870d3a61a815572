// The JSON envelope and printing shared by all commands.
// Machine output always names the schema version and the tool version first.
#include "common.hpp"

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"

namespace tbcheck::cli {

nlohmann::json envelope() {
  return {{"schema_version", kSchemaVersion}, {"tool", {{"name", "tbcheck"}, {"version", TBCHECK_VERSION}}}};
}

// nlohmann::json keeps object keys sorted, which would put "cases" before "schema_version"; the
// envelope's keys go first and the rest keep their order.
void print_json(const nlohmann::json& j) {
  if (!j.is_object()) {
    fmt::print("{}\n", j.dump(2));
    return;
  }
  nlohmann::ordered_json out;
  for (const char* k : {"schema_version", "tool"})
    if (j.contains(k)) out[k] = nlohmann::ordered_json(j.at(k));
  for (const auto& [k, v] : j.items())
    if (k != "schema_version" && k != "tool") out[k] = nlohmann::ordered_json(v);
  fmt::print("{}\n", out.dump(2));
}

model::Case load_one_case(const std::string& path, const std::string& case_id, const std::string& command) {
  auto cases = model::load_cases(path);
  if (!case_id.empty()) {
    std::erase_if(cases, [&](const model::Case& c) { return c.id != case_id; });
    if (cases.empty()) throw model::InputError(path, "--case", fmt::format("no case with id '{}'", case_id));
  }
  if (cases.size() != 1)
    throw model::InputError(path, "",
                            fmt::format("{} takes one scenario or case; this holds {} (--case ID picks one)", command,
                                        cases.size()));
  return std::move(cases[0]);
}

}  // namespace tbcheck::cli
