// The `cuda` oracle in a build without CUDA: every run is the named outcome no-device with the
// reason, never a crash. The CUDA build replaces this file with the probe-kernel oracle.
#include "kinds.hpp"
#include "tbcheck/oracle/cuda_host.hpp"

namespace tbcheck::oracle {
namespace cuda {
namespace {

class NoCudaOracle : public Oracle {
 public:
  explicit NoCudaOracle(CudaOptions o) : o_(o) {}
  std::string name() const override { return "cuda"; }
  RunResult run(const model::Scenario&, int repetitions) override {
    RunResult r;
    r.status = RunStatus::NoDevice;
    r.reason = "this tbcheck was built without CUDA (TBCHECK_WITH_CUDA off or nvcc not found); "
               "rebuild with CUDA on a machine with a GPU, or use --oracle sim:<hypothesis> or replay";
    r.observation.kind = model::ObservationKind::Hardware;
    r.metadata = detail::base_metadata(name(), repetitions);
    r.metadata["cuda"] = false;
    r.metadata["time_unit_ms"] = o_.time_unit_ms;
    return r;
  }

 private:
  CudaOptions o_;
};

}  // namespace

std::unique_ptr<Oracle> make_cuda_oracle(const CudaOptions& o) {
  unit_ns(o);  // a bad time unit is an input error even where nothing runs
  return std::make_unique<NoCudaOracle>(o);
}
bool built_with_cuda() { return false; }

GpcProbe probe_gpc(const CudaOptions&) {
  GpcProbe p;
  p.status = RunStatus::NoDevice;
  p.reason = "this tbcheck was built without CUDA (TBCHECK_WITH_CUDA off or nvcc not found); the GPC probe needs a "
             "CC 9.0 GPU and a CUDA build";
  return p;
}

}  // namespace cuda

namespace detail {
std::unique_ptr<Oracle> make_cuda() { return cuda::make_cuda_oracle(cuda::CudaOptions{}); }
}  // namespace detail

}  // namespace tbcheck::oracle
