//===- Registration.cpp - Register Neo with an MLIR tool ------------------===//
#include "neo/Registration.h"
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Conversion/Passes.h"
#include "neo/Dialect/Neo/Transforms/Autodiff.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Pipelines/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

void mlir::neo::registerNeoDialects(DialectRegistry &registry) {
  registry.insert<neo::NeoDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect>();
  registerScalarDerivativeRules(registry);
}

void mlir::neo::registerNeoPasses() {
  static bool registered = [] {
    registerNeoConversionPasses();
    registerNeoTransformsPasses();
    registerNeoCodegenCPUPasses();
    registerNeoCodegenGPUPasses();
    registerNeoPipelines();
    return true;
  }();
  (void)registered;
}
