//===- ModelUtils.h - building blocks of the external models ----*- C++ -*-===//
//
// Private to lib/amp/Interfaces: the model templates shared by the per-dialect
// *InterfaceImpl.cpp files.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_INTERFACES_MODELUTILS_H
#define AMP_LIB_INTERFACES_MODELUTILS_H

#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "amp/Policy/Policy.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp::models {

/// The base of a model whose category is fixed: `Concrete` adds the methods
/// it overrides (re-typing, reductions).
template <typename Concrete, typename OpTy, PrecisionCategory Category>
struct CategoryModel
    : public AmpPolicyOpInterface::ExternalModel<Concrete, OpTy> {
  std::optional<PrecisionCategory>
  getPrecisionCategory(Operation *, const PrecisionPolicy &) const {
    return Category;
  }
};

/// The default re-typing (convertResultsInPlace), then `fixup()` for what
/// the default does not know (accumulator types, typed attributes, region
/// values); returns `op`.
template <typename Fn>
FailureOr<Operation *> retypeThen(Operation *op, RewriterBase &rewriter,
                                  ValueRange newOperands, FloatType lowType,
                                  Fn fixup) {
  if (failed(convertResultsInPlace(op, rewriter, newOperands, lowType)))
    return failure();
  fixup();
  return op;
}

/// An op that runs in low precision with an f32 accumulator attribute
/// (TOSA convolutions, avg_pool2d): the default re-typing, then acc_type = f32.
template <typename OpTy, PrecisionCategory Category>
struct AccTypeModel
    : public CategoryModel<AccTypeModel<OpTy, Category>, OpTy, Category> {
  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType lowType) const {
    return retypeThen(op, rewriter, newOperands, lowType, [&] {
      rewriter.modifyOpInPlace(
          op, [&] { cast<OpTy>(op).setAccType(rewriter.getF32Type()); });
    });
  }
};

/// An op whose category is fixed (the usual case): `Category`, and whether it
/// is an accumulating reduction. Re-typing uses the interface default.
template <typename OpTy, PrecisionCategory Category, bool Accumulating = false>
struct FixedCategoryModel
    : public AmpPolicyOpInterface::ExternalModel<
          FixedCategoryModel<OpTy, Category, Accumulating>, OpTy> {
  std::optional<PrecisionCategory>
  getPrecisionCategory(Operation *, const PrecisionPolicy &) const {
    return Category;
  }
  bool isAccumulatingReduction(Operation *) const { return Accumulating; }
};

/// Attaches FixedCategoryModel<Op, Category> to each of `OpTys`.
template <PrecisionCategory Category, typename... OpTys>
void attachFixedCategory(MLIRContext *ctx) {
  (OpTys::template attachInterface<FixedCategoryModel<OpTys, Category>>(*ctx),
   ...);
}

/// Attaches the accumulating-reduction variant (always deny) to `OpTys`.
template <typename... OpTys>
void attachAccumulatingReduction(MLIRContext *ctx) {
  (OpTys::template attachInterface<
       FixedCategoryModel<OpTys, PrecisionCategory::deny, true>>(*ctx),
   ...);
}

/// The AmpBoundaryOpInterface marker for `OpTy`.
template <typename OpTy>
struct BoundaryModel
    : public AmpBoundaryOpInterface::ExternalModel<BoundaryModel<OpTy>, OpTy> {
};

/// Attaches BoundaryModel to each of `OpTys`.
template <typename... OpTys>
void attachBoundary(MLIRContext *ctx) {
  (OpTys::template attachInterface<BoundaryModel<OpTys>>(*ctx), ...);
}

/// True when `value` holds only zeros and ones because it is an i1 tensor
/// turned into numbers: followed back through reshapes, transposes,
/// broadcasts and element casts (tosa.reshape / transpose / cast,
/// tensor.expand_shape / collapse_shape / cast, linalg.transpose /
/// broadcast, and an elementwise linalg op whose body is one cast) to an i1
/// tensor, with no float-to-float cast on the way. A contraction with such
/// an operand is a gather or a scatter-add written as a GEMM (the embedding
/// backward and the accumulating index_put of our torch front end): each
/// output sums the rows it selects.
bool isSelectionMatrix(Value value);

/// Converts a scalar float `value` to `type`: a constant is re-created in the
/// new type, anything else gets an arith.truncf / arith.extf before `op`.
Value convertScalar(RewriterBase &rewriter, Operation *op, Value value,
                    FloatType type);

} // namespace mlir::amp::models

#endif // AMP_LIB_INTERFACES_MODELUTILS_H
