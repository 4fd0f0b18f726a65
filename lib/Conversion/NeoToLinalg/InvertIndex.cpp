//===- InvertIndex.cpp - neo.invert_index as loops on tensors -------------===//
//
// The counting sort of neo.invert_index:
//
//   counts[v + 1] += 1            for each kept position e with value v
//   offsets = prefix sum of counts
//   positions[cursor[v]++] = e    for each kept e, in increasing order
//
// "Kept" positions are all of [0, N) or, with segments, those of the clamped
// segments [lo_i, hi_i) (lo_i = clamp(seg[i], hi_{i-1}, N), hi_i =
// clamp(seg[i + 1], lo_i, N)), and only those whose value lies in [0, J).
// Every index the loops use is in range by construction, whatever the data.
//
//===----------------------------------------------------------------------===//
#include "InvertIndex.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::neo;

namespace {

struct Lowering {
  RewriterBase &b;
  InvertIndexOp op;
  Location loc;
  int64_t n, extent;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  Value zeros(Value like) {
    auto type = cast<RankedTensorType>(like.getType());
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value zero = arith::ConstantOp::create(b, loc, b.getIntegerAttr(type.getElementType(), 0));
    return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  }

  /// Element `i` of the integer tensor `t` as an index.
  Value load(OpBuilder &at, Value t, Value i) {
    Value v = tensor::ExtractOp::create(at, loc, t, i);
    return arith::IndexCastOp::create(at, loc, at.getIndexType(), v);
  }

  /// `t[i] = v` (v an index) in `t`'s element type.
  Value store(OpBuilder &at, Value t, Value i, Value v) {
    Type elem = cast<RankedTensorType>(t.getType()).getElementType();
    Value cast = arith::IndexCastOp::create(at, loc, elem, v);
    return tensor::InsertOp::create(at, loc, cast, t, i);
  }

  /// Calls `body(builder, e, owner, value, carried)` for each kept position e
  /// in increasing order (owner: its segment, or 0), threading the tensors
  /// `carried` through; `body` returns their new values. Returns the last.
  SmallVector<Value> forEachPosition(
      ValueRange carried,
      function_ref<SmallVector<Value>(OpBuilder &, Value, Value, Value, ValueRange)> body) {
    Value zero = index(0), one = index(1), end = index(n);
    // Only positions whose value lies in [0, J) are kept.
    // Without values, the value is the position (always kept: J = N).
    auto visit = [&](OpBuilder &at, Value e, Value owner, ValueRange state) {
      if (!op.getValues())
        return body(at, e, owner, e, state);
      Value v = load(at, op.getValues(), e);
      Value inRange = arith::AndIOp::create(
          at, loc, arith::CmpIOp::create(at, loc, arith::CmpIPredicate::sge, v, index(0)),
          arith::CmpIOp::create(at, loc, arith::CmpIPredicate::slt, v, index(extent)));
      auto branch = scf::IfOp::create(
          at, loc, inRange,
          [&](OpBuilder &then, Location) {
            scf::YieldOp::create(then, loc, body(then, e, owner, v, state));
          },
          [&](OpBuilder &otherwise, Location) { scf::YieldOp::create(otherwise, loc, state); });
      return SmallVector<Value>(branch.getResults());
    };
    if (!op.getSegments()) {
      auto loop = scf::ForOp::create(b, loc, zero, end, one, carried,
                                     [&](OpBuilder &at, Location, Value e, ValueRange state) {
                                       scf::YieldOp::create(at, loc, visit(at, e, zero, state));
                                     });
      return SmallVector<Value>(loop.getResults());
    }
    Value segments = op.getSegments();
    int64_t numSegments = cast<RankedTensorType>(segments.getType()).getDimSize(0) - 1;
    SmallVector<Value> init{zero}; // the end of the previous segment
    llvm::append_range(init, carried);
    auto rows = scf::ForOp::create(b, loc, zero, index(std::max<int64_t>(numSegments, 0)), one,
                                   init, [&](OpBuilder &at, Location, Value i, ValueRange state) {
                                     auto clamp = [&](Value v, Value lo) {
                                       Value up = arith::MinSIOp::create(at, loc, v, end);
                                       return arith::MaxSIOp::create(at, loc, up, lo).getResult();
                                     };
                                     Value lo = clamp(load(at, segments, i), state[0]);
                                     Value next = arith::AddIOp::create(at, loc, i, one);
                                     Value hi = clamp(load(at, segments, next), lo);
                                     auto inner = scf::ForOp::create(
                                         at, loc, lo, hi, one, state.drop_front(),
                                         [&](OpBuilder &in, Location, Value e, ValueRange s) {
                                           scf::YieldOp::create(in, loc, visit(in, e, i, s));
                                         });
                                     SmallVector<Value> results{hi};
                                     llvm::append_range(results, inner.getResults());
                                     scf::YieldOp::create(at, loc, results);
                                   });
    return SmallVector<Value>(rows.getResults().drop_front());
  }

  void run() {
    b.setInsertionPoint(op);
    Value one = index(1);
    // Counts at v + 1.
    Value counts = forEachPosition(
        {zeros(op.getOffsets())},
        [&](OpBuilder &at, Value, Value, Value v, ValueRange state) -> SmallVector<Value> {
          Value slot = arith::AddIOp::create(at, loc, v, one);
          Value c = arith::AddIOp::create(at, loc, load(at, state[0], slot), one);
          return {store(at, state[0], slot, c)};
        })[0];
    // The prefix sum.
    auto scan = scf::ForOp::create(
        b, loc, index(0), index(extent + 1), one, ValueRange{counts, index(0)},
        [&](OpBuilder &at, Location, Value v, ValueRange state) {
          Value sum = arith::AddIOp::create(at, loc, state[1], load(at, state[0], v));
          scf::YieldOp::create(at, loc, ValueRange{store(at, state[0], v, sum), sum});
        });
    Value offsets = scan.getResult(0);
    // Placement: cursor[v] starts at offsets[v].
    SmallVector<Value> init{offsets, zeros(op.getPositions())};
    if (op.getOwners())
      init.push_back(zeros(op.getOwners()));
    SmallVector<Value> placed = forEachPosition(
        init,
        [&](OpBuilder &at, Value e, Value owner, Value v, ValueRange state) -> SmallVector<Value> {
          Value slot = load(at, state[0], v);
          SmallVector<Value> next{store(at, state[0], v, arith::AddIOp::create(at, loc, slot, one)),
                                  store(at, state[1], slot, e)};
          if (state.size() > 2)
            next.push_back(store(at, state[2], slot, owner));
          return next;
        });
    SmallVector<Value> results{offsets, placed[1]};
    if (op.getOwners())
      results.push_back(placed[2]);
    b.replaceOp(op, results);
  }
};

} // namespace

void mlir::neo::detail::convertInvertIndex(RewriterBase &rewriter, InvertIndexOp op) {
  Lowering{rewriter, op, op.getLoc(), op.getNumPositions(), op.getExtent()}.run();
}
