//===- FrontendFuzzer.cpp - Fuzz the .neo frontend ------------------------===//
//
// Input: a .neo program. Lexes, parses, checks and imports it (the importer
// verifies the module). Findings: crashes, hangs, leaks; an error without a
// location; a module that imports but does not verify or round-trip; a
// verifier error that the frontend should have diagnosed itself.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Frontend/Import.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

using namespace mlir;

/// Verifier errors that the importer relies on the verifier for (a read that
/// is never in bounds is found by the op's interval analysis); any other
/// verifier error means Sema let a bad program through.
static bool isExpectedVerifierError(llvm::StringRef message) {
  return message.contains("is never in bounds");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Programs longer than this only repeat what shorter ones exercise.
  if (size > 4096)
    return 0;
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry;
    neo::registerFrontendDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  OwningOpRef<ModuleOp> module = neo::importNeoString(input, &context, "fuzz.neo");
  diagnostics.requireLocations(input);
  if (!module) {
    if (diagnostics.errors().empty())
      neo_fuzz::fuzzAbort("the import failed without an error", input);
    for (const std::string &error : diagnostics.errors())
      if (llvm::StringRef(error).contains("' op ") && !isExpectedVerifierError(error))
        neo_fuzz::fuzzAbort("the frontend produced IR that the verifier rejects: " + error, input);
    return 0;
  }
  if (!diagnostics.errors().empty())
    neo_fuzz::fuzzAbort("the import succeeded with errors: " + diagnostics.errors()[0], input);
  neo_fuzz::requireValid(*module, "the import", input);
  neo_fuzz::requireRoundTrip(*module, &context, input);
  return 0;
}
