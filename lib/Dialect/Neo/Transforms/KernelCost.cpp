//===- KernelCost.cpp - Bytes and weighted work of neo kernels ------------===//
#include "KernelCost.h"

#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::neo;

int64_t mlir::neo::tensorBytes(Type t) {
  auto tensor = dyn_cast_or_null<RankedTensorType>(t);
  if (!tensor)
    return 0;
  return tensor.getNumElements() * std::max<int64_t>(1, tensor.getElementTypeBitWidth() / 8);
}

double mlir::neo::kernelFlops(ComputeOp op) {
  OpCost c = countOpCost(op);
  double perIteration = op.getKind() == ReductionKind::None ? 0 : 1;
  op.getBodyBlock().walk([&](Operation *inner) {
    if (isa<YieldOp, IndexOp>(inner) || inner->hasTrait<OpTrait::ConstantLike>())
      return;
    if (isa<arith::DivFOp, arith::RemFOp>(inner))
      perIteration += 4;
    else if (inner->getName().getDialectNamespace() == "math")
      perIteration += isa<math::SqrtOp, math::RsqrtOp, math::AbsFOp>(inner) ? 4 : 16;
    else
      perIteration += 1;
  });
  return c.valid * perIteration;
}
