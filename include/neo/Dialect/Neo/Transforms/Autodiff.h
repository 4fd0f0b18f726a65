//===- Autodiff.h - Expression-level reverse-mode differentiation -*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H
#define NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include <string>

namespace mlir {
namespace neo {

/// Attaches ScalarDifferentiableOpInterface to the arith and math ops that
/// neo bodies use: the table of scalar derivative rules.
void registerScalarDerivativeRules(DialectRegistry &registry);

struct AutodiffOptions {
  /// Indices of the arguments to differentiate; empty means every float
  /// tensor argument.
  SmallVector<unsigned> wrt;
  /// Names of the generated functions; "{f}" is replaced by the function's name.
  std::string gradName = "{f}_grad";
  std::string combinedName = "{f}_fwdbwd";
  /// When false, every read is differentiated in the dense scatter form
  /// (testing the fallback).
  bool gather = true;
};

struct AutodiffResult {
  /// f_grad(x..., dy...) -> (dx...): the forward values it needs are recomputed.
  func::FuncOp grad;
  /// f_fwdbwd(x..., dy...) -> (y..., dx...): forward and backward in one.
  func::FuncOp combined;
};

/// Differentiates `func` (a function of neo ops) in reverse mode at the
/// expression level and inserts the two new functions after it. Reports
/// errors (an op without a derivative rule, unsupported ops) at their
/// locations, and a remark for each read that falls back to the scatter form.
FailureOr<AutodiffResult> differentiateFunction(func::FuncOp func,
                                                const AutodiffOptions &options);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H
