//===- FrontendFuzzer.cpp - Fuzz the .neo frontend ------------------------===//
//
// Input: a .neo program (up to scripts/fuzz.sh's -max_len, 64 KB). Lexes,
// parses, checks and imports it (the importer verifies the module).
// Findings: crashes, hangs, leaks, stack overflows; an error without a
// location; a module that imports but does not verify or round-trip; a
// verifier error that the frontend should have diagnosed itself (see
// ImportCheck.h). neo-gen-fuzzer builds valid-ish programs from the bytes
// instead; this target is the one for malformed text.
//
//===----------------------------------------------------------------------===//
#include "ImportCheck.h"

#include "neo/Frontend/Import.h"

#include "mlir/IR/MLIRContext.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // No size cap: the frontend's own limits (shapes, extents) bound the work.
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  const DialectRegistry &registry = neo_fuzz::registryOnce(neo::registerFrontendDialects);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  (void)neo_fuzz::importChecked(input, &context, diagnostics, input);
  return 0;
}
