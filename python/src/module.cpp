// The tbcheck._core extension module: the bound layers, each in its own source file.
// tbcheck/__init__.py re-exports them as the public `tbcheck` package.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "tbcheck's model and search libraries (see docs/python.md)";
  m.attr("__version__") = TBCHECK_VERSION;
  tbcheck::python::bind_errors(m);
  tbcheck::python::bind_model(m);
  tbcheck::python::bind_search(m);
  tbcheck::python::bind_scheduler(m);
}
