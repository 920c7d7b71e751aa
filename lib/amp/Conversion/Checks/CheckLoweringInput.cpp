//===- CheckLoweringInput.cpp - reject what the lowerings cannot take -----===//
//
// The CPU and GPU pipelines hand TOSA to upstream tosa-to-linalg, which
// needs ranked tensors: on an unranked one most patterns fail to match
// ("failed to legalize", located but unhelpful) and the tosa.resize lowering
// dereferences a missing shape and crashes. TOSA's own validation would
// reject unranked tensors first, but its level check also rejects valid
// graphs (a rank-4 tosa.pad), so the pipelines cannot run it. This pass
// checks the one property the lowering needs, before any of it runs, and
// reports every offending op at its location.
//
// A `cf.assert` whose condition is the constant false is reported too: it is
// what torch-mlir writes for a case its conversion does not implement (an
// adaptive pooling whose windows are not one size at one stride), next to a
// lowering that computes something else, and the compiled step would abort
// at its first run (amp-train died in the JIT-compiled code, its message
// lost in the unflushed output).
//
// For the CPU and GPU pipelines (`to-buffers`), two more: an expand_shape
// that splits a dimension into several dynamic ones (expand-strided-metadata
// cannot compute the strides and crashes), and vectors larger than
// `max-vector-elements` (llc takes minutes on a 32x32x32 vector: the code
// it generates is unrolled per element).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCHECKLOWERINGINPUTPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
struct AmpCheckLoweringInputPass
    : public amp::impl::AmpCheckLoweringInputPassBase<
          AmpCheckLoweringInputPass> {
  using Base::Base;

  void runOnOperation() override {
    bool failedAny = false;
    if (toBuffers)
      failedAny = failed(checkBufferLowering());
    getOperation().walk([&](cf::AssertOp check) {
      if (!matchPattern(check.getArg(), m_Zero()))
        return;
      check.emitOpError() << "always fails (\"" << check.getMsg()
                          << "\"): the step would stop at its first run";
      failedAny = true;
    });
    getOperation().walk([&](Operation *op) {
      if (!isa_and_present<tosa::TosaDialect>(op->getDialect()))
        return;
      auto report = [&](StringRef kind, unsigned number, Type type) {
        op->emitOpError() << kind << " #" << number
                          << " is an unranked tensor (" << type
                          << "): the TOSA lowering needs ranked tensors";
        failedAny = true;
      };
      for (OpOperand &operand : op->getOpOperands())
        if (isa<UnrankedTensorType>(operand.get().getType()))
          return report("operand", operand.getOperandNumber(),
                        operand.get().getType());
      for (OpResult result : op->getResults())
        if (isa<UnrankedTensorType>(result.getType()))
          return report("result", result.getResultNumber(), result.getType());
    });
    if (failedAny)
      signalPassFailure();
  }

  /// A reassociation group of `type` with more than one dynamic size.
  template <typename ExpandOp>
  static std::optional<unsigned> splitDynamicGroup(ExpandOp op) {
    ArrayRef<int64_t> shape = op.getResultType().getShape();
    for (auto [index, group] : llvm::enumerate(op.getReassociationIndices()))
      if (llvm::count_if(group, [&](int64_t d) {
            return ShapedType::isDynamic(shape[d]);
          }) > 1)
        return index;
    return std::nullopt;
  }

  LogicalResult checkBufferLowering() {
    bool failedAny = false;
    auto checkVector = [&](Operation *op, Type type, StringRef what) {
      auto vector = dyn_cast<VectorType>(type);
      if (vector && !vector.isScalable() && vector.getRank() > 0 &&
          vector.getElementType().isBF16() &&
          !llvm::isPowerOf2_64(vector.getShape().back())) {
        // LLVM's x86 backend aborts on some of these (a <9 x bfloat> load:
        // "Do not know how to soft promote this operator's operand");
        // amp-cpu-vectorize makes only power-of-two bf16 vectors.
        op->emitOpError() << what << " has type " << type
                          << ": the CPU / GPU lowering takes bf16 vectors "
                             "whose innermost size is a power of two";
        failedAny = true;
        return false;
      }
      if (!vector || vector.isScalable() ||
          vector.getNumElements() <= static_cast<int64_t>(maxVectorElements))
        return true;
      op->emitOpError() << what << " has type " << type << " ("
                        << vector.getNumElements()
                        << " elements): the CPU / GPU lowering takes vectors "
                           "of at most "
                        << static_cast<int64_t>(maxVectorElements)
                        << " elements (LLVM unrolls larger ones per element)";
      failedAny = true;
      return false;
    };
    getOperation().walk([&](Operation *op) {
      std::optional<unsigned> group;
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        group = splitDynamicGroup(expand);
      else if (auto expand = dyn_cast<memref::ExpandShapeOp>(op))
        group = splitDynamicGroup(expand);
      if (group) {
        op->emitOpError() << "splits dimension " << *group
                          << " into more than one dynamic dimension: the "
                             "CPU / GPU lowering (expand-strided-metadata) "
                             "needs at most one dynamic size per group";
        failedAny = true;
      }
      for (OpResult result : op->getResults())
        if (!checkVector(op, result.getType(),
                         "result #" + std::to_string(result.getResultNumber())))
          return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument argument : block.getArguments())
            if (!checkVector(op, argument.getType(),
                             "block argument #" +
                                 std::to_string(argument.getArgNumber())))
              return;
    });
    return failure(failedAny);
  }
};
} // namespace
