// The command table of the CLI: one factory per subcommand.
// Each factory registers its options on the app and returns the runnable command.
#pragma once
#include <memory>

#include "common.hpp"
#include "text_out.hpp"

namespace tbcheck::cli {

std::unique_ptr<Command> make_devices(CLI::App& app);
std::unique_ptr<Command> make_hypotheses(CLI::App& app);
std::unique_ptr<Command> make_predict(CLI::App& app);
std::unique_ptr<Command> make_validate(CLI::App& app);
std::unique_ptr<Command> make_distinguish(CLI::App& app);
std::unique_ptr<Command> make_suite(CLI::App& app);
std::unique_ptr<Command> make_run(CLI::App& app);
std::unique_ptr<Command> make_learn(CLI::App& app);
std::unique_ptr<Command> make_random(CLI::App& app);
std::unique_ptr<Command> make_minimize(CLI::App& app);
std::unique_ptr<Command> make_check(CLI::App& app);
std::unique_ptr<Command> make_import_examiner(CLI::App& app);
std::unique_ptr<Command> make_export_examiner(CLI::App& app);
std::unique_ptr<Command> make_import_ntbs(CLI::App& app);
std::unique_ptr<Command> make_retime(CLI::App& app);
std::unique_ptr<Command> make_campaign(CLI::App& app);
std::unique_ptr<Command> make_merge(CLI::App& app);
std::unique_ptr<Command> make_probe_gpc(CLI::App& app);

}  // namespace tbcheck::cli
