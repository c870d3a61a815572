// Internal: the factories of the oracle kinds behind make_oracle's table, and shared metadata.
// Not installed; each kind lives in its own source file.
#pragma once
#include <memory>
#include <string>

#include "tbcheck/oracle/oracle.hpp"

namespace tbcheck::oracle::detail {

std::unique_ptr<Oracle> make_sim(const std::string& arg, double noise, unsigned seed);
std::unique_ptr<Oracle> make_replay(const model::Case& c);
std::unique_ptr<Oracle> make_cuda();

// {"oracle": name, "repetitions": r, "tool_version": ...}; kinds add their own fields.
nlohmann::json base_metadata(const std::string& oracle_name, int repetitions);

}  // namespace tbcheck::oracle::detail
