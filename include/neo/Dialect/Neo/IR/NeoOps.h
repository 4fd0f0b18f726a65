//===- NeoOps.h - Operations of the neo dialect -----------------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEOOPS_H
#define NEO_DIALECT_NEO_IR_NEOOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IntegerSet.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "neo/Codegen/Schedules/ScheduleRules.h"
#include "neo/Dialect/Neo/IR/NeoDialect.h"

#include <optional>

#include "neo/Dialect/Neo/IR/NeoEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "neo/Dialect/Neo/IR/NeoAttrs.h.inc"

#define GET_OP_CLASSES
#include "neo/Dialect/Neo/IR/NeoOps.h.inc"

namespace mlir {
namespace neo {

/// The most elements a tensor of a neo op may have (the frontend, the
/// verifiers and the runtime agree on it): 4 TiB of f32, and far from any
/// overflow of sizes in bytes.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;
/// The most points the iteration space of a neo.compute may have, so that
/// counting them (or FLOPs, or bytes) never overflows int64.
constexpr int64_t kMaxIterationSpacePoints = int64_t(1) << 62;

/// The number of elements of `shape`, or nullopt when it is more than `limit`
/// (or overflows int64).
std::optional<int64_t> getCheckedNumElements(ArrayRef<int64_t> shape,
                                             int64_t limit = kMaxTensorElements);

/// Row blocking (`neo.fused row_block`): whether `op` can run block by
/// block along its leading parallel dim of extent `extent` (d0 in no domain
/// and no neo.index). Returns the reason when it cannot.
std::optional<std::string> whyNotRowOp(ComputeOp op, int64_t extent);

/// Whether read `read` of `op` can take its operand block by block: every
/// index that names d0 is exactly d0 into a dim of extent `extent`; for a
/// value computed in the same kernel (`internal`), d0 is the first index and
/// only there. Returns the reason when it cannot.
std::optional<std::string> whyNotRowRead(ComputeOp op, unsigned read, int64_t extent,
                                         bool internal);

/// The row offsets of index read `j` of `op` in a row-blocked kernel: for
/// each dim of its index tensor, `c` where the index is `d0 + c`, or -1 where
/// it does not name d0. Fails with the reason when d0 appears otherwise, `c`
/// is negative, or the dim is shorter than `extent + c` (a block of rows
/// reads `rowptr[d0]` and `rowptr[d0 + 1]` from slices of its rows).
FailureOr<SmallVector<int64_t>> getRowIndexOffsets(ComputeOp op, unsigned j, int64_t extent,
                                                   std::string *why = nullptr);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_IR_NEOOPS_H
