//===- CpuImplicitGemm.cpp - Convolutions and other bilinear ops as GEMMs -===//
//
// A bilinear generic (ImplicitGemm.h: convolutions forward and both
// gradients, shifted, strided, dilated and padded reads) runs as a packed,
// register-blocked GEMM whose packing routines gather the operands through
// the op's own index arithmetic (an im2col that is never materialised beyond
// one block):
//
//   parallel (batch, jc) over N in blocks of NC:          [threads]
//     for ic over M step MC:
//       Cp = 0                                  (MC x NC, tile-major)
//       for kc over K step KC:
//         pack B[kc:+KC, jc:+NC] -> Bp[NC/NR][KC][NR]   (gathered, zero-padded)
//         pack A[ic:+MC, kc:+KC] -> Ap[MC/MR][KC][MR]
//         for jr, ir: Cp tile += Ap[ir] * Bp[jr]        (the GEMM micro-kernel)
//       C[ic:+MC, jc:+NC] += Cp                 (scattered through the output map)
//
// C is read and written once per block whatever K is; the larger of M and N
// plays N so that its (costlier) packing happens once per block.
//
//===----------------------------------------------------------------------===//
#include "GemmBuilder.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Codegen/Utils/ImplicitGemm.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "RowVectors.h"
#include "SeparableReads.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
/// B read as consecutive elements along its innermost n dim `lane` (a
/// convolution's output column q reads x[n, c, p + r - 1, q + s - 1]): a
/// load whose last index is `lane` plus terms that do not depend on it
/// (clamped, and selected against its bounds, for a padded read), or an
/// operand read whose map moves with `lane` in its last result only.
struct RowRead {
  Value memref;
  /// A load: its indices (all but the last uniform along the lanes), the
  /// unclamped last one, the row length and the pad select (or null).
  SmallVector<Value> indices;
  Value last;
  int64_t rowLength = 0;
  arith::SelectOp pad;
  SmallVector<Value> padParts;  // the select's condition in the row: their and
  SmallVector<Value> condParts; // B's domain constraint in the row: their and
  /// An operand read: its map.
  AffineMap map;
  /// Whether lanes outside the row may read as the pad value (zero without
  /// a pad): the load is unclamped, or the pad's condition bounds the row.
  bool maskable = true;
};

bool unitStrideRows(Type type, int64_t &rowLength) {
  auto memref = dyn_cast<MemRefType>(type);
  SmallVector<int64_t> strides;
  int64_t offset;
  if (!memref || memref.getRank() == 0 || ShapedType::isDynamic(memref.getShape().back()) ||
      failed(memref.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return false;
  rowLength = memref.getShape().back();
  return true;
}

/// Whether body value `e` is (linalg.index lane) plus values that do not
/// depend on `lane`.
bool laneOffset(const ImplicitGemm &ig, Value e, unsigned lane, unsigned depth = 0) {
  if (depth > 16)
    return false;
  if (auto index = e.getDefiningOp<linalg::IndexOp>())
    return index.getDim() == lane;
  if (auto add = e.getDefiningOp<arith::AddIOp>()) {
    bool l = ig.dependsOn(add.getLhs(), lane), r = ig.dependsOn(add.getRhs(), lane);
    if (l == r)
      return false;
    return laneOffset(ig, l ? add.getLhs() : add.getRhs(), lane, depth + 1);
  }
  if (auto sub = e.getDefiningOp<arith::SubIOp>())
    return !ig.dependsOn(sub.getRhs(), lane) && laneOffset(ig, sub.getLhs(), lane, depth + 1);
  return false;
}

std::optional<RowRead> analyzeRowRead(const ImplicitGemm &ig, unsigned lane) {
  linalg::LinalgOp op = ig.op;
  Block *body = op.getBlock();
  RowRead read;
  Value v = ig.b;
  if (auto select = v.getDefiningOp<arith::SelectOp>();
      select && select->getBlock() == body && !ig.dependsOn(select.getFalseValue(), lane) &&
      matchPattern(select.getFalseValue(), m_Constant())) {
    read.pad = select;
    v = select.getTrueValue();
  }
  if (auto arg = dyn_cast<BlockArgument>(v);
      arg && arg.getOwner() == body && !read.pad && !(ig.cond && !ig.condOnA)) {
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    if (!op.isDpsInput(&operand) || !unitStrideRows(operand.get().getType(), read.rowLength))
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (AffineExpr e : map.getResults().drop_back())
      if (e.isFunctionOfDim(lane))
        return std::nullopt;
    if (map.getNumResults() == 0 || !unitCoefficientOf(map.getResults().back(), lane))
      return std::nullopt;
    read.memref = operand.get();
    read.map = map;
    return read;
  }
  auto load = v.getDefiningOp<memref::LoadOp>();
  if (!load || load->getBlock() != body || load.getIndices().empty() ||
      load.getMemRef().getParentBlock() == body ||
      !unitStrideRows(load.getMemRef().getType(), read.rowLength) ||
      !cast<MemRefType>(load.getMemRef().getType()).getLayout().isIdentity())
    return std::nullopt;
  for (Value index : load.getIndices().drop_back())
    if (ig.dependsOn(index, lane))
      return std::nullopt;
  read.memref = load.getMemRef();
  read.indices.assign(load.getIndices().begin(), load.getIndices().end());
  read.last = stripClamp(load.getIndices().back(), read.rowLength);
  if (!laneOffset(ig, read.last, lane))
    return std::nullopt;
  auto uniform = [&](Value c) { return !ig.dependsOn(c, lane); };
  if (read.pad &&
      !conditionInRow(read.pad.getCondition(), read.last, read.rowLength, uniform, read.padParts))
    return std::nullopt;
  // B's domain constraint (a data gradient's: the forward point in range),
  // which zeroes B where it fails.
  if (ig.cond && !ig.condOnA &&
      !conditionInRow(ig.cond, read.last, read.rowLength, uniform, read.condParts))
    return std::nullopt;
  bool clamped = read.last != load.getIndices().back();
  if (clamped)
    read.maskable =
        read.pad && conditionBoundsRow(read.pad.getCondition(), read.last, read.rowLength);
  // Lanes the domain constraint leaves out read as zero: so must the pad.
  if (read.pad && !read.condParts.empty() &&
      !matchPattern(read.pad.getFalseValue(), m_AnyZeroFloat()))
    read.maskable = false;
  return read;
}
} // namespace

FailureOr<GemmProblem> mlir::neo::analyzeCpuImplicitGemm(linalg::LinalgOp op) {
  std::optional<ImplicitGemm> g = analyzeImplicitGemm(op);
  if (!g)
    return failure();
  if (g->problem.m > g->problem.n)
    g->swapOperands();
  return g->problem;
}

LogicalResult mlir::neo::generateCpuImplicitGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                                 const GemmSchedule &s) {
  std::optional<ImplicitGemm> analysis = analyzeImplicitGemm(op);
  if (!analysis)
    return failure();
  ImplicitGemm &ig = *analysis;
  if (ig.problem.m > ig.problem.n)
    ig.swapOperands();
  Value C = op.getDpsInitOperand(0)->get();
  Type elem = cast<MemRefType>(C.getType()).getElementType();
  int64_t V = elem.isF32() ? 16 : 8;
  // C is zeros on entry (neo-fold-gemm-fills): write it instead of adding.
  bool overwrite = op->hasAttr(kOverwriteAttrName);
  if (std::string error = schedules::checkCpuGemm(s, V); !error.empty())
    return op->emitOpError("invalid cpu_gemm schedule: ") << error, failure();
  int64_t batch = ig.problem.batch, M = ig.problem.m, N = ig.problem.n, K = ig.problem.k;
  unsigned lane = ig.nDims.back();
  std::optional<RowRead> rowRead = analyzeRowRead(ig, lane);
  std::optional<SeparableRead> sep = analyzeSeparableRead(ig);
  // C's rows take vectors when its last index is the lane dim.
  int64_t cRowLength = 0;
  bool cRows = ig.ranges[lane] >= s.nr && ig.outMap.getNumResults() > 0 &&
               ig.outMap.getResults().back() == getAffineDimExpr(lane, op.getContext()) &&
               unitStrideRows(op.getDpsInitOperand(0)->get().getType(), cRowLength) &&
               cast<MemRefType>(op.getDpsInitOperand(0)->get().getType()).getLayout().isIdentity();
  int64_t MR = s.mr, NR = s.nr, NV = NR / V;
  // NR columns never lie in one row of a lane dim shorter than NR (a weight
  // gradient's s): gather them.
  if (sep && ig.ranges[lane] < NR)
    rowRead.reset();
  schedules::CpuGemmBlocks blocks = schedules::clampCpuGemmBlocks(s, batch, M, N, K);
  int64_t MC = blocks.mc, KC = blocks.kc, NC = blocks.nc, numJc = blocks.numJc;

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  GemmBuilder g{b, loc, elem, V};
  auto bpType = MemRefType::get({NC / NR, KC, NR}, elem);
  auto apType = MemRefType::get({MC / MR, KC, MR}, elem);
  auto cpType = MemRefType::get({MC / MR, NC / NR, MR, NR}, elem);

  // Tables of the loop indices of each packed row and column, filled once
  // per block, so that the packing loops gather without dividing.
  Type indexType = b.getIndexType();
  auto tableType = [&](ArrayRef<unsigned> dims, int64_t n) {
    return MemRefType::get({std::max<int64_t>(1, dims.size()), n}, indexType);
  };
  auto fillTable = [&](Value table, ArrayRef<unsigned> dims, Value start, int64_t n,
                       int64_t extent) {
    g.loop(g.idx(0), g.idx(n), g.idx(1), [&](Value i) {
      Value linear = g.min(g.add(start, i), g.idx(extent - 1));
      SmallVector<Value> ivs(ig.ranges.size(), g.idx(0));
      ig.split(b, loc, linear, dims, ivs);
      for (auto [t, d] : llvm::enumerate(dims))
        memref::StoreOp::create(b, loc, ivs[d], table, ValueRange{g.idx(t), i});
    });
  };
  auto readTable = [&](Value table, ArrayRef<unsigned> dims, Value i, SmallVectorImpl<Value> &ivs) {
    for (auto [t, d] : llvm::enumerate(dims))
      ivs[d] = memref::LoadOp::create(b, loc, table, ValueRange{g.idx(t), i});
  };

  // Packs A[ic:+MC, kc:+KC] into Ap[ibBase + ib][k][r] (rows past M read
  // as zeros), with mTab and kTab filled for the block.
  auto packA = [&](Value Ap, Value ibBase, Value ic, Value kcs, Value numIb, Value mTab, Value kTab,
                   ArrayRef<Value> base) {
    g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
      g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
        SmallVector<Value> at(base);
        readTable(kTab, ig.kDims, k, at);
        for (int64_t r = 0; r < MR; ++r) {
          Value row = g.add(g.mul(ib, g.idx(MR)), g.idx(r));
          SmallVector<Value> point(at);
          readTable(mTab, ig.mDims, row, point);
          Value v = ig.loadAAt(b, loc, point);
          if (M % MR != 0 || MC % MR != 0)
            v = arith::SelectOp::create(b, loc, g.lt(g.add(ic, row), g.idx(M)), v, g.zero());
          memref::StoreOp::create(b, loc, v, Ap, ValueRange{g.add(ibBase, ib), k, g.idx(r)});
        }
      });
    });
  };

  // A packed once for all column blocks (and batch indices) where it is the
  // same for every batch index and small: a convolution's weights (64 x 576
  // floats, 147 KB) were packed again for each of 49 column blocks.
  int64_t numIc = (M + MC - 1) / MC, numKc = (K + KC - 1) / KC;
  bool aPerBatch = llvm::any_of(ig.batchDims, [&](unsigned d) {
    return ig.dependsOn(ig.a, d) || (ig.cond && ig.condOnA && ig.dependsOn(ig.cond, d));
  });
  int64_t packedABytes = numIc * numKc * MC * KC * int64_t(elem.getIntOrFloatBitWidth() / 8);
  Value packedA;
  if (batch * numJc > 1 && !aPerBatch && packedABytes <= (int64_t(2) << 20)) {
    auto alignment = b.getI64IntegerAttr(64);
    packedA =
        memref::AllocOp::create(b, loc, MemRefType::get({numIc * numKc * (MC / MR), KC, MR}, elem),
                                ValueRange{}, alignment);
    Value mTab = memref::AllocOp::create(b, loc, tableType(ig.mDims, MC));
    Value kTab = memref::AllocOp::create(b, loc, tableType(ig.kDims, KC));
    SmallVector<Value> base(ig.ranges.size(), g.idx(0));
    g.loop(g.idx(0), g.idx(M), g.idx(MC), [&](Value ic) {
      Value mcs = g.min(g.idx(MC), g.sub(g.idx(M), ic));
      Value numIb = arith::CeilDivSIOp::create(b, loc, mcs, g.idx(MR));
      fillTable(mTab, ig.mDims, ic, MC, M);
      g.loop(g.idx(0), g.idx(K), g.idx(KC), [&](Value kc) {
        Value kcs = g.min(g.idx(KC), g.sub(g.idx(K), kc));
        fillTable(kTab, ig.kDims, kc, KC, K);
        Value block = g.add(g.mul(arith::DivUIOp::create(b, loc, ic, g.idx(MC)), g.idx(numKc)),
                            arith::DivUIOp::create(b, loc, kc, g.idx(KC)));
        packA(packedA, g.mul(block, g.idx(MC / MR)), ic, kcs, numIb, mTab, kTab, base);
      });
    });
    memref::DeallocOp::create(b, loc, mTab);
    memref::DeallocOp::create(b, loc, kTab);
  }

  // Where B's lane dim is at least NR long, a block's NR columns lie in at
  // most two rows of it: lanes [0, L) in the row of its first column, lanes
  // [L, nValid) at the start of the next. Each part is one masked vector
  // load (the second shifted by L lanes, so that its lanes line up), whose
  // mask also drops the lanes outside the row (the padding of a padded
  // read) and the part whose row fails the read's row-uniform conditions.
  // No gathers, no branches per column.
  bool twoRows = rowRead && rowRead->maskable && ig.ranges[lane] >= NR;
  // Else, where B's rows run along its innermost K dim instead (a weight
  // gradient's x[n, c, p + r - 1, q + s - 1] with columns (c, r, s) and
  // depth (n, p, q)): V depths of each column are read as masked vectors
  // along that dim (at most two rows of it, as above) and V x V blocks
  // transposed into Bp's rows, instead of gathering each packed row.
  unsigned kLane = ig.kDims.empty() ? 0 : ig.kDims.back();
  std::optional<RowRead> kRead;
  if (!twoRows && !ig.kDims.empty() && elem.isF32() && NR % V == 0 && ig.ranges[kLane] >= V)
    kRead = analyzeRowRead(ig, kLane);
  if (kRead && !kRead->maskable)
    kRead.reset();
  // Neither packs through a separable read's gathers (nor fills its tables).
  if (twoRows || kRead)
    sep.reset();
  // Bp's depth padded to whole blocks of V (the transposes store V rows).
  if (kRead)
    bpType = MemRefType::get({NC / NR, (KC + V - 1) / V * V, NR}, elem);
  Type i32 = b.getI32Type();
  auto laneI32 = VectorType::get({NR}, i32);
  auto rowType = VectorType::get({NR}, elem);
  // The lanes j < width with lo <= j < hi.
  auto laneMask = [&](Value lo, Value hi, int64_t width) -> Value {
    auto type = VectorType::get({width}, i32);
    SmallVector<int32_t> lanes(width);
    for (int64_t e = 0; e < width; ++e)
      lanes[e] = int32_t(e);
    Value iota =
        arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, ArrayRef<int32_t>(lanes)));
    auto splat = [&](Value v) {
      return vector::BroadcastOp::create(b, loc, type, arith::IndexCastOp::create(b, loc, i32, v));
    };
    Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, iota, splat(lo));
    Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iota, splat(hi));
    return arith::AndIOp::create(b, loc, above, below);
  };
  // A row read's indices at `point` but the last, and the last (the row's
  // first lane, unclamped).
  auto rowIndices = [&](const RowRead &rr, ArrayRef<Value> point, Value &first) {
    SmallVector<Value> indices;
    if (rr.last) {
      for (Value index : ArrayRef<Value>(rr.indices).drop_back())
        indices.push_back(ig.valueAt(b, loc, index, point));
      first = ig.valueAt(b, loc, rr.last, point);
      return indices;
    }
    for (AffineExpr e : rr.map.getResults())
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, AffineMap::get(rr.map.getNumDims(), 0, e), point));
    first = indices.pop_back_val();
    return indices;
  };
  // The and of the row-uniform parts of the pad and of the domain
  // constraint at `point` (null without any).
  auto rowUniform = [&](const RowRead &rr, ArrayRef<Value> point) {
    Value ok;
    for (Value part : llvm::concat<const Value>(rr.padParts, rr.condParts)) {
      Value c = ig.valueAt(b, loc, part, point);
      ok = ok ? arith::AndIOp::create(b, loc, ok, c).getResult() : c;
    }
    return ok;
  };
  // `width` consecutive elements of a row read `rr` along its dim, at
  // `point` (that dim at the value of lane `shift`): lanes [lo, hi) that lie
  // inside the row and whose row passes the read's row-uniform conditions;
  // the other lanes from `passthru`.
  auto rowPart = [&](const RowRead &rr, int64_t width, ArrayRef<Value> point, Value lo, Value hi,
                     Value shift, Value passthru) -> Value {
    Value first;
    SmallVector<Value> indices = rowIndices(rr, point, first);
    if (rr.last) {
      // Inside the row: 0 <= first - shift + j < rowLength.
      Value rowLo = g.sub(shift, first);
      Value rowHi = g.add(rowLo, g.idx(rr.rowLength));
      lo = arith::MaxSIOp::create(b, loc, lo, rowLo);
      hi = g.min(hi, rowHi);
    }
    indices.push_back(g.sub(first, shift));
    if (Value ok = rowUniform(rr, point))
      hi = arith::SelectOp::create(b, loc, ok, hi, lo);
    return vector::MaskedLoadOp::create(b, loc, VectorType::get({width}, elem), rr.memref, indices,
                                        laneMask(lo, hi, width), passthru);
  };
  // The pad value of a row read, as a vector (zero without a pad).
  auto padVector = [&](const RowRead &rr, int64_t width, ArrayRef<Value> point) -> Value {
    auto type = VectorType::get({width}, elem);
    if (arith::SelectOp pad = rr.pad; pad && !matchPattern(pad.getFalseValue(), m_AnyZeroFloat()))
      return vector::BroadcastOp::create(b, loc, type,
                                         ig.valueAt(b, loc, pad.getFalseValue(), point));
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, b.getZeroAttr(elem)));
  };
  // rowPart's lanes [0, lanes) from `passthru`'s pad vector, with a plain
  // vector load where all `width` lanes lie inside the row (most blocks; a
  // masked load costs more without AVX-512's mask registers) and the
  // row-uniform conditions as one select.
  auto rowVector = [&](const RowRead &rr, int64_t width, ArrayRef<Value> point, Value lanes,
                       Value passthru) -> Value {
    auto type = VectorType::get({width}, elem);
    Value full = g.le(g.idx(width), lanes);
    Value first;
    SmallVector<Value> indices = rowIndices(rr, point, first);
    if (rr.last)
      full = arith::AndIOp::create(
          b, loc, full,
          arith::AndIOp::create(b, loc, g.le(g.idx(0), first),
                                g.le(g.add(first, g.idx(width)), g.idx(rr.rowLength))));
    indices.push_back(first);
    auto branch = scf::IfOp::create(b, loc, TypeRange{type}, full, /*withElse=*/true);
    OpBuilder::InsertionGuard inBranch(b);
    b.setInsertionPointToStart(&branch.getThenRegion().front());
    Value row = vector::LoadOp::create(b, loc, type, rr.memref, indices);
    if (Value ok = rowUniform(rr, point))
      row = arith::SelectOp::create(b, loc, ok, row, passthru);
    scf::YieldOp::create(b, loc, row);
    b.setInsertionPointToStart(&branch.getElseRegion().front());
    scf::YieldOp::create(b, loc, rowPart(rr, width, point, g.idx(0), lanes, g.idx(0), passthru));
    return branch.getResult(0);
  };

  auto body = [&](ValueRange ivs) {
    Value bi = ivs[0], jc = g.mul(ivs[1], g.idx(NC));
    Value ncs = g.min(g.idx(NC), g.sub(g.idx(N), jc));
    Value numJb = arith::CeilDivSIOp::create(b, loc, ncs, g.idx(NR));
    auto alignment = b.getI64IntegerAttr(64);
    Value Bp = memref::AllocOp::create(b, loc, bpType, ValueRange{}, alignment);
    Value Ap = packedA
                   ? Value()
                   : memref::AllocOp::create(b, loc, apType, ValueRange{}, alignment).getResult();
    Value Cp = memref::AllocOp::create(b, loc, cpType, ValueRange{}, alignment);
    Value blockScratch = kRead ? memref::AllocOp::create(b, loc, MemRefType::get({V, V}, elem),
                                                         ValueRange{}, alignment)
                                     .getResult()
                               : Value();
    Value nTab = memref::AllocOp::create(b, loc, tableType(ig.nDims, NC));
    Value mTab = memref::AllocOp::create(b, loc, tableType(ig.mDims, MC));
    Value kTab = memref::AllocOp::create(b, loc, tableType(ig.kDims, KC));
    SmallVector<Value> base(ig.ranges.size(), g.idx(0));
    if (!ig.batchDims.empty())
      ig.split(b, loc, bi, ig.batchDims, base);
    fillTable(nTab, ig.nDims, jc, NC, N);
    // The columns of block jb: lanes [0, L) in the first column's row of
    // the lane dim, [L, nValid) in the next (at its point p1), past N none.
    struct Block {
      SmallVector<Value> p0, p1;
      Value L, nValid, crosses;
    };
    auto blockColumns = [&](Value jb, Value columns) {
      Block blk;
      Value c0 = g.mul(jb, g.idx(NR));
      blk.p0.assign(ig.ranges.size(), g.idx(0));
      readTable(nTab, ig.nDims, c0, blk.p0);
      blk.nValid = g.min(g.idx(NR), g.sub(columns, c0));
      blk.L = g.min(blk.nValid, g.sub(g.idx(ig.ranges[lane]), blk.p0[lane]));
      blk.p1.assign(ig.ranges.size(), g.idx(0));
      readTable(nTab, ig.nDims, g.min(g.add(c0, blk.L), g.idx(NC - 1)), blk.p1);
      blk.crosses = g.lt(blk.L, blk.nValid);
      return blk;
    };
    // `point` with the n dims of `cols`.
    auto withColumns = [&](ArrayRef<Value> point, ArrayRef<Value> cols) {
      SmallVector<Value> p(point);
      for (unsigned d : ig.nDims)
        p[d] = cols[d];
      return p;
    };
    auto packRows = [&](Value jb, Value kcs) {
      Block blk = blockColumns(jb, g.sub(g.idx(N), jc));
      auto kLoop = [&](bool crosses) {
        g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
          SmallVector<Value> at(base);
          readTable(kTab, ig.kDims, k, at);
          Value row;
          if (crosses)
            row = rowPart(*rowRead, NR, withColumns(at, blk.p1), blk.L, blk.nValid, blk.L,
                          rowPart(*rowRead, NR, withColumns(at, blk.p0), g.idx(0), blk.L, g.idx(0),
                                  padVector(*rowRead, NR, at)));
          else
            row = rowVector(*rowRead, NR, withColumns(at, blk.p0), blk.L,
                            padVector(*rowRead, NR, at));
          vector::StoreOp::create(b, loc, row, Bp, ValueRange{jb, k, g.idx(0)});
        });
      };
      auto branch = scf::IfOp::create(b, loc, TypeRange{}, blk.crosses, /*withElse=*/true);
      OpBuilder::InsertionGuard inBranch(b);
      b.setInsertionPointToStart(&branch.getThenRegion().front());
      kLoop(true);
      b.setInsertionPointToStart(&branch.getElseRegion().front());
      kLoop(false);
    };
    // Packs B's block jb along the K lane: per V depths, depths [0, Lk) in
    // the row of the first one and [Lk, dValid) in the next (from kTab),
    // each column's V depths one or two masked vectors, transposed by V x V
    // into V rows of Bp. Columns past N read a clamped column (nTab),
    // whose values C never receives.
    auto packTransposed = [&](Value jb, Value kcs, Value scratch) {
      Value c0 = g.mul(jb, g.idx(NR));
      auto vType = VectorType::get({V}, elem);
      g.loop(g.idx(0), kcs, g.idx(V), [&](Value kv) {
        Value dValid = g.min(g.idx(V), g.sub(kcs, kv));
        SmallVector<Value> k0(base), k1(base);
        readTable(kTab, ig.kDims, kv, k0);
        Value Lk = g.min(dValid, g.sub(g.idx(ig.ranges[kLane]), k0[kLane]));
        readTable(kTab, ig.kDims, g.min(g.add(kv, Lk), g.idx(KC - 1)), k1);
        Value crosses = g.lt(Lk, dValid);
        g.loop(g.idx(0), g.idx(NR), g.idx(V), [&](Value grp) {
          // The V columns' depth vectors into the scratch block (a loop,
          // not unrolled: compile time), then one transpose.
          g.loop(g.idx(0), g.idx(V), g.idx(1), [&](Value e) {
            SmallVector<Value> cols(ig.ranges.size(), g.idx(0));
            readTable(nTab, ig.nDims, g.add(g.add(c0, grp), e), cols);
            SmallVector<Value> p0 = withColumns(k0, cols);
            auto second = scf::IfOp::create(b, loc, TypeRange{vType}, crosses, /*withElse=*/true);
            {
              OpBuilder::InsertionGuard inBranch(b);
              b.setInsertionPointToStart(&second.getThenRegion().front());
              Value v = rowPart(*kRead, V, p0, g.idx(0), Lk, g.idx(0), padVector(*kRead, V, p0));
              scf::YieldOp::create(b, loc,
                                   rowPart(*kRead, V, withColumns(k1, cols), Lk, dValid, Lk, v));
              b.setInsertionPointToStart(&second.getElseRegion().front());
              scf::YieldOp::create(b, loc, rowVector(*kRead, V, p0, Lk, padVector(*kRead, V, p0)));
            }
            vector::StoreOp::create(b, loc, second.getResult(0), scratch, ValueRange{e, g.idx(0)});
          });
          SmallVector<Value> vs;
          for (int64_t i = 0; i < V; ++i)
            vs.push_back(
                vector::LoadOp::create(b, loc, vType, scratch, ValueRange{g.idx(i), g.idx(0)}));
          g.transposeSquare(vs);
          for (int64_t i = 0; i < V; ++i)
            vector::StoreOp::create(b, loc, vs[i], Bp, ValueRange{jb, g.add(kv, g.idx(i)), grp});
        });
      });
    };
    // The column parts of a separable B: its flat offset and its bounds.
    Value offTab, boundTab, flat;
    int64_t flatElements = 0;
    SmallVector<int64_t> strides;
    if (sep) {
      strides = sep->strides();
      offTab = memref::AllocOp::create(b, loc, MemRefType::get({NC}, i32));
      if (!sep->bounds.empty())
        boundTab = memref::AllocOp::create(b, loc,
                                           MemRefType::get({int64_t(sep->bounds.size()), NC}, i32));
      g.loop(g.idx(0), g.idx(NC), g.idx(1), [&](Value c) {
        SmallVector<Value> point(ig.ranges.size(), g.idx(0));
        readTable(nTab, ig.nDims, c, point);
        Value off = g.idx(0);
        for (auto [j, form] : llvm::enumerate(sep->indices))
          off = g.add(off,
                      g.mul(evaluateForm(b, loc, form, ig.nDims, point, false), g.idx(strides[j])));
        memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, i32, off), offTab, c);
        for (auto [i, bound] : llvm::enumerate(sep->bounds)) {
          Value part = evaluateForm(b, loc, bound.form, ig.nDims, point, false);
          memref::StoreOp::create(b, loc, arith::IndexCastOp::create(b, loc, i32, part), boundTab,
                                  ValueRange{g.idx(i), c});
        }
      });
      auto type = cast<MemRefType>(sep->memref.getType());
      flatElements = type.getNumElements();
      flat = sep->memref;
      if (type.getRank() > 1) {
        ReassociationIndices all(type.getRank());
        for (int64_t d = 0; d < type.getRank(); ++d)
          all[d] = d;
        flat = memref::CollapseShapeOp::create(b, loc, flat, ArrayRef<ReassociationIndices>{all});
      }
    }
    g.loop(g.idx(0), g.idx(M), g.idx(MC), [&](Value ic) {
      Value mcs = g.min(g.idx(MC), g.sub(g.idx(M), ic));
      Value numIb = arith::CeilDivSIOp::create(b, loc, mcs, g.idx(MR));
      linalg::FillOp::create(b, loc, g.zero(), Cp);
      fillTable(mTab, ig.mDims, ic, MC, M);
      g.loop(g.idx(0), g.idx(K), g.idx(KC), [&](Value kc) {
        Value kcs = g.min(g.idx(KC), g.sub(g.idx(K), kc));
        fillTable(kTab, ig.kDims, kc, KC, K);
        // Pack B: columns past N read as zeros. Where the NR columns are
        // consecutive elements of one row of B's memory (rowRead), one
        // vector load; else (across a row, a padded border) element by
        // element.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          if (twoRows) {
            packRows(jb, kcs);
            return;
          }
          if (kRead) {
            packTransposed(jb, kcs, blockScratch);
            return;
          }
          // A separable B's column parts for this block's NR columns.
          Value offVec, columnsValid;
          SmallVector<Value> boundVecs;
          if (sep) {
            Value c0 = g.mul(jb, g.idx(NR));
            offVec = vector::LoadOp::create(b, loc, laneI32, offTab, c0);
            for (size_t i = 0; i < sep->bounds.size(); ++i)
              boundVecs.push_back(
                  vector::LoadOp::create(b, loc, laneI32, boundTab, ValueRange{g.idx(i), c0}));
            if (N % NR != 0 || NC % NR != 0) {
              SmallVector<int32_t> iota(NR);
              for (int64_t e = 0; e < NR; ++e)
                iota[e] = int32_t(e);
              Value lanes = arith::ConstantOp::create(
                  b, loc, DenseElementsAttr::get(laneI32, ArrayRef<int32_t>(iota)));
              Value limit = arith::IndexCastOp::create(b, loc, i32, g.sub(g.idx(N), g.add(jc, c0)));
              columnsValid =
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lanes,
                                        vector::BroadcastOp::create(b, loc, laneI32, limit));
            }
          }
          g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
            SmallVector<Value> at(base);
            readTable(kTab, ig.kDims, k, at);
            Value c0 = g.mul(jb, g.idx(NR));
            // One masked gather of the NR columns: the row's flat offset
            // plus the column offsets, lanes where the bounds hold.
            auto gather = [&]() {
              auto allDims = llvm::to_vector(llvm::seq<unsigned>(0, ig.ranges.size()));
              Value rowOffset = g.idx(0);
              for (auto [j, form] : llvm::enumerate(sep->indices))
                rowOffset = g.add(rowOffset, g.mul(evaluateForm(b, loc, form, allDims, at, true),
                                                   g.idx(strides[j])));
              Value mask = columnsValid;
              auto andMask = [&](Value m) {
                mask = mask ? arith::AndIOp::create(b, loc, mask, m).getResult() : m;
              };
              for (auto [i, bound] : llvm::enumerate(sep->bounds)) {
                Value part = arith::IndexCastOp::create(
                    b, loc, i32, evaluateForm(b, loc, bound.form, allDims, at, true));
                Value lane = arith::AddIOp::create(
                    b, loc, boundVecs[i], vector::BroadcastOp::create(b, loc, laneI32, part));
                auto limit = [&](int64_t c) {
                  return arith::ConstantOp::create(
                      b, loc, DenseElementsAttr::get(laneI32, b.getI32IntegerAttr(int32_t(c))));
                };
                if (bound.lo != std::numeric_limits<int64_t>::min())
                  andMask(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lane,
                                                limit(bound.lo)));
                if (bound.hi != std::numeric_limits<int64_t>::max())
                  andMask(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, lane,
                                                limit(bound.hi)));
              }
              auto maskType = VectorType::get({NR}, b.getI1Type());
              if (!mask)
                mask = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(maskType, true));
              Value zeros = arith::ConstantOp::create(
                  b, loc, DenseElementsAttr::get(rowType, b.getZeroAttr(elem)));
              // Where every flat offset fits in 32 bits, the row's offset
              // joins the lanes' in i32 inside the k loop, so that the
              // gather's 32-bit index vector is visible to instruction
              // selection (on AVX-512, one vgatherdps of 16 lanes; with the
              // column offsets sign-extended outside the loop, LLVM made two
              // vgatherqps of 8 and a vinsertf64x4).
              Value gatherBase = rowOffset, lanes = offVec;
              if (flatElements < (int64_t(1) << 31)) {
                Value rowOffset32 = arith::IndexCastOp::create(b, loc, i32, rowOffset);
                lanes = arith::AddIOp::create(
                    b, loc, offVec, vector::BroadcastOp::create(b, loc, laneI32, rowOffset32));
                gatherBase = g.idx(0);
              }
              Value row = vector::GatherOp::create(b, loc, rowType, flat, ValueRange{gatherBase},
                                                   lanes, mask, zeros);
              vector::StoreOp::create(b, loc, row, Bp, ValueRange{jb, k, g.idx(0)});
            };
            // Where no vector load applies: the gather, else element by
            // element.
            auto fallback = [&]() {
              if (sep)
                return gather();
              g.loop(g.idx(0), g.idx(NR), g.idx(1), [&](Value e) {
                Value c = g.add(c0, e);
                SmallVector<Value> point(at);
                readTable(nTab, ig.nDims, c, point);
                Value v = ig.loadBAt(b, loc, point);
                if (N % NR != 0 || NC % NR != 0)
                  v = arith::SelectOp::create(b, loc, g.lt(g.add(jc, c), g.idx(N)), v, g.zero());
                memref::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, e});
              });
            };
            if (!rowRead) {
              fallback();
              return;
            }
            SmallVector<Value> point(at);
            readTable(nTab, ig.nDims, c0, point);
            // The NR columns stay in one row of the lane dim, and inside N.
            Value fast = arith::AndIOp::create(
                b, loc, g.le(g.add(point[lane], g.idx(NR)), g.idx(ig.ranges[lane])),
                g.le(g.add(g.add(jc, c0), g.idx(NR)), g.idx(N)));
            Value first;
            if (rowRead->last) {
              first = ig.valueAt(b, loc, rowRead->last, point);
              Value inRow =
                  arith::AndIOp::create(b, loc, g.le(g.idx(0), first),
                                        g.le(g.add(first, g.idx(NR)), g.idx(rowRead->rowLength)));
              fast = arith::AndIOp::create(b, loc, fast, inRow);
            }
            auto branch = scf::IfOp::create(b, loc, TypeRange{}, fast, /*withElse=*/true);
            {
              OpBuilder::InsertionGuard inThen(b);
              b.setInsertionPointToStart(&branch.getThenRegion().front());
              SmallVector<Value> indices;
              if (rowRead->last) {
                for (Value index : ArrayRef<Value>(rowRead->indices).drop_back())
                  indices.push_back(ig.valueAt(b, loc, index, point));
                indices.push_back(first);
              } else {
                for (AffineExpr e : rowRead->map.getResults())
                  indices.push_back(affine::AffineApplyOp::create(
                      b, loc, AffineMap::get(rowRead->map.getNumDims(), 0, e), point));
              }
              Value row = vector::LoadOp::create(b, loc, rowType, rowRead->memref, indices);
              if (rowRead->pad) {
                // The parts of the pad's condition that hold for all lanes.
                Value ok;
                for (Value part : rowRead->padParts) {
                  Value c = ig.valueAt(b, loc, part, point);
                  ok = ok ? arith::AndIOp::create(b, loc, ok, c).getResult() : c;
                }
                if (ok) {
                  Value padValue = ig.valueAt(b, loc, rowRead->pad.getFalseValue(), point);
                  row = arith::SelectOp::create(
                      b, loc, ok, row, vector::BroadcastOp::create(b, loc, rowType, padValue));
                }
              }
              Value inDomain;
              for (Value part : rowRead->condParts) {
                Value c = ig.valueAt(b, loc, part, point);
                inDomain = inDomain ? arith::AndIOp::create(b, loc, inDomain, c).getResult() : c;
              }
              if (inDomain)
                row = arith::SelectOp::create(
                    b, loc, inDomain, row,
                    arith::ConstantOp::create(
                        b, loc, DenseElementsAttr::get(rowType, b.getZeroAttr(elem))));
              vector::StoreOp::create(b, loc, row, Bp, ValueRange{jb, k, g.idx(0)});
              b.setInsertionPointToStart(&branch.getElseRegion().front());
              fallback();
            }
          });
        });
        // Pack A (or find it packed once for all column blocks).
        Value ibBase;
        if (packedA) {
          Value block = g.add(g.mul(arith::DivUIOp::create(b, loc, ic, g.idx(MC)), g.idx(numKc)),
                              arith::DivUIOp::create(b, loc, kc, g.idx(KC)));
          ibBase = g.mul(block, g.idx(MC / MR));
        } else {
          packA(Ap, g.idx(0), ic, kcs, numIb, mTab, kTab, base);
        }
        // Register tiles of Cp.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
            auto at = [&](int64_t r, int64_t t) -> SmallVector<Value> {
              return {ib, jb, g.idx(r), g.idx(t * V)};
            };
            if (packedA)
              g.microKernel(Cp, at, packedA, Bp, g.add(ibBase, ib), jb, kcs, MR, NV);
            else
              g.microKernel(Cp, at, Ap, Bp, ib, jb, kcs, MR, NV);
          });
        });
      });
      // C += Cp (C = Cp under neo.overwrite) over the valid rows and columns: a vector per NR
      // columns that lie in one row of C (C's last index is the lane dim), else element by element.
      g.loop(g.idx(0), mcs, g.idx(1), [&](Value r) {
        SmallVector<Value> at(base);
        readTable(mTab, ig.mDims, r, at);
        Value ib = arith::DivUIOp::create(b, loc, r, g.idx(MR));
        Value ir = arith::RemUIOp::create(b, loc, r, g.idx(MR));
        auto addScalars = [&](Value from, Value to) {
          g.loop(from, to, g.idx(1), [&](Value c) {
            SmallVector<Value> point(at);
            readTable(nTab, ig.nDims, c, point);
            Value jb = arith::DivUIOp::create(b, loc, c, g.idx(NR));
            Value jr = arith::RemUIOp::create(b, loc, c, g.idx(NR));
            Value part = memref::LoadOp::create(b, loc, Cp, ValueRange{ib, jb, ir, jr});
            SmallVector<Value> out = ig.outIndicesAt(point);
            if (!overwrite)
              part = arith::AddFOp::create(b, loc, memref::LoadOp::create(b, loc, C, out), part);
            memref::StoreOp::create(b, loc, part, C, out);
          });
        };
        if (!cRows) {
          addScalars(g.idx(0), ncs);
          return;
        }
        // The NR columns lie in at most two rows of C (cRows: its lane dim
        // is at least NR long): a masked vector per part.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          Block blk = blockColumns(jb, ncs);
          Value part =
              vector::LoadOp::create(b, loc, rowType, Cp, ValueRange{ib, jb, ir, g.idx(0)});
          auto addPart = [&](ArrayRef<Value> cols, Value lo, Value hi, Value shift) {
            SmallVector<Value> out = ig.outIndicesAt(withColumns(at, cols));
            out.back() = g.sub(out.back(), shift);
            Value mask = laneMask(lo, hi, NR);
            Value zeros = arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(rowType, b.getZeroAttr(elem)));
            Value sum = part;
            if (!overwrite)
              sum = arith::AddFOp::create(
                  b, loc, vector::MaskedLoadOp::create(b, loc, rowType, C, out, mask, zeros), part);
            vector::MaskedStoreOp::create(b, loc, C, out, mask, sum);
          };
          // All NR columns in one row (most blocks): plain vectors; masked
          // stores are microcoded on AMD Zen (AVX2's vmaskmovps).
          auto full = scf::IfOp::create(b, loc, TypeRange{}, g.le(g.idx(NR), blk.L),
                                        /*withElse=*/true);
          OpBuilder::InsertionGuard inBranch(b);
          b.setInsertionPointToStart(&full.getThenRegion().front());
          SmallVector<Value> out = ig.outIndicesAt(withColumns(at, blk.p0));
          Value sum = part;
          if (!overwrite)
            sum = arith::AddFOp::create(b, loc, vector::LoadOp::create(b, loc, rowType, C, out),
                                        part);
          vector::StoreOp::create(b, loc, sum, C, out);
          b.setInsertionPointToStart(&full.getElseRegion().front());
          addPart(blk.p0, g.idx(0), blk.L, g.idx(0));
          auto branch = scf::IfOp::create(b, loc, TypeRange{}, blk.crosses, /*withElse=*/false);
          b.setInsertionPointToStart(&branch.getThenRegion().front());
          addPart(blk.p1, blk.L, blk.nValid, blk.L);
        });
      });
    });
    for (Value buffer : {Bp, Ap, Cp, nTab, mTab, kTab, offTab, boundTab, blockScratch})
      if (buffer)
        memref::DeallocOp::create(b, loc, buffer);
  };

  g.outerLoops(batch, numJc, s.threads, body);
  if (packedA)
    memref::DeallocOp::create(b, loc, packedA);
  rewriter.eraseOp(op);
  return success();
}
