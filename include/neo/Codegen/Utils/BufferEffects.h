//===- BufferEffects.h - Which ops touch a buffer ---------------*- C++ -*-===//
//
// Shared by the CPU passes neo-fold-gemm-fills and neo-unroll-reductions and
// the GPU generators (fusing a GEMM's consumer, batching launches): the
// buffer a memref value views, and whether an op may read or write it.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_UTILS_BUFFEREFFECTS_H
#define NEO_CODEGEN_UTILS_BUFFEREFFECTS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace neo {

/// The buffer a memref value views (through subviews, casts, reshapes).
inline Value baseBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else
      break;
  }
  return v;
}

/// Whether `op` only orders memory accesses between the threads of a GPU
/// block (gpu.barrier, which declares no effects): it reads and writes
/// nothing itself.
inline bool isThreadBarrier(Operation *op) { return op->getName().getStringRef() == "gpu.barrier"; }

/// Whether `op` (or an op inside it) may read or write `buffer`: it uses the
/// buffer or a view of it, or it is an op whose effects are unknown.
inline bool mayTouch(Operation *op, Value buffer) {
  bool touches = false;
  op->walk([&](Operation *inner) {
    if (isa<CallOpInterface>(inner) ||
        (!isa<MemoryEffectOpInterface>(inner) &&
         !inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() && inner->getNumRegions() == 0 &&
         !isPure(inner) && !isThreadBarrier(inner))) {
      touches = true;
      return WalkResult::interrupt();
    }
    for (Value operand : inner->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) && baseBuffer(operand) == buffer) {
        touches = true;
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return touches;
}

/// Whether `op` (or an op inside it) may write or free `buffer` (reads
/// allowed): an effect on the buffer or a view of it, or unknown effects.
inline bool mayWrite(Operation *op, Value buffer) {
  bool writes = false;
  op->walk([&](Operation *inner) {
    if (auto iface = dyn_cast<MemoryEffectOpInterface>(inner)) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      iface.getEffects(effects);
      for (auto &e : effects)
        if (isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()) &&
            (!e.getValue() || baseBuffer(e.getValue()) == buffer))
          writes = true;
    } else if (!inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
               inner->getNumRegions() == 0 && !isPure(inner) && !isThreadBarrier(inner)) {
      writes = true;
    }
    return writes ? WalkResult::interrupt() : WalkResult::advance();
  });
  return writes;
}

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_UTILS_BUFFEREFFECTS_H
