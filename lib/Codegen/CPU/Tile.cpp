//===- Tile.cpp - neo-tile: CPU schedules of linalg ops --------------------===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOTILE
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

#include <numeric>

using namespace mlir;
using namespace mlir::neo;

/// Whether `expr` never decreases when dim `d` grows. Tiling takes the slice
/// of an operand from the indices at the first and last point of a tile,
/// which is right only for such indices (`63 - i` reads a reversed slice).
static bool isMonotoneIn(AffineExpr expr, unsigned d) {
  if (!expr.isFunctionOfDim(d))
    return true;
  switch (expr.getKind()) {
  case AffineExprKind::DimId: return true;
  case AffineExprKind::Add: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    return isMonotoneIn(bin.getLHS(), d) && isMonotoneIn(bin.getRHS(), d);
  }
  case AffineExprKind::Mul: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    auto lhsConst = dyn_cast<AffineConstantExpr>(bin.getLHS());
    auto rhsConst = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (rhsConst)
      return rhsConst.getValue() >= 0 && isMonotoneIn(bin.getLHS(), d);
    if (lhsConst)
      return lhsConst.getValue() >= 0 && isMonotoneIn(bin.getRHS(), d);
    return false;
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    auto divisor = dyn_cast<AffineConstantExpr>(bin.getRHS());
    return divisor && divisor.getValue() > 0 && isMonotoneIn(bin.getLHS(), d);
  }
  default: return false; // mod, symbols
  }
}

/// Whether the operands of `op` may be sliced into tiles: upstream tiling
/// computes the slice of every operand dim (tiled or not) from its index at
/// the first and the last point, so each index must be monotone in every loop.
static bool canTile(linalg::LinalgOp op) {
  unsigned numLoops = op.getNumLoops();
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      for (unsigned d = 0; d < numLoops; ++d)
        if (!isMonotoneIn(e, d))
          return false;
  return true;
}

/// The multiple that tile offsets along loop `d` must be for the tiled op to
/// read what the whole op reads: a tile re-bases its indices at 0, which
/// `(i + o) floordiv k = i floordiv k + o floordiv k` allows only when k
/// divides the offset o (`y[i] = x[i // 2]` tiled by 3 read x[1] for i = 4).
static int64_t tileAlignment(linalg::LinalgOp op, unsigned d) {
  int64_t align = 1;
  for (AffineMap map : op.getIndexingMapsArray())
    for (AffineExpr e : map.getResults())
      e.walk([&](AffineExpr x) {
        auto bin = dyn_cast<AffineBinaryOpExpr>(x);
        if (!bin || !bin.getLHS().isFunctionOfDim(d) ||
            (x.getKind() != AffineExprKind::FloorDiv && x.getKind() != AffineExprKind::CeilDiv &&
             x.getKind() != AffineExprKind::Mod))
          return;
        if (auto k = dyn_cast<AffineConstantExpr>(bin.getRHS()))
          align = std::lcm(align, std::max<int64_t>(1, k.getValue()));
      });
  return align;
}

/// Moves the constant offsets of a generic's operand indices into views:
/// an operand read at `(i, j + 1024)` (a gate's slice of a fused 4-gate
/// matrix) becomes a subview from column 1024 read at `(i, j)`, and one
/// read at a constant index `c` a view of size 1 from `c` read at 0. The
/// vectorizer takes only projected permutations (with zeros) as indices;
/// such ops would otherwise stay scalar loops. Only where every index of
/// the operand is a dim, `dim + c` or a constant with c >= 0 and the view
/// fits in the operand.
static void rebaseConstantOffsets(RewriterBase &rewriter, linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureBufferSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return;
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  bool changed = false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    SmallVector<int64_t> offsets, sizes;
    SmallVector<AffineExpr> results;
    bool offset = false, simple = true;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      AffineExpr base = e;
      int64_t c = 0;
      if (auto bin = dyn_cast<AffineBinaryOpExpr>(e); bin && e.getKind() == AffineExprKind::Add) {
        auto cst = dyn_cast<AffineConstantExpr>(bin.getRHS());
        base = bin.getLHS();
        if (!cst) {
          cst = dyn_cast<AffineConstantExpr>(bin.getLHS());
          base = bin.getRHS();
        }
        if (!cst)
          simple = false;
        else
          c = cst.getValue();
      } else if (auto cst = dyn_cast<AffineConstantExpr>(e)) {
        c = cst.getValue();
        base = getAffineConstantExpr(0, ctx);
      }
      int64_t size;
      if (auto d = dyn_cast<AffineDimExpr>(base))
        size = ranges[d.getPosition()];
      else if (isa<AffineConstantExpr>(base))
        size = 1;
      else
        simple = false;
      if (!simple || c < 0 || c + size > type.getDimSize(i))
        break;
      offset |= c != 0;
      offsets.push_back(c);
      sizes.push_back(size);
      results.push_back(base);
    }
    if (!simple || !offset || results.size() != map.getNumResults())
      continue;
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> strides(offsets.size(), 1);
    Value view =
        memref::SubViewOp::create(rewriter, op.getLoc(), operand.get(), offsets, sizes, strides);
    rewriter.modifyOpInPlace(op, [&] { operand.set(view); });
    maps[operand.getOperandNumber()] = AffineMap::get(map.getNumDims(), 0, results, ctx);
    changed = true;
  }
  if (changed)
    rewriter.modifyOpInPlace(
        op, [&] { generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps)); });
}

/// Splits the first parallel loop over `threads` (scf.forall) and tiles the
/// op into vector-sized pieces along its innermost loop when the vectorizer
/// accepts it. Returns the op that remains to be vectorized or lowered.
static void tileGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                        const GenericSchedule &schedule) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) || !canTile(op))
    return;
  rebaseConstantOffsets(rewriter, op);
  auto iterators = op.getIteratorTypesArray();
  unsigned n = ranges.size();
  bool vectorizable = succeeded(linalg::vectorizeOpPrecondition(op));
  MLIRContext *ctx = op.getContext();
  auto sizesAttr = [&](ArrayRef<int64_t> sizes) {
    return llvm::map_to_vector(sizes, [&](int64_t s) -> OpFoldResult {
      return IntegerAttr::get(IndexType::get(ctx), s);
    });
  };

  // Read before the thread split below replaces (and erases) `op`.
  int64_t innerAlign = tileAlignment(op, n - 1);
  Operation *current = op;
  // Threads over the first parallel loop.
  auto firstParallel = llvm::find(iterators, utils::IteratorType::parallel);
  if (schedule.threads > 1 && firstParallel != iterators.end()) {
    unsigned d = firstParallel - iterators.begin();
    if (ranges[d] >= 2 && tileAlignment(op, d) < ranges[d]) {
      SmallVector<int64_t> sizes(n, 0);
      int64_t align = tileAlignment(op, d);
      sizes[d] = (ranges[d] + schedule.threads - 1) / schedule.threads;
      sizes[d] = (sizes[d] + align - 1) / align * align;
      if (sizes[d] < ranges[d]) { // else one tile: nothing to split
        scf::SCFTilingOptions options;
        options.setTileSizes(sizesAttr(sizes));
        options.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
        rewriter.setInsertionPoint(current);
        auto tiled = scf::tileUsingSCF(rewriter, cast<TilingInterface>(current), options);
        if (succeeded(tiled) && !tiled->tiledOps.empty()) {
          rewriter.eraseOp(current);
          current = tiled->tiledOps.back();
        }
      }
    }
  }
  if (!vectorizable)
    return;
  // Vector tiles: one vector along the innermost loop, 1 elsewhere.
  SmallVector<int64_t> sizes(n, 1), vectorSizes(n, 1);
  int64_t inner = ranges[n - 1];
  if (inner > schedule.vectorSize && schedule.vectorSize % innerAlign != 0)
    return; // Vector tiles would start at misaligned offsets.
  sizes[n - 1] = inner > schedule.vectorSize ? schedule.vectorSize : 0;
  vectorSizes[n - 1] = std::min(inner, schedule.vectorSize);
  if (llvm::all_of(ranges, [](int64_t r) { return r == 1; }))
    return;
  scf::SCFTilingOptions options;
  options.setTileSizes(sizesAttr(sizes));
  rewriter.setInsertionPoint(current);
  auto tiled = scf::tileUsingSCF(rewriter, cast<TilingInterface>(current), options);
  if (failed(tiled) || tiled->tiledOps.empty())
    return;
  rewriter.eraseOp(current);
  Operation *tile = tiled->tiledOps.back();
  tile->setAttr(kVectorSizesAttrName, rewriter.getDenseI64ArrayAttr(vectorSizes));
  // A last partial tile makes every tile's size dynamic, so every tile would
  // be masked, and masked stores are slow (microcoded on AMD Zen: the fill
  // of a 56-wide row ran at a fraction of the bandwidth). Peel it: the full
  // tiles get static shapes (no masks), the last one stays masked.
  if (sizes[n - 1] == 0 || inner % sizes[n - 1] == 0 || tiled->loops.empty())
    return;
  auto loop = dyn_cast<scf::ForOp>(tiled->loops.back().getOperation());
  scf::ForOp partial;
  if (!loop || failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial)))
    return;
  SmallVector<Operation *> ops;
  loop.getBody()->walk([&](Operation *inner) {
    if (isa<memref::SubViewOp, memref::CastOp, linalg::LinalgOp, affine::AffineMinOp,
            affine::AffineApplyOp>(inner))
      ops.push_back(inner);
  });
  RewritePatternSet patterns(ctx);
  memref::SubViewOp::getCanonicalizationPatterns(patterns, ctx);
  memref::CastOp::getCanonicalizationPatterns(patterns, ctx);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
  affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  (void)applyOpPatternsGreedily(ops, std::move(patterns), config);
}

namespace {
struct NeoTilePass : public mlir::neo::impl::NeoTileBase<NeoTilePass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    std::optional<bool> bInPlaceGemms = bInPlaceSetting(bInPlace);
    if (!bInPlaceGemms) {
      func.emitError() << "neo-tile: b-in-place must be auto, on or off, not '" << bInPlace << "'";
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      Attribute attr = op->getAttr(kScheduleAttrName);
      if (!attr)
        continue; // Unscheduled: plain loops later.
      // Ops of a row-blocked kernel run inside its parallel block loop.
      bool serial = op->hasAttr("neo.serial") || op->getParentOfType<scf::ForallOp>();
      if (auto gemmAttr = dyn_cast<CpuGemmScheduleAttr>(attr)) {
        GemmSchedule gemm = gemmAttr.getParams();
        if (serial)
          gemm.threads = 1;
        // The rule for the op's vector width (the generators' own check).
        Type elem = op.getNumDpsInits() == 1
                        ? getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType())
                        : Type();
        if (std::string error = schedules::checkCpuGemm(gemm, elem ? cpuGemmVectorWidth(elem) : 0);
            !error.empty()) {
          op->emitOpError("invalid cpu_gemm schedule: ") << error;
          return signalPassFailure();
        }
        if (succeeded(generateGemm(rewriter, op, gemm, *bInPlaceGemms)) ||
            (directConvolutions && succeeded(generateCpuDirectConvolution(rewriter, op, gemm))) ||
            succeeded(generateCpuImplicitGemm(rewriter, op, gemm)))
          continue;
        op->emitOpError("has a #neo.cpu_gemm schedule that the CPU GEMM generators cannot "
                        "apply to it");
        return signalPassFailure();
      }
      auto genericAttr = dyn_cast<CpuGenericScheduleAttr>(attr);
      if (!genericAttr) {
        op->emitOpError("neo.schedule must be a #neo.cpu_gemm or #neo.cpu_generic attribute "
                        "(see neo-select-schedules), not ")
            << attr;
        return signalPassFailure();
      }
      GenericSchedule generic;
      generic.vectorSize = genericAttr.getVector();
      generic.threads = serial ? 1 : genericAttr.getThreads();
      if (succeeded(generateCpuRowReduction(rewriter, op, generic.vectorSize, generic.threads)))
        continue;
      tileGeneric(rewriter, op, generic);
    }
    // Applied: what is left of the ops (untiled ones, tiles) drops it.
    func.walk([](linalg::LinalgOp op) { op->removeAttr(kScheduleAttrName); });
  }
};

} // namespace
