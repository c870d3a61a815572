// tbcheck.InputError: the library's InputError as a Python ValueError whose message is the text the CLI
// prints after "tbcheck: error: ", with its parts (where, field, reason) as attributes.
#include "bindings.hpp"
#include "tbcheck/model/error.hpp"

namespace tbcheck::python {

void bind_errors(py::module_& m) {
  static py::exception<model::InputError> input_error(m, "InputError", PyExc_ValueError);
  input_error.doc() = "Bad input: the message names the file, flag or field and the reason (the CLI's exit 2).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const model::InputError& e) {
      py::object err = py::handle(input_error.ptr())(e.what());  // an instance, to carry the parts
      err.attr("where") = e.where();
      err.attr("field") = e.field();
      err.attr("reason") = e.reason();
      PyErr_SetObject(input_error.ptr(), err.ptr());
    }
  });
}

}  // namespace tbcheck::python
