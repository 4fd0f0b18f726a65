//===- Utils.h - linalg-level helpers shared by Neo's code generators -*- C++ -*-===//
#ifndef NEO_CODEGEN_UTILS_UTILS_H
#define NEO_CODEGEN_UTILS_UTILS_H

#include "mlir/IR/Operation.h"

namespace mlir {
namespace neo {

/// In the block loops of row-blocked kernels (scf.forall), an op whose
/// result is inserted into the whole result writes that slice in place: its
/// single-use empty init (or the empty tensor a single-use fill fills)
/// becomes the slice. convert-neo-to-linalg does this as it lowers;
/// neo-fuse-elementwise again after its patterns give inits fresh empties.
void placeRowBlockResultsInPlace(Operation *root);

/// Replaces every memref.copy under `root` by a linalg.copy, so that the GPU
/// passes schedule and map copies between buffers like any other linalg op.
void convertCopiesToLinalg(Operation *root);

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_UTILS_UTILS_H
