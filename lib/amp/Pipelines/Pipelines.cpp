//===- Pipelines.cpp - amp pass pipelines ---------------------------------===//
//
// amp-pipeline: the AMP rewrite of a training step (autocast, loss scaling).
// amp-cpu-pipeline: its lowering to the LLVM dialect for the CPU, built from
// upstream passes plus amp-lower-to-linalg. The order matters: TOSA must be
// in linalg before the amp ops are expanded next to it; f16/bf16 arithmetic
// is emulated in f32 (each op rounded to its type, which is exact emulation
// for + - * /) once the code is scalar loops; bf16 casts are expanded to
// integer code because the JIT has no bf16 conversion routines.
//
//===----------------------------------------------------------------------===//

#include "amp/Pipelines/Pipelines.h"
#include "amp/Codegen/Passes.h"
#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/TosaToArith/TosaToArith.h"
#include "mlir/Conversion/TosaToLinalg/TosaToLinalg.h"
#include "mlir/Conversion/TosaToSCF/TosaToSCF.h"
#include "mlir/Conversion/TosaToTensor/TosaToTensor.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include <cstdlib>

using namespace mlir;
using namespace mlir::amp;

void mlir::amp::buildAmpPipeline(OpPassManager &pm, const AmpConfig &config,
                                 std::shared_ptr<AutocastReport> report) {
  // Constants in dense_resource blobs (torch-mlir's) inline: upstream folders
  // cannot read them (the pass's file comment).
  pm.addPass(createAmpInlineResourceConstantsPass());
  AmpAutocastPassOptions autocast;
  autocast.precision = config.precision;
  autocast.policyFile = config.policy;
  autocast.reportFile = config.report;
  autocast.strict = config.strict;
  pm.addPass(report ? createAmpAutocastPass(autocast, std::move(report))
                    : createAmpAutocastPass(autocast));

  AmpLossScalingPassOptions scaling = config.rules;
  switch (config.lossScaling) {
  case LossScalingChoice::Auto:
    scaling.mode = config.precision == Precision::bf16
                       ? LossScalingMode::none
                       : LossScalingMode::dynamic;
    break;
  case LossScalingChoice::Dynamic:
    scaling.mode = LossScalingMode::dynamic;
    break;
  case LossScalingChoice::Static:
    scaling.mode = LossScalingMode::static_;
    break;
  case LossScalingChoice::None:
    scaling.mode = LossScalingMode::none;
    break;
  }
  if (scaling.mode != LossScalingMode::none)
    pm.addPass(createAmpLossScalingPass(scaling));
}

AmpConfig AmpPipelineOptions::toConfig() const {
  AmpConfig config;
  config.precision = precision;
  config.policy = policy;
  config.report = report;
  config.strict = strict;
  config.lossScaling = lossScaling;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  config.rules.field = field;
#include "amp/Config/LossScalingRules.def"
  return config;
}

void mlir::amp::buildAmpPipeline(OpPassManager &pm,
                                 const AmpPipelineOptions &options) {
  buildAmpPipeline(pm, options.toConfig());
}

/// TOSA to linalg, arith and tensor.
static void addTosaToLinalgPasses(OpPassManager &pm, bool toBuffers) {
  pm.addPass(createAmpInlineResourceConstantsPass());
  // What the upstream lowerings cannot take is rejected first, at the op
  // (they would crash on some of it).
  AmpCheckLoweringInputPassOptions check;
  check.toBuffers = toBuffers;
  pm.addPass(createAmpCheckLoweringInputPass(check));
  // Our own lowerings: tosa.reverse as an affine copy that fuses with its
  // neighbours (the IREE input keeps upstream's lowering).
  // tosa.scatter as a parallel loop (scf.forall; after bufferization
  // scf-forall-to-parallel makes it GPU threads). iree-compile takes no
  // scf.forall outside a dispatch and fails to partition upstream's
  // sequential loop where the rows written are read from the same tensor:
  // the IREE input's scatters become a gather through their inverted
  // indices (two linalg.generic ops); those with dynamic sizes keep
  // upstream's loop.
  if (toBuffers) {
    pm.addNestedPass<func::FuncOp>(createAmpTosaReverseToLinalgPass());
    pm.addNestedPass<func::FuncOp>(createAmpTosaScatterToForallPass());
  } else {
    pm.addNestedPass<func::FuncOp>(createAmpTosaScatterToGatherPass());
  }
  // TOSA control flow (and the IREE input's dynamic tosa.scatter) has its
  // lowering in tosa-to-scf; tosa-to-linalg would reject it.
  pm.addNestedPass<func::FuncOp>(createTosaToSCFPass());
  TosaToLinalgOptions tosaOptions;
  tosaOptions.aggressiveReduceConstant = true;
  // No TOSA level check: the 8K level counts a rank-4 tosa.pad's padding
  // shape (2 x rank) against MAX_RANK = 6 and rejects valid NCHW graphs.
  // amp-check-lowering-input above rejects the unranked tensors it would
  // have caught.
  tosa::addTosaToLinalgPasses(pm, tosaOptions, TosaToLinalgNamedOptions(),
                              /*validationOptions=*/std::nullopt);
  pm.addNestedPass<func::FuncOp>(createTosaToArithPass());
  pm.addNestedPass<func::FuncOp>(createTosaToTensorPass());
  // A sum, product, matmul or convolution written in f16 / bf16 accumulates
  // in f32 and rounds once, as PyTorch's kernels do, on every backend.
  pm.addNestedPass<func::FuncOp>(createAmpWiden16BitAccumulatorsPass());
}

void mlir::amp::buildAmpTensorInputPipeline(OpPassManager &pm) {
  addTosaToLinalgPasses(pm, /*toBuffers=*/false);
  pm.addPass(createAmpLowerToLinalgPass());
  // What IREE's compiler does not take: named elementwise ops (generics
  // instead), the index dialect (tosa.fft2d's angles; IREE registers no
  // index dialect and miscompiles its ops as unregistered ones),
  // math.isinf / isnormal / fpowi / log10 / erfc (no lowering in IREE), and
  // the f32 math IREE computes wrongly or loosely (atan, atan2, asinh, acosh,
  // atanh, sinh, sin, cos, tan).
  pm.addNestedPass<func::FuncOp>(createAmpGeneralizeElementwiseOpsPass());
  pm.addNestedPass<func::FuncOp>(createAmpIndexToArithPass());
  pm.addPass(createAmpCpuExpandMathPass());
  pm.addNestedPass<func::FuncOp>(createAmpIreeExpandMathPass());
  // IREE's llvm-cpu backend links no libm: on a CPU without f16 arithmetic
  // (AVX-512 FP16) LLVM lowers an f16 maxnum / minnum to calls of fmaxf /
  // fminf, undefined at iree-lld. So float max / min become compare and
  // select (upstream arith-expand; the same IEEE semantics), also inside
  // linalg.softmax, decomposed first for that.
  pm.addNestedPass<func::FuncOp>(createAmpDecomposeAggregatedOpsPass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createCanonicalizerPass());
}

/// The tensor-level front shared by the CPU and GPU lowerings: TOSA and the
/// amp ops to linalg, elementwise fusion, then one-shot bufferization with
/// identity-layout function boundaries, results turned into out-parameters
/// and buffer deallocation.
static void addTensorToBufferPasses(OpPassManager &pm,
                                    const LoweringConfig &config) {
  bool gpu = config.target == LoweringTarget::GPU;
  bool gemmCalls = config.gemmCalls();
  // check-in-update is a CPU lowering (the GPU keeps its fused kernels).
  bool checkInUpdate = !gpu && config.checkInUpdate;
  // CPU: small products that are summed (a recurrent weight's gradient over
  // the steps) as one product, one GEMM call.
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createAmpMergeSummedMatmulsPass());
  // Tensors: TOSA and the amp ops to linalg.
  addTosaToLinalgPasses(pm, /*toBuffers=*/true);
  if (checkInUpdate) {
    AmpLowerToLinalgPassOptions inlineOptions;
    inlineOptions.checkInUpdate = true;
    pm.addPass(createAmpLowerToLinalgPass(inlineOptions));
  } else if (config.ampOps == AmpOpsLowering::Runtime) {
    AmpLowerToRuntimePassOptions runtime;
    runtime.fuseUnscale = config.fuseUnscale;
    pm.addPass(createAmpLowerToRuntimePass(runtime));
  } else
    pm.addPass(createAmpLowerToLinalgPass());
  pm.addNestedPass<func::FuncOp>(createAmpDecomposeAggregatedOpsPass());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Window reads sliced to what they read, so that dropping unit loops
  // leaves no plain index over a longer dimension.
  pm.addNestedPass<func::FuncOp>(createAmpSliceWindowInputsPass());
  pm.addNestedPass<func::FuncOp>(createLinalgFoldUnitExtentDimsPass());
  // 1-D / 3-D convolutions and torch-mlir's convolution generics as im2col
  // and a contraction, before fusion (which would fuse their producers into
  // them: no longer a contraction body).
  if (gemmCalls)
    pm.addNestedPass<func::FuncOp>(createAmpConvolutionGenericsToGemmPass());
  // Elementwise fusion; with GEMM calls, nothing fused into a contraction
  // (its operands stay buffers of the GEMM's input type); a producer that
  // several ops read fused into the first of them (multi-use).
  AmpFuseElementwisePassOptions fuse;
  fuse.keepContractions = gemmCalls;
  fuse.multiUse = true;
  fuse.transposes = true;
  fuse.recompute = true;
  fuse.reductions = true;
  pm.addNestedPass<func::FuncOp>(createAmpFuseElementwisePass(fuse));
  pm.addPass(createCanonicalizerPass());
  // CPU: TOSA's one-axis reductions over several axes (batch norm's sums
  // over N, H, W) as one reduction, without the intermediates.
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createAmpMergeReductionChainsPass());
  // Each gradient's check into the update loop that reads it.
  if (checkInUpdate)
    pm.addNestedPass<func::FuncOp>(createAmpCpuCheckInUpdatePass());
  // Convolutions as im2col + one matmul-shaped contraction (a GEMM call).
  if (gemmCalls) {
    pm.addNestedPass<func::FuncOp>(createAmpConvolutionsToGemmPass());
    pm.addPass(createCanonicalizerPass());
  }
  // Contractions that become GEMM calls read transposed operands in place
  // (a BLAS transpose flag, no transpose loop).
  if (gemmCalls)
    pm.addPass(createAmpGpuFoldTransposesPass());
  // CPU GEMMs: f16 operands widened once, where they are made (the runtime
  // has no f16 GEMM), and the widening fused into their producers; bf16 ones
  // too unless the runtime's GEMM takes bf16 (AVX512_BF16).
  if (gemmCalls && !gpu) {
    AmpCpuWidenContractionOperandsPassOptions widen;
    widen.bf16 = !config.bf16Gemm;
    pm.addNestedPass<func::FuncOp>(
        createAmpCpuWidenContractionOperandsPass(widen));
  }
  // The casts of GEMM operands (filters above all) into the transposes and
  // reversals that move them, and those into the widenings that read them.
  if (gemmCalls)
    pm.addNestedPass<func::FuncOp>(createAmpFuseCastsIntoCopiesPass());
  // GPU: long reductions in parallel stages (no thread walks them alone).
  if (gpu)
    pm.addPass(createAmpGpuSplitReductionsPass());

  // CPU: each broadcast scalar (the inverse loss scale, the inf / nan flag)
  // read once, so that bufferization's conflict analysis does not compare
  // every parameter's reader with every other (quadratic at 100k ops).
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createAmpCpuHoistScalarReadsPass());

  // The tensor passes' result verified once (the verifier is off between
  // passes; an invalid tensor IR would bufferize into a step that runs).
  AmpCheckVerifiedPassOptions verified;
  verified.stage = "before bufferization";
  pm.addPass(createAmpCheckVerifiedPass(verified));
  // Buffers. A concatenation's parts computed into their slices of the
  // result (no buffer and copy of their own), where the slices are static.
  pm.addPass(createAmpEliminateEmptyTensorsPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // A value returned as several results (state slots with one new value)
  // becomes one buffer per result first: buffer-results-to-out-params would
  // replace a repeated allocation twice.
  pm.addNestedPass<func::FuncOp>(createAmpDistinctReturnedBuffersPass());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  // CPU: the out-parameters marked for amp-in-place-updates (below).
  outParams.addResultAttribute = !gpu;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  // amp-tosa-scatter-to-forall's loops, bufferized: scf.parallel.
  pm.addPass(createForallToParallelLoopPass());
  // CPU: a loss-scaled step's updates written where the results go, the old
  // state copied there only on a bad step.
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createAmpSelectedResultsInPlacePass());
  // bufferization::buildBufferDeallocationPipeline, with the step's one
  // dealloc of every buffer split in linear time before the simplification
  // (which is quadratic in the memrefs of one dealloc).
  memref::ExpandReallocPassOptions expandRealloc;
  expandRealloc.emitDeallocs = false;
  pm.addPass(memref::createExpandReallocPass(expandRealloc));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createAmpSplitDeallocsPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // CPU: the updated arguments that the caller passes as their results'
  // out-parameters (amp.in_place_result) read no element after it is
  // written, or are copied first.
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createAmpInPlaceUpdatesPass());
}

/// The step's linalg ops (and other region ops: loops, scf.if), a few at a
/// time, into functions of their own, and repeated ones made one: LLVM's loop
/// passes are superlinear in the loops of one function, and every pass that
/// rewrites one function at a time runs on the outlined ones in parallel
/// (the CPU pipeline outlines before vectorising, the GPU emulation after its
/// loops are made).
static void addOutliningPasses(OpPassManager &pm) {
  pm.addPass(createAmpCpuOutlineLoopsPass());
  pm.addPass(createAmpCpuMergeIdenticalFunctionsPass());
}

/// Loops, scalars and the LLVM dialect: the back half of the CPU lowering,
/// shared by amp-cpu-pipeline and the host emulation of amp-gpu-pipeline.
/// With `outlined`, the step's region ops are already in functions of their
/// own (addOutliningPasses).
/// With `nativeBf16Rounding`, f32 -> bf16 stays an llvm.fptrunc (the CPU's
/// own instruction) instead of integer code.
static void addLoopsToLLVMPasses(OpPassManager &pm, bool runtimeAllocator,
                                 int64_t parallelMinWork, bool outlined,
                                 bool nativeBf16Rounding) {
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    // Loops, then scalars: a linalg op's parallel dimensions as scf.parallel
    // (lowered like scf.for, unless amp-cpu-parallelize-loops takes the
    // nest).
    fpm.addPass(createConvertLinalgToParallelLoopsPass());
    // n-D transfers (amp-cpu-vectorize's transposed tiles) as 1-D transfers
    // of their rows, fully unrolled: the default lowering goes through a
    // stack temporary allocated inside the tile loop, i.e. a dynamic alloca
    // that grows the stack on every iteration (a 4096 x 4096 transpose
    // overflowed it).
    fpm.addPass(createConvertVectorToSCFPass(
        VectorTransferToSCFOptions().enableFullUnroll()));
    // Contiguous copies through 1-D views of a constant size: the memcpy
    // reads no size or stride of a buffer argument.
    fpm.addPass(createAmpCpuFlattenCopiesPass());
    // Views as offset arithmetic (affine.apply, lowered next with the
    // loops').
    fpm.addPass(memref::createExpandStridedMetadataPass());
    fpm.addPass(createLowerAffinePass());
  }
  // The large parallel nests on the runtime's threads (each outlined into a
  // function of its parallel range, called through amp_rt_parallel_for
  // below).
  // (A negative bound reaches the pass, which rejects it.)
  if (parallelMinWork != 0) {
    AmpCpuParallelizeLoopsPassOptions parallelize;
    parallelize.minWork = parallelMinWork;
    pm.addPass(createAmpCpuParallelizeLoopsPass(parallelize));
  }
  if (!outlined)
    addOutliningPasses(pm);
  // The passes that rewrite each function on its own run nested on
  // func.func: over the outlined functions (hundreds in a CNN's step), in
  // parallel. Only the ones that add declarations to the module or change
  // signatures and calls run on the module.
  // A block per loop first, so that scf-to-cf's splits stay linear.
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(createAmpCpuSplitBlocksPass());
    fpm.addPass(createSCFToControlFlowPass());
  }
  // fpowi, isinf, isnormal as ops that lower, in their own element type.
  pm.addPass(createAmpCpuExpandMathPass());
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    // Complex arithmetic (a complex linalg.matmul's body) as real arithmetic
    // on the parts.
    fpm.addPass(createConvertComplexToStandardPass());
    arith::ArithEmulateUnsupportedFloatsOptions emulate;
    emulate.sourceTypeStrs = {"f16", "bf16"};
    emulate.targetTypeStr = "f32";
    fpm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
    math::MathExtendToSupportedTypesOptions extend;
    extend.extraTypeStrs = {};
    extend.targetTypeStr = "f32";
    fpm.addPass(math::createMathExtendToSupportedTypes(extend));
    // Each emulated op rounded to its type (no excess precision, whatever
    // the fusion).
    fpm.addPass(createAmpCpuRoundEmulatedFloatsPass());
  }
  // tanh and erf as vectorisable arithmetic instead of a libm call per
  // element.
  pm.addPass(createAmpCpuApproximateMathPass());
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    // bf16 conversions as integer code, or the CPU's own f32 -> bf16
    // rounding where it has one (bf16 -> f32 is a shift either way).
    arith::ArithExpandOpsPassOptions expand;
    expand.includeBf16 = !nativeBf16Rounding;
    fpm.addPass(arith::createArithExpandOpsPass(expand));
    // Math first: MathToLLVM takes what has an LLVM intrinsic (vectors too);
    // MathToLibm calls libm for the rest (f64 erf, erfc, cbrt, atan2, ...), one
    // call per element of a vector through vector.extract / vector.insert,
    // which VectorToLLVM below must still see.
    fpm.addPass(createConvertMathToLLVMPass());
  }
  pm.addPass(createConvertMathToLibmPass());

  // LLVM.
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(createConvertVectorToLLVMPass());
    fpm.addPass(createUBToLLVMConversionPass());
  }
  // memref.alloc / dealloc as malloc / free, or as MLIR's generic
  // functions, which the runtime defines (runtime/lib/cpu/StepAllocator.cpp).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = runtimeAllocator;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  {
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(createArithToLLVMConversionPass());
    fpm.addPass(createConvertComplexToLLVMPass());
    // The index dialect (tosa.fft2d's lowering computes its twiddle angles
    // with index.mul).
    fpm.addPass(createConvertIndexToLLVMPass());
  }
  pm.addPass(createConvertFuncToLLVMPass());
  // The step's checks (cf.assert) report on stderr and exit instead of
  // upstream's puts + abort.
  pm.addPass(createAmpCpuReportFailedChecksPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  // bf16 values, only moved by now, moved as i16: x86 without AVX512_BF16
  // legalises a bfloat vector select one element at a time.
  pm.addNestedPass<LLVM::LLVMFuncOp>(createAmpCpuBf16BitsAsIntegersPass());
  // The outlined and parallel functions take only the descriptor fields
  // they read (the aligned pointers of static buffers), before the parallel
  // calls pack their arguments into structs.
  pm.addPass(createAmpCpuDropDeadArgumentsPass());
  if (parallelMinWork != 0)
    pm.addPass(createAmpCpuLowerParallelCallsPass());
}

#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  AMP_LOWERING_IF_CPU_##targets(config.field = field;)
LoweringConfig AmpCpuPipelineOptions::toConfig() const {
  LoweringConfig config = LoweringConfig::forTarget(LoweringTarget::CPU);
#include "amp/Config/LoweringOptions.def"
  return config;
}
#undef AMP_LOWERING_OPTION

#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  AMP_LOWERING_IF_GPU_##targets(config.field = field;)
LoweringConfig AmpGpuPipelineOptions::toConfig() const {
  LoweringConfig config = LoweringConfig::forTarget(LoweringTarget::GPU);
#include "amp/Config/LoweringOptions.def"
  return config;
}
#undef AMP_LOWERING_OPTION

LogicalResult mlir::amp::runPipeline(PassManager &pm, ModuleOp module,
                                    bool verifyEachPass, StringRef what,
                                    bool commandLineOptions) {
  pm.enableVerifier(verifyEachPass);
  // A tool's --mlir-timing, --mlir-print-ir-*, ... (applyPassManagerCLOptions
  // fails where they are not registered: a library client, Python).
  if (commandLineOptions) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  if (failed(pm.run(module)))
    return failure();
  if (verifyEachPass || succeeded(verify(module)))
    return success();
  return emitError(module.getLoc())
         << "internal error: the IR after " << what
         << " does not verify (the errors above); --verify-each names the "
            "pass that broke it";
}

void mlir::amp::buildAmpCpuPipeline(OpPassManager &pm,
                                    const LoweringConfig &config) {
  assert(config.target == LoweringTarget::CPU && "a CPU lowering config");
  if (config.emitCInterface)
    pm.addPass(createAmpEmitCInterfacePass());
  addTensorToBufferPasses(pm, config);
  // Contractions to the runtime's GEMM (oneDNN / OpenBLAS), the rest to loops;
  // a zero-filled C overwritten by its GEMM instead of filled first.
  if (config.blas) {
    AmpLowerContractionsToRuntimePassOptions contractions;
    contractions.overwriteZeroFilledC = true;
    pm.addPass(createAmpLowerContractionsToRuntimePass(contractions));
  }
  // The rest (linalg ops on buffers, scf.if guards) into functions of their
  // own, each lowered once and, from here on, in parallel with the others
  // (densenet121's fp32 step, 2 threads, amp-opt without per-pass
  // verification: 17.0-19.2 s with the outlining after the loops were made,
  // 13.5-14.9 s with it here). Copies between strided views first become
  // linalg.copy, outlined with the rest: the step body is glue, compiled at
  // -O0 (HostCodegen.cpp).
  pm.nest<func::FuncOp>().addPass(createAmpCpuStridedCopiesToLinalgPass());
  addOutliningPasses(pm);
  // What is left: vector tiles where the innermost loop is parallel.
  if (config.vectorBits > 0) {
    AmpCpuVectorizePassOptions vectorize;
    vectorize.vectorBits = config.vectorBits;
    OpPassManager &fpm = pm.nest<func::FuncOp>();
    fpm.addPass(createAmpCpuVectorizePass(vectorize));
    fpm.addPass(createCanonicalizerPass());
  }

  addLoopsToLLVMPasses(pm, config.runtimeAllocator, config.parallelMinWork,
                       /*outlined=*/true, config.nativeBf16Rounding);
  AmpCheckLoweredPassOptions check;
  check.pipeline = "amp-cpu-pipeline";
  pm.addPass(createAmpCheckLoweredPass(check));
}

void mlir::amp::buildAmpGpuPipeline(OpPassManager &pm,
                                    const LoweringConfig &config) {
  assert(config.target == LoweringTarget::GPU && "a GPU lowering config");
  pm.addPass(createAmpEmitCInterfacePass());
  addTensorToBufferPasses(pm, config);
  // cuBLAS overwrites a zero-filled C (beta = 0): no fill kernel; and
  // stores a 16-bit C that readers read through views of their own.
  if (config.cublas) {
    AmpLowerContractionsToRuntimePassOptions contractions;
    contractions.overwriteZeroFilledC = true;
    contractions.lowPrecisionStoreViews = true;
    pm.addPass(createAmpLowerContractionsToRuntimePass(contractions));
  }
  // Parallel loops on the device; everything else moved there too. The
  // parallel loops of every reduction go outermost first, so that they
  // become threads (one per output element) rather than host loops.
  pm.addPass(createAmpGpuParallelLoopsFirstPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // A reduction's output element in a register, not a global-memory round
  // trip per iteration (while the buffers are still allocations that alias
  // analysis can tell apart).
  pm.addPass(createAmpGpuRegisterAccumulatorsPass());
  pm.addPass(createAmpGpuHostToDevicePass());
  // Elementwise kernels: several contiguous elements a thread, loaded and
  // stored as 16-byte vectors (a 16-bit kernel's 2-byte accesses moved a
  // fraction of the bandwidth).
  pm.addPass(createAmpGpuVectorizeElementwisePass());
  // One dimension per kernel, the innermost fastest: coalesced accesses and
  // a one-dimensional grid.
  pm.addPass(createAmpGpuCollapseParallelLoopsPass());
  // 256 threads per block: tile (constant inner bounds, guarded by an
  // scf.if, which the GPU mapping needs), then map the tile loop to blocks
  // and the loop inside it to threads.
  pm.addNestedPass<func::FuncOp>(
      createParallelLoopTilingPass(/*tileSizes=*/{256},
                                   /*noMinMaxBounds=*/true));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  // Fold the grid and block sizes (and the kernels' loop bounds) to
  // constants before outlining.
  pm.addPass(createCanonicalizerPass());
  // Constants (loop bounds, strides, the divisors of the collapsed index)
  // into the kernels rather than kernel arguments: upstream's outlining no
  // longer sinks them, and without them the kernels divided by run-time
  // 64-bit values and ran loops of unknown trip count (not unrolled).
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createAmpGpuMergeKernelModulesPass());
  pm.addPass(createAmpGpuAsyncChainPass());
  // Kernels too: math.isinf / isnormal / fpowi have no NVVM lowering.
  pm.addPass(createAmpCpuExpandMathPass());
  if (config.emulate) {
    // The kernels on the host: launches as loops over grid and block, device
    // memory as host memory, the rest as in the CPU pipeline.
    AmpGpuEmulateOnHostPassOptions emulate;
    emulate.checkBounds = config.checkBounds;
    pm.addPass(createAmpGpuEmulateOnHostPass(emulate));
    pm.addPass(createCanonicalizerPass());
    addLoopsToLLVMPasses(pm, /*runtimeAllocator=*/false,
                         /*parallelMinWork=*/0, /*outlined=*/false,
                         /*nativeBf16Rounding=*/false);
    AmpCheckLoweredPassOptions check;
    check.pipeline = "amp-gpu-pipeline{emulate}";
    pm.addPass(createAmpCheckLoweredPass(check));
    return;
  }
  if (!config.nvvm)
    return;
  // Upstream NVVM lowering and serialisation. MLIR finds libdevice (for
  // math functions such as __nv_expf) and ptxas through these variables;
  // Debian's build has no default toolkit path of its own.
  if (!std::getenv("CUDA_HOME") && !std::getenv("CUDA_ROOT") &&
      !std::getenv("CUDA_PATH") && !config.cudaPath.empty() &&
      llvm::sys::fs::exists(config.cudaPath))
    ::setenv("CUDA_HOME", config.cudaPath.c_str(), /*overwrite=*/0);
  // Its convert-arith-to-llvm would make a kernel's arith.remf an llvm.frem
  // that the NVVM target refuses: libdevice's fmod instead.
  pm.addPass(createAmpGpuRemFToLibdevicePass());
  gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = config.chip;
  nvvm.cubinFeatures = config.features;
  nvvm.cubinFormat = config.format;
  gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
  // The host code: LLVM, the kernels' binary and its launches.
  AmpCheckLoweredPassOptions check;
  check.pipeline = "amp-gpu-pipeline";
  check.allowedOps = {"gpu.binary", "gpu.launch_func"};
  pm.addPass(createAmpCheckLoweredPass(check));
}

/// PassPipelineRegistration<Options> prints a bad option to llvm::errs()
/// without `error:` and fails without calling the error handler, so a driver
/// cannot say which option was wrong. This one hands the parser's message to
/// the handler, which locates it.
template <typename Options>
static void registerPipelineWithErrors(
    StringRef arg, StringRef description,
    std::function<void(OpPassManager &, const Options &)> builder) {
  registerPassPipeline(
      arg, description,
      [builder](OpPassManager &pm, StringRef text,
                function_ref<LogicalResult(const Twine &)> errorHandler) {
        Options options;
        std::string message;
        llvm::raw_string_ostream os(message);
        if (failed(options.parseFromString(text, os)))
          return errorHandler(StringRef(message).rtrim());
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const mlir::detail::PassOptions &)> optionsHandler) {
        optionsHandler(Options());
      });
}

void mlir::amp::registerAmpPipelines() {
  registerPipelineWithErrors<AmpPipelineOptions>(
      "amp-pipeline",
      "Automatic mixed precision for a training step: amp-autocast, then "
      "amp-loss-scaling",
      [](OpPassManager &pm, const AmpPipelineOptions &options) {
        buildAmpPipeline(pm, options);
      });
  registerPipelineWithErrors<AmpCpuPipelineOptions>(
      "amp-cpu-pipeline",
      "Lower a training step (TOSA / linalg / amp ops on tensors) to the LLVM "
      "dialect for the CPU",
      [](OpPassManager &pm, const AmpCpuPipelineOptions &options) {
        buildAmpCpuPipeline(pm, options.toConfig());
      });
  PassPipelineRegistration<>(
      "amp-tensor-input-pipeline",
      "Lower a training step to linalg/arith/tensor on tensors (amp ops "
      "inline, no TOSA) for another MLIR compiler such as IREE",
      buildAmpTensorInputPipeline);
  registerPipelineWithErrors<AmpGpuPipelineOptions>(
      "amp-gpu-pipeline",
      "Lower a training step to NVVM kernels and host code on one CUDA "
      "stream",
      [](OpPassManager &pm, const AmpGpuPipelineOptions &options) {
        buildAmpGpuPipeline(pm, options.toConfig());
      });
}
