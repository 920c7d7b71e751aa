//===- RoundEmulatedFloats.cpp - amp-cpu-round-emulated-floats ------------===//
//
// The CPU has no f16 / bf16 arithmetic, so the pipeline emulates it:
// upstream's arith-emulate-unsupported-floats computes each f16 / bf16
// arith op in f32 between an arith.extf of its operands and an arith.truncf
// of its result, and math-extend-to-supported-types does the same for math
// ops. Both mark those casts `fastmath<contract>`, and arith.extf folds
// `extf(truncf(x))` to `x` when both casts carry it: the next greedy pattern
// application (any pass that folds) then drops the rounding between two
// emulated ops, and a chain of f16 ops in one loop is computed in f32 and
// rounded once, at the end.
//
// That is excess precision, and it depends on fusion: the same graph rounds
// once where amp-fuse-elementwise put the ops in one loop and after every op
// where a buffer lies between them (a change of fusion, such as folding a
// unit dimension, moved bert's f16 loss by 3e-6 and a transformer block's
// first f16 loss by 2.7e-5). It is also not what the step says: the
// autocast decided the op computes in f16, as PyTorch's eager op does, and
// as the GPU pipeline's native f16 arithmetic does.
//
// This pass, right after the two emulations, drops `contract` from every
// arith.extf / arith.truncf that has it: each f16 / bf16 op's result is
// rounded to its type, whatever the loop structure. Cost: two conversions
// per emulated op (vcvtps2ph / vcvtph2ps on x86), in loops that are mostly
// bound by memory.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUROUNDEMULATEDFLOATSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// `op` without `contract` (without its fast-math attribute when nothing
/// else is left, as the casts are written by hand).
template <typename CastOp>
static void dropContract(CastOp op) {
  std::optional<arith::FastMathFlags> flags = op.getFastmath();
  if (!flags ||
      !arith::bitEnumContainsAll(*flags, arith::FastMathFlags::contract))
    return;
  arith::FastMathFlags rest = *flags & ~arith::FastMathFlags::contract;
  if (rest == arith::FastMathFlags::none)
    op->removeAttr(op.getFastmathAttrName());
  else
    op.setFastmath(rest);
}

void mlir::amp::roundEmulatedFloats(Operation *root) {
  root->walk([](Operation *op) {
    if (auto extf = dyn_cast<arith::ExtFOp>(op))
      dropContract(extf);
    else if (auto truncf = dyn_cast<arith::TruncFOp>(op))
      dropContract(truncf);
  });
}

namespace {
struct AmpCpuRoundEmulatedFloatsPass
    : public amp::impl::AmpCpuRoundEmulatedFloatsPassBase<
          AmpCpuRoundEmulatedFloatsPass> {
  void runOnOperation() override { amp::roundEmulatedFloats(getOperation()); }
};
} // namespace
