//===- Copies.cpp - memref.copy as linalg.copy ----------------------------===//
#include "neo/Codegen/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

void mlir::neo::convertCopiesToLinalg(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<memref::CopyOp> copies;
  root->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
  for (memref::CopyOp copy : copies) {
    rewriter.setInsertionPoint(copy);
    linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
    rewriter.eraseOp(copy);
  }
}
