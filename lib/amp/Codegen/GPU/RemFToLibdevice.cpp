//===- RemFToLibdevice.cpp - the amp-gpu-remf-to-libdevice pass -----------===//
//
// arith.remf in a kernel as a call of libdevice's fmod. Upstream's NVVM
// pipeline (buildLowerToNVVMPassPipeline) runs convert-arith-to-llvm on the
// whole module before convert-gpu-to-nvvm, so a kernel's arith.remf (from
// torch.fmod, torch.remainder, tosa's floating-point mod) became llvm.frem,
// which the NVVM target then refused ("failed to legalize operation
// 'llvm.frem'"): the GPU pipeline failed on every step holding one. Before
// that pipeline, each scalar remf in a gpu.module becomes
//
//   f32:        llvm.call @__nv_fmodf(a, b)
//   f64:        llvm.call @__nv_fmod(a, b)
//   f16, bf16:  truncf(llvm.call @__nv_fmodf(extf a, extf b))
//
// the functions declared in that gpu.module and linked from libdevice when
// the module is serialized, as upstream's own libdevice patterns do for
// the math dialect. fmod is exact (the result is representable), so the
// 16-bit forms round once, to the exact result. A vector remf (from
// amp-gpu-vectorize-elementwise, which gives a thread 16 contiguous bytes)
// is taken lane by lane: each lane extracted, called as above, and the
// results gathered with vector.from_elements, as the NVVM lowering does for
// the math ops it calls libdevice for; the loads and stores around it stay
// vectors. Host code and the host emulation of the kernels keep arith.remf
// (libm's fmodf on the CPU).
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUREMFTOLIBDEVICEPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct RemFToLibdevicePass
    : public amp::impl::AmpGpuRemFToLibdevicePassBase<RemFToLibdevicePass> {
  void runOnOperation() override {
    SymbolTableCollection symbols;
    for (auto gpuModule : getOperation().getOps<gpu::GPUModuleOp>()) {
      SmallVector<arith::RemFOp> remainders;
      gpuModule.walk([&](arith::RemFOp op) { remainders.push_back(op); });
      for (arith::RemFOp op : remainders)
        if (failed(rewrite(op, gpuModule, symbols)))
          return signalPassFailure();
    }
  }

  LogicalResult rewrite(arith::RemFOp op, gpu::GPUModuleOp gpuModule,
                        SymbolTableCollection &symbols) {
    auto vectorType = dyn_cast<VectorType>(op.getType());
    auto type = dyn_cast<FloatType>(getElementTypeOrSelf(op.getType()));
    if (!type ||
        !(type.isF16() || type.isBF16() || type.isF32() || type.isF64()) ||
        (vectorType && vectorType.isScalable()))
      return op.emitError()
             << "a kernel's arith.remf on " << op.getType()
             << " has no libdevice function (f16, bf16, f32 and f64 have, "
                "as scalars or fixed-size vectors)";
    OpBuilder b(op);
    Location loc = op.getLoc();
    bool f64 = type.isF64();
    Type callType = f64 ? Type(b.getF64Type()) : Type(b.getF32Type());
    FailureOr<LLVM::LLVMFuncOp> fmod = LLVM::lookupOrCreateFn(
        b, gpuModule, f64 ? "__nv_fmod" : "__nv_fmodf", {callType, callType},
        callType, /*isVarArg=*/false, /*isReserved=*/false, &symbols);
    if (failed(fmod))
      return op.emitError("a function named '__nv_fmodf' or '__nv_fmod' in "
                          "this gpu.module has another type than libdevice's");
    // One scalar remainder: through the call's type and back.
    auto call = [&](Value lhs, Value rhs) -> Value {
      if (type != callType) {
        lhs = arith::ExtFOp::create(b, loc, callType, lhs);
        rhs = arith::ExtFOp::create(b, loc, callType, rhs);
      }
      Value result =
          LLVM::CallOp::create(b, loc, *fmod, ValueRange{lhs, rhs}).getResult();
      if (type != callType)
        result = arith::TruncFOp::create(b, loc, type, result);
      return result;
    };
    Value result;
    if (!vectorType) {
      result = call(op.getLhs(), op.getRhs());
    } else {
      SmallVector<int64_t> strides = computeStrides(vectorType.getShape());
      SmallVector<Value> lanes;
      for (int64_t lane = 0, e = vectorType.getNumElements(); lane < e;
           ++lane) {
        SmallVector<int64_t> position = delinearize(lane, strides);
        lanes.push_back(
            call(vector::ExtractOp::create(b, loc, op.getLhs(), position),
                 vector::ExtractOp::create(b, loc, op.getRhs(), position)));
      }
      result = vector::FromElementsOp::create(b, loc, vectorType, lanes);
    }
    op.replaceAllUsesWith(result);
    op.erase();
    return success();
  }
};
} // namespace
