//===- CompiledAbi.h - compiled-step entry points, CUDA backend -*- C++ -*-===//

#ifndef AMP_RUNTIME_LIB_CUDA_COMPILEDABI_H
#define AMP_RUNTIME_LIB_CUDA_COMPILEDABI_H

#include "../Rules.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

namespace amp::runtime::cuda {

/// The stream the calling thread's step runs on: set by mgpuStreamCreate,
/// cleared by mgpuStreamDestroy (MgpuWrappers.cpp).
void setCurrentStream(CUstream stream);
CUstream currentStream();

constexpr int kAbiTableSize = 32;

struct AbiEntry {
  void *data;
  int64_t numel;
  int32_t dtype; ///< amp_dtype
  int32_t checkOnly; ///< 1: `data` is only read (amp_rt_unscale_add, dst = 0)
};

struct AbiTable {
  AbiEntry entries[kAbiTableSize];
  int32_t count;
};

/// Unscales the table's tensors in place by *scale (check-only entries are
/// only read) and sets *found to 1 if any element is inf or nan: one launch.
cudaError_t launchAbiUnscale(const AbiTable &table, const float *scale,
                             uint8_t *found, cudaStream_t stream);

/// One thread: Rules.h updateScale on separate state pointers.
cudaError_t launchAbiUpdate(const uint8_t *found, const float *scale,
                            const int32_t *growth, const int32_t *overflow,
                            float *newScale, int32_t *newGrowth,
                            int32_t *newOverflow, const ScaleRules &rules,
                            cudaStream_t stream);

} // namespace amp::runtime::cuda

#endif // AMP_RUNTIME_LIB_CUDA_COMPILEDABI_H
