// Sharded synthesis: `distinguish --shard i/N` answers a fixed share of the pairs, and
// `merge` joins the shards into the corpus folder and pair table of one unsharded run.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/search/distinguish.hpp"

namespace tbcheck::search {

// "i/N", 1 <= i <= N (i is the part, as Slurm arrays count --array=1-N).
struct ShardSpec {
  int index = 1, count = 1;
};
ShardSpec parse_shard(const std::string& text);  // InputError naming --shard

// Every pair (i < j in list order) of n hypotheses, in pair order: the order of the pair table.
std::vector<std::pair<size_t, size_t>> all_pairs(size_t n);

// The positions (in pair order) of shard s: every N-th pair from the (i-1)-th, so that the pairs of
// one hypothesis, which share lemmas and cost alike, spread over the shards.
std::vector<size_t> shard_pairs(size_t pair_count, ShardSpec s);

// One row of the pair table (`distinguish --json`'s "pairs"), with the written case under "case".
// Timing fields: solver_seconds, wall_seconds (and the case's solver_seconds).
model::json pair_json(const PairResult& r, const DistinguishBounds& b, const model::Hypothesis& h1,
                      const model::Hypothesis& h2);

// The file a shard leaves beside its cases, and what merge checks shards agree on.
inline constexpr const char* kShardFile = "shard.json";
model::json shard_json(ShardSpec s, const std::string& tool_version, const model::Device& d,
                       const std::vector<model::Hypothesis>& hs, const DistinguishBounds& b,
                       const std::vector<size_t>& positions, const std::vector<model::json>& rows);

// The shards' pairs in pair order, and the cases to write (file name, content) in that order.
// InputError (naming the folder and field): a folder without shard.json, shards of different runs
// (tool version, device, hypotheses, bounds, N), a part missing or given twice, a pair missing.
struct Merged {
  std::string device;
  model::json pairs = model::json::array();
  std::vector<std::pair<std::string, std::string>> cases;
  int timing_sensitive = 0;  // pairs whose answer a time limit shaped (unknown, or minimality bounded)
};
Merged merge_shards(const std::vector<std::string>& shard_dirs);

// The bytes a case file of distinguish holds.
std::string case_file_text(const model::json& case_json);

}  // namespace tbcheck::search
