//===- HalfFloatTest.cpp - f16/bf16 conversions against APFloat -----------===//
//
// HalfFloat.h converts without LLVM (and loadElement/storeElement of
// ElementType.h use it); llvm::APFloat is the reference. They must agree on every 16-bit pattern and on doubles near
// the rounding boundaries.
//
//===----------------------------------------------------------------------===//
#include "neo/Support/HalfFloat.h"
#include "neo/Support/ElementType.h"

#include "llvm/ADT/APFloat.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir::neo;

namespace {

const llvm::fltSemantics &semanticsOf(ElementType type) {
  return type == ElementType::F16 ? llvm::APFloat::IEEEhalf() : llvm::APFloat::BFloat();
}
double apfloatDecode(ElementType type, uint16_t bits) {
  llvm::APFloat v(semanticsOf(type), llvm::APInt(16, bits));
  bool lossy;
  v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lossy);
  return v.convertToDouble();
}
uint16_t apfloatEncode(ElementType type, double value) {
  llvm::APFloat v(value);
  bool lossy;
  v.convert(semanticsOf(type), llvm::APFloat::rmNearestTiesToEven, &lossy);
  return static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
}

/// Equal, or both NaN.
bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

} // namespace

TEST(HalfFloatTest, DecodesEveryPatternLikeAPFloat) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    ASSERT_TRUE(same(halfToDouble(bits), apfloatDecode(ElementType::F16, bits))) << b;
    ASSERT_TRUE(same(bfloat16ToDouble(bits), apfloatDecode(ElementType::BF16, bits))) << b;
    // Signed zeros keep their sign.
    ASSERT_EQ(std::signbit(halfToDouble(bits)), (b & 0x8000) != 0) << b;
    // The element loads of ElementType.h go through the same conversions.
    ASSERT_TRUE(same(loadElement(ElementType::F16, &bits, 0), halfToDouble(bits))) << b;
    ASSERT_TRUE(same(loadElement(ElementType::BF16, &bits, 0), bfloat16ToDouble(bits))) << b;
  }
}

TEST(HalfFloatTest, EncodesLikeAPFloat) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.5,
                                65504.0,
                                65519.99,
                                65520.0,
                                1e300,
                                -1e300,
                                1e-300,
                                INFINITY,
                                -INFINITY,
                                6e-8,
                                3e-8,
                                2.9e-8,
                                5.960464477539063e-08,
                                1.0 + 1.0 / 2048,
                                1.0 + 3.0 / 2048,
                                3.3895313892515355e38,
                                3.4e38,
                                1e-40,
                                1.0 / 3};
  // Every pattern's value and the midpoints between neighbours (ties), plus
  // random doubles over a wide range of magnitudes.
  for (ElementType type : {ElementType::F16, ElementType::BF16})
    for (uint32_t b = 0; b < 0x7c00; b += 7) {
      double v = apfloatDecode(type, static_cast<uint16_t>(b));
      double next = apfloatDecode(type, static_cast<uint16_t>(b + 1));
      values.push_back(v);
      values.push_back((v + next) / 2);
      values.push_back(-(v + next) / 2);
    }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-2, 2);
  std::uniform_int_distribution<int> exponent(-140, 140);
  for (int i = 0; i < 200000; ++i)
    values.push_back(std::ldexp(mantissa(rng), exponent(rng)));
  for (double v : values) {
    ASSERT_EQ(doubleToHalf(v), apfloatEncode(ElementType::F16, v)) << v;
    ASSERT_EQ(doubleToBFloat16(v), apfloatEncode(ElementType::BF16, v)) << v;
  }
  // NaN: a quiet NaN of the same sign.
  EXPECT_EQ(doubleToHalf(NAN) & 0x7e00, 0x7e00);
  EXPECT_EQ(doubleToBFloat16(-NAN) & 0xffc0, 0xffc0);
}
