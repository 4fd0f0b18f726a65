//===- GemmAnalysis.cpp - Contractions seen as (batched) GEMMs -------------===//
#include "neo/Codegen/Utils/GemmAnalysis.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::neo;

std::string GemmProblem::key() const {
  return "gemm " + elementType + " batch=" + std::to_string(batch) + " m=" + std::to_string(m) +
         " n=" + std::to_string(n) + " k=" + std::to_string(this->k) + " layout=" + layout +
         (inputType.empty() || inputType == elementType ? "" : " in=" + inputType);
}

FailureOr<GemmAnalysis> mlir::neo::analyzeGemmOperands(linalg::LinalgOp op, RewriterBase *collapse,
                                                       bool allowDynamic) {
  GemmProblem problem;
  // A contraction C[batch, m, n] += A[.. m, k ..] * B[.. k, n ..] whose
  // operands are indexed by (a permutation of) their roles.
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (!allowDynamic && llvm::any_of(ranges, ShapedType::isDynamic))
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
  SmallVector<GemmOperandLayout> layouts;
  SmallVector<OpOperand *> operands = {op.getDpsInputOperand(swapped ? 1 : 0),
                                       op.getDpsInputOperand(swapped ? 0 : 1),
                                       op.getDpsInitOperand(0)};
  for (OpOperand *operandPtr : operands) {
    OpOperand &operand = *operandPtr;
    GemmOperandLayout layout;
    layout.mem = operand.get();
    layout.type = dyn_cast<MemRefType>(layout.mem.getType());
    if (!layout.type || (!allowDynamic && !layout.type.hasStaticShape()))
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
      if (!layout.type.hasStaticShape() ||
          !memref::CollapseShapeOp::isGuaranteedCollapsible(layout.type, groups))
        return failure();
      if (!collapse) {
        layout.type = memref::CollapseShapeOp::computeCollapsedType(layout.type, groups);
      } else {
        collapse->setInsertionPoint(op);
        auto collapsed =
            memref::CollapseShapeOp::create(*collapse, op.getLoc(), layout.mem, groups);
        layout.mem = collapsed.getResult();
        layout.type = collapsed.getResultType();
      }
    }
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(layout.type.getStridesAndOffset(strides, offset)) ||
        (!strides.empty() && strides.back() != 1))
      return failure();
    for (auto [i, role] : llvm::enumerate(layout.roleOfResult))
      problem.strides[layouts.size()][role] = strides[i];
    layouts.push_back(layout);
  }
  auto extent = [&](int role) {
    int64_t e = 1;
    for (unsigned d : *roleDims[role]) {
      if (ShapedType::isDynamic(ranges[d]))
        return ShapedType::kDynamic;
      e *= ranges[d];
    }
    return e;
  };
  GemmOperandLayout &LA = layouts[0], &LB = layouts[1], &LC = layouts[2];
  Type elem = LC.type.getElementType();
  Type inElem = LA.type.getElementType();
  auto typeName = [](Type t) {
    return t.isF16() ? "f16" : t.isBF16() ? "bf16" : t.isF32() ? "f32" : t.isF64() ? "f64" : "?";
  };
  if (LB.type.getElementType() == inElem &&
      ((inElem.isF16() || inElem.isBF16()) && elem.isF32())) {
    // Mixed precision (f16/bf16 products accumulated in f32): GPU tensor cores
    // only; the CPU generator below needs one element type.
    problem.inputType = typeName(inElem);
  } else if (LA.type.getElementType() != elem || LB.type.getElementType() != elem ||
             !(elem.isF32() || elem.isF64())) {
    return failure();
  }
  int64_t V = elem.isF32() ? 16 : 8;
  int64_t batch = extent(0), M = extent(1), N = extent(2), K = extent(3);
  {
    problem.elementType = typeName(elem);
    if (problem.inputType.empty())
      problem.inputType = problem.elementType;
    problem.aInput = swapped ? 1 : 0;
    problem.batch = batch;
    problem.m = M;
    problem.n = N;
    problem.k = K;
    problem.vectorWidth = V;
    const char *roleNames = "bmnk";
    problem.layout.clear();
    for (auto [i, l] : llvm::enumerate(layouts)) {
      if (i)
        problem.layout += ",";
      for (int role : l.roleOfResult)
        problem.layout += roleNames[role];
    }
  }
  GemmAnalysis result;
  result.problem = problem;
  result.layouts.assign(layouts.begin(), layouts.end());
  return result;
}

FailureOr<GemmProblem> mlir::neo::analyzeGemm(linalg::LinalgOp op) {
  FailureOr<GemmAnalysis> analysis = analyzeGemmOperands(op, nullptr);
  if (failed(analysis))
    return failure();
  return analysis->problem;
}
