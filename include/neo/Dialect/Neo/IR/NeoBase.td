//===- NeoBase.td - The neo dialect ------------------------*- tablegen -*-===//
#ifndef NEO_BASE_TD
#define NEO_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Neo_Dialect : Dialect {
  let name = "neo";
  let cppNamespace = "::mlir::neo";
  let summary = "Affine tensor expressions for training DNNs with new operators";
  let description = [{
    The `neo` dialect expresses the operators of a DNN as *affine tensor
    expressions*. One op, `neo.compute`, defines a tensor over an iteration
    space of parallel dims (the result's dims, in order) and reduction dims,
    each with a static extent:

    ```
    O[p] (kind)= body(In_0[f_0(p, r)], ..., In_n[f_n(p, r)], p, r)   where C(p, r)
    ```

    * each read `In_i[f_i(p, r)]` is an affine map of the iteration dims
      (`floordiv`/`mod` by positive constants allowed); an input may be read
      several times with different maps;
    * a read outside its input's bounds yields that read's *pad value*
      (0 by default; e.g. `-inf` for max pooling): padding needs no tensor;
    * an optional domain constraint `C` (an integer set over the iteration
      dims) drops iterations;
    * the reduction kind (`none`, `sum`, `max`, `min`, `prod`) combines the
      body's values over the reduction dims; an output element that receives
      no iteration holds the kind's identity (0 for `none` and `sum`, 1 for
      `prod`, -inf for `max`, +inf for `min`);
    * the body is a region of scalar, side-effect-free ops (`arith`, `math`)
      over the read values and, through `neo.index`, the iteration indices.

    The gradient of such an op is again such an op (gather form), which is
    what `neo-autodiff` relies on; graphs of operators are `func.func` SSA
    DAGs of neo ops, and a fused kernel is a `neo.fused` op.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

class Neo_Op<string mnemonic, list<Trait> traits = []>
    : Op<Neo_Dialect, mnemonic, traits>;

#endif // NEO_BASE_TD
