//===- Outlining.h - Functions the CPU passes outline or share --*- C++ -*-===//
//
// The CPU pipeline calls functions with the bare-pointer calling convention
// (convert-func-to-llvm, use-bare-ptr-memref-call-conv): a memref argument
// is its aligned pointer only, so only memrefs whose shape and layout the
// callee knows statically can be passed. neo-outline-kernels and
// neo-outline-parallel-bodies pass such values and rebuild the rest.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_CPU_OUTLINING_H
#define NEO_LIB_CODEGEN_CPU_OUTLINING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
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

/// A private function for code moved out of its callers: internal linkage
/// (the symbol stays in its object file) and never inlined back by LLVM
/// (the point is a function that LLVM compiles once, on its own).
inline func::FuncOp createOutlinedFunction(OpBuilder &b, Location loc, StringRef name,
                                           FunctionType type) {
  auto func = func::FuncOp::create(b, loc, name, type);
  func.setPrivate();
  func->setAttr("llvm.linkage", LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
  func->setAttr("passthrough", b.getArrayAttr({b.getStringAttr("noinline")}));
  return func;
}

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_CPU_OUTLINING_H
