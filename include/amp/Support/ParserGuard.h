//===- ParserGuard.h - reject input the MLIR 22 parser crashes on -*- C++
//-*-===//
//
// Upstream MLIR 22's parser emits "integer value too large" for an integer
// beyond int64 in a DenseI64ArrayAttr written in a custom op syntax
// (linalg.transpose's `permutation = [...]`, linalg.reduce's and
// linalg.broadcast's `dimensions = [...]`), then crashes instead of failing;
// so it does after "expected ']'" when such a list is not closed. And its
// parser of the TOSA ops that take a bare enum keyword (tosa.clamp's
// nan_mode, tosa.resize's mode, ...) fails without a message on an
// attribute entry that does not start with a name (`{min_val = 0.0 : f32, }`):
// the tool would exit with no word of why.
// Every entry point that parses text (amp-opt, amp-train, amp-compile, the C
// API and so the Python package) runs this scan first and reports such a
// literal at its position, so one bad input never takes down the process.
//
// For what the scan does not know (another op parser that fails without a
// message), parseGuarded counts the errors the parser emits: a failure with
// none is reported at the start of the input, so no input fails unreported.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_PARSERGUARD_H
#define AMP_SUPPORT_PARSERGUARD_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::amp {

/// Scans `text` (named `sourceName` in locations) for the constructs the
/// MLIR 22 parser crashes on; emits an error at the first one (in `context`)
/// and fails, or succeeds without output.
LogicalResult checkParserInput(llvm::StringRef text, llvm::StringRef sourceName,
                               MLIRContext *context);

/// checkParserInput, then `parse` (which parses `text`, named `sourceName`,
/// in `context`, emitting its errors there). When `parse` returns null
/// without an error of its own, emits one at `sourceName`:1:1 saying so.
/// Returns the module, or null with at least one error emitted.
OwningOpRef<ModuleOp>
parseGuarded(llvm::StringRef text, llvm::StringRef sourceName,
             MLIRContext *context,
             llvm::function_ref<OwningOpRef<ModuleOp>()> parse);

} // namespace mlir::amp

#endif // AMP_SUPPORT_PARSERGUARD_H
