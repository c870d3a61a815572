// The deterministic split of distinguish's pairs into shards, the shard file, and the merge of
// shards into one pair table and corpus folder (no Z3 here: only the run's own JSON).
#include "tbcheck/search/shard.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::search {

namespace fs = std::filesystem;

ShardSpec parse_shard(const std::string& text) {
  ShardSpec s;
  const auto slash = text.find('/');
  auto number = [&](const std::string& part, int& out) {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) return false;
    out = std::stoi(part);
    return true;
  };
  if (slash == std::string::npos || !number(text.substr(0, slash), s.index) || !number(text.substr(slash + 1), s.count) ||
      s.count < 1 || s.index < 1 || s.index > s.count)
    throw model::InputError("--shard", "", fmt::format("'{}' is not i/N with 1 <= i <= N (e.g. 3/8)", text));
  return s;
}

std::vector<std::pair<size_t, size_t>> all_pairs(size_t n) {
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) pairs.emplace_back(i, j);
  return pairs;
}

std::vector<size_t> shard_pairs(size_t pair_count, ShardSpec s) {
  std::vector<size_t> out;
  for (size_t k = static_cast<size_t>(s.index - 1); k < pair_count; k += static_cast<size_t>(s.count)) out.push_back(k);
  return out;
}

model::json pair_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2) {
  model::json x = {{"h1", r.h1},
                   {"h2", r.h2},
                   {"outcome", to_string(r.outcome)},
                   {"solver_seconds", r.solver_seconds},
                   {"wall_seconds", r.wall_seconds},
                   {"found_by", to_string(r.found_by)},
                   {"reduced_structure", r.structure},
                   {"minimal_proved", r.minimal_proved},
                   {"minimality", r.outcome == PairOutcome::Separated ? minimality_text(r) : ""},
                   {"undecided_smaller_structures", r.unknown_structures}};
  if (!r.reason.empty()) x["reason"] = r.reason;
  if (r.witness) x["case"] = case_json(r, b, h1, h2);
  return x;
}

namespace {

// Everything a pair's answer depends on besides the pair: shards of one run agree on all of it.
model::json bounds_json(const DistinguishBounds& b) {
  return {{"max_kernels", b.max_kernels},
          {"max_blocks_per_kernel", b.max_blocks_per_kernel},
          {"max_total_blocks", b.max_total_blocks},
          {"max_warps", b.params.max_warps},
          {"max_duration", b.params.max_duration},
          {"vary_regs", b.params.vary_regs},
          {"vary_smem", b.params.vary_smem},
          {"max_local", b.params.max_local},
          {"timeout_ms", b.timeout_ms},
          {"reduced_tpcs", b.reduced_tpcs},
          {"sim_samples", b.sim_samples},
          {"deep_samples", b.deep_samples},
          {"wide_samples", b.wide_samples},
          {"seed", b.seed},
          {"pair_budget_ms", b.pair_budget_ms},
          {"sort", smt::to_string(b.sort)},
          {"lemma_timeout_ms", b.lemma_timeout_ms}};
}

}  // namespace

model::json shard_json(ShardSpec s, const std::string& tool_version, const model::Device& d,
                       const std::vector<model::Hypothesis>& hs, const DistinguishBounds& b,
                       const std::vector<size_t>& positions, const std::vector<model::json>& rows) {
  model::json hyps = model::json::array();
  for (const auto& h : hs) hyps.push_back(h.to_json());
  return {{"schema_version", 1},
          {"tool", {{"name", "tbcheck"}, {"version", tool_version}}},
          {"kind", "tbcheck-distinguish-shard"},
          {"shard", {{"index", s.index}, {"count", s.count}}},
          {"device", d.to_json()},
          {"hypotheses", hyps},
          {"bounds", bounds_json(b)},
          {"pair_count", hs.size() * (hs.size() - 1) / 2},
          {"positions", positions},
          {"pairs", rows}};
}

std::string case_file_text(const model::json& case_json) { return model::json_file_text(case_json, 1); }

Merged merge_shards(const std::vector<std::string>& shard_dirs) {
  if (shard_dirs.empty()) throw model::InputError("merge", "", "name the shard folders (distinguish --shard i/N --out DIR)");
  model::json first;
  std::string first_dir;
  std::map<int, std::string> parts;        // shard index -> folder
  std::map<size_t, model::json> rows;      // pair position -> row
  Merged m;
  for (const auto& dir : shard_dirs) {
    const std::string path = (fs::path(dir) / kShardFile).string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      throw model::InputError(dir, "", fmt::format("has no {}: not the --out folder of distinguish --shard", kShardFile));
    const model::json j = model::read_json_file(path);
    std::string field = "kind";
    try {
      if (j.at("kind") != "tbcheck-distinguish-shard") throw model::InputError(path, field, "not a distinguish shard file");
      if (first.is_null()) {
        first = j;
        first_dir = dir;
      }
      // One run: the same tool, device, hypotheses (in order), bounds and number of shards.
      for (const char* key : {"tool", "device", "hypotheses", "bounds", "pair_count"}) {
        field = key;
        if (j.at(key) != first.at(key))
          throw model::InputError(path, field, fmt::format("differs from {}: shards of different runs", first_dir));
      }
      field = "shard.count";
      if (j.at("shard").at("count") != first.at("shard").at("count"))
        throw model::InputError(path, field, fmt::format("differs from {}: shards of different splits", first_dir));
      field = "shard.index";
      const int index = j.at("shard").at("index").get<int>();
      if (auto [it, fresh] = parts.emplace(index, dir); !fresh)
        throw model::InputError(path, field, fmt::format("part {} is also in {}", index, it->second));
      field = "positions";
      const auto positions = j.at("positions").get<std::vector<size_t>>();
      const ShardSpec spec{index, j.at("shard").at("count").get<int>()};
      if (positions != shard_pairs(j.at("pair_count").get<size_t>(), spec) || positions.size() != j.at("pairs").size())
        throw model::InputError(path, field, fmt::format("are not the pairs of part {}/{}", spec.index, spec.count));
      for (size_t i = 0; i < positions.size(); ++i) rows[positions[i]] = j.at("pairs")[i];
    } catch (const model::json::exception& e) {
      throw model::InputError(path, field, fmt::format("malformed shard file: {}", e.what()));
    }
  }
  const int count = first.at("shard").at("count").get<int>();
  for (int i = 1; i <= count; ++i)
    if (!parts.count(i)) throw model::InputError("merge", "", fmt::format("part {}/{} is missing (found {} of {} shard folders)", i, count, parts.size(), count));
  const size_t pair_count = first.at("pair_count").get<size_t>();
  if (rows.size() != pair_count)
    throw model::InputError("merge", "", fmt::format("the shards hold {} of {} pairs", rows.size(), pair_count));
  m.device = first.at("device").at("name").get<std::string>();
  for (auto& [pos, row] : rows) {
    if (row.contains("case")) {
      const std::string id = row.at("case").at("id").get<std::string>();
      if (id.empty() || model::file_safe(id) != id || id[0] == '.')
        throw model::InputError("merge", fmt::format("pairs[{}].case.id", pos), fmt::format("'{}' is not a plain file name", id));
      m.cases.emplace_back(id + ".json", case_file_text(row.at("case")));
    }
    const std::string outcome = row.value("outcome", "");
    if (outcome == to_string(PairOutcome::Unknown) || row.value("minimality", "").rfind("bounded", 0) == 0) ++m.timing_sensitive;
    m.pairs.push_back(std::move(row));
  }
  return m;
}

}  // namespace tbcheck::search
