//===- my-opt.cpp - An opt tool with Neo registered -----------------------===//
//
// Your own mlir-opt: the neo dialect, Neo's passes and pipelines, the
// upstream dialects that neo-lower-to-cpu lowers through, and a pass of this
// project (my-count-neo-ops).
//
//===----------------------------------------------------------------------===//
#include "CountNeoOps.h"

#include "neo/InitAllNeo.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::neo::registerAllNeo(registry);
  mlir::neo::registerNeoCompilerDialects(registry);
  my::registerCountNeoOpsPass();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "An opt tool with Neo registered\n", registry));
}
