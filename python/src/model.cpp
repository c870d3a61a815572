// Bindings of the model library: shipped and file devices and hypotheses, compositions by name,
// scenarios, predict (blocks as rows for pandas) and validate (the CLI's --json document as a dict).
#include <algorithm>
#include <filesystem>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "tbcheck/model/compare.hpp"
#include "tbcheck/model/compositions.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/hypothesis_list.hpp"
#include "tbcheck/model/io.hpp"
#include "tbcheck/model/observation.hpp"
#include "tbcheck/model/one_case.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/simulator.hpp"
#include "tbcheck/model/validate.hpp"

namespace tbcheck::python {
namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".json") || std::filesystem::exists(s);
}

// A composition name as learn prints it ("alg1+registers=pb"), read by the model's front door
// (model::resolve_hypotheses, which names it canonically), as a composition whatever file it came from.
model::Hypothesis composition_from_name(const std::string& name) {
  if (name.find(',') != std::string::npos)
    throw model::InputError(fmt::format("composition '{}'", name), "", "one composition, not a list");
  model::Hypothesis h = model::resolve_hypotheses(name).front();
  h.source = "composition";
  h.file = "";
  return h;
}

model::Hypothesis one_hypothesis(const std::string& spec) {
  auto hs = model::resolve_hypotheses(spec);
  if (hs.size() != 1)
    throw model::InputError("--hypothesis", "",
                            fmt::format("'{}' names {} hypotheses; hypothesis() takes one (resolve_hypotheses() takes "
                                        "a list)",
                                        spec, hs.size()));
  return hs[0];
}

model::Scenario scenario_argument(py::handle o, const std::string& case_id, const std::string& command) {
  if (py::isinstance<model::Scenario>(o)) return o.cast<model::Scenario>();
  if (py::isinstance<py::dict>(o)) return model::scenario_from_json(from_python(o, "scenario (dict)"), "scenario (dict)");
  // As the CLI reads its scenario argument: one case of a file, or the one `case` names in a collection.
  return model::load_one_case(path_argument(o), case_id, command).scenario;
}

// One row per block: the columns of a per-block table (pandas.DataFrame(rows)).
void add_rows(py::list& rows, const model::Schedule& s, const model::Scenario& sc) {
  const model::Device& d = sc.device;
  for (size_t k = 0; k < s.kernels.size(); ++k)
    for (size_t b = 0; b < s.kernels[k].blocks.size(); ++b) {
      const auto& p = s.kernels[k].blocks[b];
      const int tpc = d.tpc_of(p.sm);
      py::dict r;
      r["hypothesis"] = s.hypothesis;
      r["device"] = s.device;
      r["kernel"] = s.kernels[k].name;
      r["kernel_index"] = k;
      r["block"] = b;
      r["sm"] = p.sm;
      r["tpc"] = tpc;
      r["gpc"] = tpc >= 0 && static_cast<size_t>(tpc) < d.gpc_of_tpc.size() ? py::object(py::int_(d.gpc_of_tpc[tpc]))
                                                                              : py::object(py::none());
      r["start"] = p.start;
      r["end"] = p.end;
      rows.append(std::move(r));
    }
}

py::list predict(py::handle scenario, py::handle hypothesis, const std::string& case_id) {
  const model::Scenario sc = scenario_argument(scenario, case_id, "predict");
  const auto hs = hypotheses_argument(hypothesis);
  py::list rows;
  model::PredictAllResult done;
  {
    // As the CLI (model::predict_all): with several hypotheses, one that cannot run the scenario is skipped and
    // said so. The simulations run without the GIL; each schedule's rows are made with it.
    py::gil_scoped_release unlocked;
    done = model::predict_all(sc, hs, "scenario", [&](size_t, model::Schedule&& s) {
      py::gil_scoped_acquire locked;
      add_rows(rows, s, sc);
    });
  }
  for (const auto& why : done.skipped)
    py::module_::import("warnings").attr("warn")(fmt::format("tbcheck: skipped (not applicable) {}", why));
  return rows;
}

py::object validate(py::handle paths, py::handle hypothesis, const std::string& level, const std::string& timing,
                    int64_t max_orders) {
  std::vector<std::string> files;
  if (py::isinstance<py::list>(paths) || py::isinstance<py::tuple>(paths))
    for (auto p : paths) files.push_back(path_argument(p));
  else
    files.push_back(path_argument(paths));
  std::vector<model::Level> levels;
  if (level == "all") levels.assign(std::begin(model::kAllLevels), std::end(model::kAllLevels));
  else levels.push_back(model::level_from_string(level));
  const model::Level expect_level = levels.size() == 1 ? levels[0] : model::Level::Exact;
  model::JudgeOptions judging;
  judging.timing = model::timing_from_string(timing, "--timing");
  if (max_orders < 1 || max_orders > 100'000'000)
    throw model::InputError("--max-orders", "", "must be an integer between 1 and 100000000");
  judging.max_orders = max_orders;
  auto hs = hypotheses_argument(hypothesis);
  model::json out;
  {
    py::gil_scoped_release unlocked;
    std::vector<model::Case> cases;
    for (const auto& p : files)
      for (auto& c : model::load_cases(p)) cases.push_back(std::move(c));
    if (cases.empty()) throw model::InputError(fmt::format("{}", fmt::join(files, " ")), "", "no corpus cases found");
    const model::ValidationRun run = model::run_validation(std::move(cases), std::move(hs), {}, judging);
    out = run.to_json(levels, expect_level);
  }
  return to_python(out);
}

}  // namespace

model::Device device_argument(py::handle o) {
  if (py::isinstance<model::Device>(o)) return o.cast<model::Device>();
  if (py::isinstance<py::dict>(o)) return model::device_from_json(from_python(o, "device (dict)"), "device (dict)");
  const std::string s = path_argument(o);
  // A shipped name first, as scenario files name devices; a path otherwise.
  for (const auto& d : model::builtin_devices())
    if (d.name == s) return d;
  if (looks_like_path(s)) return model::device_from_json(model::read_json_file(s), s);
  return model::builtin_device(s, "--device", "");  // the CLI's refusal, listing the shipped names
}

model::Hypothesis hypothesis_argument(py::handle o) {
  if (py::isinstance<model::Hypothesis>(o)) return o.cast<model::Hypothesis>();
  return one_hypothesis(path_argument(o));
}

std::vector<model::Hypothesis> hypotheses_argument(py::handle o) {
  if (py::isinstance<model::Hypothesis>(o)) return {o.cast<model::Hypothesis>()};
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    std::vector<model::Hypothesis> out;
    for (auto e : o)
      for (auto& h : hypotheses_argument(e)) out.push_back(std::move(h));
    if (out.empty()) throw model::InputError("--hypothesis", "", "no hypothesis given");
    model::check_distinct_hypothesis_names(out);
    return out;
  }
  return model::resolve_hypotheses(path_argument(o));  // a comma list as --hypothesis reads it
}

void bind_model(py::module_& m) {
  py::class_<model::Device>(m, "Device", "A GPU's per-SM limits (corpus/devices/*.json)")
      .def_readonly("name", &model::Device::name)
      .def_readonly("description", &model::Device::description)
      .def_readonly("cc", &model::Device::cc)
      .def_readonly("sms", &model::Device::sms)
      .def_readonly("sms_per_tpc", &model::Device::sms_per_tpc)
      .def_property_readonly("tpcs", &model::Device::tpcs)
      .def_property_readonly("architecture", &model::Device::architecture)
      .def("to_dict", [](const model::Device& d) { return to_python(d.to_json()); }, "The device file's fields")
      .def("__repr__", [](const model::Device& d) { return fmt::format("<tbcheck.Device {} ({} SMs)>", d.name, d.sms); });

  py::class_<model::Hypothesis>(m, "Hypothesis", "One option per scheduler mechanism (corpus/hypotheses/*.json)")
      .def_readonly("name", &model::Hypothesis::name)
      .def_readonly("source", &model::Hypothesis::source)
      .def_readonly("description", &model::Hypothesis::description)
      .def_readonly("file", &model::Hypothesis::file)
      .def_property_readonly("composition_name", &model::composition_name)
      .def_property_readonly(
          "options",
          [](const model::Hypothesis& h) {
            py::dict out;
            for (const auto& s : model::option_settings(h)) out[py::str(std::string(s.mechanism))] = s.value;
            return out;
          },
          "mechanism -> chosen value as text ('off' for an absent threshold)")
      .def("to_dict", [](const model::Hypothesis& h) { return to_python(h.to_json()); }, "The hypothesis file's fields")
      .def(
          "leads_pair",
          [](const model::Hypothesis& h, const model::Device& d, int blocks, int block) {
            if (blocks < 1) throw model::InputError("leads_pair", "blocks", fmt::format("{} is not a block count", blocks));
            if (block < 0 || block >= blocks)
              throw model::InputError("leads_pair", "block",
                                      fmt::format("{} is not a block of a kernel of {} blocks", block, blocks));
            return h.leads_pair(d, blocks, block);
          },
          py::arg("device"), py::arg("blocks"), py::arg("block"),
          "Whether block `block` (0-based) of a kernel of `blocks` blocks leads a pair on the device under the "
          "hypothesis' issue rule: its follower, the next block, goes to its SM (docs/turing.md)")
      .def("__repr__", [](const model::Hypothesis& h) { return fmt::format("<tbcheck.Hypothesis {}>", h.name); });

  py::class_<model::Scenario>(m, "Scenario", "A device and its kernels, each launched at its release time")
      .def_readonly("device", &model::Scenario::device)
      .def_property_readonly("total_blocks", &model::Scenario::total_blocks)
      .def_property_readonly("kernels",
                             [](const model::Scenario& s) {
                               std::vector<std::string> names;
                               for (const auto& k : s.kernels) names.push_back(k.name);
                               return names;
                             })
      .def("to_dict", [](const model::Scenario& s) { return to_python(s.to_json()); }, "The scenario file's fields")
      .def("__repr__", [](const model::Scenario& s) {
        return fmt::format("<tbcheck.Scenario {} kernels, {} blocks on {}>", s.kernels.size(), s.total_blocks(),
                           s.device.name);
      });

  m.def(
      "devices",
      [] {
        std::vector<std::string> out;
        for (const auto& d : model::builtin_devices()) out.push_back(d.name);
        return out;
      },
      "Names of the shipped devices");
  m.def(
      "hypotheses",
      [] {
        std::vector<std::string> out;
        for (const auto& h : model::builtin_hypotheses()) out.push_back(h.name);
        return out;
      },
      "Names of the shipped hypotheses");
  m.def(
      "compositions",
      [](py::handle device) {
        std::vector<std::string> out;
        const auto& all = device.is_none() ? model::all_compositions() : model::compositions_for(device_argument(device));
        out.reserve(all.size());
        for (const auto& h : all) out.push_back(h.name);
        return out;
      },
      py::arg("device") = py::none(), "Names of every valid composition of mechanism options (on a device: its own)");
  m.def("device", &device_argument, py::arg("device"), "A shipped device by name, or a device file");
  m.def("hypothesis", &hypothesis_argument, py::arg("hypothesis"), "One hypothesis: a shipped name, a file, or a composition name ('alg1+registers=pb')");
  m.def("resolve_hypotheses", &hypotheses_argument, py::arg("hypotheses"),
        "Hypotheses as the CLI's --hypothesis takes them: a comma list, 'all', files, compositions, or a list of these");
  m.def("composition", &composition_from_name, py::arg("name"),
        "The composition a name of the form 'alg1+mechanism=value+...' names (as learn and check print them)");
  m.def(
      "scenario", [](py::handle source, const std::string& case_id) { return scenario_argument(source, case_id, "scenario"); },
      py::arg("scenario"), py::arg("case") = "", "A scenario from a scenario or case file (case: the id in a collection) or a dict");
  m.def("predict", &predict, py::arg("scenario"), py::arg("hypothesis") = "alg1", py::arg("case") = "",
        "Where and when every block runs: one dict per block (hypothesis, device, kernel, kernel_index, block, sm, "
        "tpc, gpc, start, end), so pandas.DataFrame(predict(...)) is the table");
  m.def("validate", &validate, py::arg("cases"), py::arg("hypothesis") = "all", py::arg("level") = "all",
        py::arg("timing") = "model", py::arg("max_orders") = model::kDefaultMaxOrders,
        "Every corpus case under every hypothesis: the document `tbcheck validate --json` prints (without its envelope)");
}

}  // namespace tbcheck::python
