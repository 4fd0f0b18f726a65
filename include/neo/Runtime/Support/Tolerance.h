//===- Tolerance.h - Check tolerances per element type ----------*- C++ -*-===//
//
// The default tolerances of result checks (neo-run --check, neo-tune's
// verification, neo-cuda-runner --check): an element passes when
// |got - want| <= atol * max(1, max|want|) + rtol * |want|. One table, so that
// the three tools agree.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_TOLERANCE_H
#define NEO_RUNTIME_SUPPORT_TOLERANCE_H

#include "neo/Support/ElementType.h"

namespace mlir {
namespace neo {

struct Tolerance {
  double rtol = 0, atol = 0;
};

/// The default check tolerances of `type`.
constexpr Tolerance getDefaultTolerance(ElementType type) {
  switch (type) {
  case ElementType::F16: return {1e-2, 1e-2};
  case ElementType::BF16: return {3e-2, 3e-2};
  case ElementType::F32: return {1e-4, 1e-5};
  case ElementType::F64: return {1e-9, 1e-11};
  case ElementType::I32:
  case ElementType::I64: return {0, 0};
  }
  return {1e-4, 1e-5};
}

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_TOLERANCE_H
