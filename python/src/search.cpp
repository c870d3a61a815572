// Bindings of the search library: distinguish, each pair's result as the dict `tbcheck distinguish
// --json` prints for it (outcome, witness case, minimality), with the CLI's bounds as keyword arguments.
#include <fmt/format.h>

#include "bindings.hpp"
#include "tbcheck/model/device.hpp"
#include "tbcheck/model/error.hpp"
#include "tbcheck/search/distinguish.hpp"
#include "tbcheck/search/shard.hpp"

namespace tbcheck::python {
namespace {

void check_range(const char* flag, double x, double lo, double hi, bool lo_open) {
  if (!(lo_open ? x > lo : x >= lo) || !(x <= hi))
    throw model::InputError(flag, "", fmt::format("must be {} {} and at most {}", lo_open ? "above" : "at least", lo, hi));
}

const model::Hypothesis& named(const std::vector<model::Hypothesis>& hs, const std::string& name) {
  for (const auto& h : hs)
    if (h.name == name) return h;
  throw std::logic_error("distinguish: no hypothesis named " + name);  // results only name hypotheses of hs
}

py::list distinguish(py::handle hypotheses, const std::string& device, double timeout, double budget, int max_kernels,
                     int max_blocks, int max_blocks_per_kernel, int max_duration, int samples, int jobs) {
  // The CLI's ranges (docs/cli.md), under the CLI's flag names.
  check_range("--timeout", timeout, 0, 86400, true);
  check_range("--pair-budget", budget, 0, 1e6, false);
  check_range("--max-kernels", max_kernels, 1, 8, false);
  check_range("--max-blocks", max_blocks, 1, 24, false);
  check_range("--max-blocks-per-kernel", max_blocks_per_kernel, 1, 16, false);
  check_range("--max-duration", max_duration, 1, 16, false);
  check_range("--samples", samples, 0, 10'000'000, false);
  check_range("--jobs", jobs, 1, 64, false);
  const model::Device& dev = model::builtin_device(device, "--device", "");
  const auto hs = hypotheses_argument(hypotheses);
  if (hs.size() < 2) throw model::InputError("--hypothesis", "", "need at least two hypotheses to distinguish");
  search::DistinguishBounds bounds;
  bounds.max_kernels = max_kernels;
  bounds.max_total_blocks = max_blocks;
  bounds.max_blocks_per_kernel = max_blocks_per_kernel;
  bounds.params.max_duration = max_duration;
  bounds.sim_samples = samples;
  bounds.timeout_ms = static_cast<unsigned>(timeout * 1000);
  bounds.pair_budget_ms = static_cast<unsigned>(budget * 1000);
  std::vector<search::PairResult> results;
  {
    py::gil_scoped_release unlocked;
    results = search::distinguish_all(hs, dev, bounds, jobs);
  }
  py::list out;
  for (const auto& r : results) out.append(to_python(search::pair_json(r, bounds, named(hs, r.h1), named(hs, r.h2))));
  return out;
}

}  // namespace

void bind_search(py::module_& m) {
  m.def("distinguish", &distinguish, py::arg("hypotheses") = "round-robin,most-room,olmedo,alg1",
        py::arg("device") = "rtx3090", py::arg("timeout") = 2.0, py::arg("budget") = 2.0, py::arg("max_kernels") = 3,
        py::arg("max_blocks") = 5, py::arg("max_blocks_per_kernel") = 3, py::arg("max_duration") = 3,
        py::arg("samples") = 3000, py::arg("jobs") = 1,
        "The smallest scenario on which each pair of hypotheses disagrees: one dict per pair, as `tbcheck "
        "distinguish --json` prints it (outcome: separated, inseparable, unknown or unsupported)");
}

}  // namespace tbcheck::python
