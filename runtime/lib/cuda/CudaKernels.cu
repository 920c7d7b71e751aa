//===- CudaKernels.cu - the runtime's CUDA kernels ------------------------===//
//
// Two kernels, both memory- or latency-bound:
//
// unscale (multi-tensor apply): every tensor of the list is cut into chunks
// of kChunkElements elements, numbered globally (TensorEntry::chunkBegin);
// blocks walk the chunks grid-stride, so one launch covers any list. Inside a
// chunk, the 16-byte-aligned body is read and written with 128-bit accesses
// (4 f32 or 8 f16/bf16 per load, kUnroll loads in flight per thread before
// any use); the unaligned head and tail (< 8 elements each) take a scalar
// path. Values are widened to f32, tested for inf/nan on the bits,
// multiplied with __fmul_rn (no contraction) and narrowed with the
// round-to-nearest-even conversions, exactly like Rules.h on the host. The
// block ORs its threads' flags with __syncthreads_or and one thread stores 1
// into found_inf: the flag is only ever set here.
//
// update: one thread applies Rules.h's updateScale to the 16-byte state and
// clears found_inf.
//
//===----------------------------------------------------------------------===//

#include "CudaKernels.h"
#include "amp_runtime.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

using namespace amp::runtime;
using namespace amp::runtime::cuda;

namespace {

constexpr int kUnroll = 4;

template <int Dtype>
struct Traits;

template <>
struct Traits<AMP_DTYPE_F32> {
  static constexpr int kSize = 4;
  __device__ static uint32_t word(uint32_t w, float inv, bool &bad) {
    float v = __uint_as_float(w);
    bad |= isNonFinite(v);
    return __float_as_uint(__fmul_rn(v, inv));
  }
  __device__ static bool scalar(void *p, float inv, bool write) {
    float *q = static_cast<float *>(p);
    float v = *q;
    if (write)
      *q = __fmul_rn(v, inv);
    return isNonFinite(v);
  }
};

template <>
struct Traits<AMP_DTYPE_F16> {
  static constexpr int kSize = 2;
  __device__ static uint32_t word(uint32_t w, float inv, bool &bad) {
    __half2 h = *reinterpret_cast<__half2 *>(&w);
    float2 f = __half22float2(h);
    bad |= isNonFinite(f.x) | isNonFinite(f.y);
    __half2 o = __floats2half2_rn(__fmul_rn(f.x, inv), __fmul_rn(f.y, inv));
    return *reinterpret_cast<uint32_t *>(&o);
  }
  __device__ static bool scalar(void *p, float inv, bool write) {
    __half *q = static_cast<__half *>(p);
    float v = __half2float(*q);
    if (write)
      *q = __float2half_rn(__fmul_rn(v, inv));
    return isNonFinite(v);
  }
};

template <>
struct Traits<AMP_DTYPE_BF16> {
  static constexpr int kSize = 2;
  __device__ static uint32_t word(uint32_t w, float inv, bool &bad) {
    __nv_bfloat162 h = *reinterpret_cast<__nv_bfloat162 *>(&w);
    float2 f = __bfloat1622float2(h);
    bad |= isNonFinite(f.x) | isNonFinite(f.y);
    __nv_bfloat162 o =
        __floats2bfloat162_rn(__fmul_rn(f.x, inv), __fmul_rn(f.y, inv));
    return *reinterpret_cast<uint32_t *>(&o);
  }
  __device__ static bool scalar(void *p, float inv, bool write) {
    __nv_bfloat16 *q = static_cast<__nv_bfloat16 *>(p);
    float v = __bfloat162float(*q);
    if (write)
      *q = __float2bfloat16_rn(__fmul_rn(v, inv));
    return isNonFinite(v);
  }
};

/// Unscales elements [0, count) at `first` (count <= kChunkElements) with
/// the whole block; returns this thread's found-inf.
template <int Dtype>
__device__ bool unscaleChunk(char *first, int count, float inv, bool write) {
  using T = Traits<Dtype>;
  constexpr int kVec = 16 / T::kSize;
  const int tid = threadIdx.x;
  const int head =
      min(static_cast<int>(((16 - (reinterpret_cast<uintptr_t>(first) & 15)) &
                            15) /
                           T::kSize),
          count);
  const int numVec = (count - head) / kVec;
  const int tailStart = head + numVec * kVec;
  bool bad = false;
  if (tid < head)
    bad |= T::scalar(first + tid * T::kSize, inv, write);
  if (tid < count - tailStart)
    bad |= T::scalar(first + (tailStart + tid) * T::kSize, inv, write);

  uint4 *body = reinterpret_cast<uint4 *>(first + head * T::kSize);
  for (int base = tid; base < numVec; base += kUnroll * kUnscaleThreads) {
    uint4 r[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int index = base + u * kUnscaleThreads;
      if (index < numVec)
        r[u] = body[index];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int index = base + u * kUnscaleThreads;
      if (index < numVec) {
        uint4 o;
        o.x = T::word(r[u].x, inv, bad);
        o.y = T::word(r[u].y, inv, bad);
        o.z = T::word(r[u].z, inv, bad);
        o.w = T::word(r[u].w, inv, bad);
        if (write)
          body[index] = o;
      }
    }
  }
  return bad;
}

__device__ void unscaleBody(const TensorEntry *entries, int count,
                            int totalChunks, DeviceState *state) {
  const float inv = inverseScale(state->scale);
  const bool write = inv != 1.0f;
  bool bad = false;
  int entry = 0;
  for (int chunk = blockIdx.x; chunk < totalChunks; chunk += gridDim.x) {
    while (entry + 1 < count && entries[entry + 1].chunkBegin <= chunk)
      ++entry;
    const TensorEntry &e = entries[entry];
    const int64_t begin =
        static_cast<int64_t>(chunk - e.chunkBegin) * kChunkElements;
    const int n = static_cast<int>(
        min(static_cast<int64_t>(kChunkElements), e.numel - begin));
    char *data = static_cast<char *>(e.data);
    switch (e.dtype) {
    case AMP_DTYPE_F32:
      bad |= unscaleChunk<AMP_DTYPE_F32>(data + begin * 4, n, inv, write);
      break;
    case AMP_DTYPE_F16:
      bad |= unscaleChunk<AMP_DTYPE_F16>(data + begin * 2, n, inv, write);
      break;
    default:
      bad |= unscaleChunk<AMP_DTYPE_BF16>(data + begin * 2, n, inv, write);
      break;
    }
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0)
    state->foundInf = 1;
}

} // namespace

// Kernels have C names so that ptxas reports and profiles read plainly.
extern "C" __global__ void __launch_bounds__(kUnscaleThreads)
    amp_unscale_param_kernel(const __grid_constant__ ParamTable table,
                          DeviceState *state) {
  unscaleBody(table.entries, table.count, table.totalChunks, state);
}

extern "C" __global__ void __launch_bounds__(kUnscaleThreads)
    amp_unscale_table_kernel(const TensorEntry *__restrict__ entries, int count,
                          int totalChunks, DeviceState *state) {
  unscaleBody(entries, count, totalChunks, state);
}

extern "C" __global__ void __launch_bounds__(1)
    amp_update_scale_kernel(DeviceState *state, ScaleRules rules) {
  DeviceState s = *state;
  updateScale(rules, s.foundInf != 0, s);
  s.foundInf = 0;
  *state = s;
}

namespace amp::runtime::cuda {

cudaError_t unscaleGridSize(int totalChunks, int *grid) {
  int device = 0, sms = 0, perSm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess)
    err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &perSm, amp_unscale_param_kernel, kUnscaleThreads, 0);
  if (err != cudaSuccess)
    return err;
  int resident = sms * (perSm > 0 ? perSm : 1);
  *grid = totalChunks < resident ? totalChunks : resident;
  return cudaSuccess;
}

cudaError_t launchUnscaleParam(const ParamTable &table, DeviceState *state,
                               int grid, cudaStream_t stream) {
  amp_unscale_param_kernel<<<grid, kUnscaleThreads, 0, stream>>>(table, state);
  return cudaGetLastError();
}

cudaError_t launchUnscaleTable(const TensorEntry *entries, int count,
                               int totalChunks, DeviceState *state, int grid,
                               cudaStream_t stream) {
  amp_unscale_table_kernel<<<grid, kUnscaleThreads, 0, stream>>>(
      entries, count, totalChunks, state);
  return cudaGetLastError();
}

cudaError_t launchUpdateScale(DeviceState *state, const ScaleRules &rules,
                              cudaStream_t stream) {
  amp_update_scale_kernel<<<1, 1, 0, stream>>>(state, rules);
  return cudaGetLastError();
}

} // namespace amp::runtime::cuda
