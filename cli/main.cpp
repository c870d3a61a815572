// tbcheck: the command line. Thin by design: parse, call the libraries, print.
// Exit codes: 0 ok, 1 a hypothesis failed / cases disagree, 2 bad input (never a crash).
#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "tbcheck/model/error.hpp"

int main(int argc, char** argv) {
  using namespace tbcheck::cli;
  CLI::App app{"tbcheck: model checker with a hardware oracle for the NVIDIA thread-block-to-SM scheduler"};
  app.set_version_flag("--version", std::string("tbcheck ") + TBCHECK_VERSION);
  app.require_subcommand(1);
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
  commands.push_back(make_campaign(app));
  commands.push_back(make_merge(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitBadInput;
  }
  try {
    for (auto& c : commands)
      if (c->app->parsed()) return c->run();
  } catch (const tbcheck::model::InputError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "tbcheck: error: {}\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    fmt::print(stderr, "tbcheck: internal error (please report): {}\n", e.what());
    return 3;
  }
  return kExitBadInput;
}
