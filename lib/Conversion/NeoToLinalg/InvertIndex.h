//===- InvertIndex.h - neo.invert_index as loops on tensors -----*- C++ -*-===//
#ifndef NEO_LIB_CONVERSION_NEOTOLINALG_INVERTINDEX_H
#define NEO_LIB_CONVERSION_NEOTOLINALG_INVERTINDEX_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace neo {
namespace detail {

/// Replaces `op` by a counting sort written as scf.for loops on tensors
/// (tensor.extract / tensor.insert, bufferized in place): one pass counts the
/// kept positions per value, a prefix sum makes the offsets, and a second
/// pass places each kept position (and its segment) at its value's cursor.
/// O(N + M + J) work, sequential (the result is the same on any thread count).
void convertInvertIndex(RewriterBase &rewriter, InvertIndexOp op);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CONVERSION_NEOTOLINALG_INVERTINDEX_H
