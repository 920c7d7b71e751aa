//===- CudaKernels.h - launchers of the runtime's CUDA kernels --*- C++ -*-===//
//
// The boundary between CudaBackend.cpp (host C++, compiled by the host
// compiler) and CudaKernels.cu (the only file nvcc compiles): plain structs
// and launch functions returning cudaError_t.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_CUDA_CUDAKERNELS_H
#define AMP_RUNTIME_LIB_CUDA_CUDAKERNELS_H

#include "../Rules.h"

#include <cuda_runtime_api.h>

namespace amp::runtime::cuda {

/// Elements per work chunk of the unscale kernel: a multiple of 8, so a
/// chunk of a 16-byte-aligned tensor starts 16-byte aligned.
constexpr int kChunkElements = 16384;
/// Threads per block of the unscale kernel.
constexpr int kUnscaleThreads = 256;
/// Tensors that travel in the kernel's parameter struct; longer lists go
/// through a stream-ordered device copy of the table.
constexpr int kParamTensors = 64;

/// One non-empty tensor of an unscale launch.
struct TensorEntry {
  void *data;
  int64_t numel;
  int32_t chunkBegin; ///< first global chunk index of this tensor
  int32_t dtype;      ///< amp_dtype
};

/// The whole table of a launch with at most kParamTensors tensors (1.5 KiB,
/// within the classic 4 KiB kernel-parameter limit).
struct ParamTable {
  TensorEntry entries[kParamTensors];
  int32_t count;
  int32_t totalChunks;
};

/// Blocks worth launching for `totalChunks` chunks on the current device
/// (resident blocks of the unscale kernel, at most one per chunk).
cudaError_t unscaleGridSize(int totalChunks, int *grid);

/// One launch over a table held in the kernel parameters.
cudaError_t launchUnscaleParam(const ParamTable &table, DeviceState *state,
                               int grid, cudaStream_t stream);

/// One launch over a table in device memory (`count` entries).
cudaError_t launchUnscaleTable(const TensorEntry *entries, int count,
                               int totalChunks, DeviceState *state, int grid,
                               cudaStream_t stream);

/// The single-thread scale update (clears found_inf).
cudaError_t launchUpdateScale(DeviceState *state, const ScaleRules &rules,
                              cudaStream_t stream);

} // namespace amp::runtime::cuda

#endif // AMP_RUNTIME_LIB_CUDA_CUDAKERNELS_H
