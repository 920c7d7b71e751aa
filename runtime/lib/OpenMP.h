//===- OpenMP.h - the OpenMP runtime, if the process has one ----*- C++ -*-===//
//
// Private to the runtime. The OpenMP entry points the runtime uses, declared
// weak: they resolve to the libgomp that libdnnl loads (GCC's OpenMP, whose
// thread pool oneDNN's GEMMs run on), and are null in a process without it,
// where the runtime then runs everything on the calling thread.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_OPENMP_H
#define AMP_RUNTIME_LIB_OPENMP_H

extern "C" {
int omp_get_max_threads(void) __attribute__((weak));
int omp_get_thread_num(void) __attribute__((weak));
int omp_get_num_threads(void) __attribute__((weak));
void omp_set_num_threads(int) __attribute__((weak));
/// libgomp's ABI for `#pragma omp parallel num_threads(n)`: runs fn(data) on
/// a team of at most `num_threads` threads (0: the default), the calling
/// thread among them, and returns when all have.
void GOMP_parallel(void (*fn)(void *), void *data, unsigned num_threads,
                   unsigned flags) __attribute__((weak));
}

#endif // AMP_RUNTIME_LIB_OPENMP_H
