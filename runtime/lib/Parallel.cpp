//===- Parallel.cpp - amp_rt_parallel_for ---------------------------------===//
//
// The compiled step's large parallel loop nests on several threads
// (amp-cpu-parallelize-loops outlines each into a function of its outermost
// range, amp-cpu-lower-parallel-calls calls it through this entry; both
// backends link this file, the loops run on the host either way).
//
// The threads are OpenMP's (libgomp's GOMP_parallel, the entry point of
// `#pragma omp parallel`): the team oneDNN's GEMMs already run on, so a step
// never has two pools competing for the cores, and OMP_NUM_THREADS /
// OMP_WAIT_POLICY govern both alike. The range [lo, hi) of `n` steps is cut
// into one contiguous piece per thread (thread t of T: steps n*t/T up to
// n*(t+1)/T), so each thread streams through its own part of every buffer,
// and the pieces cover the range exactly once. Each iteration computes what
// it computed on one thread, so the results are the same bits.
//
//===----------------------------------------------------------------------===//

#include "amp_runtime_abi.h"

#include "OpenMP.h"

#include <algorithm>

namespace {
using Task = void (*)(void *ctx, int64_t lo, int64_t hi);

struct Range {
  Task task;
  void *ctx;
  int64_t lo, hi, step, steps;
};

void runPiece(void *data) {
  const Range &range = *static_cast<const Range *>(data);
  int64_t threads = omp_get_num_threads();
  int64_t thread = omp_get_thread_num();
  int64_t first = range.steps * thread / threads;
  int64_t last = range.steps * (thread + 1) / threads;
  if (first == last)
    return;
  range.task(range.ctx, range.lo + first * range.step,
             std::min(range.hi, range.lo + last * range.step));
}
} // namespace

AMP_RT_DEFINE(amp_rt_parallel_for) {
  Task fn = reinterpret_cast<Task>(static_cast<intptr_t>(task));
  void *data = reinterpret_cast<void *>(static_cast<intptr_t>(ctx));
  if (hi <= lo)
    return;
  int64_t steps = step > 0 ? (hi - lo + step - 1) / step : 1;
  int threads = omp_get_max_threads && omp_get_num_threads &&
                        omp_get_thread_num && GOMP_parallel
                    ? omp_get_max_threads()
                    : 1;
  if (threads < 2 || steps < 2) {
    fn(data, lo, hi);
    return;
  }
  Range range{fn, data, lo, hi, step, steps};
  GOMP_parallel(runPiece, &range,
                static_cast<unsigned>(std::min<int64_t>(threads, steps)), 0);
}
