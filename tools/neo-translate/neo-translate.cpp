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
#include "../common/SizeOption.h"

#include "neo/Frontend/Import.h"

#include "mlir/Support/LogicalResult.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/Support/CommandLine.h"

static llvm::cl::opt<unsigned> maxExpressionDepth(
    "max-expression-depth",
    llvm::cl::desc("Deepest nesting of a .neo expression (parentheses, calls, indices, "
                   "reductions, unary operators); chains like a + b + c do not nest"),
    llvm::cl::init(mlir::neo::ImportOptions().maxExpressionDepth));
static llvm::cl::opt<unsigned>
    maxStatementsPerFunction("max-statements-per-function",
                             llvm::cl::desc("Most statements in one .neo function"),
                             llvm::cl::init(mlir::neo::ImportOptions().maxStatementsPerFunction));

static neo_tools::SizeList sizes("size", llvm::cl::CommaSeparated,
                                 llvm::cl::value_desc("NAME=VALUE"),
                                 llvm::cl::desc(neo_tools::kSizeOptionHelp));

int main(int argc, char **argv) {
  neo_tools::AtomicOutput output(argc, argv);
  if (output.failedSetup())
    return output.finish(false);
  mlir::neo::registerNeoImportTranslation([] {
    mlir::neo::ImportOptions options;
    options.maxExpressionDepth = maxExpressionDepth;
    options.maxStatementsPerFunction = maxStatementsPerFunction;
    neo_tools::applySizes(sizes, options);
    return options;
  });
  return output.finish(mlir::succeeded(
      mlir::mlirTranslateMain(output.argc(), output.argv(), "Neo translation driver\n")));
}
