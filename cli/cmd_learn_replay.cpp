// `tbcheck learn --oracle replay:<recordings>`: reads the recordings, runs search::learn_from_recordings and
// prints (or writes with --out) what they settle and the campaign that would settle the rest on the GPU.
#include "cmd_learn_replay.hpp"
#include "text_out.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tbcheck/model/device_spec.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t comma = s.find(',', at);
    const std::string part = s.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

// A device file under docs/results/<name>/ (from the repository root) holding exactly `carried`: where a
// measured device of that name was written down, so the hint can name a file the user has.
std::string device_file_for(const model::Device& carried) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path("docs/results") / carried.name;
  if (!std::filesystem::is_directory(dir, ec)) return "";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().generic_string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    if (const auto d = model::device_file_if_valid(f); d && *d == carried) return f;
  return "";
}

}  // namespace

bool is_replay_learning(const std::string& oracle_spec) { return oracle_spec.rfind("replay:", 0) == 0; }

namespace {
const std::map<std::string, RuleSearchMode>& rule_search_modes() {
  static const std::map<std::string, RuleSearchMode> modes = {
      {"auto", RuleSearchMode::Auto}, {"always", RuleSearchMode::Always}, {"off", RuleSearchMode::Off}};
  return modes;
}
}  // namespace

RuleSearchMode RuleSearchFlags::parsed() const { return rule_search_modes().at(mode); }

bool RuleSearchFlags::wanted(search::LearnSpace space, bool something_fits) const {
  switch (parsed()) {
    case RuleSearchMode::Auto: return space == search::LearnSpace::Compositions && !something_fits;
    case RuleSearchMode::Always: return true;
    case RuleSearchMode::Off: return false;
  }
  return false;
}

void add_rule_search_options(CLI::App* app, RuleSearchFlags& f) {
  app->add_option("--rules", f.mode,
                  "Search selection rules of the ranking language (docs/rules.md) after the space: auto (default: "
                  "when nothing in the composition space fits), always (bases: the consistent candidates, else the "
                  "nearest), off")
      ->check(CLI::IsMember({"auto", "always", "off"}));
  app->add_option("--rule-keys", f.bound.max_keys,
                  fmt::format("Keys per rule searched, 1 to {} (default 2)", search::kMaxRuleKeys))
      ->check(integer_in(1, search::kMaxRuleKeys));
  app->add_option("--rule-bases", f.bound.bases,
                  "Candidates of the space whose other mechanisms the rules are given (the consistent, else the "
                  "nearest, first), besides every shipped hypothesis's, 1 to 64 (default 3)")
      ->check(integer_in(1, 64));
}

namespace {

// The first member of each consistent group (the simplest rule of the group: candidates come shortest rule
// first), at most this many files.
constexpr size_t kWrittenRules = 20;

}  // namespace

int learn_from_recordings_command(const model::Device& dev, const std::vector<model::Hypothesis>& hs,
                                  const std::vector<model::Case>& corpus, const std::string& oracle_spec,
                                  const search::ReplayLearnOptions& opt, const std::string& out_dir, bool json,
                                  const RuleSearchFlags& rules) {
  const auto paths = split_commas(oracle_spec.substr(std::string("replay:").size()));
  if (paths.empty())
    throw model::InputError("--oracle", "", "replay: names no recordings (replay:<folder or files, comma-separated>)");
  std::vector<model::Case> recordings;
  for (const auto& p : paths) {
    if (!std::filesystem::exists(p)) throw model::InputError(p, "", "no such file or folder (in --oracle replay:)");
    auto cs = model::load_cases(p);
    recordings.insert(recordings.end(), cs.begin(), cs.end());
  }
  // Judging a candidate against a recording under trace timing can take seconds: progress per stage
  // (recordings applied, the nearest candidates, the campaign), counted in judgements or cases.
  std::optional<search::ReplayRuleSearchResult> rule_search;
  const search::ReplayLearnResult r = [&] {
    report::Progress progress("learn (replay)");
    search::ReplayLearnOptions o = opt;
    o.on_stage = [&](const std::string& what, size_t units) { progress.stage(what, units); };
    o.on_unit = [&] { progress.tick(); };
    auto first = search::learn_from_recordings(hs, dev, recordings, corpus, o);
    if (rules.wanted(opt.space, !first.consistent.empty())) {
      o.on_stage = [&](const std::string& what, size_t units) { progress.stage("rule search: " + what, units); };
      rule_search = search::learn_rules_from_recordings(first, dev, recordings, corpus, o, rules.bound);
    }
    return first;
  }();
  const search::ReplayLearnResult& last = rule_search ? rule_search->replay : r;
  const std::string carried_file = r.device_differs ? device_file_for(r.device_differs->carried) : "";

  std::vector<std::string> written;
  if (!out_dir.empty()) {
    // The campaign as a folder of cases: `campaign plan --cases DIR/campaign` or `run --oracle cuda` takes them.
    const auto dir = std::filesystem::path(out_dir) / "campaign";
    std::filesystem::create_directories(dir);
    for (const auto& c : last.campaign) {
      const std::string path = (dir / (c.c.id + ".json")).string();
      model::write_file_atomic(path, model::json_file_text(c.c.to_json(), 1));
      written.push_back(path);
    }
    // A rule that fits, as a hypothesis file `check` and `validate` take; when none does, the nearest rules, their
    // standing in the file's source, to be judged elsewhere (another GPU's recordings, say).
    if (rule_search) {
      auto write = [&](model::Hypothesis h, const std::string& standing) {
        if (!standing.empty()) h.source += "; " + standing;
        const std::string path = (std::filesystem::path(out_dir) / (h.name + ".json")).string();
        model::write_file_atomic(path, model::json_file_text(h.to_json(), 2));
        written.push_back(path);
      };
      size_t at = 0;
      for (const auto& g : last.consistent_groups) {
        if (written.size() - last.campaign.size() >= kWrittenRules) break;
        write(last.consistent[at], "");
        at += g.size();
      }
      if (last.consistent.empty())
        for (const auto& n : last.nearest)
          write(n.hypothesis, fmt::format("nearest, not fitting: {} of the {} recording(s) of {} refuted block for "
                                          "block ({} in per-SM counts)",
                                          n.recordings_refuted, last.recordings, dev.name, n.counts_refuted));
    }
  }
  const bool fits = !last.consistent.empty();
  if (json) {
    auto j = envelope();
    j["device"] = dev.name;
    j["oracle"] = oracle_spec;
    j["timing"] = model::to_string(opt.judging.timing);
    j.update(r.to_json());
    if (r.device_differs) j["device_differs"]["device_file"] = carried_file;
    j["rule_search"] = rule_search ? rule_search->to_json() : nlohmann::json(nullptr);
    j["written"] = written;
    print_json(j);
    return fits ? kExitOk : kExitFailed;
  }
  say("learn on {} from recordings ({}; timing {}): {} candidates in {} groups that act alike on {}\n",
             dev.name, fmt::join(paths, ", "), model::to_string(opt.judging.timing), r.candidates, r.groups, dev.name);
  say("{}", r.text(dev.name, carried_file));
  int evaluations = r.evaluations;
  if (rule_search) {
    say("{}", rule_search->text(dev.name));
    evaluations += last.evaluations;
  }
  say("{} judgement(s) of a group against a recording\n", evaluations);
  if (!written.empty())
    say("wrote {} file(s) to {} (campaign cases: tbcheck campaign plan --cases {} ...{})\n", written.size(), out_dir,
        (std::filesystem::path(out_dir) / "campaign").string(),
        !rule_search ? "" : fits ? "; each rule that fits as a hypothesis file" : "; the nearest rules as hypothesis files");
  return fits ? kExitOk : kExitFailed;
}

}  // namespace tbcheck::cli
