//===- ElementType.cpp - Loading and storing elements ---------------------===//
#include "neo/Support/ElementType.h"

#include "neo/Support/HalfFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::neo;

namespace {
template <typename T> T loadAs(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> void storeAs(char *p, T v) { std::memcpy(p, &v, sizeof(T)); }

/// `value` rounded to nearest and saturated to T (NaN gives 0).
template <typename T> T toInteger(double value) {
  if (std::isnan(value))
    return 0;
  double r = std::nearbyint(value);
  if (r <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (r >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}
} // namespace

double mlir::neo::loadElement(ElementType type, const void *data, size_t i) {
  const char *p = static_cast<const char *>(data) + i * getElementTypeSize(type);
  switch (type) {
  case ElementType::F16: return halfToDouble(loadAs<uint16_t>(p));
  case ElementType::BF16: return bfloat16ToDouble(loadAs<uint16_t>(p));
  case ElementType::F32: return loadAs<float>(p);
  case ElementType::F64: return loadAs<double>(p);
  case ElementType::I32: return loadAs<int32_t>(p);
  case ElementType::I64: return static_cast<double>(loadAs<int64_t>(p));
  }
  return 0;
}

void mlir::neo::storeElement(ElementType type, void *data, size_t i, double value) {
  char *p = static_cast<char *>(data) + i * getElementTypeSize(type);
  switch (type) {
  case ElementType::F16: return storeAs<uint16_t>(p, doubleToHalf(value));
  case ElementType::BF16: return storeAs<uint16_t>(p, doubleToBFloat16(value));
  case ElementType::F32: return storeAs<float>(p, static_cast<float>(value));
  case ElementType::F64: return storeAs<double>(p, value);
  case ElementType::I32: return storeAs<int32_t>(p, toInteger<int32_t>(value));
  case ElementType::I64: return storeAs<int64_t>(p, toInteger<int64_t>(value));
  }
}

uint64_t mlir::neo::encodeElement(ElementType type, double value) {
  uint64_t bits = 0;
  storeElement(type, &bits, 0, value);
  return bits;
}
