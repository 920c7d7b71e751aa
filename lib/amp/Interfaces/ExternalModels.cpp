//===- ExternalModels.cpp - every default external model ----------------===//

#include "amp/Interfaces/ExternalModels.h"

void mlir::amp::registerAllExternalModels(DialectRegistry &registry) {
  registerTosaExternalModels(registry);
  registerLinalgExternalModels(registry);
  registerArithMathExternalModels(registry);
  registerTensorExternalModels(registry);
  registerGradientExternalModels(registry);
}
