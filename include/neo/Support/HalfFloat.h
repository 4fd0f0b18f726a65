//===- HalfFloat.h - float16 and bfloat16 conversions without LLVM -*- C++ -*-===//
//
// Conversions between double and the 16-bit float formats (IEEE binary16 and
// bfloat16) for the LLVM-free runtime code, which cannot use llvm::APFloat:
// decoding is exact; encoding rounds to nearest, ties to even, in one step
// from double (no double rounding through float), overflows to infinity and
// maps NaN to a quiet NaN of the same sign. The results are those of APFloat.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_SUPPORT_HALFFLOAT_H
#define NEO_SUPPORT_HALFFLOAT_H

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace mlir {
namespace neo {
namespace detail {

/// Encodes `v` in a binary format of 1 sign bit, `expBits` exponent bits and
/// `mantBits` stored mantissa bits (at most 16 bits in all).
inline uint16_t encodeSmallFloat(double v, int expBits, int mantBits) {
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t expMask = ((1u << expBits) - 1) << mantBits;
  const uint32_t sign = std::signbit(v) ? 1u << (expBits + mantBits) : 0u;
  if (std::isnan(v))
    return static_cast<uint16_t>(sign | expMask | (1u << (mantBits - 1)));
  double a = std::fabs(v);
  if (std::isinf(a))
    return static_cast<uint16_t>(sign | expMask);
  if (a == 0)
    return static_cast<uint16_t>(sign);
  int e;
  (void)std::frexp(a, &e); // a = m * 2^e with m in [0.5, 1)
  // The unbiased exponent of a's binade; subnormals share the smallest one.
  int exponent = std::max(e - 1, 1 - bias);
  double quantum = std::ldexp(1.0, exponent - mantBits);
  // Exact scaling by a power of two, then rounding to an integer: ties to
  // even in the default rounding mode.
  double q = std::nearbyint(a / quantum);
  if (q >= std::ldexp(1.0, mantBits + 1)) { // rounding carried into the next binade
    q /= 2;
    exponent += 1;
  }
  if (exponent > bias)
    return static_cast<uint16_t>(sign | expMask); // overflow
  uint32_t mant = static_cast<uint32_t>(q);
  if (mant < (1u << mantBits)) // subnormal
    return static_cast<uint16_t>(sign | mant);
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exponent + bias) << mantBits) |
                               (mant - (1u << mantBits)));
}

inline double decodeSmallFloat(uint16_t bits, int expBits, int mantBits) {
  const int bias = (1 << (expBits - 1)) - 1;
  const uint32_t expField = (bits >> mantBits) & ((1u << expBits) - 1);
  const uint32_t mant = bits & ((1u << mantBits) - 1);
  const bool negative = (bits >> (expBits + mantBits)) & 1;
  double magnitude;
  if (expField == (1u << expBits) - 1)
    magnitude = mant ? std::nan("") : INFINITY;
  else if (expField == 0)
    magnitude = std::ldexp(static_cast<double>(mant), 1 - bias - mantBits);
  else
    magnitude = std::ldexp(static_cast<double>(mant + (1u << mantBits)),
                           static_cast<int>(expField) - bias - mantBits);
  return negative ? -magnitude : magnitude;
}

} // namespace detail

/// IEEE binary16 (f16).
inline double halfToDouble(uint16_t bits) { return detail::decodeSmallFloat(bits, 5, 10); }
inline uint16_t doubleToHalf(double value) { return detail::encodeSmallFloat(value, 5, 10); }

/// bfloat16 (bf16): the upper half of a binary32.
inline double bfloat16ToDouble(uint16_t bits) { return detail::decodeSmallFloat(bits, 8, 7); }
inline uint16_t doubleToBFloat16(double value) { return detail::encodeSmallFloat(value, 8, 7); }

} // namespace neo
} // namespace mlir

#endif // NEO_SUPPORT_HALFFLOAT_H
