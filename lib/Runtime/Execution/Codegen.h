//===- Codegen.h - neo IR to a native object file ---------------*- C++ -*-===//
#ifndef NEO_LIB_RUNTIME_CODEGEN_H
#define NEO_LIB_RUNTIME_CODEGEN_H

#include "neo/Runtime/Execution/Engine.h"

#include "llvm/Support/MemoryBuffer.h"

namespace mlir {
namespace neo {
namespace runtime {
namespace codegen {

/// Prefix of the packed entry point `void __neo_packed_<f>(void **args)` that
/// calls `f(in0, ..., out0, ...)` with the data pointers in `args`.
constexpr llvm::StringLiteral kPackedPrefix = "__neo_packed_";

/// Parses `source` in a fresh context, lowers it with neo-lower-to-cpu and
/// emits an object file for the host, with a packed entry point per function
/// of `signatures`. Diagnostics become the error's message.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileToObject(llvm::StringRef source, llvm::ArrayRef<FunctionSignature> signatures,
                const EngineOptions &options);

/// The host CPU, its features and the LLVM version (part of cache keys).
const std::string &getHostDescription();

/// Makes the native target usable (idempotent, thread-safe).
void initializeNativeTarget();

} // namespace codegen
} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_RUNTIME_CODEGEN_H
