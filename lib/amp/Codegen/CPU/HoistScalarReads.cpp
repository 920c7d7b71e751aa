//===- HoistScalarReads.cpp - the amp-cpu-hoist-scalar-reads pass ---------===//
//
// One-shot bufferization's read-after-write analysis compares every read of
// a tensor's alias set with every write to it: quadratic in the readers of
// one tensor. A loss-scaled training step has two tensors with a reader per
// parameter: the inverse loss scale (a `tensor<f32>` every gradient's unscale
// generic reads as a broadcast operand) and the inf / nan flag (a
// `tensor<i1>` every keep-on-overflow select reads). At 100k ops that made
// bufferization a third of the CPU pipeline's compile time.
//
// Both reads are of one element: the operand's indexing map is constant.
// This pass, on tensors, right before one-shot bufferization:
//
//   1. Walks the function's all-tensor `linalg.generic` ops (contractions
//      and convolutions excepted: the GEMM lowering matches their bodies)
//      and `tensor.extract` ops. A generic input whose indexing map has only
//      constant results, on a statically shaped tensor, with the constants
//      in bounds, reads one element; so does a `tensor.extract` with
//      constant indices in bounds.
//   2. For each (tensor, indices) pair, creates one `tensor.extract` right
//      where the tensor is defined (after its defining op, or at the start
//      of the block of a block argument), shared by every reader. Tensors
//      are values: the element read there is the element every reader
//      read.
//   3. Replaces the generic's block argument by that scalar (the body now
//      captures it from above) and rebuilds the generic without the input;
//      replaces a `tensor.extract` reader by it. A generic with no outputs
//      whose every input would go keeps them all (it would be left with no
//      operands, which no lowering to loops takes).
//
// After bufferization the tensor has one reader (a memref.load) instead of
// one per parameter. Same values, same order of arithmetic per element.
// Only the CPU pipeline runs it: on the GPU the loaded scalar would be read
// on the host from device memory.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/Contractions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUHOISTSCALARREADSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// The one shared extract per (tensor, constant indices).
class ScalarReads {
public:
  explicit ScalarReads(MLIRContext *context) : builder(context) {}

  /// The element of `tensor` at `indices`, read once where `tensor` is
  /// defined.
  Value get(Value tensor, ArrayRef<int64_t> indices) {
    auto key = std::make_pair(tensor, builder.getDenseI64ArrayAttr(indices));
    auto it = reads.find(key);
    if (it != reads.end())
      return it->second;
    if (auto arg = dyn_cast<BlockArgument>(tensor))
      builder.setInsertionPointToStart(arg.getOwner());
    else
      builder.setInsertionPointAfter(tensor.getDefiningOp());
    Location loc = tensor.getLoc();
    SmallVector<Value> indexValues;
    for (int64_t index : indices)
      indexValues.push_back(arith::ConstantIndexOp::create(builder, loc, index));
    // A constant tensor's element folds to a constant.
    Value scalar =
        builder.createOrFold<tensor::ExtractOp>(loc, tensor, indexValues);
    reads.try_emplace(key, scalar);
    created.insert(scalar.getDefiningOp());
    return scalar;
  }

  /// True for an extract this class created (not a reader to replace).
  bool isShared(Operation *op) const { return created.contains(op); }

private:
  OpBuilder builder;
  DenseMap<std::pair<Value, Attribute>, Value> reads;
  DenseSet<Operation *> created;
};
} // namespace

/// The constant, in-bounds position `map` reads in `value`, or failure.
static FailureOr<SmallVector<int64_t>> constantPosition(Value value,
                                                        AffineMap map) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() ||
      map.getNumResults() != static_cast<unsigned>(type.getRank()))
    return failure();
  SmallVector<int64_t> position;
  for (auto [expr, size] : llvm::zip(map.getResults(), type.getShape())) {
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() < 0 || constant.getValue() >= size)
      return failure();
    position.push_back(constant.getValue());
  }
  return position;
}

/// The same positions of a static tensor's extract, when constant.
static FailureOr<SmallVector<int64_t>> constantPosition(tensor::ExtractOp op) {
  auto type = op.getTensor().getType();
  if (!type.hasStaticShape())
    return failure();
  SmallVector<int64_t> position;
  for (auto [index, size] : llvm::zip(op.getIndices(), type.getShape())) {
    APInt value;
    if (!matchPattern(index, m_ConstantInt(&value)) || value.isNegative() ||
        value.sge(size))
      return failure();
    position.push_back(value.getSExtValue());
  }
  return position;
}

/// Rebuilds `op` without the inputs in `dropped` (whose block arguments have
/// no uses left).
static void dropInputs(RewriterBase &rewriter, linalg::GenericOp op,
                       const llvm::BitVector &dropped) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (dropped.test(input->getOperandNumber()))
      continue;
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  rewriter.setInsertionPoint(op);
  auto rebuilt = linalg::GenericOp::create(
      rewriter, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(),
      maps, op.getIteratorTypesArray());
  if (StringAttr doc = op.getDocAttr())
    rebuilt.setDocAttr(doc);
  if (StringAttr call = op.getLibraryCallAttr())
    rebuilt.setLibraryCallAttr(call);
  rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.inlineRegionBefore(op.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().end());
  llvm::BitVector droppedArgs(rebuilt.getBody()->getNumArguments());
  for (unsigned i : dropped.set_bits())
    droppedArgs.set(i);
  rebuilt.getBody()->eraseArguments(droppedArgs);
  rewriter.replaceOp(op, rebuilt->getResults());
}

void mlir::amp::hoistScalarReads(Operation *root) {
  SmallVector<Operation *> readers;
  root->walk([&](Operation *op) {
    if (isa<linalg::GenericOp, tensor::ExtractOp>(op))
      readers.push_back(op);
  });

  ScalarReads scalars(root->getContext());
  IRRewriter rewriter(root->getContext());
  for (Operation *reader : readers) {
    if (auto extract = dyn_cast<tensor::ExtractOp>(reader)) {
      if (scalars.isShared(extract))
        continue;
      FailureOr<SmallVector<int64_t>> position = constantPosition(extract);
      if (failed(position))
        continue;
      rewriter.replaceOp(extract,
                         scalars.get(extract.getTensor(), *position));
      continue;
    }
    auto generic = cast<linalg::GenericOp>(reader);
    if (!generic.hasPureTensorSemantics() || amp::isGemmContraction(generic) ||
        linalg::isaConvolutionOpInterface(generic))
      continue;
    SmallVector<std::pair<OpOperand *, SmallVector<int64_t>>> reads;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      FailureOr<SmallVector<int64_t>> position = constantPosition(
          input->get(), generic.getMatchingIndexingMap(input));
      if (succeeded(position))
        reads.emplace_back(input, std::move(*position));
    }
    // A generic without outputs exists for its body's side effects (the
    // importer's cf.assert checks, left when fusion took the values it
    // computed): it keeps its operands, since upstream's lowering to loops
    // does not take a linalg op that has none.
    if (generic.getNumDpsInits() == 0 &&
        reads.size() == static_cast<size_t>(generic.getNumDpsInputs()))
      continue;
    llvm::BitVector dropped(generic->getNumOperands());
    for (auto &[input, position] : reads) {
      BlockArgument arg = generic.getMatchingBlockArgument(input);
      if (!arg.use_empty())
        rewriter.replaceAllUsesWith(arg, scalars.get(input->get(), position));
      dropped.set(input->getOperandNumber());
    }
    if (dropped.any())
      dropInputs(rewriter, generic, dropped);
  }
}

namespace {
struct AmpCpuHoistScalarReadsPass
    : public amp::impl::AmpCpuHoistScalarReadsPassBase<
          AmpCpuHoistScalarReadsPass> {
  void runOnOperation() override { amp::hoistScalarReads(getOperation()); }
};
} // namespace
