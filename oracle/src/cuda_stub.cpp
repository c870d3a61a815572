// The `cuda` oracle in a build without CUDA: every run is the named outcome no-device with the
// reason, never a crash. The CUDA build replaces this file with the probe-kernel oracle.
#include "kinds.hpp"

namespace tbcheck::oracle::detail {
namespace {

class NoCudaOracle : public Oracle {
 public:
  std::string name() const override { return "cuda"; }
  RunResult run(const model::Scenario&, int repetitions) override {
    RunResult r;
    r.status = RunStatus::NoDevice;
    r.reason = "this tbcheck was built without CUDA (TBCHECK_WITH_CUDA off or nvcc not found); "
               "rebuild with CUDA on a machine with a GPU, or use --oracle sim:<hypothesis> or replay";
    r.observation.kind = model::ObservationKind::Hardware;
    r.metadata = base_metadata(name(), repetitions);
    r.metadata["cuda"] = false;
    return r;
  }
};

}  // namespace

std::unique_ptr<Oracle> make_cuda() { return std::make_unique<NoCudaOracle>(); }

}  // namespace tbcheck::oracle::detail
