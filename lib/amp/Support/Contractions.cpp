//===- Contractions.cpp - contractions a GEMM computes exactly ------------===//
//
// isProductSumBody walks the body from its yield: the yielded value is an
// add (arith.addf / addi) of the init's block argument and a multiply
// (arith.mulf / muli) whose operands are the two inputs' block arguments,
// one each, either directly or through one exact widening cast. Every op
// of the block must be one of those (so a dead op, or a second use, cannot
// hide a computation the GEMM would skip).
//
//===----------------------------------------------------------------------===//

#include "amp/Support/Contractions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

/// `v` itself when it is a block argument of `body`, or the argument an
/// exact widening cast reads; null otherwise. `integer` selects the casts.
static BlockArgument widenedArgument(Value v, Block &body, bool integer) {
  if (Operation *def = v.getDefiningOp()) {
    bool widens = integer ? isa<arith::ExtSIOp, arith::ExtUIOp>(def)
                          : isa<arith::ExtFOp>(def);
    if (!widens || def->getBlock() != &body)
      return nullptr;
    v = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == &body ? arg : nullptr;
}

bool amp::isProductSumBody(Block &body) {
  if (body.getNumArguments() != 3)
    return false;
  Operation *yield = body.getTerminator();
  if (!yield || yield->getNumOperands() != 1)
    return false;
  Operation *add = yield->getOperand(0).getDefiningOp();
  if (!add || add->getBlock() != &body ||
      !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  bool integer = isa<arith::AddIOp>(add);
  BlockArgument acc = body.getArgument(2);
  Value product;
  if (add->getOperand(0) == acc)
    product = add->getOperand(1);
  else if (add->getOperand(1) == acc)
    product = add->getOperand(0);
  else
    return false;
  Operation *mul = product.getDefiningOp();
  if (!mul || mul->getBlock() != &body ||
      !(integer ? isa<arith::MulIOp>(mul) : isa<arith::MulFOp>(mul)))
    return false;
  BlockArgument x = widenedArgument(mul->getOperand(0), body, integer);
  BlockArgument y = widenedArgument(mul->getOperand(1), body, integer);
  if (!x || !y || x.getArgNumber() + y.getArgNumber() != 1)
    return false;
  // The yield, the add, the multiply and at most one cast per input: with
  // every op of the block one of these, none can be read twice or hide a
  // computation.
  size_t casts = (mul->getOperand(0) != x) + (mul->getOperand(1) != y);
  return body.getOperations().size() == 3 + casts;
}

bool amp::isGemmContraction(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         op->getNumRegions() == 1 && !op->getRegion(0).empty() &&
         linalg::isaContractionOpInterface(op) &&
         isProductSumBody(*op.getBlock());
}
