//===- Autodiff.h - Expression-level reverse-mode differentiation -*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H
#define NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include <cstdint>
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
  /// Also make f_fwd and f_bwd (splitForwardBackward), named by these.
  bool split = false;
  std::string fwdName = "{f}_fwd";
  std::string bwdName = "{f}_bwd";
  /// At most this many bytes of forward values saved for f_bwd (negative:
  /// no bound; what is saved is then the memory-saving greedy choice alone).
  int64_t maxSavedBytes = -1;
};

struct AutodiffResult {
  /// f_grad(x..., dy...) -> (dx...): the forward values it needs are recomputed.
  func::FuncOp grad;
  /// f_fwdbwd(x..., dy...) -> (y..., dx...): forward and backward in one.
  func::FuncOp combined;
  /// With split: f_fwd(x...) -> (y..., saved...) and f_bwd(inputs read...,
  /// outputs read..., saved..., dy...) -> (dx...); null otherwise.
  func::FuncOp fwd, bwd;
};

struct SplitResult {
  func::FuncOp fwd, bwd;
  /// Bytes and number of the saved values (inputs and outputs not counted).
  int64_t savedBytes = 0;
  unsigned numSaved = 0;
};

/// Splits `combined` (f_fwdbwd of a function of `numInputs` arguments and
/// `numResults` results) into f_fwd and f_bwd, inserted after it, deciding
/// which forward values f_fwd saves and which f_bwd recomputes (see
/// SplitForwardBackward.cpp and docs/autodiff.md). f_bwd's neo.bwd.inputs
/// and neo.bwd.outputs attributes list the inputs and forward results it
/// takes before the saved values.
SplitResult splitForwardBackward(func::FuncOp combined, unsigned numInputs, unsigned numResults,
                                 StringRef fwdName, StringRef bwdName, int64_t maxSavedBytes);

/// Differentiates `func` (a function of neo ops) in reverse mode at the
/// expression level and inserts the two new functions after it. Reports
/// errors (an op without a derivative rule, unsupported ops) at their
/// locations, and a remark for each read that falls back to the scatter form.
FailureOr<AutodiffResult> differentiateFunction(func::FuncOp func,
                                                const AutodiffOptions &options);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_TRANSFORMS_AUTODIFF_H
