//===- GradCheck.h - Check derived gradients numerically --------*- C++ -*-===//
//
// Differentiates a function with neo-autodiff, evaluates the gradient with the
// reference interpreter (float64), and compares it with central finite
// differences of the function (also float64): one random direction per input
// and a few random coordinates.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CHECK_GRADCHECK_H
#define NEO_CHECK_GRADCHECK_H

#include "neo/Interpreter/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace mlir {
namespace neo {

struct GradCheckOptions {
  unsigned seed = 0;
  /// Range of the random inputs, adjoints of the outputs and directions.
  double low = -1.0, high = 1.0;
  /// Finite-difference step.
  double step = 1e-6;
  /// Random coordinates probed per input, besides one random direction.
  unsigned coordinates = 8;
  /// A probe passes when |fd - g| <= tolerance * max(|fd|, |g|) + absTolerance.
  double tolerance = 1e-5;
  double absTolerance = 1e-8;
};

struct GradCheckInput {
  std::string name;
  unsigned probes = 0;
  double maxRelError = 0;  // over the probes
  double maxAbsError = 0;
  bool finite = true;      // the gradient and the differences were finite
  bool ok = true;
};

struct GradCheckReport {
  std::vector<GradCheckInput> inputs;
  /// The module with the differentiated functions (f_grad is `gradName`).
  OwningOpRef<ModuleOp> differentiated;
  std::string gradName;
  /// The values used: the inputs of f, the adjoints of its outputs, and the
  /// interpreted gradient (one per differentiated input).
  std::vector<RefTensor> inputValues, outputAdjoints, gradients;
  bool ok() const;
};

/// Runs the check for `function` of `module` (not modified). `inputs` may be
/// empty (random inputs from the seed). Errors (autodiff or interpreter
/// failures) are diagnostics and failure.
FailureOr<GradCheckReport> gradCheck(ModuleOp module, llvm::StringRef function,
                                     std::vector<RefTensor> inputs,
                                     const GradCheckOptions &options);

} // namespace neo
} // namespace mlir

#endif // NEO_CHECK_GRADCHECK_H
