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
// torch-mlir's linalg import writes the same sum as 2-D linalg.matmul ops
// into a zero fill, added by elementwise linalg.generic ops whose body is
// one arith.addf; it is merged the same way (tensor.concat, one matmul).
//
// Algorithm, for each sum (a tree of adds of one kind and one type, without
// broadcasting, whose inner adds are used once; the tree's root is an add
// that is not such an inner add). An add is a tosa.add, or a linalg.add or
// elementwise linalg.generic (identity maps, parallel loops) that yields
// arith.addf of its two inputs:
//
//   1. collect the tree's terms, left to right;
//   2. a term is a product when it is used once, in the root's block, with
//      static shapes, and is either a tosa.matmul of batch 1, seen directly
//      or through one tosa.reshape used once, or a 2-D linalg.matmul with
//      its default maps whose init is a linalg.fill of zero;
//   3. products are grouped by what the merged op needs them to share:
//      the kind, operand element types, result type, M, N, zero points (the
//      same values), the reshape's result type and the matmul's attributes;
//   4. a group of two or more whose products are small (at most 2^20
//      multiply-adds each, so that a call's fixed cost matters) and not
//      skinny (M and N at least 4, so that the concatenations' copies stay
//      small next to the product) becomes one product of concatenated
//      operands (tosa.concat, or tensor.concat into a clone of the first
//      linalg.matmul and its zero init), reshaped as its terms were;
//   5. the sum is rebuilt right before its root, with clones of the root:
//      the merged products first, then the other terms, in their order; the
//      old tree is erased.
//
// Each output element then adds the same products in another order (f32
// rounding, as any change of GEMM blocking). The CPU pipeline runs the pass
// first, on TOSA or on the linalg import, before TOSA's lowering.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Tosa/IR/TosaOps.h"

#include "amp/Conversion/Passes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
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

/// A term of a sum that is a product (file comment, step 2): `op` is a
/// tosa.matmul or a linalg.matmul.
struct Product {
  Operation *op;
  tosa::ReshapeOp reshape; // null when the term is the product itself
  Value a, b;
  int64_t m, n, k;
};

/// Whether `op` is an add of two inputs of its result's static type (file
/// comment): tosa.add, linalg.add, or an elementwise linalg.generic whose
/// body yields arith.addf of its two inputs.
bool isAdd(Operation *op) {
  if (!op || op->getNumResults() != 1 || op->getNumOperands() < 2)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() ||
      op->getOperand(0).getType() != type ||
      op->getOperand(1).getType() != type)
    return false;
  if (isa<tosa::AddOp>(op))
    return true;
  if (auto add = dyn_cast<linalg::AddOp>(op))
    return add.getNumDpsInputs() == 2 && add.hasPureTensorSemantics();
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 2 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureTensorSemantics() ||
      !generic.isAllParallelLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto addf = yield.getNumOperands() == 1
                  ? yield.getOperand(0).getDefiningOp<arith::AddFOp>()
                  : nullptr;
  if (!addf || &body.front() != addf.getOperation())
    return false;
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (addf.getLhs() == x && addf.getRhs() == y) ||
         (addf.getLhs() == y && addf.getRhs() == x);
}

/// Whether `value` is an inner add of the sum whose root is `root`: an add
/// of the same kind and type, used once.
bool isInnerAdd(Value value, Operation *root) {
  Operation *op = value.getDefiningOp();
  return op && op->getName() == root->getName() && isAdd(op) &&
         op->getResult(0).getType() == root->getResult(0).getType() &&
         op->hasOneUse();
}

/// Whether `op` is the root of a sum: an add that is not an inner add of
/// another one.
bool isRoot(Operation *op) {
  if (!isAdd(op))
    return false;
  if (!op->hasOneUse())
    return true;
  Operation *user = *op->user_begin();
  return !isAdd(user) || !isInnerAdd(op->getResult(0), user);
}

/// The sum's terms, left to right, and its adds (root first).
void collectTerms(Operation *root, SmallVectorImpl<Value> &terms,
                  SmallVectorImpl<Operation *> &adds) {
  SmallVector<Value> stack = {root->getOperand(1), root->getOperand(0)};
  adds.push_back(root);
  while (!stack.empty()) {
    Value value = stack.pop_back_val();
    if (isInnerAdd(value, root)) {
      Operation *add = value.getDefiningOp();
      adds.push_back(add);
      stack.push_back(add->getOperand(1));
      stack.push_back(add->getOperand(0));
      continue;
    }
    terms.push_back(value);
  }
}

/// `value`'s static shape, when it has one.
std::optional<ArrayRef<int64_t>> staticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getShape();
}

/// Whether `init` is a linalg.fill of zero.
bool isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  Value value = fill.getInputs().front();
  return matchPattern(value, m_AnyZeroFloat()) ||
         matchPattern(value, m_Zero());
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
  Operation *op = value.getDefiningOp();
  if (!op || !op->hasOneUse() || op->getBlock() != block)
    return std::nullopt;
  if (auto matmul = dyn_cast<tosa::MatMulOp>(op)) {
    product.a = matmul.getA();
    product.b = matmul.getB();
  } else if (auto matmul = dyn_cast<linalg::MatmulOp>(op);
             matmul && !product.reshape && matmul.hasPureTensorSemantics() &&
             !matmul.hasUserDefinedMaps() &&
             isZeroFill(matmul.getOutputs().front())) {
    product.a = matmul.getInputs()[0];
    product.b = matmul.getInputs()[1];
  } else {
    return std::nullopt;
  }
  product.op = op;
  std::optional<ArrayRef<int64_t>> a = staticShape(product.a);
  std::optional<ArrayRef<int64_t>> b = staticShape(product.b);
  if (!a || !b || !staticShape(op->getResult(0)))
    return std::nullopt;
  // TOSA: [1, M, K] x [1, K, N]; linalg: [M, K] x [K, N].
  size_t rank = isa<tosa::MatMulOp>(op) ? 3 : 2;
  if (a->size() != rank || b->size() != rank ||
      (rank == 3 && ((*a)[0] != 1 || (*b)[0] != 1)))
    return std::nullopt;
  product.m = (*a)[rank - 2];
  product.k = (*a)[rank - 1];
  product.n = (*b)[rank - 1];
  return product;
}

/// What the products of one merged op share (file comment, step 3): the
/// op's name, operand element types, result type, reshape type, zero
/// points (TOSA) and attributes (linalg).
using GroupKey =
    std::tuple<OperationName, Type, Type, Type, Type, Value, Value, Attribute>;

GroupKey keyOf(Product p) {
  Value aZp, bZp;
  Attribute attributes;
  if (auto matmul = dyn_cast<tosa::MatMulOp>(p.op)) {
    aZp = matmul.getAZp();
    bZp = matmul.getBZp();
  } else {
    attributes = p.op->getAttrDictionary();
  }
  return {p.op->getName(),
          getElementTypeOrSelf(p.a.getType()),
          getElementTypeOrSelf(p.b.getType()),
          p.op->getResult(0).getType(),
          p.reshape ? p.reshape.getType() : Type(),
          aZp,
          bZp,
          attributes};
}

/// One product of `products`' concatenated operands (file comment, step 4).
Value mergeProducts(OpBuilder &builder, ArrayRef<Product> products) {
  SmallVector<Value> as, bs;
  SmallVector<Location> locs;
  int64_t k = 0;
  for (const Product &p : products) {
    as.push_back(p.a);
    bs.push_back(p.b);
    locs.push_back(p.op->getLoc());
    k += p.k;
  }
  Product first = products.front();
  Location loc = builder.getFusedLoc(locs);
  Value a, b;
  if (isa<tosa::MatMulOp>(first.op)) {
    auto aType = RankedTensorType::get({1, first.m, k},
                                       getElementTypeOrSelf(first.a.getType()));
    auto bType = RankedTensorType::get({1, k, first.n},
                                       getElementTypeOrSelf(first.b.getType()));
    a = tosa::ConcatOp::create(builder, loc, aType, as,
                               builder.getI32IntegerAttr(2));
    b = tosa::ConcatOp::create(builder, loc, bType, bs,
                               builder.getI32IntegerAttr(1));
  } else {
    a = tensor::ConcatOp::create(builder, loc, /*dim=*/1, as);
    b = tensor::ConcatOp::create(builder, loc, /*dim=*/0, bs);
  }
  // The first product with the concatenated operands (its zero points, or
  // its zero init and attributes).
  Operation *merged = builder.clone(*first.op);
  merged->setLoc(loc);
  merged->setOperand(0, a);
  merged->setOperand(1, b);
  Value result = merged->getResult(0);
  if (first.reshape)
    result = tosa::ReshapeOp::create(builder, loc, first.reshape.getType(),
                                     result, first.reshape.getShape());
  return result;
}

/// Rewrites the sum rooted at `root` when it has products to merge.
void mergeSum(Operation *root) {
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
  if (llvm::none_of(groups,
                    [](auto &group) { return group.second.size() > 1; }))
    return;

  OpBuilder builder(root);
  SmallVector<Value> sum;
  SmallVector<Operation *> dead;
  for (auto &[key, products] : groups) {
    if (products.size() == 1) {
      Product p = products.front();
      sum.push_back(p.reshape ? Value(p.reshape.getResult())
                              : p.op->getResult(0));
      continue;
    }
    sum.push_back(mergeProducts(builder, products));
    for (const Product &p : products) {
      if (p.reshape)
        dead.push_back(p.reshape);
      dead.push_back(p.op);
    }
  }
  sum.append(rest.begin(), rest.end());
  // Each add a clone of the root (its kind, type and init), first + second.
  Value total = sum.front();
  for (Value term : ArrayRef(sum).drop_front()) {
    Operation *add = builder.clone(*root);
    add->setOperand(0, total);
    add->setOperand(1, term);
    total = add->getResult(0);
  }
  root->getResult(0).replaceAllUsesWith(total);
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
    SmallVector<Operation *> roots;
    getOperation()->walk([&](Operation *op) {
      if (isRoot(op))
        roots.push_back(op);
    });
    for (Operation *root : roots)
      mergeSum(root);
  }
};
} // namespace
