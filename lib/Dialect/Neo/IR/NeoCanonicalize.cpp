//===- NeoCanonicalize.cpp - Folds and canonicalizations of neo ops -------===//
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"

using namespace mlir;
using namespace mlir::neo;

/// A pure copy: one read through the identity map of an operand whose type is
/// the result type, yielded unchanged, with no reduction and no domain.
OpFoldResult ComputeOp::fold(FoldAdaptor) {
  if (getInputs().size() != 1 || getKind() != ReductionKind::None || getDomain() || hasIndexReads())
    return {};
  Value input = getInputs()[0];
  if (input.getType() != getResult().getType())
    return {};
  if (!getIndexingMap(0).isIdentity())
    return {};
  if (getYieldedValue() != getBodyBlock().getArgument(0))
    return {};
  return input;
}

namespace {

/// Rebuilds `op` without the reads marked in `drop`, whose block arguments must
/// be unused. Discardable attributes are kept.
ComputeOp dropReads(PatternRewriter &rewriter, ComputeOp op,
                    const llvm::BitVector &drop) {
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<double> pads;
  SmallVector<int64_t> checked;
  for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i) {
    if (drop[i])
      continue;
    if (op.isCheckedRead(i))
      checked.push_back(inputs.size());
    inputs.push_back(op.getInputs()[i]);
    maps.push_back(op.getIndexingMap(i));
    pads.push_back(op.getPadValue(i));
  }
  IntegerSet domain;
  if (auto d = op.getDomainAttr())
    domain = d.getValue();
  auto newOp = ComputeOp::create(rewriter, op.getLoc(), op.getResultType(), inputs, maps,
                                 op.getReductionBounds(), op.getKind(), pads, domain,
                                 op.getIndexInputs(), op.getIndexMapsArray(), checked);
  newOp->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Region &newBody = newOp.getBody();
  rewriter.eraseBlock(&newBody.front());
  rewriter.inlineRegionBefore(op.getBody(), newBody, newBody.end());
  newBody.front().eraseArguments(drop);
  rewriter.replaceOp(op, newOp.getResult());
  return newOp;
}

/// Removes reads whose value the body never uses.
struct RemoveUnusedReads : OpRewritePattern<ComputeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ComputeOp op, PatternRewriter &rewriter) const override {
    Block &block = op.getBodyBlock();
    llvm::BitVector drop(block.getNumArguments());
    // A checked read stays: its index is checked even when its value is unused.
    for (BlockArgument arg : block.getArguments())
      if (arg.use_empty() && !op.isCheckedRead(arg.getArgNumber()))
        drop.set(arg.getArgNumber());
    if (drop.none())
      return failure();
    dropReads(rewriter, op, drop);
    return success();
  }
};

/// Merges reads of the same value through the same map with the same pad.
struct MergeDuplicateReads : OpRewritePattern<ComputeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ComputeOp op, PatternRewriter &rewriter) const override {
    Block &block = op.getBodyBlock();
    unsigned n = op.getInputs().size();
    bool changed = false;
    for (unsigned i = 0; i < n; ++i) {
      BlockArgument argI = block.getArgument(i);
      for (unsigned j = i + 1; j < n; ++j) {
        BlockArgument argJ = block.getArgument(j);
        if (argJ.use_empty() || op.getInputs()[i] != op.getInputs()[j] ||
            op.getIndexingMap(i) != op.getIndexingMap(j) ||
            op.isCheckedRead(i) != op.isCheckedRead(j))
          continue;
        double pi = op.getPadValue(i), pj = op.getPadValue(j);
        bool samePad = pi == pj || (std::isnan(pi) && std::isnan(pj)) ||
                       !op.readMayBeOutOfBounds(i);
        if (!samePad)
          continue;
        rewriter.replaceAllUsesWith(argJ, argI);
        changed = true;
      }
    }
    return success(changed);
  }
};

/// A read of a splat constant is that constant (when it is never out of bounds
/// or its pad equals the splat value).
struct FoldSplatConstantReads : OpRewritePattern<ComputeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ComputeOp op, PatternRewriter &rewriter) const override {
    Block &block = op.getBodyBlock();
    bool changed = false;
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      BlockArgument arg = block.getArgument(i);
      if (arg.use_empty() || op.isCheckedRead(i))
        continue;
      DenseFPElementsAttr attr;
      if (!matchPattern(input, m_Constant(&attr)) || !attr.isSplat())
        continue;
      llvm::APFloat value = attr.getSplatValue<llvm::APFloat>();
      if (op.readMayBeOutOfBounds(i)) {
        bool lossy;
        llvm::APFloat pad(op.getPadValue(i));
        pad.convert(value.getSemantics(), llvm::APFloat::rmNearestTiesToEven, &lossy);
        if (pad.bitwiseIsEqual(value) == false)
          continue;
      }
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(&block);
      auto cst = arith::ConstantOp::create(
          rewriter, op.getLoc(), FloatAttr::get(arg.getType(), value));
      rewriter.replaceAllUsesWith(arg, cst.getResult());
      changed = true;
    }
    return success(changed);
  }
};

/// A result of a neo.fused whose body returns one of its block arguments
/// is that operand: its uses read the operand, and the op is rebuilt
/// without it (or erased, when nothing else is returned). An identity
/// neo.compute that folds away inside a fused kernel leaves such a return,
/// which a row-blocked kernel may not have (found by neo-ir-fuzzer).
struct ForwardFusedOperands : OpRewritePattern<FusedOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(FusedOp op, PatternRewriter &rewriter) const override {
    Block &body = op.getBody().front();
    auto ret = dyn_cast<ReturnOp>(body.getTerminator());
    if (!ret || ret.getValues().size() != op.getNumResults())
      return failure();
    SmallVector<Value> replacements(op.getNumResults());
    SmallVector<unsigned> kept;
    for (auto [i, v] : llvm::enumerate(ret.getValues())) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg && arg.getOwner() == &body && arg.getArgNumber() < op.getInputs().size() &&
          op.getInputs()[arg.getArgNumber()].getType() == op.getResult(i).getType())
        replacements[i] = op.getInputs()[arg.getArgNumber()];
      else
        kept.push_back(i);
    }
    if (kept.size() == op.getNumResults())
      return failure();
    if (!kept.empty()) {
      SmallVector<Type> types;
      SmallVector<Value> values;
      for (unsigned i : kept) {
        types.push_back(op.getResult(i).getType());
        values.push_back(ret.getValues()[i]);
      }
      auto fused =
          FusedOp::create(rewriter, op.getLoc(), types, op.getInputs(), op.getRowBlockAttr());
      fused->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      rewriter.inlineRegionBefore(op.getBody(), fused.getBody(), fused.getBody().end());
      rewriter.setInsertionPoint(ret);
      rewriter.replaceOpWithNewOp<ReturnOp>(ret, values);
      for (auto [k, i] : llvm::enumerate(kept))
        replacements[i] = fused.getResult(k);
    }
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

} // namespace

void FusedOp::getCanonicalizationPatterns(RewritePatternSet &results, MLIRContext *context) {
  results.add<ForwardFusedOperands>(context);
}

void ComputeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<RemoveUnusedReads, MergeDuplicateReads, FoldSplatConstantReads>(context);
}
