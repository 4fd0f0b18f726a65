//===- Passes.h - Conversions out of the neo dialect ------------*- C++ -*-===//
#ifndef NEO_CONVERSION_PASSES_H
#define NEO_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith { class ArithDialect; }
namespace linalg { class LinalgDialect; }
namespace math { class MathDialect; }
namespace tensor { class TensorDialect; }

namespace neo {

#define GEN_PASS_DECL
#include "neo/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "neo/Conversion/Passes.h.inc"

/// In the block loops of row-blocked kernels (scf.forall), an op whose
/// result is inserted into the whole result writes that slice in place: its
/// single-use empty init (or the empty tensor a single-use fill fills)
/// becomes the slice. convert-neo-to-linalg does this as it lowers;
/// neo-fuse-elementwise again after its patterns give inits fresh empties.
void placeRowBlockResultsInPlace(Operation *root);

} // namespace neo
} // namespace mlir

#endif // NEO_CONVERSION_PASSES_H
