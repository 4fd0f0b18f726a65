//===- Passes.td - CPU code generation passes ---- -*- tablegen -*-===//
#ifndef NEO_CODEGEN_CPU_PASSES_TD
#define NEO_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def NeoTile : Pass<"neo-tile", "::mlir::func::FuncOp"> {
  let summary = "Schedule linalg ops on buffers for the CPU: GEMM kernels, threads, vector tiles";
  let description = [{
    Runs after bufferization. `linalg.matmul` and `linalg.batch_matmul` become
    packed, register-blocked loops (BLIS-style: A and B packed into panels, an
    MR x NR tile of vector accumulators carried through the k loop), with the
    outer N blocks split over threads. Other linalg ops get their outermost
    parallel dim split over threads (`scf.forall`) and, when `linalg`'s
    vectorizer accepts them, tiles of one vector along their innermost dim,
    marked for `neo-vectorize`. An op's `neo.schedule` dictionary attribute
    (`{gemm = {mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2}}`,
    `{vector = 16, threads = 2}`) overrides the options; see docs/schedules.md.
    With `records=FILE`, an op without that attribute whose signature (GEMM
    problem or generic op) has a tuning record for the target gets the
    recorded schedule; a corrupt or mismatched record is reported with a
    warning and ignored.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
  let options = [
    Option<"threads", "threads", "int64_t", /*default=*/"2",
           "Ways to split the outer loops over threads (1: serial)">,
    Option<"vectorSize", "vector-size", "int64_t", /*default=*/"16",
           "Vector lanes of elementwise and reduction tiles">,
    Option<"gemmMR", "gemm-mr", "int64_t", /*default=*/"8", "GEMM register tile rows">,
    Option<"gemmNR", "gemm-nr", "int64_t", /*default=*/"32", "GEMM register tile columns">,
    Option<"gemmMC", "gemm-mc", "int64_t", /*default=*/"128", "GEMM row block">,
    Option<"gemmNC", "gemm-nc", "int64_t", /*default=*/"512", "GEMM column block">,
    Option<"gemmKC", "gemm-kc", "int64_t", /*default=*/"256", "GEMM depth block">,
    Option<"implicitGemm", "implicit-gemm", "bool", /*default=*/"true",
           "Run bilinear generics (convolutions, forward and backward) as GEMMs "
           "whose packing gathers the operands">,
    Option<"records", "records", "std::string", /*default=*/"\"\"",
           "Tuning records (JSON, written by neo-tune) to take schedules from">,
    Option<"target", "target", "std::string", /*default=*/"\"\"",
           "Target of the records to use (default: this host with `threads` threads)">,
  ];
}

def NeoFuseElementwise : Pass<"neo-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Fuse elementwise linalg producers into all-parallel consumers";
  let description = [{
    linalg's elementwise fusion, restricted to consumers without reduction
    loops: fusing into a contraction would turn a GEMM that neo-tile compiles
    to a packed kernel into a generic loop nest that recomputes the producer
    for every reduction step.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def NeoVectorize : Pass<"neo-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Vectorize the tiles neo-tile marked, and lower vector ops for the host";
  let description = [{
    Vectorizes each linalg op that carries `neo.vector_sizes` (masked when the
    tile is partial), replaces f32 transcendental functions (exp, log, tanh,
    erf, ...) by polynomial approximations that vectorize, then lowers
    multi-reductions, masks, broadcasts, shape casts and transfers to forms
    that convert to LLVM.
  }];
  let dependentDialects = ["::mlir::vector::VectorDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

#endif // NEO_CODEGEN_CPU_PASSES_TD
