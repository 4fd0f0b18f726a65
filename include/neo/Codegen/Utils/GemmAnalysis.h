//===- GemmAnalysis.h - Contractions seen as (batched) GEMMs ----*- C++ -*-===//
//
// The analysis that the CPU and GPU GEMM generators, the schedule selection
// and tuning records share: a linalg contraction on static memrefs whose
// operands are indexed by permutations of collapsible batch/m/n/k dims.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_UTILS_GEMMANALYSIS_H
#define NEO_CODEGEN_UTILS_GEMMANALYSIS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace neo {

/// The shape of a contraction as the GEMM generators see it.
struct GemmProblem {
  std::string elementType;   // f32, f64
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t vectorWidth = 16;
  std::string layout;        // operands' roles in index order, e.g. "mk,kn,mn"
  /// Which of the op's inputs plays A (the other plays B; C is the init).
  unsigned aInput = 0;
  /// Element strides of each role (batch, m, n, k) in A, B and C as the op's
  /// memrefs lay them out (0 where an operand lacks the role).
  int64_t strides[3][4] = {{0}};
  /// Element types of A (and B) and C: "f16" inputs may accumulate into "f32".
  std::string inputType;
  /// The key of tuning records: "gemm f32 batch=1 m=1024 n=1024 k=1024 layout=mk,kn,mn".
  std::string key() const;
};

/// Where each contraction role (batch, m, n, k) sits in an operand's indices.
struct GemmOperandLayout {
  Value mem;
  MemRefType type;
  SmallVector<int, 4> roleOfResult; // per index: 0 batch, 1 m, 2 n, 3 k
  int lastRole() const { return roleOfResult.back(); }
  SmallVector<Value> indices(Value batch, Value m, Value n, Value k) const {
    SmallVector<Value> out;
    for (int role : roleOfResult)
      out.push_back(role == 0 ? batch : role == 1 ? m : role == 2 ? n : k);
    return out;
  }
};

/// A contraction's problem and, for A, B and C (in that order), where each
/// role sits in the (collapsed) operand.
struct GemmAnalysis {
  GemmProblem problem;
  SmallVector<GemmOperandLayout, 3> layouts;
};

/// Analyzes `op` (any linalg op on static memrefs whose body is a
/// multiply-accumulate); with `collapse`, also creates the collapse_shape ops
/// that merge each role's dims into one index (layouts then hold them).
/// With `allowDynamic`, memrefs of dynamic sizes and strides (but unit
/// innermost stride) are accepted where each role is one index of each
/// operand (no collapsing): the problem's batch, m, n and k are then
/// ShapedType::kDynamic where unknown, and so are the unknown strides (the
/// routines of neo-share-gemms).
FailureOr<GemmAnalysis> analyzeGemmOperands(linalg::LinalgOp op, RewriterBase *collapse,
                                            bool allowDynamic = false);
/// The problem alone (creates nothing).
FailureOr<GemmProblem> analyzeGemm(linalg::LinalgOp op);

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_UTILS_GEMMANALYSIS_H
