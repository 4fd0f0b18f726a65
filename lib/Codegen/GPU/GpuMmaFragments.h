//===- GpuMmaFragments.h - ldmatrix and mma.sync m16n8k16 fragments -*- C++ -*-===//
//
// The fragment helpers that the mma.sync kernels share (the GEMM of
// GpuGemmMmaSync.cpp, the fused attention of GpuAttentionMma.cpp and the
// score tiles of GpuScoreTilesMma.cpp): the lane offsets of an
// `ldmatrix.x4` of 16-bit tiles, the split of one x4 into the two B
// fragments of its n groups of 8, m16n8k16 with f32 accumulators, and
// m16n8k8 tf32 from scalar fragment elements.
//
// Layouts (PTX ISA), lane = 4 g + t. The accumulator (vector<2x2xf32>)
// element (h, e) is row g + 8 h, column 2 t + e. m16n8k16 .f16/.bf16: the
// A fragment (vector<4x2xT>) rows are (g, 2t..), (g + 8, 2t..),
// (g, 8 + 2t..), (g + 8, 8 + 2t..): two accumulators of adjacent column
// groups of 8, in order, are one A fragment of 16 k. m16n8k8 tf32: A
// (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); B (k = t, n = g),
// (k = t + 4, n = g).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUMMAFRAGMENTS_H
#define NEO_LIB_CODEGEN_GPU_GPUMMAFRAGMENTS_H

#include "GpuKernelBuilder.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <utility>

namespace mlir {
namespace neo {
namespace gpukernel {

/// The shared-memory offsets of a lane's row address in an `ldmatrix.x4`
/// of 16-bit elements (matrix m = lane / 8 reads rows from lane % 8).
struct LdMatrixLanes {
  Value l16, hi8; // lane % 16, 8 (lane / 16)
  Value l8, mid8; // lane % 8, 8 ((lane / 8) % 2)

  static LdMatrixLanes of(KB &kb, Value lane) {
    return {kb.rem(lane, 16), kb.mul(kb.div(lane, 16), 8), kb.rem(lane, 8),
            kb.mul(kb.rem(kb.div(lane, 8), 2), 8)};
  }
  /// A 16 x 16 A fragment from rows m.. (along m) and columns k.. (along k)
  /// of a row-major [m][k] tile, not transposed.
  SmallVector<Value> a(KB &kb, Value m, Value k) const { return {kb.add(m, l16), kb.add(k, hi8)}; }
  /// Two B fragments (n groups n.., n + 8..) of 16 k from an [n][k] tile,
  /// not transposed.
  SmallVector<Value> bRowsN(KB &kb, Value n, Value k) const {
    return {kb.add(n, kb.add(l8, hi8)), kb.add(k, mid8)};
  }
  /// Two B fragments of 16 k from a [k][n] tile, transposed (.trans).
  SmallVector<Value> bRowsK(KB &kb, Value k, Value n) const {
    return {kb.add(k, l16), kb.add(n, hi8)};
  }
};

/// An `ldmatrix.x4` of a 16-bit shared tile at `indices`.
inline Value ldmatrixX4(KB &kb, Type elem, Value tile, ValueRange indices, bool transpose) {
  return nvgpu::LdMatrixOp::create(kb.b, kb.loc, VectorType::get({4, 2}, elem), tile, indices,
                                   transpose, 4);
}

/// Splits an ldmatrix.x4 result into the two B fragments of its n groups
/// of 8 (rows 0-1 and 2-3; row extracts and inserts lower to LLVM
/// aggregates where 2-D slices do not).
inline std::pair<Value, Value> splitPair(KB &kb, Value pair, Type elem) {
  Value halves[2];
  for (int64_t h = 0; h < 2; ++h) {
    Value frag = kb.zero(VectorType::get({2, 2}, elem));
    for (int64_t r = 0; r < 2; ++r)
      frag = vector::InsertOp::create(
          kb.b, kb.loc, vector::ExtractOp::create(kb.b, kb.loc, pair, 2 * h + r), frag, r);
    halves[h] = frag;
  }
  return {halves[0], halves[1]};
}

/// Element (h, e) of an accumulator fragment.
inline Value fragElement(KB &kb, Value frag, int64_t h, int64_t e) {
  return vector::ExtractOp::create(kb.b, kb.loc, frag, ArrayRef<int64_t>{h, e});
}

/// a x b + c on m16n8k16 (16-bit a and b, f32 c).
inline Value mma16816(KB &kb, Value a, Value b, Value c) {
  return nvgpu::MmaSyncOp::create(kb.b, kb.loc, a, b, c, ArrayRef<int64_t>{16, 8, 16});
}

/// a x b + c on m16n8k8 tf32, from the f32 elements of the A (4) and B (2)
/// fragments.
inline Value mmaTf32(KB &kb, ValueRange a, ValueRange b, Value c) {
  auto fragment = [&](ValueRange elems) {
    Type f32 = kb.b.getF32Type();
    auto type = VectorType::get({(int64_t)elems.size(), 1}, f32);
    return vector::FromElementsOp::create(kb.b, kb.loc, type, elems).getResult();
  };
  return nvgpu::MmaSyncOp::create(kb.b, kb.loc, fragment(a), fragment(b), c,
                                  ArrayRef<int64_t>{16, 8, 8}, /*tf32Enabled=*/true);
}

/// The A fragment of 16 k made of the f32 accumulators `lo` (columns 0-7)
/// and `hi` (8-15) given as elements [h * 2 + e] each, rounded to `elem`.
inline Value aFromAccumulators(KB &kb, Type elem, ArrayRef<Value> lo, ArrayRef<Value> hi) {
  SmallVector<Value> elems;
  for (ArrayRef<Value> group : {lo, hi})
    for (Value v : group)
      elems.push_back(arith::TruncFOp::create(kb.b, kb.loc, elem, v));
  return vector::FromElementsOp::create(kb.b, kb.loc, VectorType::get({4, 2}, elem), elems);
}

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUMMAFRAGMENTS_H
