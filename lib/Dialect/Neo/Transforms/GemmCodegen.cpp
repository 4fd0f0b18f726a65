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
#include "neo/Dialect/Neo/Transforms/Schedule.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::neo;

FailureOr<GemmSchedule> GemmSchedule::fromAttr(DictionaryAttr dict, std::string &error) {
  GemmSchedule s;
  for (NamedAttribute a : dict) {
    auto v = dyn_cast<IntegerAttr>(a.getValue());
    if (!v) {
      error = "gemm schedule field '" + a.getName().str() + "' must be an integer";
      return failure();
    }
    int64_t x = v.getInt();
    StringRef n = a.getName().strref();
    if (n == "mr") s.mr = x;
    else if (n == "nr") s.nr = x;
    else if (n == "mc") s.mc = x;
    else if (n == "nc") s.nc = x;
    else if (n == "kc") s.kc = x;
    else if (n == "threads") s.threads = x;
    else {
      error = "unknown gemm schedule field '" + n.str() + "'";
      return failure();
    }
  }
  return s;
}

DictionaryAttr GemmSchedule::toAttr(MLIRContext *ctx) const {
  Builder b(ctx);
  return b.getDictionaryAttr({b.getNamedAttr("mr", b.getI64IntegerAttr(mr)),
                              b.getNamedAttr("nr", b.getI64IntegerAttr(nr)),
                              b.getNamedAttr("mc", b.getI64IntegerAttr(mc)),
                              b.getNamedAttr("nc", b.getI64IntegerAttr(nc)),
                              b.getNamedAttr("kc", b.getI64IntegerAttr(kc)),
                              b.getNamedAttr("threads", b.getI64IntegerAttr(threads))});
}

bool GemmSchedule::isValid(int64_t vectorWidth, std::string &error) const {
  if (mr < 1 || mr > 32 || nr < vectorWidth || nr % vectorWidth != 0 || nr / vectorWidth > 8) {
    error = "the register tile must have 1 <= mr <= 32 and nr a multiple of " +
            std::to_string(vectorWidth) + " of at most 8 vectors";
    return false;
  }
  if (mr * (nr / vectorWidth) > 30) {
    error = "the register tile needs more than 30 vector registers";
    return false;
  }
  if (mc < mr || mc % mr != 0 || nc < nr || nc % nr != 0 || kc < 1) {
    error = "cache blocks must be positive multiples of the register tile";
    return false;
  }
  if (mc * kc > (int64_t(1) << 24) || nc * kc > (int64_t(1) << 24)) {
    error = "cache blocks are too large";
    return false;
  }
  if (threads < 1 || threads > 256) {
    error = "threads must be between 1 and 256";
    return false;
  }
  return true;
}

namespace {
/// Where each contraction role (batch, m, n, k) sits in an operand's indices.
struct OperandLayout {
  Value mem;
  MemRefType type;
  SmallVector<int, 4> roleOfResult; // per index: 0 batch, 1 m, 2 n, 3 k
  int lastRole() const { return roleOfResult.back(); }
  SmallVector<Value> indices(Value batch, Value m, Value n, Value k) const {
    SmallVector<Value> out;
    for (int role : roleOfResult)
      out.push_back(role == 0 ? batch : role == 1 ? m : role == 2 ? n : k);
    return out;
  }
};
} // namespace

std::string GemmProblem::key() const {
  return "gemm " + elementType + " batch=" + std::to_string(batch) + " m=" + std::to_string(m) +
         " n=" + std::to_string(n) + " k=" + std::to_string(this->k) + " layout=" + layout +
         (inputType.empty() || inputType == elementType ? "" : " in=" + inputType);
}

FailureOr<GemmProblem> mlir::neo::analyzeGemm(linalg::LinalgOp op) {
  IRRewriter rewriter(op.getContext());
  GemmProblem problem;
  if (failed(generateGemm(rewriter, op, GemmSchedule(), &problem)))
    return failure();
  return problem;
}

LogicalResult mlir::neo::generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                      const GemmSchedule &s, GemmProblem *analyzeOnly) {
  // A contraction C[batch, m, n] += A[.. m, k ..] * B[.. k, n ..] whose
  // operands are indexed by (a permutation of) their roles.
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  // The operand that holds C's innermost dim plays B (its rows are vectorized).
  bool swapped = false;
  {
    AffineMap cMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (cMap.getNumResults() > 0 && cMap.isProjectedPermutation()) {
      unsigned inner = cast<AffineDimExpr>(cMap.getResults().back()).getPosition();
      if (llvm::is_contained(dims->m, inner)) {
        std::swap(dims->m, dims->n);
        swapped = true;
      }
    }
  }
  // NCHW-style layouts: a leading m or n dim of C that is cut off from the
  // rest of its role (y[n, k, h, w] with n, h, w all n dims) becomes an outer
  // batch dim, which the operand without it simply ignores.
  if (dims->batch.empty()) {
    AffineMap cMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (cMap.getNumResults() > 0 && cMap.isProjectedPermutation()) {
      unsigned lead = cast<AffineDimExpr>(cMap.getResult(0)).getPosition();
      for (SmallVector<unsigned, 2> *role : {&dims->m, &dims->n}) {
        if (role->size() < 2 || !llvm::is_contained(*role, lead) || cMap.getNumResults() < 2)
          continue;
        unsigned next = cast<AffineDimExpr>(cMap.getResult(1)).getPosition();
        if (llvm::is_contained(*role, next))
          continue;
        dims->batch.push_back(lead);
        role->erase(llvm::find(*role, lead));
      }
    }
  }
  SmallVector<SmallVector<unsigned, 2> *> roleDims = {&dims->batch, &dims->m, &dims->n,
                                                     &dims->k};
  auto roleOf = [&](unsigned d) -> int {
    for (int r = 0; r < 4; ++r)
      if (llvm::is_contained(*roleDims[r], d))
        return r;
    return -1;
  };
  // Each role's dims must form one run of consecutive indices, in one order,
  // in every operand that has them: such runs collapse into one index.
  SmallVector<SmallVector<unsigned>> order(4);
  SmallVector<OperandLayout> layouts;
  SmallVector<OpOperand *> operands = {op.getDpsInputOperand(swapped ? 1 : 0),
                                       op.getDpsInputOperand(swapped ? 0 : 1),
                                       op.getDpsInitOperand(0)};
  for (OpOperand *operandPtr : operands) {
    OpOperand &operand = *operandPtr;
    OperandLayout layout;
    layout.mem = operand.get();
    layout.type = dyn_cast<MemRefType>(layout.mem.getType());
    if (!layout.type || !layout.type.hasStaticShape())
      return failure();
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return failure();
    SmallVector<ReassociationIndices> groups;
    SmallVector<int> seen(4, 0);
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      int role = roleOf(d);
      if (role < 0)
        return failure();
      if (layout.roleOfResult.empty() || layout.roleOfResult.back() != role) {
        if (seen[role]++)
          return failure(); // A role split in two runs.
        layout.roleOfResult.push_back(role);
        groups.emplace_back();
      }
      groups.back().push_back(i);
    }
    // The order of each role's dims must agree across operands.
    for (auto [g, role] : llvm::zip(groups, layout.roleOfResult)) {
      SmallVector<unsigned> dimsInRun;
      for (int64_t i : g)
        dimsInRun.push_back(cast<AffineDimExpr>(map.getResult(i)).getPosition());
      if (dimsInRun.size() != roleDims[role]->size())
        return failure();
      if (order[role].empty())
        order[role] = dimsInRun;
      else if (order[role] != dimsInRun)
        return failure();
    }
    if (llvm::any_of(groups, [](auto &g) { return g.size() > 1; })) {
      if (!memref::CollapseShapeOp::isGuaranteedCollapsible(layout.type, groups))
        return failure();
      if (analyzeOnly) {
        layout.type = memref::CollapseShapeOp::computeCollapsedType(layout.type, groups);
      } else {
        rewriter.setInsertionPoint(op);
        auto collapsed =
            memref::CollapseShapeOp::create(rewriter, op.getLoc(), layout.mem, groups);
        layout.mem = collapsed.getResult();
        layout.type = collapsed.getResultType();
      }
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(layout.type.getStridesAndOffset(strides, offset)) ||
        (!strides.empty() && strides.back() != 1))
      return failure();
    if (analyzeOnly)
      for (auto [i, role] : llvm::enumerate(layout.roleOfResult))
        analyzeOnly->strides[layouts.size()][role] = strides[i];
    layouts.push_back(layout);
  }
  auto extent = [&](int role) {
    int64_t e = 1;
    for (unsigned d : *roleDims[role])
      e *= ranges[d];
    return e;
  };
  OperandLayout &LA = layouts[0], &LB = layouts[1], &LC = layouts[2];
  Value A = LA.mem, B = LB.mem, C = LC.mem;
  Type elem = LC.type.getElementType();
  Type inElem = LA.type.getElementType();
  auto typeName = [](Type t) {
    return t.isF16() ? "f16" : t.isBF16() ? "bf16" : t.isF32() ? "f32" : t.isF64() ? "f64" : "?";
  };
  if (analyzeOnly && LB.type.getElementType() == inElem &&
      ((inElem.isF16() || inElem.isBF16()) && elem.isF32())) {
    // Mixed precision (f16/bf16 products accumulated in f32): GPU tensor cores
    // only; the CPU generator below needs one element type.
    analyzeOnly->inputType = typeName(inElem);
  } else if (LA.type.getElementType() != elem || LB.type.getElementType() != elem ||
             !(elem.isF32() || elem.isF64())) {
    return failure();
  }
  int64_t V = elem.isF32() ? 16 : 8;
  int64_t batch = extent(0), M = extent(1), N = extent(2), K = extent(3);
  if (analyzeOnly) {
    analyzeOnly->elementType = typeName(elem);
    if (analyzeOnly->inputType.empty())
      analyzeOnly->inputType = analyzeOnly->elementType;
    analyzeOnly->aInput = swapped ? 1 : 0;
    analyzeOnly->batch = batch;
    analyzeOnly->m = M;
    analyzeOnly->n = N;
    analyzeOnly->k = K;
    analyzeOnly->vectorWidth = V;
    const char *roleNames = "bmnk";
    analyzeOnly->layout.clear();
    for (auto [i, l] : llvm::enumerate(layouts)) {
      if (i)
        analyzeOnly->layout += ",";
      for (int role : l.roleOfResult)
        analyzeOnly->layout += roleNames[role];
    }
    return success();
  }
  std::string error;
  if (!s.isValid(V, error))
    return op->emitOpError("invalid gemm schedule: ") << error, failure();

  // Vector loads of B rows and direct stores of C tiles need n innermost.
  bool bRowsContiguous = LB.lastRole() == 2;
  bool cRowsContiguous = LC.lastRole() == 2;
  int64_t MR = s.mr, NR = s.nr, NV = NR / V;
  int64_t MC = std::min(s.mc, (M + MR - 1) / MR * MR);
  int64_t KC = std::min(s.kc, K);
  // Enough N blocks for the threads when N allows it.
  int64_t NC = std::min(s.nc, (N + NR - 1) / NR * NR);
  if (s.threads > 1 && batch < s.threads && N >= 2 * NR) {
    int64_t perThread = (N + s.threads - 1) / s.threads;
    NC = std::min(NC, (perThread + NR - 1) / NR * NR);
  }
  int64_t numJc = (N + NC - 1) / NC;
  bool nExact = N % NR == 0 && NC % NR == 0;
  bool mExact = M % MR == 0 && MC % MR == 0;

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
    Value Bp = memref::AllocOp::create(b, loc, bpType, ValueRange{}, alignment);
    Value Ap = memref::AllocOp::create(b, loc, apType, ValueRange{}, alignment);
    Value scratch = memref::AllocOp::create(b, loc, tileType, ValueRange{}, alignment);

    g.loop(g.idx(0), g.idx(K), g.idx(KC), [&](Value kc) {
      Value kcs = g.min(g.idx(KC), g.sub(g.idx(K), kc));
      // Pack B.
      g.loop(g.idx(0), numJb, g.idx(1), [&](Value jb) {
        g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
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
          for (int64_t r = 0; r < MR; ++r) {
            Value rowIdx = g.add(g.add(ic, g.mul(ib, g.idx(MR))), g.idx(r));
            Value clamped = mExact ? rowIdx : g.min(rowIdx, g.idx(M - 1));
            Value valid = mExact ? Value() : g.lt(rowIdx, g.idx(M));
            g.loop(g.idx(0), kcs, g.idx(1), [&](Value k) {
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
              g.microKernel(onScratch ? scratch : C, at, Ap, Bp, ib, jb, kcs, MR, NV);
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
    memref::DeallocOp::create(b, loc, Bp);
    memref::DeallocOp::create(b, loc, Ap);
    memref::DeallocOp::create(b, loc, scratch);
  };

  // The outer loops run in parallel (scf.parallel) when threads > 1.
  if (s.threads > 1 && batch * numJc > 1) {
    auto par = scf::ParallelOp::create(b, loc, ValueRange{g.idx(0), g.idx(0)},
                                       ValueRange{g.idx(batch), g.idx(numJc)},
                                       ValueRange{g.idx(1), g.idx(1)});
    OpBuilder::InsertionGuard pg(b);
    b.setInsertionPointToStart(par.getBody());
    body(b, loc, par.getInductionVars());
  } else {
    auto outer = scf::ForOp::create(b, loc, g.idx(0), g.idx(batch), g.idx(1));
    OpBuilder::InsertionGuard og(b);
    b.setInsertionPointToStart(outer.getBody());
    auto inner = scf::ForOp::create(b, loc, g.idx(0), g.idx(numJc), g.idx(1));
    b.setInsertionPointToStart(inner.getBody());
    body(b, loc, ValueRange{outer.getInductionVar(), inner.getInductionVar()});
  }
  rewriter.eraseOp(op);
  return success();
}
