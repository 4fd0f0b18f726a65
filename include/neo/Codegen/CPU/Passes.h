//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
//
// neo-select-schedules, neo-tile, neo-vectorize and neo-fuse-elementwise:
// the passes that turn linalg ops (on tensors or buffers) into packed GEMM
// kernels, threaded and vectorized loops for the CPU; neo-outline-kernels,
// which gives the loop nests of large functions functions of their own; and
// neo-math-to-libm, accurate libm calls for the math ops that upstream
// lowers poorly. They never see a neo op (only the neo dialect's schedule
// attributes).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_CPU_PASSES_H
#define NEO_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir {
namespace arith { class ArithDialect; }
namespace linalg { class LinalgDialect; }
namespace LLVM {
class LLVMDialect;
}
namespace math { class MathDialect; }
namespace memref { class MemRefDialect; }
namespace omp {
class OpenMPDialect;
}
namespace scf { class SCFDialect; }
namespace vector { class VectorDialect; }

namespace neo {
class NeoDialect;
namespace tuning {
class RecordSet;
} // namespace tuning

#define GEN_PASS_DECL
#include "neo/Codegen/CPU/Passes.h.inc"

/// neo-select-schedules with tuning records held in memory (e.g. the
/// candidate that neo-tune measures) instead of a `records=` file: the
/// records for `options.target` (default: the records target of
/// `options.cpu`) are validated like a file's and take precedence over
/// `options.records`; a non-empty set with no record for that target is an
/// error.
std::unique_ptr<Pass> createNeoSelectSchedules(const NeoSelectSchedulesOptions &options,
                                               std::shared_ptr<const tuning::RecordSet> records);

#define GEN_PASS_REGISTRATION
#include "neo/Codegen/CPU/Passes.h.inc"

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_CPU_PASSES_H
