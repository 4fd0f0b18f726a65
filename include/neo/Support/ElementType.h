//===- ElementType.h - The element types of Neo tensors ---------*- C++ -*-===//
//
// The one element-type enum of the runtime, free of LLVM: host tensors
// (neo/Runtime/Execution/Tensor.h), .npy arrays (NpyFormat.h), bundle
// buffers (BundleManifest.h) and the tools all use it. The C API mirrors it
// as `NeoElementType` (converted in one place, lib/CAPI). I32 and I64 are
// index tensors: function inputs only (no op produces them); .npy holds them,
// the GPU bundle format does not.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_ELEMENTTYPE_H
#define NEO_SUPPORT_ELEMENTTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mlir {
namespace neo {

enum class ElementType { F16, BF16, F32, F64, I32, I64 };

/// Every element type, in enum order.
constexpr ElementType kAllElementTypes[] = {ElementType::F16, ElementType::BF16,
                                            ElementType::F32, ElementType::F64,
                                            ElementType::I32, ElementType::I64};

/// "f16", "bf16", "f32", "f64", "i32" or "i64".
constexpr const char *getElementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F16: return "f16";
  case ElementType::BF16: return "bf16";
  case ElementType::F32: return "f32";
  case ElementType::F64: return "f64";
  case ElementType::I32: return "i32";
  case ElementType::I64: return "i64";
  }
  return "?";
}

/// The element type named `name` ("f32", ...), if any.
inline std::optional<ElementType> parseElementType(std::string_view name) {
  for (ElementType t : kAllElementTypes)
    if (name == getElementTypeName(t))
      return t;
  return std::nullopt;
}

/// 2, 2, 4, 8, 4 or 8.
constexpr size_t getElementTypeSize(ElementType type) {
  switch (type) {
  case ElementType::F16:
  case ElementType::BF16: return 2;
  case ElementType::F32:
  case ElementType::I32: return 4;
  case ElementType::F64:
  case ElementType::I64: return 8;
  }
  return 4;
}

constexpr bool isFloatElementType(ElementType type) {
  return type != ElementType::I32 && type != ElementType::I64;
}

/// Element `i` of a dense buffer of `type`, as a double (exact for the float
/// types; integers beyond 2^53 round).
double loadElement(ElementType type, const void *data, size_t i);
/// Stores `value` into element `i`: floats round to nearest even (overflow
/// gives infinity); integers round to nearest and saturate (NaN gives 0).
void storeElement(ElementType type, void *data, size_t i, double value);
/// The bits of `value` stored as `type`, zero-extended.
uint64_t encodeElement(ElementType type, double value);

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_ELEMENTTYPE_H
