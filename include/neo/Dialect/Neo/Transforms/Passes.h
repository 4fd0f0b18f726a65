//===- Passes.h - Transformations of the neo dialect ------------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_PASSES_H
#define NEO_DIALECT_NEO_TRANSFORMS_PASSES_H

#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Pass/Pass.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace affine {
class AffineDialect;
}
namespace arith { class ArithDialect; }
namespace gpu {
class GPUDialect;
class GPUModuleOp;
} // namespace gpu
namespace math { class MathDialect; }
namespace linalg { class LinalgDialect; }
namespace memref { class MemRefDialect; }
namespace scf { class SCFDialect; }
namespace vector { class VectorDialect; }

namespace neo {
class ComputeOp;

#define GEN_PASS_DECL
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"

/// Iterations and FLOPs of one op (see neo-count-flops).
struct OpCost {
  double visited = 0;   // points of the iteration box
  double valid = 0;     // points that satisfy the domain
  double flopsPerIteration = 0;
  double flops() const { return valid * flopsPerIteration; }
};
OpCost countOpCost(ComputeOp op);

/// The suffix of the check function of `f` (see neo-index-checks).
inline constexpr llvm::StringLiteral kIndexCheckSuffix = "__index_check";

/// Adds `f__index_check` for every public function of `module` that reads
/// index values and has none yet (neo-index-checks). Fails with an error at
/// an op whose index tensor is not a function argument.
LogicalResult addIndexChecks(ModuleOp module);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_TRANSFORMS_PASSES_H
