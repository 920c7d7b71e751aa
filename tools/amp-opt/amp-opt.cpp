//===- amp-opt.cpp - the amp-mlir optimizer driver ------------------------===//
//
// mlir-opt for amp-mlir: the dialects of training graphs, the amp dialect and
// its external models, the amp passes and pipelines, nothing else.
//
//===----------------------------------------------------------------------===//

#include "amp/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::amp::registerAllDialects(registry);
  mlir::amp::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "amp-mlir optimizer driver\n", registry));
}
