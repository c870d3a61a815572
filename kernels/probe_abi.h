// The probe kernel's ABI shared by the CUDA variants (kernels/probe.cu) and the host oracle (.cpp):
// the per-block record, the kernel argument block and the exported per-variant entry points.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// What thread 0 of every block writes: %smid and %globaltimer (ns) at entry and at exit, and the
// block's cluster (%clusterid, linear x-fastest) and rank in it (%cluster_ctarank); without a
// cluster launch (or below CC 9.0) every block is its own cluster of rank 0.
// The host zeroes the records before a launch, so start_ns == 0 means "the block never ran".
typedef struct TbcheckProbeRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t sm_start;
  uint32_t sm_end;
  uint32_t cluster_id;
  uint32_t cluster_rank;
} TbcheckProbeRecord;

// The single kernel argument (passed by value). Plain C so both compilers lay it out alike.
typedef struct TbcheckProbeArgs {
  TbcheckProbeRecord* records;      // one per block, linear index blockIdx.y * gridDim.x + blockIdx.x
  uint64_t duration_ns;             // each block spins this long after its entry timestamp
  const volatile uint32_t* abort;   // mapped host memory: the watchdog sets it to end every spin early
  int32_t pressure_rounds;          // runtime trip count of the register-pressure loop (>= 1)
  int32_t* sink;                    // written only when an impossible checksum appears; keeps work alive
} TbcheckProbeArgs;

// Every variant exports these two (generated names: _r24, _r32, ..., _r255):
//   const void* tbcheck_probe_func_rN(void);  the kernel handle for cudaFuncGetAttributes / SetAttribute
//   int tbcheck_probe_launch_rN(const TbcheckProbeArgs*, unsigned gx, unsigned gy, unsigned threads,
//                               size_t dynamic_smem, void* stream);  returns the cudaError_t of the launch
//   int tbcheck_probe_launch_cluster_rN(const TbcheckProbeArgs*, unsigned gx, unsigned gy, unsigned threads,
//                                       size_t dynamic_smem, void* stream, unsigned cx, unsigned cy);
//       the same launch with cudaLaunchKernelEx and clusters of cx x cy blocks

#ifdef __cplusplus
}
#endif
