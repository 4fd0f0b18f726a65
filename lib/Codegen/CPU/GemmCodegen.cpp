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
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

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

std::optional<bool> mlir::neo::bInPlaceSetting(llvm::StringRef value) {
  if (value == "auto")
    return hostPrefersBInPlace();
  if (value == "on" || value == "off")
    return value == "on";
  return std::nullopt;
}

bool mlir::neo::gemmReadsBInPlace(const GemmProblem &p, const GemmOperandLayout &b,
                                  const GemmSchedule &s) {
  if (llvm::any_of(ArrayRef<int64_t>{p.batch, p.m, p.n, p.k}, ShapedType::isDynamic))
    return false;
  schedules::CpuGemmBlocks blocks = schedules::clampCpuGemmBlocks(s, p.batch, p.m, p.n, p.k);
  int64_t elemBytes = b.type.getElementTypeBitWidth() / 8;
  return b.lastRole() == 2 && p.n % s.nr == 0 && blocks.nc % s.nr == 0 && p.m <= blocks.mc &&
         p.k * p.n * elemBytes >= (int64_t(1) << 21);
}

LogicalResult mlir::neo::generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                      const GemmSchedule &s, bool bInPlace) {
  // Dynamic sizes and strides: a routine of neo-share-gemms, which every
  // GEMM of its variant calls.
  FailureOr<GemmAnalysis> analysis = analyzeGemmOperands(op, &rewriter, /*allowDynamic=*/true);
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
  bool dynamic = llvm::any_of(ArrayRef<int64_t>{batch, M, N, K}, ShapedType::isDynamic);

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
  // The blocks: clamped to the problem where its sizes are known, else the
  // schedule's (the buffers' sizes) and clamped at run time below.
  schedules::CpuGemmBlocks blocks = dynamic ? schedules::CpuGemmBlocks{s.mc, s.nc, s.kc, 0}
                                            : schedules::clampCpuGemmBlocks(s, batch, M, N, K);
  int64_t MC = blocks.mc, KC = blocks.kc, NC = blocks.nc, numJc = blocks.numJc;
  bool nExact = !dynamic && N % NR == 0 && NC % NR == 0;
  bool mExact = !dynamic && M % MR == 0 && MC % MR == 0;
  // One block of rows and a B of 2 MiB or more (an LSTM's 64 x 4096 x 1024
  // x * W): each B element serves only ceil(M / MR) register tiles, and
  // packing B would first stream all of it from memory without computing.
  // The micro-kernel then reads B's rows in place, where the hardware
  // prefetcher overlaps that stream with the FMAs.
  bool bDirect = bInPlace && gemmReadsBInPlace(problem, LB, s);
  // C is zeros on entry (neo-fold-gemm-fills): the first depth block's
  // accumulators start at zero instead of loading C.
  bool overwrite = op->hasAttr(kOverwriteAttrName);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  GemmBuilder g{rewriter, op.getLoc(), elem, V};
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  // The sizes as values: constants, or the routine's memref sizes. Each role
  // is one index of an operand that has it (nothing is collapsed there).
  auto sizeOf = [&](int role, int64_t known) -> Value {
    if (!ShapedType::isDynamic(known))
      return g.idx(known);
    for (GemmOperandLayout *l : {&LA, &LB, &LC})
      for (auto [i, r] : llvm::enumerate(l->roleOfResult))
        if (r == role)
          return memref::DimOp::create(b, loc, l->mem, i);
    return g.idx(1); // A batch no operand has.
  };
  Value vBatch = sizeOf(0, batch), vM = sizeOf(1, M), vN = sizeOf(2, N), vK = sizeOf(3, K);
  // Blocks at run time (schedules::clampCpuGemmBlocks): mc <= M and nc <= N
  // rounded up to the register tile, kc <= K, and N split over the threads
  // where there are fewer batches than threads.
  Value vMC = g.idx(MC), vKC = g.idx(KC), vNC = g.idx(NC), vNumJc = g.idx(numJc);
  if (dynamic) {
    auto roundUp = [&](Value x, int64_t m) {
      return g.mul(arith::CeilDivSIOp::create(b, loc, x, g.idx(m)), g.idx(m));
    };
    vMC = g.min(vMC, roundUp(vM, MR));
    vKC = g.min(vKC, vK);
    vNC = g.min(vNC, roundUp(vN, NR));
    if (s.threads > 1) {
      Value split =
          g.min(vNC, roundUp(arith::CeilDivSIOp::create(b, loc, vN, g.idx(s.threads)), NR));
      Value worth =
          arith::AndIOp::create(b, loc, g.lt(vBatch, g.idx(s.threads)), g.le(g.idx(2 * NR), vN));
      vNC = arith::SelectOp::create(b, loc, worth, split, vNC);
    }
    vNumJc = arith::CeilDivSIOp::create(b, loc, vN, vNC);
  }
  auto bpType = MemRefType::get({NC / NR, KC, NR}, elem);
  auto apType = MemRefType::get({MC / MR, KC, MR}, elem);
  auto tileType = MemRefType::get({MR, NR}, elem);

  auto body = [&](OpBuilder &, Location, ValueRange ivs) {
    Value bi = ivs[0], jc = g.mul(ivs[1], vNC);
    Value ncs = g.min(vNC, g.sub(vN, jc));
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
    auto transposingPack = [&](Value kc, Value kcs, Value first, bool exact, Value extent,
                               int64_t width, GemmOperandLayout &source, bool rowsAlongM,
                               Value packed, Value panel) -> Value {
      Value k8 = g.mul(arith::DivUIOp::create(b, loc, kcs, g.idx(8)), g.idx(8));
      if (!exact)
        k8 =
            arith::SelectOp::create(b, loc, g.le(g.add(first, g.idx(width)), extent), k8, g.idx(0));
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

    g.loop(g.idx(0), vK, vKC, [&](Value kc) {
      Value kcs = g.min(vKC, g.sub(vK, kc));
      // C starting as zeros (neo.overwrite): the first depth block writes it.
      Value firstBlock =
          overwrite
              ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, kc, g.idx(0)).getResult()
              : Value();
      // Pack B.
      if (!bDirect)
        g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
          Value kFrom = g.idx(0);
          if (bTransposing) {
            // Blocks of 8 depths x 8 columns: 8 vector loads along k, one
            // 8x8 transpose, 8 vector stores into Bp's rows.
            kFrom = transposingPack(kc, kcs, g.add(jc, g.mul(jb, g.idx(NR))), nExact, vN, NR, LB,
                                    /*rowsAlongM=*/false, Bp, jb);
          }
          Value col0 = g.add(jc, g.mul(jb, g.idx(NR)));
          // The panel's rows: plain vector loads, or masked ones (element
          // by element for a B with k innermost) where the panel runs past N.
          auto packRows = [&](bool masked) {
            g.loop(kFrom, kcs, g.idx(1), [&](Value k) {
              Value row = g.add(kc, k);
              for (int64_t t = 0; t < NV; ++t) {
                Value col = g.add(col0, g.idx(t * V));
                if (bRowsContiguous) {
                  SmallVector<Value> at = LB.indices(bi, Value(), col, row);
                  at.pop_back();
                  Value v = g.loadRow(B, at, col, vN, masked);
                  vector::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, g.idx(t * V)});
                  continue;
                }
                // A transposed B: gather the row element by element.
                for (int64_t e = 0; e < V; ++e) {
                  Value c = g.add(col, g.idx(e));
                  Value clamped = masked ? g.min(c, g.sub(vN, g.idx(1))) : c;
                  Value v =
                      memref::LoadOp::create(b, loc, B, LB.indices(bi, Value(), clamped, row));
                  if (masked)
                    v = arith::SelectOp::create(b, loc, g.lt(c, vN), v, g.zero());
                  memref::StoreOp::create(b, loc, v, Bp, ValueRange{jb, k, g.idx(t * V + e)});
                }
              }
            });
          };
          if (nExact) {
            packRows(false);
            return;
          }
          // Masked loads only in the panel that crosses N (on AVX2 they are
          // slower than plain ones).
          auto whole = scf::IfOp::create(b, loc, g.le(g.add(col0, g.idx(NR)), vN),
                                         /*withElse=*/true);
          OpBuilder::InsertionGuard ig(b);
          b.setInsertionPointToStart(&whole.getThenRegion().front());
          packRows(false);
          b.setInsertionPointToStart(&whole.getElseRegion().front());
          packRows(true);
        });
      g.loop(g.idx(0), vM, vMC, [&](Value ic) {
        Value mcs = g.min(vMC, g.sub(vM, ic));
        Value numIb = arith::CeilDivSIOp::create(b, loc, mcs, g.idx(MR));
        // Pack A (rows past M read as zeros).
        g.loop(g.idx(0), numIb, g.idx(1), [&](Value ib) {
          std::optional<OpBuilder::InsertionGuard> edgeGuard;
          // The depths that the scalar loops below pack (all of them unless
          // the transposing path packed a prefix).
          Value kFrom = g.idx(0);
          if (aTransposing) {
            // A partial last panel packs element by element.
            kFrom = transposingPack(kc, kcs, g.add(ic, g.mul(ib, g.idx(MR))), mExact, vM, MR, LA,
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
            auto ifOp = scf::IfOp::create(b, loc, g.le(g.add(row0, g.idx(MR)), vM),
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
            Value clamped = mExact ? rowIdx : g.min(rowIdx, g.sub(vM, g.idx(1)));
            Value valid = mExact ? Value() : g.lt(rowIdx, vM);
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
                         ? arith::AndIOp::create(b, loc, g.le(g.add(row0, g.idx(MR)), vM),
                                                 g.le(g.add(col0, g.idx(NR)), vN))
                               .getResult()
                         : arith::ConstantIntOp::create(b, loc, 0, 1).getResult();
            Value rows = g.min(g.idx(MR), g.sub(vM, row0));
            Value cols = g.min(g.idx(NR), g.sub(vN, col0));
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
              auto copyIn = [&] {
                g.loop(g.idx(0), rows, g.idx(1), [&](Value r) {
                  g.loop(g.idx(0), cols, g.idx(1), [&](Value c) {
                    Value v =
                        memref::LoadOp::create(b, loc, C, cIndices(g.add(row0, r), g.add(col0, c)));
                    memref::StoreOp::create(b, loc, v, scratch, ValueRange{r, c});
                  });
                });
              };
              if (!firstBlock) {
                copyIn();
              } else {
                auto later = scf::IfOp::create(b, loc, firstBlock, /*withElse=*/true);
                OpBuilder::InsertionGuard lg(b);
                b.setInsertionPointToStart(&later.getElseRegion().front());
                copyIn();
              }
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
                return g.loadRow(B, prefix, col, vN, /*masked=*/false);
              };
              g.microKernel(onScratch ? scratch : C, at, Ap, Bp, ib, jb, kcs, MR, NV, firstBlock,
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
  g.outerLoops(vBatch, vNumJc, s.threads > 1 && (dynamic || batch * numJc > 1),
               [&](ValueRange ivs) { body(b, loc, ivs); });
  rewriter.eraseOp(op);
  return success();
}
