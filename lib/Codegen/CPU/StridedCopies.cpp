//===- StridedCopies.cpp - neo-lower-strided-copies -----------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOLOWERSTRIDEDCOPIES
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
struct NeoLowerStridedCopiesPass
    : public mlir::neo::impl::NeoLowerStridedCopiesBase<NeoLowerStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) {
      auto contiguous = [](Value v) {
        auto type = dyn_cast<MemRefType>(v.getType());
        return type && type.getLayout().isIdentity();
      };
      if (!contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      rewriter.eraseOp(copy);
    }
  }
};
} // namespace
