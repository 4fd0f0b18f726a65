//===- Passes.h - Conversions out of the neo dialect ------------*- C++ -*-===//
#ifndef NEO_CONVERSION_PASSES_H
#define NEO_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace arith { class ArithDialect; }
namespace linalg { class LinalgDialect; }
namespace math { class MathDialect; }
namespace tensor { class TensorDialect; }
namespace vector {
class VectorDialect;
}

namespace neo {

#define GEN_PASS_DECL
#include "neo/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "neo/Conversion/Passes.h.inc"


} // namespace neo
} // namespace mlir

#endif // NEO_CONVERSION_PASSES_H
