//===- Import.h - .neo programs to neo IR -----------------------*- C++ -*-===//
#ifndef NEO_FRONTEND_IMPORT_H
#define NEO_FRONTEND_IMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

namespace mlir {
namespace neo {

/// Parses the main buffer of `sourceMgr` as a .neo program (docs/language.md)
/// and builds a module with one `func.func` of neo ops per `def`. Errors are
/// emitted through the context's diagnostic engine at `file:line:col`
/// locations; on error nothing is returned.
OwningOpRef<ModuleOp> importNeo(llvm::SourceMgr &sourceMgr, MLIRContext *context);

/// Same, from a string (the buffer is named `bufferName` in locations).
OwningOpRef<ModuleOp> importNeoString(llvm::StringRef source, MLIRContext *context,
                                      llvm::StringRef bufferName = "<neo>");

/// Parses the main buffer of `sourceMgr` as a .neo program when its name ends
/// in ".neo", else as MLIR. The context must have the needed dialects.
OwningOpRef<ModuleOp> parseNeoOrMLIR(llvm::SourceMgr &sourceMgr, MLIRContext *context);

/// Opens `path` ("-" is stdin) as the main buffer of `sourceMgr` and parses
/// it with parseNeoOrMLIR. A file that cannot be opened sets `error` and
/// returns null; parse errors go through the context's diagnostics.
OwningOpRef<ModuleOp> parseNeoOrMLIRFile(llvm::StringRef path, llvm::SourceMgr &sourceMgr,
                                         MLIRContext *context, std::string &error);

/// The dialects that imported modules use.
void registerFrontendDialects(DialectRegistry &registry);

/// Registers the `--import-neo` translation (for neo-translate).
void registerNeoImportTranslation();

} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_IMPORT_H
