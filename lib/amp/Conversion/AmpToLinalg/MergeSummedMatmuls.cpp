//===- MergeSummedMatmuls.cpp - the amp-merge-summed-matmuls pass ---------===//
//
// A weight that a recurrence uses at every step (an LSTM's or GRU's
// hidden-to-hidden weight) gets its gradient as a sum over the steps of
// small products. torch-mlir's TOSA import of nn.LSTM over 12 steps writes
// dW_hh as
//
//   %p_t = tosa.matmul %dgates_t^T, %h_t   [1, 64, 4] x [1, 4, 16]
//   %r_t = tosa.reshape %p_t               -> [64, 16]
//   %s   = tosa.add %r_1, tosa.add %r_2, ...      (12 terms)
//
// and the CPU step makes one GEMM call per term: 12 of the zoo LSTM's 40
// calls a step, each a few hundred nanoseconds of work behind a call whose
// fixed cost is larger. The sum is one product over the concatenated inner
// dimension,
//
//   sum_t A_t B_t = concat(A_1..A_T, axis 2) x concat(B_1..B_T, axis 1),
//
// one GEMM call of K = sum K_t (here 48), after two small copies.
//
// Algorithm, for each sum (a tree of tosa.add ops of one type, without
// broadcasting, whose inner adds are used once; the tree's root is an add
// that is not such an inner add):
//
//   1. collect the tree's terms, left to right;
//   2. a term is a product when it is a tosa.matmul of batch 1 with static
//      shapes, used once, seen directly or through one tosa.reshape used
//      once, all in the root's block;
//   3. products are grouped by what the merged op needs them to share:
//      operand element types, result type, M, N, zero points (the same
//      values) and the reshape's result type;
//   4. a group of two or more whose products are small (at most 2^20
//      multiply-adds each, so that a call's fixed cost matters) and not
//      skinny (M and N at least 4, so that the concatenations' copies stay
//      small next to the product) becomes one tosa.matmul of tosa.concat
//      operands, reshaped as its terms were;
//   5. the sum is rebuilt right before its root: the merged products first,
//      then the other terms, in their order; the old tree is erased.
//
// Each output element then adds the same products in another order (f32
// rounding, as any change of GEMM blocking). The CPU pipeline runs the pass
// first, on TOSA.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include "amp/Conversion/Passes.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMERGESUMMEDMATMULSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

/// Products of more multiply-adds than this stay calls of their own.
constexpr int64_t kMaxMergedMacs = int64_t{1} << 20;
/// Products with M or N under this stay calls of their own.
constexpr int64_t kMinRowsCols = 4;

/// A term of a sum that is a product (file comment, step 2).
struct Product {
  tosa::MatMulOp matmul;
  tosa::ReshapeOp reshape; // null when the term is the matmul itself
  int64_t m, n, k;
};

/// Whether `value` is an inner add of the sum whose root has type `type`.
bool isInnerAdd(Value value, Type type) {
  auto add = value.getDefiningOp<tosa::AddOp>();
  return add && add.getType() == type && add->hasOneUse() &&
         add.getInput1().getType() == type &&
         add.getInput2().getType() == type;
}

/// Whether `add` is the root of a sum: not an inner add of another one.
bool isRoot(tosa::AddOp add) {
  if (add.getInput1().getType() != add.getType() ||
      add.getInput2().getType() != add.getType())
    return false;
  if (!add->hasOneUse())
    return true;
  auto user = dyn_cast<tosa::AddOp>(*add->user_begin());
  return !user || !isInnerAdd(add.getResult(), user.getType());
}

/// The sum's terms, left to right, and its inner adds (root first).
void collectTerms(tosa::AddOp root, SmallVectorImpl<Value> &terms,
                  SmallVectorImpl<Operation *> &adds) {
  SmallVector<Value> stack = {root.getInput2(), root.getInput1()};
  adds.push_back(root);
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (isInnerAdd(value, root.getType())) {
      auto add = value.getDefiningOp<tosa::AddOp>();
      adds.push_back(add);
      stack.push_back(add.getInput2());
      stack.push_back(add.getInput1());
      continue;
    }
    terms.push_back(value);
  }
}

/// `term` as a product, when it is one (file comment, step 2).
std::optional<Product> asProduct(Value term, Block *block) {
  Product product{};
  Value value = term;
  if (auto reshape = value.getDefiningOp<tosa::ReshapeOp>()) {
    if (!reshape->hasOneUse() || reshape->getBlock() != block)
      return std::nullopt;
    product.reshape = reshape;
    value = reshape.getInput1();
  }
  auto matmul = value.getDefiningOp<tosa::MatMulOp>();
  if (!matmul || !matmul->hasOneUse() || matmul->getBlock() != block)
    return std::nullopt;
  auto a = dyn_cast<RankedTensorType>(matmul.getA().getType());
  auto b = dyn_cast<RankedTensorType>(matmul.getB().getType());
  auto c = dyn_cast<RankedTensorType>(matmul.getType());
  if (!a || !b || !c || !a.hasStaticShape() || !b.hasStaticShape() ||
      !c.hasStaticShape() || a.getRank() != 3 || a.getDimSize(0) != 1 ||
      b.getDimSize(0) != 1)
    return std::nullopt;
  product.matmul = matmul;
  product.m = a.getDimSize(1);
  product.k = a.getDimSize(2);
  product.n = b.getDimSize(2);
  return product;
}

/// What the products of one merged op share (file comment, step 3).
using GroupKey = std::tuple<Type, Type, Type, Type, Value, Value>;

GroupKey keyOf(Product p) {
  tosa::MatMulOp mm = p.matmul;
  return {getElementTypeOrSelf(mm.getA().getType()),
          getElementTypeOrSelf(mm.getB().getType()), mm.getType(),
          p.reshape ? p.reshape.getType() : Type(), mm.getAZp(), mm.getBZp()};
}

/// Rewrites the sum rooted at `root` when it has products to merge.
void mergeSum(tosa::AddOp root) {
  SmallVector<Value> terms;
  SmallVector<Operation *> adds;
  collectTerms(root, terms, adds);
  if (terms.size() < 2)
    return;
  llvm::MapVector<GroupKey, SmallVector<Product>> groups;
  SmallVector<Value> rest;
  for (Value term : terms) {
    std::optional<Product> p = asProduct(term, root->getBlock());
    if (p && p->m >= kMinRowsCols && p->n >= kMinRowsCols &&
        p->m * p->n * p->k <= kMaxMergedMacs)
      groups[keyOf(*p)].push_back(*p);
    else
      rest.push_back(term);
  }
  bool any = false;
  for (auto &group : groups)
    any |= group.second.size() > 1;
  if (!any)
    return;

  OpBuilder builder(root);
  SmallVector<Value> sum;
  SmallVector<Operation *> dead;
  for (auto &[key, products] : groups) {
    if (products.size() == 1) {
      Product p = products.front();
      sum.push_back(p.reshape ? p.reshape.getResult() : p.matmul.getResult());
      continue;
    }
    SmallVector<Value> as, bs;
    SmallVector<Location> locs;
    int64_t k = 0;
    for (Product p : products) {
      as.push_back(p.matmul.getA());
      bs.push_back(p.matmul.getB());
      locs.push_back(p.matmul.getLoc());
      k += p.k;
      if (p.reshape)
        dead.push_back(p.reshape);
      dead.push_back(p.matmul);
    }
    Product first = products.front();
    Location loc = builder.getFusedLoc(locs);
    auto aType = RankedTensorType::get({1, first.m, k}, std::get<0>(key));
    auto bType = RankedTensorType::get({1, k, first.n}, std::get<1>(key));
    Value a = tosa::ConcatOp::create(builder, loc, aType, as,
                                     builder.getI32IntegerAttr(2));
    Value b = tosa::ConcatOp::create(builder, loc, bType, bs,
                                     builder.getI32IntegerAttr(1));
    Value merged =
        tosa::MatMulOp::create(builder, loc, first.matmul.getType(), a, b,
                               first.matmul.getAZp(), first.matmul.getBZp());
    if (first.reshape)
      merged = tosa::ReshapeOp::create(builder, loc, first.reshape.getType(),
                                       merged, first.reshape.getShape());
    sum.push_back(merged);
  }
  sum.append(rest.begin(), rest.end());
  Value total = sum.front();
  for (Value term : ArrayRef(sum).drop_front())
    total = tosa::AddOp::create(builder, root.getLoc(), root.getType(), total,
                                term);
  root.getResult().replaceAllUsesWith(total);
  // Users before producers: the root, its inner adds, then the products.
  for (Operation *op : adds)
    op->erase();
  for (Operation *op : dead)
    op->erase();
}

struct AmpMergeSummedMatmulsPass
    : public amp::impl::AmpMergeSummedMatmulsPassBase<
          AmpMergeSummedMatmulsPass> {
  void runOnOperation() override {
    SmallVector<tosa::AddOp> roots;
    getOperation()->walk([&](tosa::AddOp add) {
      if (isRoot(add))
        roots.push_back(add);
    });
    for (tosa::AddOp root : roots)
      mergeSum(root);
  }
};
} // namespace
