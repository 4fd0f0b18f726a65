//===- BarePointerArgs.h - What an outlined CPU function can take -*- C++ -*-===//
//
// The CPU pipeline calls functions with the bare-pointer calling convention
// (convert-func-to-llvm, use-bare-ptr-memref-call-conv): a memref argument
// is its aligned pointer only, so only memrefs whose shape and layout the
// callee knows statically can be passed. neo-outline-kernels and
// neo-outline-parallel-bodies pass such values and rebuild the rest.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_CPU_BAREPOINTERARGS_H
#define NEO_LIB_CODEGEN_CPU_BAREPOINTERARGS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace mlir {
namespace neo {

/// Whether the bare-pointer calling convention of the CPU pipeline can pass
/// `v` to a function (conservatively: memrefs only with a static shape and
/// identity layout).
inline bool passableByBarePointer(Value v) {
  auto memref = dyn_cast<MemRefType>(v.getType());
  if (!memref)
    return isa<IndexType, IntegerType, FloatType, VectorType>(v.getType());
  return memref.hasStaticShape() && memref.getLayout().isIdentity();
}

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_CPU_BAREPOINTERARGS_H
