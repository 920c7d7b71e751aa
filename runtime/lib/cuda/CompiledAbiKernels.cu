//===- CompiledAbiKernels.cu - kernels of the compiled-step ABI -----------===//
//
// The two kernels behind amp_rt_unscale_launch and amp_rt_update_scale: the
// same numerics as the rest of the runtime (Rules.h), on the separate state
// buffers that compiled steps own (a one-byte flag, an f32 scale, two i32
// trackers) instead of an amp_scale_state.
//
//===----------------------------------------------------------------------===//

#include "CompiledAbi.h"
#include "amp_runtime.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace amp::runtime::cuda {
namespace {

__device__ __forceinline__ float loadElement(const AbiEntry &e, int64_t i) {
  switch (e.dtype) {
  case AMP_DTYPE_F16:
    return __half2float(static_cast<const __half *>(e.data)[i]);
  case AMP_DTYPE_BF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(e.data)[i]);
  default:
    return static_cast<const float *>(e.data)[i];
  }
}

__device__ __forceinline__ void storeElement(const AbiEntry &e, int64_t i,
                                             float v) {
  switch (e.dtype) {
  case AMP_DTYPE_F16:
    static_cast<__half *>(e.data)[i] = __float2half_rn(v);
    break;
  case AMP_DTYPE_BF16:
    static_cast<__nv_bfloat16 *>(e.data)[i] = __float2bfloat16_rn(v);
    break;
  default:
    static_cast<float *>(e.data)[i] = v;
  }
}

__global__ void abiUnscaleKernel(AbiTable table, const float *scale,
                                 uint8_t *found) {
  float inv = inverseScale(*scale);
  bool bad = false;
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int t = 0; t < table.count; ++t) {
    const AbiEntry &e = table.entries[t];
    for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) +
                     threadIdx.x;
         i < e.numel; i += stride) {
      float v = loadElement(e, i);
      bad |= isNonFinite(v);
      if (inv != 1.0f && !e.checkOnly)
        storeElement(e, i, v * inv);
    }
  }
  if (bad)
    *found = 1; // every writer writes 1: the race is benign
}

__global__ void abiUpdateKernel(const uint8_t *found, const float *scale,
                                const int32_t *growth, const int32_t *overflow,
                                float *newScale, int32_t *newGrowth,
                                int32_t *newOverflow, ScaleRules rules) {
  DeviceState state{*scale, *growth, *overflow, 0};
  updateScale(rules, *found != 0, state);
  *newScale = state.scale;
  *newGrowth = state.growthTracker;
  *newOverflow = state.overflowTracker;
}

} // namespace

cudaError_t launchAbiUnscale(const AbiTable &table, const float *scale,
                             uint8_t *found, cudaStream_t stream) {
  int64_t largest = 0;
  for (int t = 0; t < table.count; ++t)
    largest = table.entries[t].numel > largest ? table.entries[t].numel
                                               : largest;
  constexpr int threads = 256;
  int64_t blocks = (largest + threads - 1) / threads;
  blocks = blocks < 1 ? 1 : (blocks > 1024 ? 1024 : blocks);
  abiUnscaleKernel<<<static_cast<int>(blocks), threads, 0, stream>>>(
      table, scale, found);
  return cudaGetLastError();
}

cudaError_t launchAbiUpdate(const uint8_t *found, const float *scale,
                            const int32_t *growth, const int32_t *overflow,
                            float *newScale, int32_t *newGrowth,
                            int32_t *newOverflow, const ScaleRules &rules,
                            cudaStream_t stream) {
  abiUpdateKernel<<<1, 1, 0, stream>>>(found, scale, growth, overflow,
                                       newScale, newGrowth, newOverflow,
                                       rules);
  return cudaGetLastError();
}

} // namespace amp::runtime::cuda
