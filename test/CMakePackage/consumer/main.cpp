// A compiler that embeds amp-mlir: parses a TOSA function, runs the AMP
// pipeline built with the C++ API (bf16), and prints the result.
#include "amp/InitAll.h"
#include "amp/Pipelines/Pipelines.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

static const char *kInput = R"mlir(
func.func @step(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>) -> tensor<1x4x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.exp %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %1 : tensor<1x4x2xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  mlir::amp::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kInput, &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  mlir::amp::AmpPipelineOptions options;
  options.precision = mlir::amp::Precision::bf16;
  mlir::amp::buildAmpPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 2;
  module->print(llvm::outs());
  return 0;
}
