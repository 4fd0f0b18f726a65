//===- MathToLibm.cpp - neo-math-to-libm: accurate libm calls ------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOMATHTOLIBM
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
struct NeoMathToLibmPass : public mlir::neo::impl::NeoMathToLibmBase<NeoMathToLibmPass> {
  void runOnOperation() override {
    // A partial conversion applies upstream's libm patterns to the illegal
    // ops only: log1p, expm1 and erf on f32 or f64 (libm has no others).
    ConversionTarget target(getContext());
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<math::Log1pOp, math::ExpM1Op, math::ErfOp>([](Operation *op) {
      Type element = getElementTypeOrSelf(op->getResult(0).getType());
      return !element.isF32() && !element.isF64();
    });
    RewritePatternSet patterns(&getContext());
    populateMathToLibmConversionPatterns(patterns);
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
