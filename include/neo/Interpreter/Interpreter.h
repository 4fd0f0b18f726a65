//===- Interpreter.h - Reference interpreter of neo IR ----------*- C++ -*-===//
//
// A slow, simple evaluator of neo IR in double precision, written directly
// from the semantics of the neo ops (not through linalg). It is the oracle
// that tests compare lowered and compiled code against.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_INTERPRETER_INTERPRETER_H
#define NEO_INTERPRETER_INTERPRETER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <vector>

namespace mlir {
namespace neo {

/// A dense row-major tensor of doubles: the interpreter's values.
struct RefTensor {
  std::vector<int64_t> shape; // empty for 0-d
  std::vector<double> data;   // product(shape) elements (1 for 0-d)
};

/// Evaluates `func.func @name` of `module` on `inputs` (one per argument;
/// shapes must equal the argument tensor shapes) in double precision, written
/// directly from the semantics of the neo ops, not through linalg. Supports
/// function bodies made of neo.compute, neo.constant (dense, splat or not),
/// neo.fused (its region is evaluated with its block arguments bound to the
/// operands; results come from neo.return), func.call of another function of
/// the module and func.return.
///
/// On error (unknown function, wrong number or shape of inputs, unsupported
/// op, integer division by zero in a body, an iteration space of more than
/// 2^40 points, ...) emits a diagnostic (at the op's location, or at the
/// module's location for errors in `inputs`) and returns failure.
FailureOr<std::vector<RefTensor>> interpret(ModuleOp module, llvm::StringRef name,
                                            llvm::ArrayRef<RefTensor> inputs);

} // namespace neo
} // namespace mlir

#endif // NEO_INTERPRETER_INTERPRETER_H
