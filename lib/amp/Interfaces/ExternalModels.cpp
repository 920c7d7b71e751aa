//===- ExternalModels.cpp - every default AmpPolicyOpInterface model ------===//

#include "amp/Interfaces/ExternalModels.h"

void mlir::amp::registerAllExternalModels(DialectRegistry &registry) {
  registerTosaExternalModels(registry);
  registerLinalgExternalModels(registry);
  registerArithMathExternalModels(registry);
  registerTensorExternalModels(registry);
}
