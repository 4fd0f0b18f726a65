//===- GemmCodegen.cpp - Packed, register-blocked matrix multiplication ---===//
//
//   parallel (batch, jc) over N in blocks of NC:        [threads]
//     Bp, Ap, tile scratch = alloc
//     for kc over K step KC:
//       pack B[kc:+KC, jc:+NC] into Bp[NC/NR][KC][NR]   (zero-padded)
//       for ic over M step MC:
//         pack A[ic:+MC, kc:+KC] into Ap[MC/MR][KC][MR] (zero-padded)
//         for jr, ir over the block in NR x MR register tiles:
//           acc[MR][NR/V] = C tile (or the scratch tile at the edges)
//           for k in KC: acc[r][t] = fma(bcast(Ap[ir][k][r]), Bp[jr][k][t*V:], acc[r][t])
//           C tile = acc
//
// The accumulators are loop-carried values of the k loop, so LLVM keeps them
// in vector registers; every load of the inner loop is contiguous.
//
//===----------------------------------------------------------------------===//
#include "GemmBuilder.h"
#include "neo/Codegen/CPU/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
using namespace mlir::neo;

int64_t mlir::neo::cpuGemmVectorWidth(Type type) { return type.isF32() ? 16 : 8; }

bool mlir::neo::hostPrefersBInPlace() {
  // Measured faster on Zen 4 only; slower on an Intel Xeon (1.65x) and on a
  // Zen 1-class EPYC (64 x 4096 x 1024, one thread: 19.5 ms packed, 26.7 in
  // place). LLVM names the generations znver1 .. znver5.
  llvm::StringRef cpu = llvm::sys::getHostCPUName();
  unsigned generation = 0;
  return cpu.consume_front("znver") && !cpu.getAsInteger(10, generation) && generation >= 4;
}

LogicalResult mlir::neo::generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                      const GemmSchedule &s, bool bInPlace) {
  FailureOr<GemmAnalysis> analysis = analyzeGemmOperands(op, &rewriter);
  if (failed(analysis))
    return failure();
  const GemmProblem &problem = analysis->problem;
  if (problem.inputType != problem.elementType)
    return failure(); // Mixed precision: GPU tensor cores only.
  GemmOperandLayout &LA = analysis->layouts[0], &LB = analysis->layouts[1],
                    &LC = analysis->layouts[2];
  Value A = LA.mem, B = LB.mem, C = LC.mem;
  Type elem = LC.type.getElementType();
  int64_t V = problem.vectorWidth;
  int64_t batch = problem.batch, M = problem.m, N = problem.n, K = problem.k;
  if (std::string error = schedules::checkCpuGemm(s, V); !error.empty())
    return op->emitOpError("invalid cpu_gemm schedule: ") << error, failure();

  // Vector loads of B rows and direct stores of C tiles need n innermost.
  bool bRowsContiguous = LB.lastRole() == 2;
  bool cRowsContiguous = LC.lastRole() == 2;
  // B with k innermost (A * B^T: a data gradient's W^T) packs by 8x8
  // transposes of f32 where its rows have unit stride.
  bool bTransposing = false;
  {
    SmallVector<int64_t> strides;
    int64_t offset;
    bTransposing = !bRowsContiguous && LB.lastRole() == 3 && elem.isF32() && V % 8 == 0 &&
                   succeeded(LB.type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
  }
  // A with m innermost at unit stride (A^T * B: a weight gradient's X^T)
  // packs a row of a micro-panel (MR consecutive m at one k) by one vector
  // load, where element-by-element packing would read each element alone.
  bool aRowsAlongM = false;
  {
    SmallVector<int64_t> strides;
    int64_t offset;
    aRowsAlongM = LA.lastRole() == 1 && succeeded(LA.type.getStridesAndOffset(strides, offset)) &&
                  strides.back() == 1;
  }
  int64_t MR = s.mr, NR = s.nr, NV = NR / V;
  // A with k innermost at unit stride (x * W, the common case) packs blocks
  // of 8 rows x 8 depths of f32 by 8 vector loads along k and one 8x8
  // transpose, where element-by-element packing made a scalar loop that
  // LLVM's unroller (on in modules with index reads) turned into blocks of
  // hundreds of loads and stores, whose scheduling dominated the compile.
  bool aTransposing = false;
  {
    SmallVector<int64_t> strides;
    int64_t offset;
    aTransposing = !aRowsAlongM && LA.lastRole() == 3 && elem.isF32() && MR % 8 == 0 &&
                   succeeded(LA.type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
  }
  schedules::CpuGemmBlocks blocks = schedules::clampCpuGemmBlocks(s, batch, M, N, K);
  int64_t MC = blocks.mc, KC = blocks.kc, NC = blocks.nc, numJc = blocks.numJc;
  bool nExact = N % NR == 0 && NC % NR == 0;
  bool mExact = M % MR == 0 && MC % MR == 0;
  // One block of rows and a B of 2 MiB or more (an LSTM's 64 x 4096 x 1024
  // x * W): each B element serves only ceil(M / MR) register tiles, and
  // packing B would first stream all of it from memory without computing.
  // The micro-kernel then reads B's rows in place, where the hardware
  // prefetcher overlaps that stream with the FMAs.
  int64_t elemBytes = elem.getIntOrFloatBitWidth() / 8;
  bool bDirect =
      bInPlace && bRowsContiguous && nExact && M <= MC && K * N * elemBytes >= (int64_t(1) << 21);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  GemmBuilder g{rewriter, op.getLoc(), elem, V};
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  auto bpType = MemRefType::get({NC / NR, KC, NR}, elem);
  auto apType = MemRefType::get({MC / MR, KC, MR}, elem);
  auto tileType = MemRefType::get({MR, NR}, elem);

  auto body = [&](OpBuilder &, Location, ValueRange ivs) {
    Value bi = ivs[0], jc = g.mul(ivs[1], g.idx(NC));
    Value ncs = g.min(g.idx(NC), g.sub(g.idx(N), jc));
    Value numJb = arith::CeilDivSIOp::create(b, loc, ncs, g.idx(NR));
    auto alignment = b.getI64IntegerAttr(64);
    Value Bp = bDirect
                   ? Value()
                   : memref::AllocOp::create(b, loc, bpType, ValueRange{}, alignment).getResult();
    Value Ap = memref::AllocOp::create(b, loc, apType, ValueRange{}, alignment);
    Value scratch = memref::AllocOp::create(b, loc, tileType, ValueRange{}, alignment);

    // Packs panel `panel` of `packed` ([panels][KC][width]) from `source`
    // (A or B, k innermost) by blocks of 8 depths x 8 of its width: the 8
    // depths kc + k.. of the panel's elements first + e along M (rowsAlongM)
    // or N are 8 vector loads along k, one 8x8 transpose turns them into 8
    // rows of the panel. Covers the depths [0, k8), k8 the largest multiple
    // of 8 up to kcs, or none where the panel is partial (first + width past
    // `extent`, unless `exact`); returns k8.
    auto transposingPack = [&](Value kc, Value kcs, Value first, bool exact, int64_t extent,
                               int64_t width, GemmOperandLayout &source, bool rowsAlongM,
                               Value packed, Value panel) -> Value {
      Value k8 = g.mul(arith::DivUIOp::create(b, loc, kcs, g.idx(8)), g.idx(8));
      if (!exact)
        k8 = arith::SelectOp::create(b, loc, g.le(g.add(first, g.idx(width)), g.idx(extent)), k8,
                                     g.idx(0));
      auto v8 = VectorType::get({8}, elem);
      g.loop(g.idx(0), k8, g.idx(8), [&](Value k) {
        for (int64_t blk = 0; blk < width / 8; ++blk) {
          SmallVector<Value> vs;
          for (int64_t e = 0; e < 8; ++e) {
            Value element = g.add(first, g.idx(blk * 8 + e));
            vs.push_back(vector::LoadOp::create(
                b, loc, v8, source.mem,
                rowsAlongM ? source.indices(bi, element, Value(), g.add(kc, k))
                           : source.indices(bi, Value(), element, g.add(kc, k))));
          }
          g.transposeSquare(vs);
          for (int64_t r = 0; r < 8; ++r)
            vector::StoreOp::create(b, loc, vs[r], packed,
                                    ValueRange{panel, g.add(k, g.idx(r)), g.idx(blk * 8)});
        }
      });
      return k8;
    };

    g.loop(g.idx(0), g.idx(K), g.idx(KC), [&](Value kc) {
      Value kcs = g.min(g.idx(KC), g.sub(g.idx(K), kc));
      // Pack B.
      if (!bDirect)
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          Value kFrom = g.idx(0);
          if (bTransposing) {
            // Blocks of 8 depths x 8 columns: 8 vector loads along k, one
            // 8x8 transpose, 8 vector stores into Bp's rows.
            kFrom = transposingPack(kc, kcs, g.add(jc, g.mul(jb, g.idx(NR))), nExact, N, NR, LB,
                                    /*rowsAlongM=*/false, Bp, jb);
          }
          g.loop(kFrom, kcs, g.idx(1), [&](Value k) {
            Value row = g.add(kc, k);
            for (int64_t t = 0; t < NV; ++t) {
              Value col = g.add(g.add(jc, g.mul(jb, g.idx(NR))), g.idx(t * V));
              if (bRowsContiguous) {
                SmallVector<Value> at = LB.indices(bi, Value(), col, row);
                at.pop_back();
                Value v = g.loadRow(B, at, col, g.idx(N), !nExact);
                vector::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, g.idx(t * V)});
                continue;
              }
              // A transposed B: gather the row element by element.
              for (int64_t e = 0; e < V; ++e) {
                Value c = g.add(col, g.idx(e));
                Value clamped = nExact ? c : g.min(c, g.idx(N - 1));
                Value v = memref::LoadOp::create(b, loc, B, LB.indices(bi, Value(), clamped, row));
                if (!nExact)
                  v = arith::SelectOp::create(b, loc, g.lt(c, g.idx(N)), v, g.zero());
                memref::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, g.idx(t * V + e)});
              }
            }
          });
        });
      g.loop(g.idx(0), g.idx(M), g.idx(MC), [&](Value ic) {
        Value mcs = g.min(g.idx(MC), g.sub(g.idx(M), ic));
        Value numIb = arith::CeilDivSIOp::create(b, loc, mcs, g.idx(MR));
        // Pack A (rows past M read as zeros).
        g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
          std::optional<OpBuilder::InsertionGuard> edgeGuard;
          // The depths that the scalar loops below pack (all of them unless
          // the transposing path packed a prefix).
          Value kFrom = g.idx(0);
          if (aTransposing) {
            // A partial last panel packs element by element.
            kFrom = transposingPack(kc, kcs, g.add(ic, g.mul(ib, g.idx(MR))), mExact, M, MR, LA,
                                    /*rowsAlongM=*/true, Ap, ib);
          }
          if (aRowsAlongM) {
            // Whole panels: one vector of MR rows per depth.
            Value row0 = g.add(ic, g.mul(ib, g.idx(MR)));
            auto rowsType = VectorType::get({MR}, elem);
            auto packRows = [&]() {
              g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
                Value v = vector::LoadOp::create(b, loc, rowsType, A,
                                                 LA.indices(bi, row0, Value(), g.add(kc, k)));
                vector::StoreOp::create(b, loc, v, Ap, ValueRange{ib, k, g.idx(0)});
              });
            };
            if (mExact) {
              packRows();
              return;
            }
            auto ifOp = scf::IfOp::create(b, loc, g.le(g.add(row0, g.idx(MR)), g.idx(M)),
                                          /*withElse=*/true);
            {
              OpBuilder::InsertionGuard ig(b);
              b.setInsertionPointToStart(&ifOp.getThenRegion().front());
              packRows();
            }
            // The last, partial panel element by element (below).
            edgeGuard.emplace(b);
            b.setInsertionPointToStart(&ifOp.getElseRegion().front());
          }
          for (int64_t r = 0; r < MR; ++r) {
            Value rowIdx = g.add(g.add(ic, g.mul(ib, g.idx(MR))), g.idx(r));
            Value clamped = mExact ? rowIdx : g.min(rowIdx, g.idx(M - 1));
            Value valid = mExact ? Value() : g.lt(rowIdx, g.idx(M));
            g.loop(kFrom, kcs, g.idx(1), [&](Value k) {
              Value v = memref::LoadOp::create(b, loc, A,
                                               LA.indices(bi, clamped, Value(), g.add(kc, k)));
              if (valid)
                v = arith::SelectOp::create(b, loc, valid, v, g.zero());
              memref::StoreOp::create(b, loc, v, Ap, ValueRange{ib, k, g.idx(r)});
            });
          }
        });
        // Register tiles.
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
            Value row0 = g.add(ic, g.mul(ib, g.idx(MR)));
            Value col0 = g.add(jc, g.mul(jb, g.idx(NR)));
            bool exact = nExact && mExact && cRowsContiguous;
            Value full;
            if (!exact)
              full = cRowsContiguous
                         ? arith::AndIOp::create(b, loc, g.le(g.add(row0, g.idx(MR)), g.idx(M)),
                                                 g.le(g.add(col0, g.idx(NR)), g.idx(N)))
                               .getResult()
                         : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
            Value rows = g.min(g.idx(MR), g.sub(g.idx(M), row0));
            Value cols = g.min(g.idx(NR), g.sub(g.idx(N), col0));
            auto cIndices = [&](Value r, Value c) { return LC.indices(bi, r, c, Value()); };
            // Edge tiles go through the scratch tile.
            scf::IfOp edgeIf;
            if (!exact) {
              auto ifOp = scf::IfOp::create(b, loc, full, /*withElse=*/true);
              edgeIf = ifOp;
              OpBuilder::InsertionGuard ig(b);
              b.setInsertionPointToStart(&ifOp.getElseRegion().front());
              for (int64_t r = 0; r < MR; ++r)
                for (int64_t t = 0; t < NV; ++t)
                  vector::StoreOp::create(b, loc, g.zeroVec(), scratch,
                                          ValueRange{g.idx(r), g.idx(t * V)});
              g.loop(g.idx(0), rows, g.idx(1), [&](Value r) {
                g.loop(g.idx(0), cols, g.idx(1), [&](Value c) {
                  Value v = memref::LoadOp::create(b, loc, C,
                                                   cIndices(g.add(row0, r), g.add(col0, c)));
                  memref::StoreOp::create(b, loc, v, scratch, ValueRange{r, c});
                });
              });
            }
            // The micro-kernel, on C or on the scratch tile.
            auto kernel = [&](bool onScratch) {
              auto at = [&](int64_t r, int64_t t) -> SmallVector<Value> {
                if (onScratch)
                  return {g.idx(r), g.idx(t * V)};
                return cIndices(g.add(row0, g.idx(r)), g.add(col0, g.idx(t * V)));
              };
              auto bInPlace = [&](Value k, int64_t t) {
                Value col = g.add(col0, g.idx(t * V));
                SmallVector<Value> prefix = LB.indices(bi, Value(), col, g.add(kc, k));
                prefix.pop_back();
                return g.loadRow(B, prefix, col, g.idx(N), /*masked=*/false);
              };
              g.microKernel(onScratch ? scratch : C, at, Ap, Bp, ib, jb, kcs, MR, NV,
                            bDirect ? function_ref<Value(Value, int64_t)>(bInPlace) : nullptr);
            };
            if (exact) {
              kernel(false);
              return;
            }
            scf::IfOp ifOp = edgeIf;
            {
              OpBuilder::InsertionGuard ig(b);
              b.setInsertionPoint(ifOp.getThenRegion().front().getTerminator());
              kernel(false);
              b.setInsertionPoint(ifOp.getElseRegion().front().getTerminator());
              kernel(true);
              g.loop(g.idx(0), rows, g.idx(1), [&](Value r) {
                g.loop(g.idx(0), cols, g.idx(1), [&](Value c) {
                  Value v = memref::LoadOp::create(b, loc, scratch, ValueRange{r, c});
                  memref::StoreOp::create(b, loc, v, C, cIndices(g.add(row0, r), g.add(col0, c)));
                });
              });
            }
          });
        });
      });
    });
    if (Bp)
      memref::DeallocOp::create(b, loc, Bp);
    memref::DeallocOp::create(b, loc, Ap);
    memref::DeallocOp::create(b, loc, scratch);
  };

  // The outer loops run in parallel (scf.parallel) when threads > 1.
  g.outerLoops(batch, numJc, s.threads, [&](ValueRange ivs) { body(b, loc, ivs); });
  rewriter.eraseOp(op);
  return success();
}
