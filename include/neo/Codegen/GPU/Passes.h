//===- Passes.h - GPU code generation passes --------------------*- C++ -*-===//
//
// neo-gpu-select-schedules (the schedule of each op, once), neo-gpu-map
// (linalg on buffers to gpu.launch kernels), neo-gpu-finalize and
// neo-gpu-merge-modules (kernel modules after outlining and NVVM lowering).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_GPU_PASSES_H
#define NEO_CODEGEN_GPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace affine { class AffineDialect; }
namespace arith { class ArithDialect; }
namespace gpu {
class GPUDialect;
class GPUModuleOp;
} // namespace gpu
namespace linalg { class LinalgDialect; }
namespace math { class MathDialect; }
namespace memref { class MemRefDialect; }
namespace scf { class SCFDialect; }
namespace vector { class VectorDialect; }

namespace neo {
class NeoDialect;

#define GEN_PASS_DECL
#include "neo/Codegen/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "neo/Codegen/GPU/Passes.h.inc"

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_GPU_PASSES_H
