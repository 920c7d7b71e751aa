//===- InlineResourceConstants.cpp - dense_resource constants inline ------===//
//
// Replaces every `dense_resource<...>` elements attribute of an op (a
// `tosa.const` or `arith.constant` whose data lives in the file's resource
// section: torch-mlir's FX importer writes every non-scalar tensor constant
// so) by the same values as an inline `DenseElementsAttr`.
//
// Why: upstream folders read constants through
// `ElementsAttr::getValues<Attribute>()`, which a DenseResourceElementsAttr
// does not provide. `tosa.slice`'s folder of a one-element slice of such a
// constant aborts ("ElementsAttr does not provide iteration facilities for
// type `mlir::Attribute`"), and both canonicalization and the sparse constant
// propagation under amp-loss-scaling's gradient-flow analysis call it: a
// model that reads one element of a constant table crashed every pipeline.
// Inline, every folder reads them, and constant folding sees their values.
//
// The raw blob is the DenseElementsAttr raw buffer for every element type
// but i1, whose resource holds one byte per element (DenseElementsAttr packs
// bits). A blob that is missing (a resource declared without data) or whose
// size does not match the type is an error at the op.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPINLINERESOURCECONSTANTSPASS
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// `resource` as an inline DenseElementsAttr, or a null attribute after an
/// error at `op`.
static DenseElementsAttr inlineResource(Operation *op,
                                        DenseResourceElementsAttr resource) {
  ShapedType type = resource.getType();
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  if (!blob) {
    op->emitError() << "constant " << resource.getRawHandle().getKey()
                    << " has no data (a dense_resource without its blob)";
    return {};
  }
  ArrayRef<char> data = blob->getData();
  if (type.getElementType().isInteger(1) &&
      static_cast<int64_t>(data.size()) == type.getNumElements()) {
    SmallVector<bool> values;
    for (char byte : data)
      values.push_back(byte != 0);
    return DenseElementsAttr::get(type, values);
  }
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(type, data, splat)) {
    op->emitError() << "constant " << resource.getRawHandle().getKey()
                    << " holds " << data.size() << " bytes, not a " << type;
    return {};
  }
  return DenseElementsAttr::getFromRawBuffer(type, data);
}

namespace {
struct AmpInlineResourceConstantsPass
    : public amp::impl::AmpInlineResourceConstantsPassBase<
          AmpInlineResourceConstantsPass> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([&](Operation *op) {
      SmallVector<std::pair<StringAttr, DenseResourceElementsAttr>> found;
      for (NamedAttribute attr : op->getAttrs())
        if (auto resource =
                dyn_cast<DenseResourceElementsAttr>(attr.getValue()))
          found.emplace_back(attr.getName(), resource);
      for (auto [name, resource] : found) {
        DenseElementsAttr dense = inlineResource(op, resource);
        if (!dense)
          return WalkResult::interrupt();
        op->setAttr(name, dense);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
