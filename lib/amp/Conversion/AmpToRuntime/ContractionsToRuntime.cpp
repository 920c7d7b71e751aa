//===- ContractionsToRuntime.cpp - amp-lower-contractions-to-runtime ------===//
//
// Bufferized linalg.matmul / linalg.batch_matmul (default indexing maps:
// row-major, untransposed) with f16/bf16/f32 inputs and an f32 output become
// `amp_rt_gemm(a, a_dtype, b, b_dtype, c, batch, m, n, k)`: C += A * B with
// f32 accumulation. The GPU backend runs it as cuBLAS
// cublasGemmStridedBatchedEx (CUBLAS_COMPUTE_32F) on the step's stream; the
// init of C (usually a zero fill) is kept, so the result equals linalg's.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOWERCONTRACTIONSTORUNTIMEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::runtime_calls;

/// A statically shaped, identity-layout memref.
static bool isPlainStatic(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity();
}

namespace {
struct AmpLowerContractionsToRuntimePass
    : public amp::impl::AmpLowerContractionsToRuntimePassBase<
          AmpLowerContractionsToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> contractions;
    module.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureBufferSemantics() && op.getNumDpsInputs() == 2)
        contractions.push_back(op);
    });
    for (linalg::LinalgOp op : contractions) {
      // Only the default (untransposed) indexing maps.
      if (auto matmul = dyn_cast<linalg::MatmulOp>(op.getOperation()))
        if (matmul.hasUserDefinedMaps())
          continue;
      if (auto batch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation()))
        if (batch.hasUserDefinedMaps())
          continue;
      Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
      Value c = op.getDpsInits()[0];
      if (!isPlainStatic(a) || !isPlainStatic(b) || !isPlainStatic(c))
        continue;
      auto aType = cast<MemRefType>(a.getType());
      auto bType = cast<MemRefType>(b.getType());
      auto cType = cast<MemRefType>(c.getType());
      int aCode = dtypeCode(aType.getElementType());
      int bCode = dtypeCode(bType.getElementType());
      if (aCode < 0 || aCode != bCode || !cType.getElementType().isF32())
        continue;
      bool batched = aType.getRank() == 3;
      int64_t batch = batched ? aType.getDimSize(0) : 1;
      int64_t m = aType.getDimSize(batched ? 1 : 0);
      int64_t k = aType.getDimSize(batched ? 2 : 1);
      int64_t n = bType.getDimSize(batched ? 2 : 1);
      OpBuilder builder(op);
      Location loc = op.getLoc();
      call(builder, loc, module, "amp_rt_gemm",
           {pointerOf(builder, loc, a), i32(builder, loc, aCode),
            pointerOf(builder, loc, b), i32(builder, loc, bCode),
            pointerOf(builder, loc, c), i64(builder, loc, batch),
            i64(builder, loc, m), i64(builder, loc, n),
            i64(builder, loc, k)});
      op->erase();
    }
  }
};
} // namespace
