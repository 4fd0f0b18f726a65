//===- ImportCheck.cpp - The frontend fuzzers' checks of an import --------===//
#include "ImportCheck.h"

#include "neo/Frontend/Import.h"

using namespace mlir;

/// Verifier errors that the importer relies on the verifier for (a read that
/// is never in bounds is found by the op's interval analysis); any other
/// verifier error means Sema let a bad program through.
static bool isExpectedVerifierError(llvm::StringRef message) {
  return message.contains("is never in bounds");
}

OwningOpRef<ModuleOp> neo_fuzz::importChecked(llvm::StringRef source, MLIRContext *context,
                                              const DiagnosticCollector &diagnostics,
                                              llvm::StringRef input) {
  size_t before = diagnostics.errors().size();
  OwningOpRef<ModuleOp> module = neo::importNeoString(source, context, "fuzz.neo");
  diagnostics.requireLocations(input);
  llvm::ArrayRef<std::string> errors = llvm::ArrayRef(diagnostics.errors()).drop_front(before);
  if (!module) {
    if (errors.empty())
      fuzzAbort("the import failed without an error", input);
    for (const std::string &error : errors)
      if (llvm::StringRef(error).contains("' op ") && !isExpectedVerifierError(error))
        fuzzAbort("the frontend produced IR that the verifier rejects: " + error, input);
    return nullptr;
  }
  if (!errors.empty())
    fuzzAbort("the import succeeded with errors: " + errors[0], input);
  requireValid(*module, "the import", input);
  requireRoundTrip(*module, context, input);
  return module;
}
