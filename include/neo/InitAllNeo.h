//===- InitAllNeo.h - Everything an embedder registers ----------*- C++ -*-===//
//
// The one header an MLIR tool includes to get Neo (see examples/embedding and
// docs/embedding.md); link `NeoRegistration` from find_package(Neo):
//
//   mlir::DialectRegistry registry;
//   mlir::neo::registerNeoDialects(registry);   // neo, func, arith, math
//   mlir::neo::registerNeoPasses();             // neo-autodiff, neo-eqsat-fuse, ...
//   mlir::neo::registerNeoPipelines();          // neo-lower-to-cpu
//
// A tool that runs `neo-lower-to-cpu` also needs the dialects it lowers
// through: `registerNeoCompilerDialects(registry)` registers every upstream
// dialect, extension and LLVM IR translation along with Neo's.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_INITALLNEO_H
#define NEO_INITALLNEO_H

#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"

namespace mlir {
namespace neo {

/// Registers the neo dialects into `registry` and Neo's passes and pipelines
/// globally (idempotent): what `neo-opt` adds to an upstream `mlir-opt`.
inline void registerAllNeo(DialectRegistry &registry) {
  registerNeoDialects(registry);
  registerNeoPasses();
  registerNeoPipelines();
}

} // namespace neo
} // namespace mlir

#endif // NEO_INITALLNEO_H
