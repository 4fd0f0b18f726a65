//===- neo-translate.cpp - Import .neo programs ---------------------------===//
//
//   neo-translate --import-neo model.neo -o model.mlir
//
// On error the diagnostics name `file:line:col` with the offending source line,
// the exit status is non-zero and no output file is left behind.
//
//===----------------------------------------------------------------------===//
#include "neo/Frontend/Import.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::neo::registerNeoImportTranslation();
  return mlir::asMainReturnCode(
      mlir::mlirTranslateMain(argc, argv, "Neo translation driver\n"));
}
