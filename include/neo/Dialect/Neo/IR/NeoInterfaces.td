//===- NeoInterfaces.td - Interfaces of the neo dialect ----*- tablegen -*-===//
#ifndef NEO_INTERFACES_TD
#define NEO_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Neo_ScalarDifferentiableOpInterface
    : OpInterface<"ScalarDifferentiableOpInterface"> {
  let cppNamespace = "::mlir::neo";
  let description = [{
    The reverse-mode derivative rule of a scalar op that may appear in a
    `neo.compute` body. `neo-autodiff` calls it on the ops between a read and
    the yielded value. Neo attaches it to the `arith` and `math` ops as
    external models (`registerScalarDerivativeRules`); an embedder attaches it
    to its own scalar ops the same way.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the adjoint of each operand, given the (recomputed) operand
        values, the op's result value and the adjoint of that result. A null
        entry means the operand receives no gradient (integers, conditions).
        New ops are created with `builder` at its insertion point.
      }],
      "::llvm::SmallVector<::mlir::Value>", "differentiate",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::ValueRange":$operands,
           "::mlir::Value":$result, "::mlir::Value":$resultAdjoint)>,
  ];
}

#endif // NEO_INTERFACES_TD
