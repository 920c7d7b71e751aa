//===- DistinctReturnedBuffers.cpp - amp-distinct-returned-buffers --------===//
//
// A step can return one SSA value as several results: state slots that get
// the same new value (after CSE, ASGD's step size of every parameter is one
// computation) or two buffers a model sets to the same tensor. After one-shot
// bufferization the `func.return` lists that memref several times, and
// upstream's buffer-results-to-out-params (with hoistStaticAllocs, as the
// pipelines run it) replaces the allocation by the first out-parameter and
// erases it, then visits it again for the repeat: a use after free.
//
// The rewrite: walk the operands of each `func.return` in order, remember
// the memrefs seen; each memref operand seen before gets a fresh
// `memref.alloc` of its type (dynamic sizes read with `memref.dim` from the
// value) and a `memref.copy` of the value into it, both right before the
// return, and the return uses the copy. Every returned buffer is then
// distinct, so each out-parameter gets its own write: the first the
// original computation, the others the copies. Non-memref operands and
// first occurrences are untouched, so a step without repeats is unchanged.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPDISTINCTRETURNEDBUFFERSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Returns each memref operand of `ret` once; repeats become copies.
static void distinctOperands(func::ReturnOp ret) {
  llvm::SmallDenseSet<Value> seen;
  OpBuilder builder(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Value value = operand.get();
    auto type = dyn_cast<MemRefType>(value.getType());
    if (!type || seen.insert(value).second)
      continue;
    Location loc = ret.getLoc();
    SmallVector<Value> sizes;
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        sizes.push_back(memref::DimOp::create(builder, loc, value, dim));
    // A fresh buffer with the identity layout (the function boundary's) of
    // the same shape, element type and memory space.
    auto fresh = MemRefType::get(type.getShape(), type.getElementType(),
                                 MemRefLayoutAttrInterface(),
                                 type.getMemorySpace());
    Value copy = memref::AllocOp::create(builder, loc, fresh, sizes);
    memref::CopyOp::create(builder, loc, value, copy);
    if (copy.getType() != type)
      copy = memref::CastOp::create(builder, loc, type, copy);
    operand.set(copy);
  }
}

namespace {
struct AmpDistinctReturnedBuffersPass
    : mlir::amp::impl::AmpDistinctReturnedBuffersPassBase<
          AmpDistinctReturnedBuffersPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) { distinctOperands(ret); });
  }
};
} // namespace
