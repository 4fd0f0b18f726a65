//===- neo-opt.cpp - The neo optimizer driver -----------------------------===//
//
// mlir-opt with the neo dialect, Neo's passes and pipelines, and the upstream
// dialects, extensions and passes that the pipelines lower through. `-o FILE`
// is written atomically: FILE never holds a partial output.
//
//===----------------------------------------------------------------------===//
#include "../common/AtomicOutput.h"

#include "neo/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  neo_tools::AtomicOutput output(argc, argv);
  if (output.failedSetup())
    return output.finish(false);
  mlir::DialectRegistry registry;
  mlir::neo::registerNeoCompilerDialects(registry);
  mlir::registerAllPasses();
  mlir::neo::registerNeoPasses();
  return output.finish(mlir::succeeded(
      mlir::MlirOptMain(output.argc(), output.argv(), "Neo optimizer driver\n", registry)));
}
