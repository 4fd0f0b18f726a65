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
#include "neo/Codegen/Utils/ImplicitGemm.h"
#include "neo/Codegen/CPU/Schedule.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;
using namespace mlir::neo;

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
  if (std::string error = schedules::checkCpuGemm(s, V); !error.empty())
    return op->emitOpError("invalid cpu_gemm schedule: ") << error, failure();
  int64_t batch = ig.problem.batch, M = ig.problem.m, N = ig.problem.n, K = ig.problem.k;
  int64_t MR = s.mr, NR = s.nr, NV = NR / V;
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

  auto body = [&](ValueRange ivs) {
    Value bi = ivs[0], jc = g.mul(ivs[1], g.idx(NC));
    Value ncs = g.min(g.idx(NC), g.sub(g.idx(N), jc));
    Value numJb = arith::CeilDivSIOp::create(b, loc, ncs, g.idx(NR));
    auto alignment = b.getI64IntegerAttr(64);
    Value Bp = memref::AllocOp::create(b, loc, bpType, ValueRange{}, alignment);
    Value Ap = memref::AllocOp::create(b, loc, apType, ValueRange{}, alignment);
    Value Cp = memref::AllocOp::create(b, loc, cpType, ValueRange{}, alignment);
    Value nTab = memref::AllocOp::create(b, loc, tableType(ig.nDims, NC));
    Value mTab = memref::AllocOp::create(b, loc, tableType(ig.mDims, MC));
    Value kTab = memref::AllocOp::create(b, loc, tableType(ig.kDims, KC));
    SmallVector<Value> base(ig.ranges.size(), g.idx(0));
    if (!ig.batchDims.empty())
      ig.split(b, loc, bi, ig.batchDims, base);
    fillTable(nTab, ig.nDims, jc, NC, N);
    g.loop(g.idx(0), g.idx(M), g.idx(MC), [&](Value ic) {
      Value mcs = g.min(g.idx(MC), g.sub(g.idx(M), ic));
      Value numIb = arith::CeilDivSIOp::create(b, loc, mcs, g.idx(MR));
      linalg::FillOp::create(b, loc, g.zero(), Cp);
      fillTable(mTab, ig.mDims, ic, MC, M);
      g.loop(g.idx(0), g.idx(K), g.idx(KC), [&](Value kc) {
        Value kcs = g.min(g.idx(KC), g.sub(g.idx(K), kc));
        fillTable(kTab, ig.kDims, kc, KC, K);
        // Pack B: columns past N read as zeros.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
            SmallVector<Value> at(base);
            readTable(kTab, ig.kDims, k, at);
            Value c0 = g.mul(jb, g.idx(NR));
            g.loop(g.idx(0), g.idx(NR), g.idx(1), [&](Value e) {
              Value c = g.add(c0, e);
              SmallVector<Value> point(at);
              readTable(nTab, ig.nDims, c, point);
              Value v = ig.loadBAt(b, loc, point);
              if (N % NR != 0 || NC % NR != 0)
                v = arith::SelectOp::create(b, loc, g.lt(g.add(jc, c), g.idx(N)), v, g.zero());
              memref::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, e});
            });
          });
        });
        // Pack A: rows past M read as zeros.
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
              memref::StoreOp::create(b, loc, v, Ap, ValueRange{ib, k, g.idx(r)});
            }
          });
        });
        // Register tiles of Cp.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
            auto at = [&](int64_t r, int64_t t) -> SmallVector<Value> {
              return {ib, jb, g.idx(r), g.idx(t * V)};
            };
            g.microKernel(Cp, at, Ap, Bp, ib, jb, kcs, MR, NV);
          });
        });
      });
      // C += Cp over the valid rows and columns.
      g.loop(g.idx(0), mcs, g.idx(1), [&](Value r) {
        SmallVector<Value> at(base);
        readTable(mTab, ig.mDims, r, at);
        Value ib = arith::DivUIOp::create(b, loc, r, g.idx(MR));
        Value ir = arith::RemUIOp::create(b, loc, r, g.idx(MR));
        g.loop(g.idx(0), ncs, g.idx(1), [&](Value c) {
          SmallVector<Value> point(at);
          readTable(nTab, ig.nDims, c, point);
          Value jb = arith::DivUIOp::create(b, loc, c, g.idx(NR));
          Value jr = arith::RemUIOp::create(b, loc, c, g.idx(NR));
          Value part = memref::LoadOp::create(b, loc, Cp, ValueRange{ib, jb, ir, jr});
          SmallVector<Value> out = ig.outIndicesAt(point);
          Value old = memref::LoadOp::create(b, loc, C, out);
          memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, old, part), C, out);
        });
      });
    });
    for (Value buffer : {Bp, Ap, Cp, nTab, mTab, kTab})
      memref::DeallocOp::create(b, loc, buffer);
  };

  g.outerLoops(batch, numJc, s.threads, body);
  rewriter.eraseOp(op);
  return success();
}
