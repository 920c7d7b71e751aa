//===- ReportFailedChecks.cpp - the amp-cpu-report-failed-checks pass -----===//
//
// A step's `cf.assert` ops are checks of the data it is given: torch-mlir's
// (an embedding's index in range, a reciprocal's non-zero operand) and
// amp_mlir.torch's guards of the values a captured step was specialized to
// (a mask's count, an `.item()` read from the batch). Upstream's
// convert-cf-to-llvm lowers a failed one to `puts(message)` and `abort()`:
// `puts` writes to a buffered stdout that abort does not flush, so when
// stdout is a pipe (a test, a job log, Python's subprocess) the message was
// lost, and amp-train's crash handler printed a stack dump asking for an
// LLVM bug report instead.
//
// On the LLVM dialect, after func-to-llvm and before cf-to-llvm, each
// `cf.assert %ok, "message"` in a host function (not in a gpu.module: device
// code keeps __assertfail) becomes
//
//   llvm.cond_br %ok, ^continue, ^failed
//   ^failed:
//     llvm.call @write(2, @amp_check_message_N, len)  // "error: the compiled
//     llvm.call @_exit(3)                             //  step failed a check:
//     llvm.unreachable                                //  <message>\n"
//
// One unbuffered write of the whole line to stderr (threads that fail at
// once do not interleave within it) and `_exit`, which runs no atexit
// handler or static destructor: the check can fail on a worker thread of
// the runtime's parallel loops while the other threads still run. Exit
// status 3 tells a failed check from amp-train's own errors (1). The
// functions are libc's, so an object from amp-compile links as before.
//
// The runner calls a step's checks of its batch before the step
// (amp-outline-batch-checks), so that an embedding program is told instead
// of ended; what reaches this code there is a check that reads the
// parameters, and every check of a step another host calls.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUREPORTFAILEDCHECKSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct ReportFailedChecksPass
    : public amp::impl::AmpCpuReportFailedChecksPassBase<
          ReportFailedChecksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<cf::AssertOp> checks;
    // Host functions only: a gpu.module's kernels are device code.
    for (Operation &op : *module.getBody())
      if (isa<FunctionOpInterface>(op))
        op.walk([&](cf::AssertOp check) { checks.push_back(check); });
    if (checks.empty())
      return;

    MLIRContext *ctx = &getContext();
    IRRewriter rewriter(ctx);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
    SymbolTableCollection symbols;
    auto declare = [&](StringRef name, ArrayRef<Type> args, Type result) {
      return LLVM::lookupOrCreateFn(rewriter, module, name, args, result,
                                    /*isVarArg=*/false, /*isReserved=*/false,
                                    &symbols);
    };
    FailureOr<LLVM::LLVMFuncOp> write =
        declare("write", {i32, ptr, i64}, i64);
    FailureOr<LLVM::LLVMFuncOp> exit =
        declare("_exit", {i32}, LLVM::LLVMVoidType::get(ctx));
    if (failed(write) || failed(exit)) {
      module.emitError("a function named 'write' or '_exit' has another type "
                       "than libc's: cannot report the step's failed checks");
      return signalPassFailure();
    }

    // One constant per distinct message, the line it writes.
    llvm::StringMap<LLVM::GlobalOp> messages;
    auto message = [&](Location loc, StringRef text) {
      std::string line =
          ("error: the compiled step failed a check: " + text + "\n").str();
      LLVM::GlobalOp &global = messages[line];
      if (!global) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(module.getBody());
        auto type = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8),
                                             line.size());
        global = LLVM::GlobalOp::create(
            rewriter, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
            "amp_check_message_" + std::to_string(messages.size() - 1),
            rewriter.getStringAttr(line), /*alignment=*/0);
        symbols.getSymbolTable(module).insert(global);
      }
      return global;
    };

    for (cf::AssertOp check : checks) {
      Location loc = check.getLoc();
      LLVM::GlobalOp text = message(loc, check.getMsg());
      Block *before = check->getBlock();
      Block *after = rewriter.splitBlock(before, check->getIterator());
      Block *failed = rewriter.createBlock(after);
      Value address = LLVM::AddressOfOp::create(rewriter, loc, text);
      Value stderrFd = LLVM::ConstantOp::create(rewriter, loc, i32, 2);
      Value length = LLVM::ConstantOp::create(
          rewriter, loc, i64, cast<LLVM::LLVMArrayType>(text.getType())
                                  .getNumElements());
      LLVM::CallOp::create(rewriter, loc, *write,
                           ValueRange{stderrFd, address, length});
      Value status = LLVM::ConstantOp::create(rewriter, loc, i32, 3);
      LLVM::CallOp::create(rewriter, loc, *exit, ValueRange{status});
      LLVM::UnreachableOp::create(rewriter, loc);
      rewriter.setInsertionPointToEnd(before);
      LLVM::CondBrOp::create(rewriter, loc, check.getArg(), after, failed);
      rewriter.eraseOp(check);
    }
  }
};
} // namespace
