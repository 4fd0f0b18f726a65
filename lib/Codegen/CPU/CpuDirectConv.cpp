//===- CpuDirectConv.cpp - Convolutions without packing -------------------===//
//
// A convolution's implicit GEMM (CpuImplicitGemm.cpp) packs B, an im2col
// block, for every block of columns: that packing is 20-30% of a forward or
// data-gradient convolution and of a weight gradient. Here the operand read
// through a window, x[lead.., P + taps, Q + taps] (zero outside the rows),
// is instead copied once into zero-padded planes whose rows all have one
// length Wp: then output point (P, Q) at flat position o = P * Wp + Q reads
// that operand at o plus an offset that depends only on the taps and the
// lead indices, so V consecutive flat outputs read V consecutive elements.
//
// Direct form (forward, data gradient): the lane dim Q and the dim before it
// P are n dims, and the window read is B:
//
//   pack A once -> Ap[M/MR][K][MR]; off[k] = B's offset of depth k
//   parallel (outer n point, block of NC flat columns):       [threads]
//     for ib, for jb:  acc[MR][NR] = sum_k bcast(Ap[ib][k][r]) *
//                                    Xp[base + off[k] + o0 .. + NR]
//                      C[.., p, q] += acc   (the columns with q < Q)
//
// Dot form (weight gradient): P and Q are the innermost K dims; A reads
// y[lead.., P, Q] exactly and B is the window read, so both are rows of
// planes and the reduction runs along them:
//
//   parallel (ib, jb):  acc[MRd][NBd] (vectors) +=
//                         Ap[aOff[m] + o .. + V] * Bp[bOff[n] + o .. + V]
//                       over the outer K points and o < P * Wp
//                       C[m, n] += reduce(acc)
//
// The padded columns of A's planes are zeros, so the columns past Q add
// nothing. Columns Wp - Q per row are computed and dropped (3% for a 3x3
// convolution of 56-wide rows); ops where that exceeds a fifth keep the
// implicit GEMM. A non-finite input can leak into an output through a
// zero times it in those columns (0 * inf) of a weight gradient.
//
//===----------------------------------------------------------------------===//
#include "GemmBuilder.h"
#include "SeparableReads.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Codegen/Utils/ImplicitGemm.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <limits>

using namespace mlir;
using namespace mlir::neo;

namespace {
constexpr int64_t kNoLower = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoUpper = std::numeric_limits<int64_t>::max();

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// The least and largest value of `f` over the iteration space.
std::pair<int64_t, int64_t> formRange(const LinearForm &f, ArrayRef<int64_t> ranges) {
  int64_t lo = f.constant, hi = f.constant;
  for (auto [d, c] : f.coeffs) {
    int64_t e = c * (ranges[d] - 1);
    lo += std::min<int64_t>(0, e);
    hi += std::max<int64_t>(0, e);
  }
  return {lo, hi};
}

/// Whether `a`'s coefficients are `sign` times `b`'s.
bool scaledCoeffs(const LinearForm &a, const LinearForm &b, int64_t sign) {
  if (a.coeffs.size() != b.coeffs.size())
    return false;
  for (auto [d, c] : b.coeffs)
    if (a.coeffs.lookup(d) != sign * c)
      return false;
  return true;
}

/// Whether the bounds on +-x (marked in `used`) keep exactly the values of
/// x in [0, n) among those it takes, [xmin, xmax].
bool boundsAreRow(ArrayRef<SeparableRead::Bound> bounds, const LinearForm &x, int64_t n,
                  int64_t xmin, int64_t xmax, SmallVectorImpl<bool> &used) {
  int64_t lo = xmin, hi = xmax;
  for (auto [i, bound] : llvm::enumerate(bounds)) {
    int64_t sign = scaledCoeffs(bound.form, x, 1) ? 1 : scaledCoeffs(bound.form, x, -1) ? -1 : 0;
    if (sign == 0)
      continue;
    used[i] = true;
    // bound.form = sign * (x - x.constant) + bound.form.constant.
    int64_t blo = bound.lo == kNoLower ? kNoLower : bound.lo - bound.form.constant;
    int64_t bhi = bound.hi == kNoUpper ? kNoUpper : bound.hi - bound.form.constant;
    if (sign < 0) {
      int64_t l = bhi == kNoUpper ? kNoLower : -bhi, h = blo == kNoLower ? kNoUpper : -blo;
      blo = l;
      bhi = h;
    }
    if (blo != kNoLower)
      lo = std::max(lo, blo + x.constant);
    if (bhi != kNoUpper)
      hi = std::min(hi, bhi + x.constant);
  }
  int64_t wantLo = std::max<int64_t>(0, xmin), wantHi = std::min<int64_t>(n - 1, xmax);
  return wantLo <= wantHi && lo == wantLo && hi == wantHi;
}

/// An operand read x[lead.., I, J] with I = P + row taps and J = Q + column
/// taps (unit coefficients on P and Q), zero where (I, J) leaves the plane,
/// and the zero-padded copy of its planes that the kernels read.
struct PlaneRead {
  SeparableRead read;
  unsigned P = 0, Q = 0;
  SmallVector<int64_t> leadShape;
  int64_t H = 0, W = 0;
  int64_t padH = 0, padW = 0;
  /// Rows of a padded plane (padH included) and the least row length (the
  /// zeros right of a row are the next one's left padding).
  int64_t rows = 0, width = 0;
  /// The largest I - P and J - Q.
  int64_t rowTapMax = 0, colTapMax = 0;
  int64_t numPlanes = 1;
  /// Tap dims with a negative coefficient (a data gradient's r and s).
  SmallVector<unsigned> reversed;

  const LinearForm &rowForm() const { return read.indices[read.indices.size() - 2]; }
  const LinearForm &colForm() const { return read.indices.back(); }
};

std::optional<PlaneRead> analyzePlaneRead(const ImplicitGemm &ig, const SeparableRead &sr,
                                          unsigned P, unsigned Q,
                                          function_ref<bool(unsigned)> tapDim,
                                          function_ref<bool(unsigned)> leadDim) {
  auto type = cast<MemRefType>(sr.memref.getType());
  int64_t rank = type.getRank();
  if (rank < 2 || !type.getElementType().isF32())
    return std::nullopt;
  PlaneRead pr;
  pr.read = sr;
  pr.P = P;
  pr.Q = Q;
  pr.H = type.getShape()[rank - 2];
  pr.W = type.getShape()[rank - 1];
  pr.leadShape.assign(type.getShape().begin(), type.getShape().end() - 2);
  for (int64_t e : pr.leadShape)
    pr.numPlanes *= e;
  const LinearForm &I = pr.rowForm(), &J = pr.colForm();
  if (I.coeffs.lookup(P) != 1 || J.coeffs.lookup(Q) != 1)
    return std::nullopt;
  for (auto [d, c] : I.coeffs)
    if (d != P && (d == Q || !tapDim(d)))
      return std::nullopt;
  for (auto [d, c] : J.coeffs)
    if (d != Q && (d == P || !tapDim(d)))
      return std::nullopt;
  for (const LinearForm &lead : ArrayRef<LinearForm>(sr.indices).drop_back(2))
    for (auto [d, c] : lead.coeffs)
      if (d == P || d == Q || !leadDim(d))
        return std::nullopt;
  auto [imin, imax] = formRange(I, ig.ranges);
  auto [jmin, jmax] = formRange(J, ig.ranges);
  SmallVector<bool> used(sr.bounds.size(), false);
  if (!boundsAreRow(sr.bounds, I, pr.H, imin, imax, used) ||
      !boundsAreRow(sr.bounds, J, pr.W, jmin, jmax, used) || llvm::is_contained(used, false))
    return std::nullopt;
  for (const LinearForm *f : {&I, &J})
    for (auto [d, c] : f->coeffs)
      if (c < 0 && !llvm::is_contained(pr.reversed, d))
        pr.reversed.push_back(d);
  pr.padH = std::max<int64_t>(0, -imin);
  pr.padW = std::max<int64_t>(0, -jmin);
  pr.rows = std::max(pr.H, imax + 1) + pr.padH;
  // The zeros right of one row are those left of the next: a row needs
  // the wider of the two pads only.
  pr.width = pr.W + std::max(pr.padW, std::max<int64_t>(0, jmax + 1 - pr.W));
  pr.rowTapMax = imax - (ig.ranges[P] - 1);
  pr.colTapMax = jmax - (ig.ranges[Q] - 1);
  return pr;
}

/// The kernels' code: offsets into the padded planes and their copy.
struct PlaneBuilder {
  GemmBuilder &g;
  const ImplicitGemm &ig;

  /// The flat offset of `pr`'s read at `ivs` over `dims` only (the others
  /// taken as 0; the constants and the padding when `withConstant`), in
  /// planes of `planeSize` elements with rows of `Wp`.
  Value offset(const PlaneRead &pr, int64_t Wp, int64_t planeSize, ArrayRef<unsigned> dims,
               ArrayRef<Value> ivs, bool withConstant) {
    OpBuilder &b = g.b;
    Location loc = g.loc;
    SmallVector<unsigned> taps;
    for (unsigned d : dims)
      if (d != pr.P && d != pr.Q)
        taps.push_back(d);
    Value sum = g.idx(withConstant ? pr.padH * Wp + pr.padW : 0);
    int64_t stride = planeSize;
    for (int64_t j = int64_t(pr.leadShape.size()) - 1; j >= 0; --j) {
      sum = g.add(sum, g.mul(evaluateForm(b, loc, pr.read.indices[j], taps, ivs, withConstant),
                             g.idx(stride)));
      stride *= pr.leadShape[j];
    }
    sum = g.add(sum, g.mul(evaluateForm(b, loc, pr.rowForm(), taps, ivs, withConstant), g.idx(Wp)));
    return g.add(sum, evaluateForm(b, loc, pr.colForm(), taps, ivs, withConstant));
  }

  /// ig.split of `linear` over `dims`, each dim in `reversed` counted down
  /// (so that a data gradient's taps, h - r + 1, read ascending addresses).
  void split(Value linear, ArrayRef<unsigned> dims, ArrayRef<unsigned> reversed,
             SmallVectorImpl<Value> &ivs) {
    ig.split(g.b, g.loc, linear, dims, ivs);
    for (unsigned d : reversed)
      if (llvm::is_contained(dims, d))
        ivs[d] = g.sub(g.idx(ig.ranges[d] - 1), ivs[d]);
  }

  /// A table of `n` offsets: offset over `dims` of point i (clamped below
  /// `extent`; split as above), constants included.
  Value offsetTable(const PlaneRead &pr, int64_t Wp, int64_t planeSize, ArrayRef<unsigned> dims,
                    ArrayRef<unsigned> reversed, int64_t n, int64_t extent) {
    OpBuilder &b = g.b;
    Value table = memref::AllocOp::create(b, g.loc, MemRefType::get({n}, b.getIndexType()));
    g.loop(g.idx(0), g.idx(n), g.idx(1), [&](Value i) {
      SmallVector<Value> ivs(ig.ranges.size(), g.idx(0));
      split(g.min(i, g.idx(extent - 1)), dims, reversed, ivs);
      memref::StoreOp::create(b, g.loc, offset(pr, Wp, planeSize, dims, ivs, true), table, i);
    });
    return table;
  }

  /// The zero-padded planes of `pr` with rows of `Wp` in planes of
  /// `planeSize` elements (a multiple of V), one plane per task.
  Value planes(const PlaneRead &pr, int64_t Wp, int64_t planeSize, int64_t threads) {
    OpBuilder &b = g.b;
    Location loc = g.loc;
    int64_t V = g.V;
    Value xp = memref::AllocOp::create(b, loc, MemRefType::get({pr.numPlanes * planeSize}, g.elem),
                                       ValueRange{}, b.getI64IntegerAttr(64));
    g.outerLoops(pr.numPlanes, 1, threads, [&](ValueRange ivs) {
      Value plane = ivs[0];
      Value base = g.mul(plane, g.idx(planeSize));
      Value zeros = g.zeroVec();
      g.loop(g.idx(0), g.idx(planeSize), g.idx(V), [&](Value t) {
        vector::StoreOp::create(b, loc, zeros, xp, ValueRange{g.add(base, t)});
      });
      SmallVector<Value> lead;
      Value rest = plane;
      for (int64_t j = int64_t(pr.leadShape.size()) - 1; j >= 0; --j) {
        lead.insert(lead.begin(), arith::RemUIOp::create(b, loc, rest, g.idx(pr.leadShape[j])));
        rest = arith::DivUIOp::create(b, loc, rest, g.idx(pr.leadShape[j]));
      }
      int64_t full = pr.W / V * V, tail = pr.W - full;
      auto maskType = VectorType::get({V}, b.getI1Type());
      g.loop(g.idx(0), g.idx(pr.H), g.idx(1), [&](Value i) {
        Value dst = g.add(base, g.add(g.mul(g.add(i, g.idx(pr.padH)), g.idx(Wp)), g.idx(pr.padW)));
        SmallVector<Value> src(lead);
        src.push_back(i);
        src.push_back(Value());
        if (full > 0)
          g.loop(g.idx(0), g.idx(full), g.idx(V), [&](Value t) {
            src.back() = t;
            Value v = vector::LoadOp::create(b, loc, g.vecType(), pr.read.memref, src);
            vector::StoreOp::create(b, loc, v, xp, ValueRange{g.add(dst, t)});
          });
        if (tail > 0) {
          src.back() = g.idx(full);
          Value mask = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{g.idx(tail)});
          Value v =
              vector::MaskedLoadOp::create(b, loc, g.vecType(), pr.read.memref, src, mask, zeros);
          vector::MaskedStoreOp::create(b, loc, xp, ValueRange{g.add(dst, g.idx(full))}, mask, v);
        }
      });
    });
    return xp;
  }
};

/// Marks the loops of the ops before `op` from `first` on (null: the
/// block's start) unroll-disabled: LLVM, which runs its unroller on small
/// modules (llvm-vectorize-limit), unrolled the zero fills' rows and the
/// kernels' depth loops 8-12 times, doubling a convolution's compile time
/// (0.16 -> 0.45 s) for no speed (the kernels' loops unrolled or not ran
/// within 1% of each other on Zen 4).
void keepLoopsRolled(Operation *first, Operation *op) {
  auto annotation = LLVM::LoopAnnotationAttr::get(
      op->getContext(), {}, {}, {},
      LLVM::LoopUnrollAttr::get(op->getContext(), BoolAttr::get(op->getContext(), true), {}, {}, {},
                                {}, {}, {}),
      {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
  Block::iterator it = first ? std::next(first->getIterator()) : op->getBlock()->begin();
  for (; &*it != op; ++it)
    it->walk([&](scf::ForOp loop) { loop->setAttr("llvm.loop_annotation", annotation); });
}

/// The code that replaces a generic: built before it (the guard restores
/// the insertion point); finish() frees `buffers` after it, keeps the new
/// loops rolled and erases the generic.
struct Emission {
  RewriterBase &rewriter;
  linalg::LinalgOp op;
  OpBuilder::InsertionGuard guard;
  Operation *first; // the op before the generic (null: none)
  GemmBuilder g;
  PlaneBuilder pb;

  Emission(RewriterBase &rewriter, const ImplicitGemm &ig, Type elem, int64_t V)
      : rewriter(rewriter), op(ig.op), guard(rewriter), first(ig.op->getPrevNode()),
        g{rewriter, ig.op->getLoc(), elem, V}, pb{g, ig} {
    rewriter.setInsertionPoint(op);
  }

  LogicalResult finish(ArrayRef<Value> buffers) {
    for (Value buffer : buffers)
      memref::DeallocOp::create(g.b, g.loc, buffer);
    keepLoopsRolled(first, op);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The n dims of a direct form: (outer.., P, Q) with Q the lane dim.
LogicalResult generateDirect(RewriterBase &rewriter, ImplicitGemm &ig, const GemmSchedule &s) {
  linalg::LinalgOp op = ig.op;
  if (!ig.batchDims.empty() || ig.nDims.size() < 2 || ig.mDims.empty() || ig.kDims.empty())
    return failure();
  unsigned P = ig.nDims[ig.nDims.size() - 2], Q = ig.nDims.back();
  SmallVector<unsigned> outer(ig.nDims.begin(), ig.nDims.end() - 2);
  // C[.., P, Q] with rows along Q.
  Value C = op.getDpsInitOperand(0)->get();
  auto cType = dyn_cast<MemRefType>(C.getType());
  MLIRContext *ctx = op.getContext();
  unsigned nOut = ig.outMap.getNumResults();
  if (!cType || !cType.hasStaticShape() || !cType.getLayout().isIdentity() ||
      !cType.getElementType().isF32() || nOut < 2 ||
      ig.outMap.getResult(nOut - 1) != getAffineDimExpr(Q, ctx) ||
      ig.outMap.getResult(nOut - 2) != getAffineDimExpr(P, ctx))
    return failure();
  for (AffineExpr e : ig.outMap.getResults().drop_back(2))
    if (e.isFunctionOfDim(P) || e.isFunctionOfDim(Q))
      return failure();
  std::optional<SeparableRead> sr = analyzeSeparableRead(ig);
  if (!sr)
    return failure();
  auto isK = [&](unsigned d) { return llvm::is_contained(ig.kDims, d); };
  auto isLead = [&](unsigned d) { return isK(d) || llvm::is_contained(outer, d); };
  std::optional<PlaneRead> pr = analyzePlaneRead(ig, *sr, P, Q, isK, isLead);
  if (!pr)
    return failure();
  int64_t V = cpuGemmVectorWidth(cType.getElementType());
  bool overwrite = op->hasAttr(kOverwriteAttrName);
  int64_t Wp = std::max(ig.ranges[Q], pr->width);
  if ((Wp - ig.ranges[Q]) * 5 > Wp)
    return failure();
  int64_t MR = s.mr, NR = s.nr, NV = NR / V;
  int64_t M = ig.problem.m, K = ig.problem.k;
  int64_t total = ig.ranges[P] * Wp; // flat outputs of a plane
  int64_t NC = std::max(NR, s.nc / NR * NR);
  int64_t numJc = (total + NC - 1) / NC, numIb = (M + MR - 1) / MR;
  int64_t maxTap = (pr->rowTapMax + pr->padH) * Wp + pr->colTapMax + pr->padW;
  int64_t planeSize = roundUp(std::max(pr->rows * Wp, roundUp(total, NR) + maxTap), V);
  int64_t numOuter = 1;
  for (unsigned d : outer)
    numOuter *= ig.ranges[d];
  if (pr->numPlanes * planeSize >= (int64_t(1) << 31))
    return failure();

  Type elem = cType.getElementType();
  Emission emission(rewriter, ig, elem, V);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  GemmBuilder &g = emission.g;
  PlaneBuilder &pb = emission.pb;
  auto alignment = b.getI64IntegerAttr(64);

  // A packed once: Ap[ib][k][r], rows past M zeros.
  Value Ap = memref::AllocOp::create(b, loc, MemRefType::get({numIb, K, MR}, elem), ValueRange{},
                                     alignment);
  g.loop(g.idx(0), g.idx(numIb), g.idx(1), [&](Value ib) {
    g.loop(g.idx(0), g.idx(K), g.idx(1), [&](Value k) {
      SmallVector<Value> at(ig.ranges.size(), g.idx(0));
      pb.split(k, ig.kDims, pr->reversed, at);
      for (int64_t r = 0; r < MR; ++r) {
        Value row = g.add(g.mul(ib, g.idx(MR)), g.idx(r));
        SmallVector<Value> point(at);
        ig.split(b, loc, g.min(row, g.idx(M - 1)), ig.mDims, point);
        Value v = ig.loadAAt(b, loc, point);
        if (M % MR != 0)
          v = arith::SelectOp::create(b, loc, g.lt(row, g.idx(M)), v, g.zero());
        memref::StoreOp::create(b, loc, v, Ap, ValueRange{ib, k, g.idx(r)});
      }
    });
  });
  Value offTab = pb.offsetTable(*pr, Wp, planeSize, ig.kDims, pr->reversed, K, K);
  Value Xp = pb.planes(*pr, Wp, planeSize, s.threads);

  auto rowType = g.vecType();
  auto maskType = VectorType::get({V}, b.getI1Type());
  g.outerLoops(numOuter, numJc, s.threads, [&](ValueRange ivs) {
    SmallVector<Value> base(ig.ranges.size(), g.idx(0));
    if (!outer.empty())
      ig.split(b, loc, ivs[0], outer, base);
    Value planeBase = pb.offset(*pr, Wp, planeSize, outer, base, false);
    Value jc = g.mul(ivs[1], g.idx(NC));
    Value numJb =
        arith::CeilDivSIOp::create(b, loc, g.min(g.idx(NC), g.sub(g.idx(total), jc)), g.idx(NR));
    Value Ct =
        memref::AllocOp::create(b, loc, MemRefType::get({MR, NR}, elem), ValueRange{}, alignment);
    g.loop(g.idx(0), g.idx(numIb), g.idx(1), [&](Value ib) {
      g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
        Value o0 = g.add(jc, g.mul(jb, g.idx(NR)));
        Value start = g.add(planeBase, o0);
        SmallVector<Value> zeros(MR * NV, g.zeroVec());
        auto kLoop = scf::ForOp::create(b, loc, g.idx(0), g.idx(K), g.idx(1), zeros);
        {
          OpBuilder::InsertionGuard kg(b);
          b.setInsertionPointToStart(kLoop.getBody());
          Value k = kLoop.getInductionVar();
          ValueRange acc = kLoop.getRegionIterArgs();
          Value at = g.add(memref::LoadOp::create(b, loc, offTab, k), start);
          SmallVector<Value> bv, next;
          for (int64_t t = 0; t < NV; ++t)
            bv.push_back(
                vector::LoadOp::create(b, loc, rowType, Xp, ValueRange{g.add(at, g.idx(t * V))}));
          for (int64_t r = 0; r < MR; ++r) {
            Value a = memref::LoadOp::create(b, loc, Ap, ValueRange{ib, k, g.idx(r)});
            Value x = vector::BroadcastOp::create(b, loc, rowType, a);
            for (int64_t t = 0; t < NV; ++t)
              next.push_back(vector::FMAOp::create(b, loc, x, bv[t], acc[r * NV + t]));
          }
          scf::YieldOp::create(b, loc, next);
        }
        for (int64_t r = 0; r < MR; ++r)
          for (int64_t t = 0; t < NV; ++t)
            vector::StoreOp::create(b, loc, kLoop.getResult(r * NV + t), Ct,
                                    ValueRange{g.idx(r), g.idx(t * V)});
        // C[.., p, q] += Ct (= Ct under neo.overwrite) over the rows below M and the columns q < Q
        // of the output rows p that the NR flat columns touch.
        Value rowsHere = g.min(g.idx(MR), g.sub(g.idx(M), g.mul(ib, g.idx(MR))));
        Value pFirst = arith::DivUIOp::create(b, loc, o0, g.idx(Wp));
        Value pEnd = g.min(
            g.add(arith::DivUIOp::create(b, loc, g.add(o0, g.idx(NR - 1)), g.idx(Wp)), g.idx(1)),
            g.idx(ig.ranges[P]));
        g.loop(g.idx(0), rowsHere, g.idx(1), [&](Value r) {
          SmallVector<Value> point(base);
          ig.split(b, loc, g.add(g.mul(ib, g.idx(MR)), r), ig.mDims, point);
          g.loop(pFirst, pEnd, g.idx(1), [&](Value p) {
            Value rowStart = g.mul(p, g.idx(Wp));
            Value qlo = arith::MaxSIOp::create(b, loc, g.sub(o0, rowStart), g.idx(0));
            Value qhi = g.min(g.idx(ig.ranges[Q]), g.sub(g.add(o0, g.idx(NR)), rowStart));
            g.loop(qlo, qhi, g.idx(V), [&](Value q) {
              SmallVector<Value> pt(point);
              pt[P] = p;
              pt[Q] = q;
              SmallVector<Value> out = ig.outIndicesAt(pt);
              SmallVector<Value> from{r, g.sub(g.add(rowStart, q), o0)};
              Value n = g.sub(qhi, q);
              auto full = scf::IfOp::create(b, loc, TypeRange{}, g.le(g.idx(V), n),
                                            /*withElse=*/true);
              OpBuilder::InsertionGuard inBranch(b);
              b.setInsertionPointToStart(&full.getThenRegion().front());
              Value part = vector::LoadOp::create(b, loc, rowType, Ct, from);
              if (!overwrite)
                part = arith::AddFOp::create(b, loc,
                                             vector::LoadOp::create(b, loc, rowType, C, out), part);
              vector::StoreOp::create(b, loc, part, C, out);
              b.setInsertionPointToStart(&full.getElseRegion().front());
              Value mask = vector::CreateMaskOp::create(b, loc, maskType, ValueRange{n});
              Value zero = g.zeroVec();
              Value mpart = vector::MaskedLoadOp::create(b, loc, rowType, Ct, from, mask, zero);
              if (!overwrite)
                mpart = arith::AddFOp::create(
                    b, loc, vector::MaskedLoadOp::create(b, loc, rowType, C, out, mask, zero),
                    mpart);
              vector::MaskedStoreOp::create(b, loc, C, out, mask, mpart);
            });
          });
        });
      });
    });
    memref::DeallocOp::create(b, loc, Ct);
  });
  return emission.finish({Ap, offTab, Xp});
}

/// The dot form: K dims (outer.., P, Q), A reads y[lead.., P, Q], B the
/// window.
LogicalResult generateDot(RewriterBase &rewriter, ImplicitGemm &ig, const GemmSchedule &s) {
  linalg::LinalgOp op = ig.op;
  if (!ig.batchDims.empty() || ig.kDims.size() < 2 || ig.mDims.empty() || ig.nDims.empty())
    return failure();
  unsigned P = ig.kDims[ig.kDims.size() - 2], Q = ig.kDims.back();
  SmallVector<unsigned> outer(ig.kDims.begin(), ig.kDims.end() - 2);
  Value C = op.getDpsInitOperand(0)->get();
  auto cType = dyn_cast<MemRefType>(C.getType());
  if (!cType || !cType.getElementType().isF32() || (ig.cond && ig.condOnA))
    return failure();
  auto isOuter = [&](unsigned d) { return llvm::is_contained(outer, d); };
  auto isN = [&](unsigned d) { return llvm::is_contained(ig.nDims, d); };
  auto isM = [&](unsigned d) { return llvm::is_contained(ig.mDims, d); };
  std::optional<SeparableRead> srB = analyzeSeparableRead(ig);
  ImplicitGemm swapped = ig;
  swapped.swapOperands();
  std::optional<SeparableRead> srA = analyzeSeparableRead(swapped);
  if (!srA || !srB)
    return failure();
  std::optional<PlaneRead> prB =
      analyzePlaneRead(ig, *srB, P, Q, isN, [&](unsigned d) { return isN(d) || isOuter(d); });
  std::optional<PlaneRead> prA = analyzePlaneRead(
      ig, *srA, P, Q, [](unsigned) { return false; },
      [&](unsigned d) { return isM(d) || isOuter(d); });
  // A's planes are exactly the P x Q points, read at (P, Q) itself: their
  // padded columns are zeros. (A read at q + 1 would take the next row's
  // first element in the padded column, and read past its plane.)
  if (!prA || !prB || prA->padH != 0 || prA->padW != 0 || prA->H != ig.ranges[P] ||
      prA->W != ig.ranges[Q] || prA->rowForm().constant != 0 || prA->colForm().constant != 0)
    return failure();
  // The register tile: MRd rows of A by NBd columns of B, one vector
  // accumulator each. The schedule's GEMM tile tells the register file:
  // AVX-512's 8 x 32 keeps 16 vectors of 16 lanes (4 x 4 here; 4 x 6 and
  // 3 x 8 measured 3-5% slower on Zen 4); AVX2's 6 x 16 keeps 6, where
  // 16-lane vectors (two registers each) leave room for 2 x 2 only and the
  // kernel ran load-bound (29.0 ms against the implicit GEMM's 22.5 for the
  // 56x56 weight gradient, AVX2 code on Zen 4): there, 8-lane vectors and
  // 2 x 5 (19.4 ms; 3 x 3 19.8, 2 x 4 20.2, 3 x 4 and 2 x 6 spill: 41-43).
  int64_t budget = s.mr * (s.nr / cpuGemmVectorWidth(cType.getElementType()));
  int64_t V = budget >= 16 ? 16 : 8, MRd = budget >= 16 ? 4 : 2, NBd = budget >= 16 ? 4 : 5;
  bool overwrite = op->hasAttr(kOverwriteAttrName);
  int64_t Wp = std::max({ig.ranges[Q], prA->width, prB->width});
  if ((Wp - ig.ranges[Q]) * 5 > Wp)
    return failure();
  int64_t length = roundUp(ig.ranges[P] * Wp, V);
  int64_t planeA = roundUp(std::max(prA->rows * Wp, length), V);
  int64_t maxTap = (prB->rowTapMax + prB->padH) * Wp + prB->colTapMax + prB->padW;
  int64_t planeB = roundUp(std::max(prB->rows * Wp, length + maxTap), V);
  if (prA->numPlanes * planeA >= (int64_t(1) << 31) ||
      prB->numPlanes * planeB >= (int64_t(1) << 31))
    return failure();
  int64_t M = ig.problem.m, N = ig.problem.n;
  int64_t numIb = (M + MRd - 1) / MRd, numJb = (N + NBd - 1) / NBd;
  int64_t numOuter = 1;
  for (unsigned d : outer)
    numOuter *= ig.ranges[d];

  Type elem = cType.getElementType();
  Emission emission(rewriter, ig, elem, V);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  GemmBuilder &g = emission.g;
  PlaneBuilder &pb = emission.pb;
  Value aTab = pb.offsetTable(*prA, Wp, planeA, ig.mDims, {}, numIb * MRd, M);
  Value bTab = pb.offsetTable(*prB, Wp, planeB, ig.nDims, {}, numJb * NBd, N);
  Value Ap = pb.planes(*prA, Wp, planeA, s.threads);
  Value Bp = pb.planes(*prB, Wp, planeB, s.threads);
  auto rowType = g.vecType();
  g.outerLoops(numIb, numJb, s.threads, [&](ValueRange ivs) {
    Value ib = ivs[0], jb = ivs[1];
    SmallVector<Value> aRow, bCol;
    for (int64_t r = 0; r < MRd; ++r)
      aRow.push_back(memref::LoadOp::create(b, loc, aTab, g.add(g.mul(ib, g.idx(MRd)), g.idx(r))));
    for (int64_t c = 0; c < NBd; ++c)
      bCol.push_back(memref::LoadOp::create(b, loc, bTab, g.add(g.mul(jb, g.idx(NBd)), g.idx(c))));
    SmallVector<Value> zeros(MRd * NBd, g.zeroVec());
    auto outerLoop = scf::ForOp::create(b, loc, g.idx(0), g.idx(numOuter), g.idx(1), zeros);
    {
      OpBuilder::InsertionGuard og(b);
      b.setInsertionPointToStart(outerLoop.getBody());
      SmallVector<Value> point(ig.ranges.size(), g.idx(0));
      if (!outer.empty())
        ig.split(b, loc, outerLoop.getInductionVar(), outer, point);
      Value aOuter = pb.offset(*prA, Wp, planeA, outer, point, false);
      Value bOuter = pb.offset(*prB, Wp, planeB, outer, point, false);
      SmallVector<Value> aBase, bBase;
      for (Value a : aRow)
        aBase.push_back(g.add(a, aOuter));
      for (Value c : bCol)
        bBase.push_back(g.add(c, bOuter));
      auto oLoop = scf::ForOp::create(b, loc, g.idx(0), g.idx(length), g.idx(V),
                                      outerLoop.getRegionIterArgs());
      {
        OpBuilder::InsertionGuard ig2(b);
        b.setInsertionPointToStart(oLoop.getBody());
        Value o = oLoop.getInductionVar();
        ValueRange acc = oLoop.getRegionIterArgs();
        SmallVector<Value> av, bv, next;
        for (Value a : aBase)
          av.push_back(vector::LoadOp::create(b, loc, rowType, Ap, ValueRange{g.add(a, o)}));
        for (Value c : bBase)
          bv.push_back(vector::LoadOp::create(b, loc, rowType, Bp, ValueRange{g.add(c, o)}));
        for (int64_t r = 0; r < MRd; ++r)
          for (int64_t c = 0; c < NBd; ++c)
            next.push_back(vector::FMAOp::create(b, loc, av[r], bv[c], acc[r * NBd + c]));
        scf::YieldOp::create(b, loc, next);
      }
      scf::YieldOp::create(b, loc, oLoop.getResults());
    }
    // C[m, n] += the sums (= under neo.overwrite) for the rows and columns
    // inside M and N; m's and n's dims split once each.
    SmallVector<SmallVector<Value>> rowPoints, colPoints;
    SmallVector<Value> rowInside, colInside;
    for (int64_t r = 0; r < MRd; ++r) {
      Value m = g.add(g.mul(ib, g.idx(MRd)), g.idx(r));
      rowPoints.emplace_back(ig.ranges.size(), g.idx(0));
      ig.split(b, loc, g.min(m, g.idx(M - 1)), ig.mDims, rowPoints.back());
      rowInside.push_back(g.lt(m, g.idx(M)));
    }
    for (int64_t c = 0; c < NBd; ++c) {
      Value n = g.add(g.mul(jb, g.idx(NBd)), g.idx(c));
      colPoints.emplace_back(ig.ranges.size(), g.idx(0));
      ig.split(b, loc, g.min(n, g.idx(N - 1)), ig.nDims, colPoints.back());
      colInside.push_back(g.lt(n, g.idx(N)));
    }
    for (int64_t r = 0; r < MRd; ++r)
      for (int64_t c = 0; c < NBd; ++c) {
        Value sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD,
                                                outerLoop.getResult(r * NBd + c),
                                                arith::FastMathFlags::reassoc);
        Value inside = arith::AndIOp::create(b, loc, rowInside[r], colInside[c]);
        auto branch = scf::IfOp::create(b, loc, TypeRange{}, inside, /*withElse=*/false);
        OpBuilder::InsertionGuard inBranch(b);
        b.setInsertionPointToStart(&branch.getThenRegion().front());
        SmallVector<Value> point(rowPoints[r]);
        for (unsigned d : ig.nDims)
          point[d] = colPoints[c][d];
        SmallVector<Value> out = ig.outIndicesAt(point);
        if (!overwrite)
          sum = arith::AddFOp::create(b, loc, memref::LoadOp::create(b, loc, C, out), sum);
        memref::StoreOp::create(b, loc, sum, C, out);
      }
  });
  return emission.finish({aTab, bTab, Ap, Bp});
}
} // namespace

LogicalResult mlir::neo::generateCpuDirectConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                                                      const GemmSchedule &s) {
  std::optional<ImplicitGemm> analysis = analyzeImplicitGemm(op);
  if (!analysis || op.getNumDpsInits() != 1 ||
      llvm::any_of(analysis->ranges, [](int64_t r) { return r < 1; }))
    return failure();
  int64_t V = cpuGemmVectorWidth(getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()));
  if (!schedules::checkCpuGemm(s, V).empty())
    return failure();
  // Either operand may be the window read.
  for (int swap = 0; swap < 2; ++swap) {
    ImplicitGemm ig = *analysis;
    if (swap)
      ig.swapOperands();
    if (succeeded(generateDirect(rewriter, ig, s)))
      return success();
  }
  for (int swap = 0; swap < 2; ++swap) {
    ImplicitGemm ig = *analysis;
    if (swap)
      ig.swapOperands();
    if (succeeded(generateDot(rewriter, ig, s)))
      return success();
  }
  return failure();
}
