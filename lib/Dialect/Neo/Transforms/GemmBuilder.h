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

  /// for (i = lo; i < hi; i += step) body(i)
  void loop(Value lo, Value hi, Value step, function_ref<void(Value)> body) {
    auto f = scf::ForOp::create(b, loc, lo, hi, step);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(f.getBody());
    body(f.getInductionVar());
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
