//===- unscale_bench.cpp - CPU unscale+check throughput vs memcpy ---------===//
//
// Measures, in one run, libamp_runtime_cpu's amp_unscale_and_check over one
// tensor of B bytes (in place: reads B, writes B) against memcpy of the same
// B bytes between two buffers (reads B, writes B), for f32, f16 and bf16,
// with inv != 1 (read + write) and inv == 1 (read only), at a cache-resident
// and a DRAM-sized buffer. Throughput = B / best time over the repetitions
// (the same B for both, so the ratio is a ratio of times). The scale
// alternates between 2^10 and 2^-10 so the data never drifts into denormals.
//
// Output: one markdown table on stdout (used by run_runtime_benchmark.py).
//
//===----------------------------------------------------------------------===//

#include "amp_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <typename F>
double best(int reps, F &&f) {
  double bestTime = 1e30;
  for (int r = 0; r < reps; ++r) {
    double t0 = seconds();
    f(r);
    bestTime = std::min(bestTime, seconds() - t0);
  }
  return bestTime;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<size_t> sizes = {256 << 10, 256 << 20};
  int reps = 30;
  if (argc > 1 && std::string(argv[1]) == "--quick") {
    sizes = {256 << 10, 32 << 20};
    reps = 5;
  }
  amp_scale_state *state = nullptr;
  if (amp_scale_state_create(nullptr, &state) != AMP_OK)
    return 1;
  std::printf("| buffer | dtype | memcpy GB/s | unscale GB/s (inv != 1) | "
              "ratio | check only GB/s (inv == 1) | ratio |\n");
  std::printf("|---:|---|---:|---:|---:|---:|---:|\n");
  for (size_t bytes : sizes) {
    std::vector<char> src(bytes), dst(bytes), grad(bytes);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (amp_dtype dtype : {AMP_DTYPE_F32, AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
      const size_t elemSize = dtype == AMP_DTYPE_F32 ? 4 : 2;
      const int64_t numel = static_cast<int64_t>(bytes / elemSize);
      // Fill with finite values through the runtime's own narrowing: unscale
      // a f32 image by 1 is not possible across dtypes, so write bits.
      for (int64_t i = 0; i < numel; ++i) {
        float v = dist(rng);
        if (dtype == AMP_DTYPE_F32) {
          std::memcpy(&grad[i * 4], &v, 4);
        } else {
          uint32_t u;
          std::memcpy(&u, &v, 4);
          uint16_t h = dtype == AMP_DTYPE_BF16
                           ? static_cast<uint16_t>(u >> 16)
                           : static_cast<uint16_t>(0x3c00 | (u & 0x3ff));
          std::memcpy(&grad[i * 2], &h, 2);
        }
      }
      std::memcpy(src.data(), grad.data(), bytes);
      amp_tensor t{grad.data(), numel, dtype};
      const double tCopy = best(reps, [&](int) {
        std::memcpy(dst.data(), src.data(), bytes);
        asm volatile("" ::"r"(dst.data()) : "memory");
      });
      const double tUnscale = best(reps, [&](int r) {
        amp_scale_snapshot s{r % 2 ? 1.0f / 1024.0f : 1024.0f, 0, 0};
        amp_scale_state_load(state, &s);
        amp_unscale_and_check(state, &t, 1, nullptr);
      });
      amp_scale_snapshot one{1.0f, 0, 0};
      amp_scale_state_load(state, &one);
      const double tCheck =
          best(reps, [&](int) { amp_unscale_and_check(state, &t, 1, nullptr); });
      const char *name = dtype == AMP_DTYPE_F32   ? "f32"
                         : dtype == AMP_DTYPE_F16 ? "f16"
                                                  : "bf16";
      const double gb = static_cast<double>(bytes) / 1e9;
      std::printf("| %zu KiB | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
                  bytes >> 10, name, gb / tCopy, gb / tUnscale,
                  tCopy / tUnscale, gb / tCheck, tCopy / tCheck);
    }
  }
  amp_scale_state_destroy(state);
  return 0;
}
