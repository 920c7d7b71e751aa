//===- ConvolutionsToGemm.cpp - amp-convolutions-to-gemm ------------------===//
//
// Convolutions as GEMMs ("im2col"), on tensors, for the pipelines whose
// contractions become GEMM calls (amp-lower-contractions-to-runtime: the
// runtime's oneDNN / OpenBLAS GEMM on the CPU, cuBLAS on the GPU). A
// convolution lowered to loops walks its kernel window per output element,
// one scalar multiply-add at a time; the same arithmetic as one GEMM runs at
// the GEMM library's speed.
//
// Upstream's linalg::rewriteInIm2Col does the rewrite per layout:
//
//   conv_2d_nhwc_fhwc (tosa.conv2d; its filter is [F, Kh, Kw, C]),
//   conv_2d_nhwc_hwcf, conv_2d_nchw_fchw:
//     1. an im2col tensor [N, Oh*Ow, Kh*Kw*C] (a linalg.generic that reads
//        the input window of each output position);
//     2. the filter collapsed to a [F, Kh*Kw*C] (or [Kh*Kw*C, F]) matrix;
//     3. one matmul-shaped linalg.generic over (n, m, f, k) into the
//        output collapsed to [N, Oh*Ow, F], whose init (the bias broadcast,
//        or zeros) is kept, then expanded back;
//
// Depthwise convolutions keep their loops: upstream's rewrite makes them a
// matrix-vector product per channel whose batch stride does not merge, i.e.
// one GEMM call per channel (3583 calls in mobilenet_v3_small's step), for
// an op that reads each input element kh*kw times and is bound by memory
// either way.
//
// amp-lower-contractions-to-runtime then finds step 3 by structure (n and
// Oh*Ow merge into one m of N*Oh*Ow rows) and makes it one GEMM call. The
// arithmetic is the same products summed over the same window (the order of
// the sum is the GEMM's). Other convolutions (grouped, depthwise, 1-D / 3-D)
// keep their loops.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCONVOLUTIONSTOGEMMPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpConvolutionsToGemmPass
    : public amp::impl::AmpConvolutionsToGemmPassBase<
          AmpConvolutionsToGemmPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> convs;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          isa<linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNhwcHwcfOp,
              linalg::Conv2DNchwFchwOp>(op.getOperation()))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : convs) {
      rewriter.setInsertionPoint(op);
      FailureOr<std::pair<Operation *, Operation *>> result =
          TypeSwitch<Operation *, FailureOr<std::pair<Operation *, Operation *>>>(
              op.getOperation())
              .Case<linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNhwcHwcfOp,
                    linalg::Conv2DNchwFchwOp>(
                  [&](auto conv) {
                    return linalg::rewriteInIm2Col(rewriter, conv);
                  })
              .Default([](Operation *) { return failure(); });
      // A convolution upstream does not rewrite (dynamic shapes, a
      // quantized or non-unit-stride filter layout) keeps its loops.
      (void)result;
    }
  }
};
} // namespace
