// tbcheck.Scheduler: the stepping scheduler (docs/stepping.md) for a simulator loop written in Python;
// kernels arrive as dicts of the scenario file's kernel fields, answers leave as plain data.
#include <fmt/format.h>

#include "bindings.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/model/scenario.hpp"
#include "tbcheck/model/scheduler.hpp"

namespace tbcheck::python {
namespace {

constexpr const char* kKernelWhere = "kernel (dict)";

// A kernel dict read as the scenario loader reads kernels[0] of a scenario on the scheduler's device, so its
// limits and spelling are the scenario file's. `duration` and `release_time` are not read by launch(): a
// dict without a duration is given one. Refusals name the field as "kernel.threads" (the C++ launch's
// spelling), not the wrapper scenario's "kernels[0].threads".
model::Kernel kernel_argument(py::handle o, const model::Device& d) {
  if (!py::isinstance<py::dict>(o))
    throw model::InputError(kKernelWhere, "", fmt::format("a {} is not a kernel dict (the scenario file's kernel fields)",
                                                          py::str(py::type::of(o).attr("__name__")).cast<std::string>()));
  model::json k = from_python(o, kKernelWhere);
  if (!k.contains("duration")) k["duration"] = 1;
  const model::json scenario = {{"kernels", model::json::array({k})}};
  try {
    return std::move(model::scenario_from_json(scenario, d, false, kKernelWhere).kernels[0]);
  } catch (const model::InputError& e) {  // the loader's refusal, reworded for the one kernel
    const std::string prefix = "kernels[0]";
    const std::string& f = e.field();
    throw model::InputError(kKernelWhere, f.rfind(prefix, 0) == 0 ? "kernel" + f.substr(prefix.size()) : f, e.reason());
  }
}

py::dict launch_to_python(const model::Launch& l) {
  py::dict out;
  out["accepted"] = l.accepted();
  out["kernel"] = l.accepted() ? py::object(py::int_(l.kernel)) : py::object(py::none());
  out["status"] = std::string(model::to_string(l.check.status));
  out["reason"] = l.accepted() ? py::object(py::none()) : py::object(py::str(l.check.reason));
  return out;
}

}  // namespace

void bind_scheduler(py::module_& m) {
  py::class_<model::Scheduler>(m, "Scheduler",
                               "The block scheduler stepped by the caller's clock: launch(), place(), retire() "
                               "(docs/stepping.md, docs/python.md)")
      .def(py::init([](py::handle device, py::handle hypothesis) {
             return model::Scheduler(device_argument(device), hypothesis_argument(hypothesis));
           }),
           py::arg("device"), py::arg("hypothesis") = "alg1",
           "device and hypothesis as device() and hypothesis() take them; InputError for a hypothesis without a "
           "stepping form (gpc-priority)")
      .def_static(
          "support",
          [](py::handle device, py::handle hypothesis) {
            return to_python(model::Scheduler::support(device_argument(device), hypothesis_argument(hypothesis)).to_json());
          },
          py::arg("device"), py::arg("hypothesis"), "Whether the hypothesis can be stepped: {'status', 'reason'}")
      .def(
          "launch",
          [](model::Scheduler& s, py::handle kernel, int64_t now) {
            return launch_to_python(s.launch(kernel_argument(kernel, s.device()), now));
          },
          py::arg("kernel"), py::arg("now"),
          "Launches a kernel (a dict of the scenario file's kernel fields) at `now`: {'accepted', 'kernel' (its "
          "handle, launch order from 0, or None), 'status', 'reason' (why not, or None)}")
      .def(
          "place",
          [](model::Scheduler& s, int64_t now) {
            std::vector<model::Placement> placed;
            const model::PlaceStatus status = s.place(now, placed);
            py::list out;
            for (const model::Placement& p : placed) {
              py::dict b;
              b["kernel"] = p.kernel;
              b["block"] = p.block;
              b["sm"] = p.sm;
              out.append(std::move(b));
            }
            return py::make_tuple(std::string(model::to_string(status)), out);
          },
          py::arg("now"),
          "Places blocks at `now`: (status, blocks), status 'placed', 'none-fits' or 'nothing-eligible', blocks a "
          "list of {'kernel', 'block', 'sm'} in dispatch order")
      .def("retire", &model::Scheduler::retire, py::arg("kernel"), py::arg("block"), py::arg("now"),
           "A placed block ended at `now`: its resources are free for the next place()")
      .def_property_readonly("kernels", &model::Scheduler::kernels, "Kernels launched and accepted")
      .def_property_readonly("in_flight", &model::Scheduler::in_flight, "Blocks placed and not retired")
      .def("blocks_left", &model::Scheduler::blocks_left, py::arg("kernel"), "Blocks of the kernel not placed yet")
      .def("room", &model::Scheduler::room, py::arg("sm"), py::arg("kernel"),
           "Blocks of the kernel the SM could take now")
      .def_property_readonly("device", &model::Scheduler::device)
      .def_property_readonly("hypothesis", &model::Scheduler::hypothesis)
      .def_property_readonly("retirement",
                             [](const model::Scheduler& s) { return std::string(model::to_string(s.hypothesis().retirement)); },
                             "The hypothesis' retirement option: the order of calls at one instant")
      .def("__repr__", [](const model::Scheduler& s) {
        return fmt::format("<tbcheck.Scheduler {} on {}: {} kernels, {} blocks in flight>", s.hypothesis().name,
                           s.device().name, s.kernels(), s.in_flight());
      });
}

}  // namespace tbcheck::python
