// The JSON envelope and printing shared by all commands.
// Machine output always names the schema version and the tool version first.
#include "common.hpp"

#include <fmt/format.h>

namespace tbcheck::cli {

nlohmann::json envelope() {
  return {{"schema_version", kSchemaVersion}, {"tool", {{"name", "tbcheck"}, {"version", TBCHECK_VERSION}}}};
}

void print_json(const nlohmann::json& j) { fmt::print("{}\n", j.dump(2)); }

}  // namespace tbcheck::cli
