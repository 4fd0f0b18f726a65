//===- RowVectors.h - Vectors along a row of a padded read ------*- C++ -*-===//
//
// Helpers of the CPU generators that read V consecutive elements of a row
// with one vector load: a window's read x[..., q + s] (unit coefficient of
// the lane dim) and a padded read x[..., clamp(q + s - 1)] selected against
// its bounds, whose clamps and bound checks hold wherever the V lanes lie
// inside the row.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_CPU_ROWVECTORS_H
#define NEO_LIB_CODEGEN_CPU_ROWVECTORS_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir {
namespace neo {

/// The value of a constant index or integer, if `v` is one.
std::optional<int64_t> constantIndex(Value v);

/// `index` without the clamps into [0, rowLength) that a padded read puts
/// around it (min(max(e, lo), hi), lo <= 0, hi >= rowLength - 1).
Value stripClamp(Value index, int64_t rowLength);

/// An index value built from linalg.index ops, constants, addi, subi and
/// muli by constants as coefficients per loop dim and a constant.
std::optional<std::pair<llvm::SmallDenseMap<unsigned, int64_t>, int64_t>>
linearIndexForm(Value v, unsigned depth = 0);

/// Whether the i1 `cond` holds wherever every lane's `e` lies in
/// [0, rowLength), up to its parts that do not depend on the lanes (those
/// `isUniform` accepts), which are appended to `uniformParts` (their and is
/// the condition there). `cond` is an and of such parts and comparisons
/// with constants of (clamped) `e`, or of `c -/+ e` (linearIndexForm), that
/// hold in the row (a gradient's domain: `h - r + 1 >= 0`,
/// `-h + r + 54 >= 0`).
bool conditionInRow(Value cond, Value e, int64_t rowLength, function_ref<bool(Value)> isUniform,
                    SmallVectorImpl<Value> &uniformParts, unsigned depth = 0);

/// Whether the i1 `cond` (an and of parts) implies `e` in [0, rowLength):
/// it has a part `e >= c` (c >= 0; `e` possibly under a min, which keeps
/// the bound) and a part `e < c` (c <= rowLength; `e` possibly under a
/// max). A padded read's select then yields the pad value wherever `e`
/// leaves the row, whatever its clamped load reads there.
bool conditionBoundsRow(Value cond, Value e, int64_t rowLength);

/// Whether `expr` is `dim` plus terms that do not depend on it.
bool unitCoefficientOf(AffineExpr expr, unsigned dim);

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_CPU_ROWVECTORS_H
