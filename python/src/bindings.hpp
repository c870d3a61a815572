// The pieces of the tbcheck._core extension: one bind_* function per bound layer, called by module.cpp,
// and the conversions between nlohmann::json and Python data they share.
#pragma once
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "tbcheck/model/hypothesis.hpp"
#include "tbcheck/model/json_reader.hpp"

namespace tbcheck::python {

namespace py = pybind11;

// JSON values as plain Python data (dict, list, str, int, float, bool, None) and back.
py::object to_python(const model::json& j);
model::json from_python(py::handle o, const std::string& where);
// A path argument: str or any os.PathLike.
std::string path_argument(py::handle o);
// A device: a shipped name, a device file, a dict of its JSON, or a Device.
model::Device device_argument(py::handle o);
// One hypothesis: a shipped name, a file, a composition name, or a Hypothesis.
model::Hypothesis hypothesis_argument(py::handle o);
// Hypotheses as --hypothesis takes them (a comma list, 'all', files, composition names), a Hypothesis, or a
// list of these.
std::vector<model::Hypothesis> hypotheses_argument(py::handle o);

void bind_errors(py::module_& m);  // tbcheck.InputError
void bind_model(py::module_& m);   // devices, hypotheses, scenarios, predict, validate
void bind_search(py::module_& m);  // distinguish
void bind_scheduler(py::module_& m);  // the stepping Scheduler

}  // namespace tbcheck::python
