// `tbcheck merge`: the shard folders of `distinguish --shard i/N` as the corpus folder and pair table
// of one unsharded run (the same case files; `--json` prints the table `distinguish --json` prints).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/search/shard.hpp"

namespace tbcheck::cli {
namespace {

struct Merge : Command {
  std::vector<std::string> shard_dirs;
  std::string out_dir;
  bool json = false;

  int run() override {
    model::check_output_dir(out_dir, "--out");  // created at the first write
    // Everything is checked before the first file is written.
    const search::Merged m = search::merge_shards(shard_dirs);
    std::vector<std::string> written;
    for (const auto& [name, text] : m.cases) {
      const std::string path = (std::filesystem::path(out_dir) / name).string();
      model::write_file_atomic(path, text);  // as distinguish --out writes them
      written.push_back(path);
    }
    if (json) {
      auto j = envelope();
      j["device"] = m.device;
      j["pairs"] = m.pairs;
      print_json(j);
      return kExitOk;
    }
    size_t separated = 0;
    for (const auto& p : m.pairs) separated += p.contains("case");
    say("merged {} shard(s): {} pairs on {}, {} separated\n", shard_dirs.size(), m.pairs.size(), m.device, separated);
    for (const auto& p : m.pairs)
      say("  {} / {}: {}{}\n", p.value("h1", ""), p.value("h2", ""), p.value("outcome", ""),
                 p.value("minimality", "").empty() ? "" : " (minimality " + p.value("minimality", "") + ")");
    if (m.timing_sensitive > 0)
      say("{} pair(s) met a time limit (unknown, or minimality bounded): their answers can differ between runs\n",
                 m.timing_sensitive);
    for (const auto& w : written) say("wrote {}\n", w);
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_merge(CLI::App& app) {
  auto c = std::make_unique<Merge>();
  c->app = app.add_subcommand("merge", "Join distinguish --shard folders into one corpus folder and pair table");
  c->app->add_option("shards", c->shard_dirs, "The --out folders of distinguish --shard i/N, every part once")->required();
  c->app->add_option("--out", c->out_dir, "Directory for the merged corpus cases (created when missing)")->required();
  c->app->add_flag("--json", c->json, "Print the merged pair table as distinguish --json does");
  return c;
}

}  // namespace tbcheck::cli
