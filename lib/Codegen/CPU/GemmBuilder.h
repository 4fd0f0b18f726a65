//===- GemmBuilder.h - Helpers of the CPU GEMM generators -------*- C++ -*-===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_GEMMBUILDER_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_GEMMBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace neo {

struct GemmBuilder {
  OpBuilder &b;
  Location loc;
  Type elem;
  int64_t V; // vector width

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value lt(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, y);
  }
  Value le(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, x, y);
  }
  VectorType vecType() { return VectorType::get({V}, elem); }
  Value zeroVec() {
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(vecType(), b.getZeroAttr(elem)));
  }
  Value zero() { return arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)); }

  /// The outer loops of both GEMM generators, over (batch, column block):
  /// an scf.parallel when `threads` > 1 and there is more than one task,
  /// else two scf.for; `body` gets the two induction variables.
  void outerLoops(int64_t batch, int64_t numJc, int64_t threads,
                  function_ref<void(ValueRange)> body) {
    outerLoops(idx(batch), idx(numJc), threads > 1 && batch * numJc > 1, body);
  }
  /// The same over run-time counts, in parallel when `parallel`.
  void outerLoops(Value batch, Value numJc, bool parallel, function_ref<void(ValueRange)> body) {
    OpBuilder::InsertionGuard guard(b);
    if (parallel) {
      auto par = scf::ParallelOp::create(b, loc, ValueRange{idx(0), idx(0)},
                                         ValueRange{batch, numJc}, ValueRange{idx(1), idx(1)});
      b.setInsertionPointToStart(par.getBody());
      body(par.getInductionVars());
      return;
    }
    auto outer = scf::ForOp::create(b, loc, idx(0), batch, idx(1));
    b.setInsertionPointToStart(outer.getBody());
    auto inner = scf::ForOp::create(b, loc, idx(0), numJc, idx(1));
    b.setInsertionPointToStart(inner.getBody());
    body(ValueRange{outer.getInductionVar(), inner.getInductionVar()});
  }

  /// for (i = lo; i < hi; i += step) body(i)
  void loop(Value lo, Value hi, Value step, function_ref<void(Value)> body) {
    auto f = scf::ForOp::create(b, loc, lo, hi, step);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(f.getBody());
    body(f.getInductionVar());
  }

  /// The register-tile micro-kernel: loads the MR x NR tile of `target` (the
  /// vector of row r, lanes t*V.., at `at(r, t)`) into MR * NR/V accumulators,
  /// runs `acc[r][t] = fma(bcast(Ap[ib][k][r]), Bp[jb][k][t*V:], acc[r][t])`
  /// for k < kcs with the accumulators as loop-carried values (so LLVM keeps
  /// them in registers), and stores them back.
  /// With `bVector`, B's vector t of depth k is `bVector(k, t)` (B read in
  /// place) instead of Bp[jb][k][t*V:].
  /// With `zeroStart` (an i1), the accumulators start at zero where it holds
  /// instead of loading the tile (a C that is zeros on entry).
  void microKernel(Value target, function_ref<SmallVector<Value>(int64_t, int64_t)> at, Value Ap,
                   Value Bp, Value ib, Value jb, Value kcs, int64_t MR, int64_t NV,
                   Value zeroStart = Value(),
                   function_ref<Value(Value, int64_t)> bVector = nullptr) {
    auto loadTile = [&]() {
      SmallVector<Value> tile;
      for (int64_t r = 0; r < MR; ++r)
        for (int64_t t = 0; t < NV; ++t)
          tile.push_back(vector::LoadOp::create(b, loc, vecType(), target, at(r, t)));
      return tile;
    };
    SmallVector<Value> accs;
    if (!zeroStart) {
      accs = loadTile();
    } else {
      auto start = scf::IfOp::create(b, loc, SmallVector<Type>(MR * NV, vecType()), zeroStart,
                                     /*withElseRegion=*/true);
      OpBuilder::InsertionGuard sg(b);
      b.setInsertionPointToStart(&start.getThenRegion().front());
      scf::YieldOp::create(b, loc, SmallVector<Value>(MR * NV, zeroVec()));
      b.setInsertionPointToStart(&start.getElseRegion().front());
      scf::YieldOp::create(b, loc, loadTile());
      accs.assign(start.getResults().begin(), start.getResults().end());
    }
    auto kLoop = scf::ForOp::create(b, loc, idx(0), kcs, idx(1), accs);
    {
      OpBuilder::InsertionGuard kg(b);
      b.setInsertionPointToStart(kLoop.getBody());
      Value k = kLoop.getInductionVar();
      ValueRange acc = kLoop.getRegionIterArgs();
      SmallVector<Value> bv, next;
      for (int64_t t = 0; t < NV; ++t)
        bv.push_back(
            bVector ? bVector(k, t)
                    : vector::LoadOp::create(b, loc, vecType(), Bp, ValueRange{jb, k, idx(t * V)})
                          .getResult());
      for (int64_t r = 0; r < MR; ++r) {
        Value a = memref::LoadOp::create(b, loc, Ap, ValueRange{ib, k, idx(r)});
        Value x = vector::BroadcastOp::create(b, loc, vecType(), a);
        for (int64_t t = 0; t < NV; ++t)
          next.push_back(vector::FMAOp::create(b, loc, x, bv[t], acc[r * NV + t]));
      }
      scf::YieldOp::create(b, loc, next);
    }
    for (int64_t r = 0; r < MR; ++r)
      for (int64_t t = 0; t < NV; ++t)
        vector::StoreOp::create(b, loc, kLoop.getResult(r * NV + t), target, at(r, t));
  }

  /// Transposes 8 vectors of 8 f32 (rows of an 8x8 block) in place with
  /// unpack, shuffle and 128-bit lane permutes (24 vector.shuffle ops; the
  /// AVX sequence, but portable).
  void transpose8x8(MutableArrayRef<Value> vs) {
    auto shuffle = [&](Value x, Value y, ArrayRef<int64_t> mask) -> Value {
      return vector::ShuffleOp::create(b, loc, x, y, mask);
    };
    Value t[8], s[8];
    for (int i = 0; i < 4; ++i) {
      t[2 * i] = shuffle(vs[2 * i], vs[2 * i + 1], {0, 8, 1, 9, 4, 12, 5, 13});
      t[2 * i + 1] = shuffle(vs[2 * i], vs[2 * i + 1], {2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int h = 0; h < 2; ++h)
      for (int i = 0; i < 2; ++i) {
        s[4 * h + 2 * i] = shuffle(t[4 * h + i], t[4 * h + i + 2], {0, 1, 8, 9, 4, 5, 12, 13});
        s[4 * h + 2 * i + 1] =
            shuffle(t[4 * h + i], t[4 * h + i + 2], {2, 3, 10, 11, 6, 7, 14, 15});
      }
    for (int i = 0; i < 4; ++i) {
      vs[i] = shuffle(s[i], s[i + 4], {0, 1, 2, 3, 8, 9, 10, 11});
      vs[i + 4] = shuffle(s[i], s[i + 4], {4, 5, 6, 7, 12, 13, 14, 15});
    }
  }

  /// Transposes n vectors of n elements (n a power of two; the rows of an
  /// n x n block) in place: log2(n) stages that swap the off-diagonal blocks
  /// of size h = n/2, n/4, .., 1 between rows i and i + h, each one two-source
  /// vector.shuffle per row (on AVX-512, 64 shuffles for 16 x 16 f32). An
  /// 8 x 8 block takes transpose8x8's unpack sequence instead: its last
  /// block-swap stage has no single AVX2 instruction (64 against 48
  /// shuffle instructions for an NT GEMM's packing with cpu=x86-64-v3).
  void transposeSquare(MutableArrayRef<Value> vs) {
    int64_t n = vs.size();
    if (n == 8)
      return transpose8x8(vs);
    for (int64_t h = n / 2; h >= 1; h /= 2)
      for (int64_t i = 0; i < n; ++i) {
        if (i & h)
          continue;
        SmallVector<int64_t> lo(n), hi(n);
        for (int64_t j = 0; j < n; ++j) {
          lo[j] = (j & h) ? n + j - h : j; // row i: its left, then row i+h's left
          hi[j] = (j & h) ? n + j : j + h; // row i+h: row i's right, then its right
        }
        Value a = vs[i], c = vs[i + h];
        vs[i] = vector::ShuffleOp::create(b, loc, a, c, lo);
        vs[i + h] = vector::ShuffleOp::create(b, loc, a, c, hi);
      }
  }

  /// A vector of V elements of `mem` at [.., col] (masked when it can cross `limit`).
  Value loadRow(Value mem, ValueRange prefix, Value col, Value limit, bool masked) {
    SmallVector<Value> indices(prefix);
    indices.push_back(col);
    if (!masked)
      return vector::LoadOp::create(b, loc, vecType(), mem, indices);
    Value n = arith::MaxSIOp::create(b, loc, sub(limit, col), idx(0));
    auto maskType = VectorType::get({V}, b.getI1Type());
    Value mask = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{n});
    return vector::MaskedLoadOp::create(b, loc, vecType(), mem, indices, mask, zeroVec());
  }
};

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_GEMMBUILDER_H
