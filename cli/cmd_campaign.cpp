// `tbcheck campaign plan|status|resume|collect`: oracle campaigns on Slurm job arrays.
// Thin: the manifest, scripts and the judging of result files are in campaign/.
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/campaign/campaign.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/validate.hpp"
#include "tbcheck/oracle/oracle.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {
namespace {

namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

// The binary the generated scripts run: this one, by absolute path.
std::string own_binary() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("tbcheck") : p.string();
}

campaign::SchedulerView scheduler_for(const campaign::Manifest& m) {
  std::vector<std::string> names;
  for (const auto& d : m.devices) names.push_back(d.job_name);
  return campaign::ask_scheduler(names, m.created);
}

struct Campaign : Command {
  CLI::App *plan = nullptr, *status = nullptr, *resume = nullptr, *collect = nullptr;
  campaign::PlanOptions opt;
  std::vector<std::string> device_specs, partitions;
  std::string dir, to_root;
  bool json = false, dry_run = false;

  int run_plan() {
    for (const auto& s : device_specs) opt.devices.push_back(campaign::parse_device_target(s));
    // --partition P for every device, or NAME=P for one.
    for (const auto& p : partitions) {
      const auto eq = p.find('=');
      bool matched = eq == std::string::npos;
      for (auto& d : opt.devices) {
        if (eq == std::string::npos) d.partition = p;
        else if (p.substr(0, eq) == d.name) d.partition = p.substr(eq + 1), matched = true;
      }
      if (!matched || p.empty() || p.back() == '=')
        throw model::InputError("--partition", "", fmt::format("'{}': PARTITION or DEVICE=PARTITION for a --device of the campaign", p));
    }
    opt.tool_version = TBCHECK_VERSION;
    opt.created = utc_now();
    if (opt.tbcheck.empty()) opt.tbcheck = own_binary();
    const campaign::Manifest m = campaign::make_plan(opt);
    const auto written = campaign::write_campaign(m, opt.out_dir);
    if (json) {
      auto j = envelope();
      j["manifest"] = m.to_json();
      j["written"] = written;
      print_json(j);
      return kExitOk;
    }
    for (const auto& d : m.devices) {
      size_t cases = 0;
      for (const auto& t : d.tasks) cases += t.cases.size();
      say("{}: {} case(s) in {} array task(s) -> {}\n", d.target.name, cases, d.tasks.size(),
                 (fs::path(opt.out_dir) / (d.target.name + ".sbatch")).string());
    }
    if (!m.skipped.empty()) {
      std::map<std::string, int> by;
      for (const auto& s : m.skipped) ++by[s.device];
      for (const auto& [dev, n] : by) say("skipped {} case(s) of device {} (not in this campaign)\n", n, dev);
    }
    say("wrote {}\nsubmit: ", (fs::path(opt.out_dir) / "manifest.json").string());
    for (const auto& d : m.devices) say("sbatch {}  ", (fs::path(opt.out_dir) / (d.target.name + ".sbatch")).string());
    say("\n");
    return kExitOk;
  }

  int run_status() {
    const auto m = campaign::load_manifest(dir);
    const auto sched = scheduler_for(m);
    const auto st = campaign::campaign_status(m, dir, sched);
    std::map<std::string, std::map<campaign::TaskState, int>> counts;
    bool all_done = true;
    for (const auto& s : st) {
      ++counts[s.device][s.state];
      all_done = all_done && s.state == campaign::TaskState::Done;
    }
    const campaign::TaskState order[] = {campaign::TaskState::Done, campaign::TaskState::Queued, campaign::TaskState::Running,
                                         campaign::TaskState::Failed, campaign::TaskState::Missing};
    if (json) {
      auto j = envelope();
      j["campaign"] = m.id;
      j["scheduler"] = sched.available ? "answered" : "none";
      j["complete"] = all_done;
      j["tasks"] = nlohmann::json::array();
      for (const auto& s : st)
        j["tasks"].push_back({{"device", s.device}, {"task", s.index}, {"state", campaign::to_string(s.state)},
                              {"results", s.results}, {"cases", s.cases}, {"detail", s.detail}});
      print_json(j);
      return all_done ? kExitOk : kExitFailed;
    }
    report::Table t({"device", "tasks", "done", "queued", "running", "failed", "missing"});
    for (size_t c = 1; c < 7; ++c) t.right_align(c);
    for (const auto& d : m.devices) {
      std::vector<std::string> row = {d.target.name, std::to_string(d.tasks.size())};
      for (auto s : order) row.push_back(std::to_string(counts[d.target.name][s]));
      t.add(row);
    }
    say("campaign {} (oracle {}, {} repetition(s); scheduler: {}):\n{}", m.id, m.oracle, m.repeat,
               sched.available ? "asked (squeue, sacct)" : "none answered, judged by the files", t.render());
    for (const auto& s : st)
      if (s.state == campaign::TaskState::Failed || s.state == campaign::TaskState::Running)
        say("  {} task {}: {} ({}/{} results) {}\n", s.device, s.index, campaign::to_string(s.state), s.results,
                   s.cases, s.detail);
    say("{}\n", all_done ? "complete: every case has its result" : "incomplete");
    return all_done ? kExitOk : kExitFailed;
  }

  int run_resume() {
    const auto m = campaign::load_manifest(dir);
    const auto sched = scheduler_for(m);
    const auto st = campaign::campaign_status(m, dir, sched);
    const auto subs = campaign::plan_resume(m, st, dir);
    nlohmann::json out = nlohmann::json::array();
    int rc = kExitOk;
    for (const auto& r : subs) {
      std::vector<std::string> argv = {"sbatch", "--parsable", "--array=" + r.array, r.script};
      std::string line = fmt::format("sbatch --array={} {}", r.array, r.script);
      nlohmann::json x = {{"device", r.device}, {"array", r.array}, {"command", line}};
      if (dry_run) {
        if (!json) say("would run: {}\n", line);
        out.push_back(x);
        continue;
      }
      for (const auto& p : campaign::clear_for_resubmission(m, r, dir))
        if (!json) say("removed {}\n", p);
      auto res = campaign::run_command(argv);
      if (!res) throw model::InputError("sbatch", "", "not found on PATH: resume submits with Slurm's sbatch");
      if (res->exit_code != 0) {
        x["error"] = fmt::format("sbatch exited {}", res->exit_code);
        rc = kExitFailed;
        if (!json) fmt::print(stderr, "{}: sbatch exited {}\n", line, res->exit_code);
      } else {
        std::string id = res->out.substr(0, res->out.find_first_of(";\n"));
        x["job"] = id;
        if (!json) say("{}: submitted job {}\n", line, id);
      }
      out.push_back(x);
    }
    if (json) {
      auto j = envelope();
      j["campaign"] = m.id;
      j["resubmitted"] = out;
      print_json(j);
    } else if (subs.empty()) {
      say("nothing to resubmit: every task is done, queued or running\n");
    }
    return rc;
  }

  int run_collect() {
    const auto m = campaign::load_manifest(dir);
    const auto r = campaign::collect(m, dir, to_root.empty() ? default_output_dir("corpus/hw", "--to") : to_root);
    // Validate what this campaign collected (not whatever else the folders hold).
    std::vector<model::Case> cases;
    for (const auto* list : {&r.copied, &r.already})
      for (const auto& p : *list)
        for (auto& c : model::load_cases(p)) cases.push_back(std::move(c));
    const auto hs = model::resolve_hypotheses("all");
    // Every shipped hypothesis on every collected case: minutes for a large campaign.
    const model::ValidationRun v = [&] {
      report::Progress progress("campaign collect: validating", cases.size());
      return model::run_validation(cases, hs, [&] { progress.tick(); });
    }();
    const bool ok = r.missing == 0 && r.conflicts.empty() && v.mismatches(model::Level::Exact).empty();
    if (json) {
      auto j = envelope();
      j["campaign"] = m.id;
      j["copied"] = r.copied;
      j["already"] = r.already;
      j["conflicts"] = r.conflicts;
      j["missing"] = r.missing;
      j["validation"] = v.to_json({model::Level::Exact}, model::Level::Exact);
      print_json(j);
      return ok ? kExitOk : kExitFailed;
    }
    say("collected {} new, {} already there, {} conflicting (kept, not overwritten), {} case(s) without a result yet\n",
               r.copied.size(), r.already.size(), r.conflicts.size(), r.missing);
    for (const auto& c : r.conflicts) say("  conflict: {} differs from this campaign's result\n", c);
    if (!cases.empty()) {
      report::Table t({"hypothesis", "exact pass", "fail", "unknown", "n/a"});
      for (size_t c = 1; c < 5; ++c) t.right_align(c);
      for (size_t h = 0; h < hs.size(); ++h) {
        auto tally = v.tally(h, model::Level::Exact);
        t.add({hs[h].name, std::to_string(tally.pass), std::to_string(tally.fail), std::to_string(tally.unknown),
               std::to_string(tally.other)});
      }
      say("validate ({} collected case(s), level exact):\n{}", cases.size(), t.render());
    }
    return ok ? kExitOk : kExitFailed;
  }

  int run() override {
    if (plan->parsed()) return run_plan();
    if (status->parsed()) return run_status();
    if (resume->parsed()) return run_resume();
    if (collect->parsed()) return run_collect();
    throw model::InputError("campaign", "", "name what to do: plan, status, resume or collect (tbcheck campaign --help)");
  }
};

}  // namespace

std::unique_ptr<Command> make_campaign(CLI::App& app) {
  auto c = std::make_unique<Campaign>();
  c->app = app.add_subcommand("campaign", "Oracle campaigns on Slurm: plan job arrays, status, resume, collect");
  c->app->require_subcommand(0, 1);  // none: an InputError naming the four (see run)
  c->plan = c->app->add_subcommand("plan", "Write a manifest and one sbatch job-array script per device");
  c->plan->add_option("--cases", c->opt.case_paths, "Case files and folders (each case runs on the device it names)")
      ->required();
  c->plan->add_option("--device", c->device_specs, "NAME or NAME=GRES (e.g. a100=gpu:a100:1); repeatable")->required();
  c->plan->add_option("--partition", c->partitions, "PARTITION for every device, or DEVICE=PARTITION; repeatable");
  c->plan->add_option("--oracle", c->opt.oracle, "cuda (default) or sim:<hypothesis> (to test a campaign)");
  c->plan->add_option("--repeat", c->opt.repeat, fmt::format("Repetitions per run, 1 to {} (default 5)", oracle::kMaxRepetitions))
      ->check(integer_in(1, oracle::kMaxRepetitions));
  c->plan->add_option("--chunk", c->opt.chunk, fmt::format("Cases per array task, 1 to {} (default 1)", campaign::kMaxChunk))
      ->check(integer_in(1, campaign::kMaxChunk));
  c->plan->add_option("--time", c->opt.time_limit, "sbatch --time of each task: minutes, HH:MM:SS or D-HH:MM:SS (default: the partition's)");
  c->plan->add_option("--tbcheck", c->opt.tbcheck, "The tbcheck binary the tasks run, an absolute path (default: this one)");
  c->plan->add_option("--out", c->opt.out_dir, "The campaign folder (new or empty)")->required();
  c->plan->add_flag("--json", c->json, "Machine-readable output");
  c->status = c->app->add_subcommand("status", "Done, queued, running, failed and missing tasks (exit 1 until complete)");
  c->resume = c->app->add_subcommand("resume", "Resubmit the failed and missing tasks (sbatch --array=<list>)");
  c->collect = c->app->add_subcommand("collect", "Copy results to <to>/<device>/ (never overwriting), then validate them");
  for (auto* s : {c->status, c->resume, c->collect}) {
    s->add_option("campaign", c->dir, "The campaign folder")->required();
    s->add_flag("--json", c->json, "Machine-readable output");
  }
  c->resume->add_flag("--dry-run", c->dry_run, "Print the sbatch commands without submitting");
  c->collect->add_option("--to", c->to_root, "Corpus folder of hardware results (default, from the repository root only: corpus/hw)");
  return c;
}

}  // namespace tbcheck::cli
