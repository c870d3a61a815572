// The command table and the exit-code mapping behind `tbcheck`: InputError is bad input (exit 2),
// any other exception an internal error (exit 3), which no user input may reach (fuzz/fuzz_cli.cpp).
#include "tbcheck_main.hpp"

#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "text_out.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/report/table.hpp"

namespace tbcheck::cli {

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  report::Progress::set_quiet(quiet);
  try {
    for (auto& c : commands)
      if (c->app->parsed()) {
        const int rc = c->run();
        say_flush();
        return rc;
      }
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
