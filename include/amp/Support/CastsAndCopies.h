//===- CastsAndCopies.h - element casts and copies of linalg ops -*- C++ -*-===//
//
// The casts and one-to-one copies that amp-fuse-casts-into-copies fuses
// into each other (lib/amp/Conversion/AmpToLinalg/FuseCastsIntoCopies.cpp
// explains the rules), and its test of whether it would fuse an op into all
// of its readers: amp-cpu-widen-contraction-operands, which runs before it,
// leaves such a cast to it.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_CASTSANDCOPIES_H
#define AMP_SUPPORT_CASTSANDCOPIES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp {

/// Whether `body` (of a one-input linalg op) converts its input's element
/// with arith.extf / arith.truncf, each of the previous value (none: a plain
/// copy), and yields the last.
bool isConversion(Block &body);

/// `element` through a conversion body's ops, created by `b`: the value it
/// yields.
Value applyConversion(OpBuilder &b, Block &body, Value element);

/// A cast: an all-parallel linalg.generic on static tensors with one input,
/// one init, identity maps and a conversion body.
bool isCast(Operation *op);

/// A one-to-one copy: a linalg.transpose, or an all-parallel generic on
/// static tensors with one input whose body is a conversion (or a plain
/// copy), an identity output map and an input map that sends the loops
/// one-to-one onto the input's elements (each result a distinct loop d or a
/// reversal c - d, as many as the loops).
bool isOneToOneCopy(Operation *op);

/// A tensor.expand_shape or tensor.collapse_shape of static shapes: the
/// same elements in the same order, a view once bufferized.
bool isStaticReshape(Operation *op);

/// A reduction that reads `use` in one of its inputs, and no other of its
/// operands reads that value: a linalg.generic on tensors with a reduction
/// loop that is neither a contraction nor a convolution (those become GEMM
/// calls, whose operands stay buffers).
bool isReductionReader(OpOperand &use);

/// The uses of `op`'s result (a cast or a one-to-one copy) that
/// amp-fuse-casts-into-copies fuses it into: every reader is a cast (or,
/// for a cast, also a one-to-one copy or a reduction reader, directly or
/// through static reshapes) and fusing moves no more bytes; empty
/// otherwise.
SmallVector<OpOperand *> castOrCopyFusableReaders(Operation *op);

} // namespace mlir::amp

#endif // AMP_SUPPORT_CASTSANDCOPIES_H
