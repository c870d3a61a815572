// JSON <-> Python data for the bindings: results leave as dicts and lists pandas takes directly,
// scenario and hypothesis objects arrive as dicts.
#include <cmath>

#include <fmt/format.h>

#include "bindings.hpp"
#include "tbcheck/model/error.hpp"

namespace tbcheck::python {

py::object to_python(const model::json& j) {
  switch (j.type()) {
    case model::json::value_t::null:
    case model::json::value_t::discarded:
      return py::none();
    case model::json::value_t::boolean:
      return py::bool_(j.get<bool>());
    case model::json::value_t::number_integer:
      return py::int_(j.get<int64_t>());
    case model::json::value_t::number_unsigned:
      return py::int_(j.get<uint64_t>());
    case model::json::value_t::number_float:
      return py::float_(j.get<double>());
    case model::json::value_t::string:
      return py::str(j.get_ref<const std::string&>());
    case model::json::value_t::binary:
      return py::bytes(std::string(j.get_binary().begin(), j.get_binary().end()));
    case model::json::value_t::array: {
      py::list out;
      for (const auto& e : j) out.append(to_python(e));
      return out;
    }
    case model::json::value_t::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = to_python(v);
      return out;
    }
  }
  return py::none();
}

model::json from_python(py::handle o, const std::string& where) {
  if (o.is_none()) return nullptr;
  // bool before int: Python's True is an int too.
  if (py::isinstance<py::bool_>(o)) return o.cast<bool>();
  if (py::isinstance<py::int_>(o)) return o.cast<int64_t>();
  if (py::isinstance<py::float_>(o)) {
    const double x = o.cast<double>();
    if (!std::isfinite(x)) throw model::InputError(where, "", "a number is not finite (JSON has no nan or inf)");
    return x;
  }
  if (py::isinstance<py::str>(o)) return o.cast<std::string>();
  if (py::isinstance<py::dict>(o)) {
    model::json out = model::json::object();
    for (auto [k, v] : o.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k)) throw model::InputError(where, "", "a dict key is not a string");
      out[k.cast<std::string>()] = from_python(v, where);
    }
    return out;
  }
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) {
    model::json out = model::json::array();
    for (auto e : o) out.push_back(from_python(e, where));
    return out;
  }
  throw model::InputError(where, "",
                          fmt::format("a {} is not JSON data (dict, list, str, int, float, bool or None)",
                                      py::str(py::type::of(o).attr("__name__")).cast<std::string>()));
}

std::string path_argument(py::handle o) {
  return py::str(py::module_::import("os").attr("fspath")(o)).cast<std::string>();
}

}  // namespace tbcheck::python
