//===- PipelineFuzzer.cpp - Fuzz Neo's passes and pipelines ---------------===//
//
// Input: a .neo program, or MLIR text when it holds a `func.func` or starts
// with `module` (of any size; modules of more than kMaxOps ops are skipped). Runs neo-autodiff,
// then neo-eqsat-fuse, then the whole neo-lower-to-cpu pipeline down to the LLVM dialect (no code
// generation), each on the result of the previous step when that step succeeded. A pass may reject
// its input with an error; it may not crash, hang, or leave IR that does not verify (checked after
// every pass of every pipeline).
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/Frontend/Import.h"
#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace {

/// Runs `populate`'s passes on a clone of `module`; returns the clone when
/// they succeed (else the module is unchanged and null is returned).
OwningOpRef<ModuleOp> runOnClone(ModuleOp module, llvm::StringRef input,
                                 llvm::function_ref<void(PassManager &)> populate) {
  OwningOpRef<ModuleOp> clone = module.clone();
  PassManager pm(module.getContext());
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<neo_fuzz::VerifyEachPass>(input));
  populate(pm);
  if (failed(pm.run(*clone)))
    return nullptr;
  return clone;
}

} // namespace

/// The most ops (after import or parsing) that the pipelines run on.
static constexpr int64_t kMaxOps = 300;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);

  const DialectRegistry &registry = neo_fuzz::registryOnce(neo::registerNeoCompilerDialects);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  neo_fuzz::DiagnosticCollector diagnostics(&context);
  bool isMlir = input.contains("func.func") || input.ltrim().starts_with("module");
  OwningOpRef<ModuleOp> module;
  if (isMlir) {
    ParserConfig config(&context);
    module = parseSourceString<ModuleOp>(neo_fuzz::nulTerminated(input), config, "fuzz.mlir");
  } else {
    module = neo::importNeoString(input, &context, "fuzz.neo");
  }
  if (!module)
    return 0;
  // Each input runs three pipelines, whose time grows with the number of
  // ops: a bound on that (rather than on the input's bytes) keeps each run
  // short. Bigger programs are neo-frontend-fuzzer's and neo-gen-fuzzer's.
  int64_t numOps = 0;
  module->walk([&](Operation *) { ++numOps; });
  if (numOps > kMaxOps)
    return 0;

  if (auto grads =
          runOnClone(*module, input, [](PassManager &pm) { pm.addPass(neo::createNeoAutodiff()); }))
    module = std::move(grads);
  if (auto fused = runOnClone(*module, input, [](PassManager &pm) {
        neo::NeoEqSatFuseOptions options;
        options.maxNodes = 500;
        options.maxSeconds = 0.2;
        pm.addPass(neo::createNeoEqSatFuse(options));
      }))
    module = std::move(fused);
  runOnClone(*module, input, [](PassManager &pm) {
    neo::CpuPipelineOptions options;
    neo::buildNeoLowerToCpuPipeline(pm, options);
  });
  return 0;
}
