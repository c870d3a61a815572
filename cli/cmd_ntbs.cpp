// `tbcheck import-ntbs`: a clone of nicolaswilde/thread-block-scheduling to one collection file
// of corpus cases per GPU (logic in oracle/ntbs).
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/json_reader.hpp"
#include "tbcheck/oracle/ntbs.hpp"

namespace tbcheck::cli {
namespace {

struct ImportNtbs : Command {
  std::string clone, out_dir;
  bool json = false;

  int run() override {
    const auto imported = oracle::ntbs::import_clone(clone);
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw model::InputError(out_dir, "--out", fmt::format("cannot create the output directory: {}", ec.message()));
    // Refuse before writing anything, so a second import never leaves a half-updated folder.
    for (const auto& c : imported.collections) {
      const auto path = std::filesystem::path(out_dir) / (c.device + ".json");
      if (std::filesystem::exists(path))
        throw model::InputError(path.string(), "", "already exists; recordings are never replaced (choose another --out)");
    }
    std::vector<std::string> written;
    for (const auto& c : imported.collections) {
      const std::string path = (std::filesystem::path(out_dir) / (c.device + ".json")).string();
      model::write_file_atomic(path, model::json_file_text(c.collection, 1), /*no_overwrite=*/true);
      written.push_back(path);
    }
    if (json) {
      auto j = envelope();
      j["written"] = nlohmann::json::array();
      for (size_t i = 0; i < written.size(); ++i)
        j["written"].push_back({{"gpu", imported.collections[i].gpu},
                                {"device", imported.collections[i].device},
                                {"log", imported.collections[i].log},
                                {"file", written[i]},
                                {"cases", imported.collections[i].collection["cases"].size()}});
      j["skipped"] = nlohmann::json::array();
      for (const auto& s : imported.skipped) j["skipped"].push_back({{"gpu", s.gpu}, {"reason", s.reason}});
      print_json(j);
    } else {
      for (size_t i = 0; i < written.size(); ++i)
        say("{}: {} cases -> {}\n", imported.collections[i].gpu,
                   imported.collections[i].collection["cases"].size(), written[i]);
      for (const auto& s : imported.skipped) say("{}: skipped ({})\n", s.gpu, s.reason);
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> make_import_ntbs(CLI::App& app) {
  auto c = std::make_unique<ImportNtbs>();
  c->app = app.add_subcommand("import-ntbs",
                              "Read a clone of nicolaswilde/thread-block-scheduling (my-result/<GPU>/<GPU>.log) into "
                              "corpus cases, one collection file per GPU");
  c->app->add_option("clone", c->clone, "The cloned repository (the folder holding my-result/)")->required();
  c->app->add_option("--out", c->out_dir, "Directory for <device>.json (created when missing)")->required();
  c->app->add_flag("--json", c->json, "Machine-readable output");
  return c;
}

}  // namespace tbcheck::cli
