//===- Import.h - .neo programs to neo IR -----------------------*- C++ -*-===//
#ifndef NEO_FRONTEND_IMPORT_H
#define NEO_FRONTEND_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace mlir {
namespace neo {

/// Limits of the importer (docs/errors.md#limits). Input past a limit is an
/// error at the place that passes it, never a crash or minutes of compile
/// time. Tools expose them as --max-expression-depth and
/// --max-statements-per-function, the C API as NeoImportOptions.
struct ImportOptions {
  /// The deepest nesting of parentheses, calls, indices, reduction bodies,
  /// unary minus and `not` in one expression. Chains of one operator level
  /// (`a + b + c ...`, `a * b * c ...`, `p and q and ...`) do not nest and
  /// have no limit. The default bounds the stack the recursive parser and
  /// the walks over the tree use: 250 levels of every kind fit in 600 KB.
  unsigned maxExpressionDepth = 256;
  /// The most statements in one `def`. The backend's compile time grows
  /// faster than linearly with a function's size (measured on the 2-core
  /// machine: 16 s at 125 statements, 270 s at 1,000; docs/errors.md#limits).
  unsigned maxStatementsPerFunction = 1000;
  /// Values of the size parameters: dims written as names in a signature
  /// (`x: f32[N, 784]`). A size parameter without a value is an error at its
  /// first use; a value no signature uses is ignored.
  std::map<std::string, int64_t> sizes;
};

/// Parses a size binding list `N=64,K=32` (spaces allowed around the
/// names and values) into `sizes`; false with `error` set when it is
/// malformed (a name that is not an identifier, a value that is not a
/// positive integer, a name given twice).
bool parseSizeBindings(llvm::StringRef text, std::map<std::string, int64_t> &sizes,
                       std::string &error);

/// The signatures of the functions of a .neo buffer as JSON, without
/// importing it (no size needs a value): `[{"name": "f", "params":
/// [{"name": "x", "dtype": "f32", "shape": ["N", 784]}], "results":
/// [{"name": "y"}]}]`; a declared result type gives "dtype" and "shape".
/// Syntax errors are reported through the context's diagnostics and give
/// std::nullopt.
std::optional<std::string> neoSignaturesAsJson(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                               const ImportOptions &options = {});

/// Parses the main buffer of `sourceMgr` as a .neo program (docs/language.md)
/// and builds a module with one `func.func` of neo ops per `def`. Errors are
/// emitted through the context's diagnostic engine at `file:line:col`
/// locations; on error nothing is returned.
OwningOpRef<ModuleOp> importNeo(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                const ImportOptions &options = {});

/// Same, from a string (the buffer is named `bufferName` in locations).
OwningOpRef<ModuleOp> importNeoString(llvm::StringRef source, MLIRContext *context,
                                      llvm::StringRef bufferName = "<neo>",
                                      const ImportOptions &options = {});

/// Parses the main buffer of `sourceMgr` as a .neo program when its name ends
/// in ".neo", else as MLIR. The context must have the needed dialects.
OwningOpRef<ModuleOp> parseNeoOrMLIR(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                     const ImportOptions &options = {});

/// Opens `path` ("-" is stdin) as the main buffer of `sourceMgr` and parses
/// it with parseNeoOrMLIR. A file that cannot be opened sets `error` and
/// returns null; parse errors go through the context's diagnostics.
OwningOpRef<ModuleOp> parseNeoOrMLIRFile(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                                         MLIRContext *context, std::string &error,
                                         const ImportOptions &options = {});

/// The dialects that imported modules use.
void registerFrontendDialects(DialectRegistry &registry);

/// Registers the `--import-neo` translation (for neo-translate). The tool's
/// command-line options are read through `getOptions` when a file is
/// imported; without it the defaults apply.
void registerNeoImportTranslation(std::function<ImportOptions()> getOptions = {});

} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_IMPORT_H
