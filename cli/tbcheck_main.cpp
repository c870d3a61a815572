// The command table and the exit-code mapping behind `tbcheck`: InputError is bad input (exit 2),
// any other exception an internal error (exit 3), which no user input may reach (fuzz/fuzz_cli.cpp).
#include "tbcheck_main.hpp"

#include <csignal>
#include <cstdio>
#include <exception>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "text_out.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/stop.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {

namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// Parse errors echo what was typed: control characters would reach the terminal, so they are shown escaped.
std::string escape_controls(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, ch);
  }
  return out;
}

}  // namespace

std::string unknown_command_message(const std::string& typed, const std::vector<std::string>& commands) {
  const std::string shown = escape_controls(typed.substr(0, 80));
  std::string best;
  size_t best_d = std::string::npos;
  for (const auto& c : commands) {
    const size_t d = edit_distance(typed, c);
    if (d < best_d) best_d = d, best = c;
  }
  // A suggestion only where it is plausibly what was meant: a few edits, or the start of one command.
  bool close = best_d <= std::max<size_t>(2, typed.size() / 3);
  if (!close && typed.size() >= 3) {
    std::vector<std::string> starting;
    for (const auto& c : commands)
      if (c.rfind(typed, 0) == 0) starting.push_back(c);
    if (starting.size() == 1) best = starting.front(), close = true;
  }
  if (!best.empty() && close)
    return fmt::format("'{}' is not a command; did you mean '{}'? (tbcheck --help lists the commands)", shown, best);
  return fmt::format("'{}' is not a command (tbcheck --help lists the commands)", shown);
}

int tbcheck_main(int argc, char** argv) {
  // A file size limit (ulimit -f) makes write(2) fail with EFBIG, reported as bad input, instead of
  // killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"tbcheck: model checker with a hardware oracle for the NVIDIA thread-block-to-SM scheduler"};
  app.set_version_flag("--version", std::string("tbcheck ") + TBCHECK_VERSION);
  app.require_subcommand(1);
  // Before the subcommands are added: they take the formatter their parent has then.
  app.formatter(fitting_formatter());
  // Progress lines on stderr (report::Progress) are off with --quiet, given before or after the command
  // (fallthrough: an option a command does not know is looked up here).
  bool quiet = false;
  app.add_flag("--quiet", quiet, "No progress lines on stderr (long commands print them: live on a terminal, every 10 s otherwise)");
  app.fallthrough();
  // One explicit table of commands (no static self-registration).
  std::vector<std::unique_ptr<Command>> commands;
  commands.push_back(make_devices(app));
  commands.push_back(make_hypotheses(app));
  commands.push_back(make_predict(app));
  commands.push_back(make_validate(app));
  commands.push_back(make_distinguish(app));
  commands.push_back(make_suite(app));
  commands.push_back(make_run(app));
  commands.push_back(make_learn(app));
  commands.push_back(make_random(app));
  commands.push_back(make_minimize(app));
  commands.push_back(make_check(app));
  commands.push_back(make_import_examiner(app));
  commands.push_back(make_export_examiner(app));
  commands.push_back(make_import_ntbs(app));
  commands.push_back(make_retime(app));
  commands.push_back(make_campaign(app));
  commands.push_back(make_merge(app));
  commands.push_back(make_probe_gpc(app));
  // CLI11 would answer a mistyped command with "A subcommand is required"; name what was typed instead.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    bool known = false;
    for (auto* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
      known = known || sub->check_name(argv[1]);
    }
    if (!known) {
      fmt::print(stderr, "tbcheck: error: {}\n", unknown_command_message(argv[1], names));
      return kExitBadInput;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);  // --help, --version
    fmt::print(stderr, "tbcheck: error: {}\nRun with --help for more information.\n", escape_controls(e.what()));
    return kExitBadInput;
  }
  report::Progress::set_quiet(quiet);
  try {
    for (auto& c : commands)
      if (c->app->parsed()) {
        const int rc = c->run();
        say_flush();
        return rc;
      }
  } catch (const model::Stopped& s) {
    say_flush();
    std::fflush(stdout);
    // The command (main.cpp installed the handlers) ends by the signal, as a shell expects; an embedding
    // program (the in-process fuzzer) gets 128 + the signal back and keeps running.
    if (model::stop_handlers_installed()) model::end_by_signal(s.signal);
    model::remove_open_temporaries();
    return 128 + s.signal;
  } catch (const tbcheck::model::InputError& e) {
    say_flush();
    std::fflush(stdout);
    fmt::print(stderr, "tbcheck: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    say_flush();
    std::fflush(stdout);
    fmt::print(stderr, "tbcheck: internal error (please report): {}\n", e.what());
    return kExitInternal;
  }
  return kExitBadInput;
}

}  // namespace tbcheck::cli
