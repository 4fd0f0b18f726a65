//===- neo-translate.cpp - Import .neo programs ---------------------------===//
//
//   neo-translate --import-neo model.neo -o model.mlir
//
// On error the diagnostics name `file:line:col` with the offending source line,
// the exit status is non-zero and no output file is left behind. `-o FILE` is
// written atomically: FILE never holds a partial output.
//
//===----------------------------------------------------------------------===//
#include "../common/AtomicOutput.h"

#include "neo/Frontend/Import.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  neo_tools::AtomicOutput output(argc, argv);
  if (output.failedSetup())
    return output.finish(false);
  mlir::neo::registerNeoImportTranslation();
  return output.finish(mlir::succeeded(
      mlir::mlirTranslateMain(output.argc(), output.argv(), "Neo translation driver\n")));
}
