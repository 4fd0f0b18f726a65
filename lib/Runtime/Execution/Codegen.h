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
/// of `signatures` (several objects in one object set where the code is
/// generated in parallel). Diagnostics become the error's message.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileToObject(llvm::StringRef source, llvm::ArrayRef<FunctionSignature> signatures,
                const EngineOptions &options);

/// The objects of several partitions (parallel code generation) in one
/// buffer: this magic, a little-endian u64 count, count u64 sizes, the
/// objects. The cache stores it as it stores a single object.
constexpr llvm::StringLiteral kObjectSetMagic = "NEOOBJS1";
std::unique_ptr<llvm::MemoryBuffer> packObjects(llvm::ArrayRef<llvm::SmallVector<char, 0>> objects);
/// The objects of a buffer from compileToObject: an object set's members, or
/// the buffer itself (one object). Errors for a malformed set.
llvm::Expected<std::vector<llvm::MemoryBufferRef>> unpackObjects(llvm::MemoryBufferRef buffer);

/// The host CPU, its features and the LLVM version (part of cache keys).
const std::string &getHostDescription();

/// Makes the native target usable (idempotent, thread-safe).
void initializeNativeTarget();

} // namespace codegen
} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_RUNTIME_CODEGEN_H
