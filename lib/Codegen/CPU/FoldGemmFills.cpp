//===- FoldGemmFills.cpp - neo-fold-gemm-fills ----------------------------===//
//
// A CPU GEMM or implicit GEMM (a convolution, CpuImplicitGemm.cpp and
// CpuDirectConv.cpp) whose C was just filled with zeros writes C instead of
// adding to it: the fill goes, the op is marked neo.overwrite.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/CPU/Schedule.h"
#include "neo/Codegen/Utils/BufferEffects.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOFOLDGEMMFILLS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// Whether `fill` sets every element of its output to +0.0.
bool fillsPositiveZero(linalg::FillOp fill) {
  FloatAttr value;
  return matchPattern(fill.getInputs()[0], m_Constant(&value)) && value.getValue().isPosZero();
}

/// Whether `value` (a memref) holds +0.0 everywhere just before `at`: the
/// last op before `at` in its block that touches its buffer is a zero fill
/// of exactly it, or a copy that only reads it.
bool zeroFilledBefore(Value value, Operation *at) {
  Value buffer = baseBuffer(value);
  for (Operation *prev = at->getPrevNode(); prev; prev = prev->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(prev);
    if (fill && fill.hasPureBufferSemantics() && fill.getOutputs()[0] == value)
      return fillsPositiveZero(fill);
    auto copy = dyn_cast<memref::CopyOp>(prev);
    if (copy && baseBuffer(copy.getTarget()) != buffer)
      continue; // reads it at most
    if (mayTouch(prev, buffer))
      return false;
  }
  return false;
}

/// Whether `op` reads its output `c` (of base buffer `buffer`) as an input
/// or through a memref.load in its body: the same memref, or one of the
/// buffer where either is the whole buffer. (Disjoint views of one buffer,
/// which bufferization makes of concatenated results, are not looked into.)
bool readsOutput(linalg::LinalgOp op, Value c, Value buffer) {
  auto overlaps = [&](Value m) {
    return isa<BaseMemRefType>(m.getType()) && baseBuffer(m) == buffer &&
           (m == c || m == buffer || c == buffer);
  };
  for (OpOperand *input : op.getDpsInputOperands())
    if (overlaps(input->get()))
      return true;
  WalkResult found = op->walk([&](memref::LoadOp load) {
    return overlaps(load.getMemRef()) ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found.wasInterrupted();
}

struct NeoFoldGemmFillsPass : public mlir::neo::impl::NeoFoldGemmFillsBase<NeoFoldGemmFillsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> gemms;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa_and_nonnull<CpuGemmScheduleAttr>(op->getAttr(kScheduleAttrName)) &&
          !op->hasAttr(kOverwriteAttrName))
        gemms.push_back(op);
    });
    for (linalg::LinalgOp op : gemms) {
      FailureOr<GemmProblem> problem = analyzeGemm(op);
      if (failed(problem))
        problem = analyzeCpuImplicitGemm(op);
      if (failed(problem) || problem->inputType != problem->elementType || problem->k < 1)
        continue; // Not a GEMM generator's, or C is all there is.
      // (An implicit GEMM's output map is a permutation of its parallel
      // dims, analyzeImplicitGemm's rule: it writes each element of C once.)
      Value c = op.getDpsInitOperand(0)->get();
      Value buffer = baseBuffer(c);
      // An op that also reads C (an input, or a load in its body) would
      // read the zeros the fill wrote.
      if (readsOutput(op, c, buffer))
        continue;
      // The last op before the GEMM in its block that touches C's buffer
      // must be a zero fill of exactly C, or a copy into exactly C from a
      // buffer that holds zeros then (CSE shares one fill between small
      // results of one shape, and bufferization copies it).
      for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
        auto fill = dyn_cast<linalg::FillOp>(prev);
        auto copy = dyn_cast<memref::CopyOp>(prev);
        bool zeros = (fill && fill.hasPureBufferSemantics() && fill.getOutputs()[0] == c &&
                      fillsPositiveZero(fill)) ||
                     (copy && copy.getTarget() == c && zeroFilledBefore(copy.getSource(), copy));
        if (zeros) {
          prev->erase();
          op->setAttr(kOverwriteAttrName, UnitAttr::get(op->getContext()));
          break;
        }
        if (mayTouch(prev, buffer))
          break;
      }
    }
  }
};

} // namespace
