//===- Registration.h - Register Neo with an MLIR tool ----------*- C++ -*-===//
//
// Public entry points for embedders: call these from your own opt tool (see
// examples/embedding) to get the neo dialect, its passes and pipelines.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_REGISTRATION_H
#define NEO_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir {
namespace neo {

/// The neo dialect and the dialects its ops and bodies use (func, arith, math).
void registerNeoDialects(DialectRegistry &registry);

/// Neo's passes and pass pipelines (idempotent).
void registerNeoPasses();

/// Everything Neo's pipelines lower through: the neo dialects, every upstream
/// dialect and extension (bufferization and conversion interfaces), and the
/// translations to LLVM IR.
void registerNeoCompilerDialects(DialectRegistry &registry);

} // namespace neo
} // namespace mlir

#endif // NEO_REGISTRATION_H
