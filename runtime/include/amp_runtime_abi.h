/*===- amp_runtime_abi.h - entry points of compiled training steps -*- C -*-===*\
|*                                                                            *|
|* The functions that code compiled by amp-mlir calls when the amp ops are   *|
|* lowered with `amp-lower-to-runtime` (and matmuls with                      *|
|* `amp-lower-contractions-to-runtime`). Buffers are passed as raw aligned    *|
|* pointers (int64) and element counts, so the ABI is plain C scalars. Both   *|
|* backends implement them: the CPU backend synchronously on host memory,     *|
|* the CUDA backend asynchronously on device memory, on the stream that the   *|
|* step's `mgpuStreamCreate` made the calling thread's current stream.        *|
|*                                                                            *|
|* Semantics are those of the amp ops (include/amp/Dialect/Amp/IR/AmpOps.td), *|
|* bit for bit equal to their inline lowering (amp-lower-to-linalg).          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_ABI_H
#define AMP_RUNTIME_ABI_H

#include "amp_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The entry points, from the one list (amp_runtime_abi.def, which documents
   each). */
#define AMP_RT_ENTRY(name) AMP_RUNTIME_API void name AMP_RT_PARAMS_##name;
#include "amp_runtime_abi.def"
#undef AMP_RT_ENTRY

/* A backend's definition of entry `name`, with the parameters the list names:
   AMP_RT_DEFINE(amp_rt_unscale_begin) { ... uses `found` ... } */
#define AMP_RT_DEFINE(name) AMP_RUNTIME_API void name AMP_RT_PARAMS_##name

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AMP_RUNTIME_ABI_H */
