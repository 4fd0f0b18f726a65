//===- IndirectLoops.h - Loop nests for data-dependent ranges ---*- C++ -*-===//
#ifndef NEO_LIB_CONVERSION_NEOTOLINALG_INDIRECTLOOPS_H
#define NEO_LIB_CONVERSION_NEOTOLINALG_INDIRECTLOOPS_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace neo {
namespace detail {

/// For an op whose domain bounds a reduction dim by index values (a CSR row
/// range) or pins a parallel dim to one (a scatter-add), the value of its
/// result computed by a loop nest that visits only the domain's points
/// (inserted before `op`); null for other ops. With `vectorize`, the result's
/// dense last dim runs on vectors where it can; without, every loop is scalar.
Value lowerIndirectLoops(RewriterBase &rewriter, ComputeOp op, bool vectorize = true);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CONVERSION_NEOTOLINALG_INDIRECTLOOPS_H
