//===- Generic.h - One neo.compute (or several) as a linalg.generic -*- C++ -*-===//
#ifndef NEO_LIB_CONVERSION_NEOTOLINALG_GENERIC_H
#define NEO_LIB_CONVERSION_NEOTOLINALG_GENERIC_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <utility>

namespace mlir {
namespace neo {
namespace detail {

/// A box of an op's iteration space, [offsets[d], offsets[d] + sizes[d]) in
/// each dim (parallel dims first, then reduction dims), and the tensors its
/// generic accumulates into: one per member, of the box's parallel shape
/// (a slice of the result, already holding the identity or the sums of
/// earlier boxes).
struct GenericBox {
  SmallVector<int64_t> offsets, sizes;
  SmallVector<Value> inits;
};

/// One linalg.generic computing `members` (ops with one iteration space,
/// kind and domain, in terms of `operands` values): each member is an output.
/// `operandOf` maps a member's input value to the value the generic reads
/// (a fused op's block argument to the fused op's operand). With `box`, the
/// generic computes that box of a single op's space (no index reads): reads
/// and domain constraints that hold on the whole box are not checked.
SmallVector<Value> buildGeneric(RewriterBase &rewriter, ArrayRef<ComputeOp> members,
                                function_ref<Value(Value)> operandOf,
                                const GenericBox *box = nullptr, bool sliceReads = true);

/// The domain constraints of `op` (expression, is-equality), in terms of the
/// box's dims, without those that hold on all of the box (all of them when
/// there is no box).
SmallVector<std::pair<AffineExpr, bool>> getBoxDomain(ComputeOp op, std::optional<GenericBox> box);

/// For a read of `input` at `map`, in bounds on `box` (where it reads at
/// `inBox`): the operand and map a generic over the box reads it with. The
/// tensor dims that `map` indexes by a bare dim are sliced to the box's range
/// of that dim (so that linalg infers the box's extent from them); the other
/// results are `inBox`'s.
std::pair<Value, AffineMap> sliceForBox(OpBuilder &b, Location loc, Value input, AffineMap map,
                                        AffineMap inBox, const GenericBox &box);

/// For an op whose reads leave their operands (or whose domain excludes
/// points) only near the ends of some dims, as a convolution's padded window
/// does: its result computed by one generic per box of a split of those dims
/// into the interior, where nothing is checked, and the borders (inserted
/// before `op`); null for other ops.
Value lowerWithBorderSplit(RewriterBase &rewriter, ComputeOp op);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CONVERSION_NEOTOLINALG_GENERIC_H
