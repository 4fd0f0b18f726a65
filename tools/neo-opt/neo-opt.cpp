//===- neo-opt.cpp - The neo optimizer driver -----------------------------===//
//
// mlir-opt with the neo dialect, Neo's passes and pipelines, and the upstream
// dialects, extensions and passes that the pipelines lower through.
//
//===----------------------------------------------------------------------===//
#include "neo/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::neo::registerNeoCompilerDialects(registry);
  mlir::registerAllPasses();
  mlir::neo::registerNeoPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Neo optimizer driver\n", registry));
}
