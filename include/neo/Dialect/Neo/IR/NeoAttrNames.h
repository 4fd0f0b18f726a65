//===- NeoAttrNames.h - Names of the discardable neo attributes -*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEOATTRNAMES_H
#define NEO_DIALECT_NEO_IR_NEOATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace neo {

/// The schedule of an op (#neo.cpu_gemm<...>, ...): set by the select passes,
/// applied by neo-tile and neo-gpu-map, forwarded by convert-neo-to-linalg.
constexpr llvm::StringLiteral kScheduleAttrName = "neo.schedule";

/// On a CPU GEMM (unit): its C starts as zeros, which the GEMM writes instead
/// of adding to it (neo-fold-gemm-fills removed the zero fill before it).
constexpr llvm::StringLiteral kOverwriteAttrName = "neo.overwrite";

/// On a tiled CPU op: the vector sizes neo-tile chose, which neo-vectorize
/// vectorizes it with.
constexpr llvm::StringLiteral kVectorSizesAttrName = "neo.vector_sizes";

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_IR_NEOATTRNAMES_H
