//===- Elementwise.cpp - elementwise linalg.generic ops -------------------===//
//
// buildElementwise: identity indexing maps for inputs of the result's shape,
// the empty map for rank-0 inputs (broadcast), all loops parallel, the body
// over the inputs' block arguments (the output's is not read).
// fuseElementwiseProducer: upstream's fusion of one producer, and the
// replacement of uses and erasure that its callers otherwise each repeat.
// asGeneric: a linalg op as a linalg.generic, generalized if named.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

Value mlir::amp::buildElementwise(OpBuilder &b, Location loc,
                                  RankedTensorType resultType,
                                  ValueRange inputs, ElementwiseBody body) {
  unsigned rank = resultType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap broadcast = AffineMap::get(rank, 0, b.getContext());
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto type = cast<RankedTensorType>(input.getType());
    assert((type.getRank() == 0 || type.getShape() == resultType.getShape()) &&
           "an elementwise input is of the result's shape or rank 0");
    maps.push_back(type.getRank() == 0 ? broadcast : identity);
  }
  maps.push_back(identity);
  // A dynamic size is an input's of the result's shape.
  Value init;
  if (resultType.hasStaticShape()) {
    init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                   resultType.getElementType());
  } else {
    auto shaped = llvm::find_if(inputs, [&](Value input) {
      return cast<RankedTensorType>(input.getType()).getRank() == rank;
    });
    assert(shaped != inputs.end() &&
           "a dynamically shaped result has an input of its shape");
    init = tensor::EmptyOp::create(b, loc,
                                   tensor::getMixedSizes(b, loc, *shaped),
                                   resultType.getElementType());
  }
  unsigned numInputs = inputs.size();
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps,
             SmallVector<utils::IteratorType>(rank,
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l,
                                       body(nb, l, args.take_front(numInputs)));
             })
      .getResult(0);
}

FailureOr<Operation *>
mlir::amp::fuseElementwiseProducer(RewriterBase &rewriter,
                                   OpOperand &operand) {
  Operation *consumer = operand.getOwner();
  Operation *producer = operand.get().getDefiningOp();
  if (!producer || !linalg::areElementwiseOpsFusable(&operand))
    return failure();
  // The fused op takes the consumer's place and the producer's other
  // readers read it: one of them before the consumer would read it before
  // it is defined.
  Block *block = consumer->getBlock();
  for (OpOperand &use : producer->getUses()) {
    Operation *reader = block->findAncestorOpInBlock(*use.getOwner());
    if (reader && reader != consumer && reader->isBeforeInBlock(consumer))
      return failure();
  }
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(consumer);
  FailureOr<linalg::ElementwiseOpFusionResult> fused =
      linalg::fuseElementwiseOps(rewriter, &operand);
  if (failed(fused))
    return failure();
  for (auto [original, replacement] : fused->replacements)
    rewriter.replaceAllUsesExcept(original, replacement, fused->fusedOp);
  for (Operation *op : {consumer, producer})
    if (op->use_empty())
      rewriter.eraseOp(op);
  return fused->fusedOp;
}

FailureOr<linalg::GenericOp> mlir::amp::asGeneric(RewriterBase &rewriter,
                                                  linalg::LinalgOp op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return generic;
  // The insertion point goes before the generic: one before `op` would
  // dangle once the generalization erases it.
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic =
      linalg::generalizeNamedOp(rewriter, op);
  if (succeeded(generic))
    rewriter.setInsertionPoint(*generic);
  return generic;
}
