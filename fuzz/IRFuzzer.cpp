//===- IRFuzzer.cpp - Fuzz the neo dialect's parser and verifiers ---------===//
//
// Input: MLIR text with neo, func, arith and math ops. Parses and verifies it;
// a valid module must print and parse back (custom and generic forms), and
// canonicalization and CSE (the neo folds and patterns) must keep it valid.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  const DialectRegistry &registry = neo_fuzz::registryOnce(neo::registerNeoDialects);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  ParserConfig config(&context);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(neo_fuzz::nulTerminated(input), config, "fuzz.mlir");
  if (!module) {
    if (diagnostics.errors().empty())
      neo_fuzz::fuzzAbort("parsing failed without an error", input);
    diagnostics.requireLocations(input);
    return 0;
  }
  neo_fuzz::requireRoundTrip(*module, &context, input);

  PassManager pm(&context);
  pm.enableVerifier(false);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (failed(pm.run(*module)))
    return 0;
  neo_fuzz::requireValid(*module, "canonicalize and cse", input);
  neo_fuzz::requireRoundTrip(*module, &context, input);
  return 0;
}
