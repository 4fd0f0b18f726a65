//===- Passes.td - Conversions out of the neo dialect ------*- tablegen -*-===//
#ifndef NEO_CONVERSION_PASSES_TD
#define NEO_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNeoToLinalg : Pass<"convert-neo-to-linalg", "ModuleOp"> {
  let summary = "Lower neo ops to linalg on tensors";
  let description = [{
    Every `neo.compute` becomes a `linalg.generic` (or `linalg.matmul` /
    `linalg.batch_matmul` when it is one) whose init is filled with the
    reduction's identity:

    * reads that can never leave their operand become generic inputs with
      their indexing map; where a bare loop dim indexes a longer operand dim
      (`g[n, j]`, j < 64, of a [N, 256] `g`), the input is the leading slice
      of the loop's extent (`tensor.extract_slice`; `slice-reads=false`
      reads it in the body instead);
    * reads that may leave it are computed in the body: the index is
      evaluated from `linalg.index`, clamped, read with `tensor.extract` and
      replaced by the read's pad value when out of bounds (only the dims that
      can leave the bounds are checked);
    * a domain is evaluated in the body and skipped iterations keep the
      accumulator;
    * reduction dims that no read names directly get a shape-only operand so
      that linalg can infer the loop ranges.

    With `split-borders`, an op with a reduction (not a GEMM-shaped product)
    whose reads leave their operands, or whose domain excludes points, only
    at the ends of some dims, as a padded window does (`x[p + r - 1]`), is
    split along the three longest such dims into their interior, where every
    such read and constraint holds, and the two borders: each box of the
    product is its own generic that checks only what may fail in it.
    Parallel boxes write slices of the result (`tensor.insert_slice`),
    reduction boxes accumulate into it in turn.

    A `neo.fused` op whose members share one iteration space becomes one
    multi-output `linalg.generic`; a row-blocked one (`row_block B`) becomes
    an `scf.forall` over blocks of `B` rows whose body runs its ops on
    row slices (marked `neo.serial`: `neo-tile` keeps them on one thread);
    others are inlined. `neo.constant` becomes `arith.constant`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
  let options = [Option<"rowBlocks", "row-blocks", "bool", /*default=*/"true",
                        "Lower row-blocked neo.fused ops to block loops (false: inline them)">,
                 Option<"rowBlockRows", "row-block-rows", "int64_t", /*default=*/"0",
                        "Rows per block of those loops (0: the op's row_block; the GPU "
                        "pipeline takes 1, a thread block per row)">,
                 Option<"useNamedOps", "use-named-ops", "bool", /*default=*/"true",
                        "Emit linalg.matmul / linalg.batch_matmul for the ops that are one">,
                 Option<"splitBorders", "split-borders", "bool", /*default=*/"false",
                        "Lower windowed ops (padded convolution and pooling windows, not "
                        "GEMM-shaped ones) as an interior generic without bounds checks and "
                        "border generics">,
                 Option<"vectorIndirect", "vector-indirect", "bool", /*default=*/"true",
                        "Run the dense last dim of index-read loop nests (SpMM's features) on "
                        "vectors (false: scalar loops, as the GPU pipeline maps them to threads)">,
                 Option<"sliceReads", "slice-reads", "bool", /*default=*/"true",
                        "Read the leading part of a longer operand dim (`g[n, j]`, j < 64, of a "
                        "[N, 256] g) as an extract_slice input (false: in the body, as for the "
                        "GPU pipeline, whose host code passes whole buffers)">,
  ];
}

#endif // NEO_CONVERSION_PASSES_TD
