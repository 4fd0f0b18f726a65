//===- Passes.td - CPU code generation passes ---- -*- tablegen -*-===//
#ifndef NEO_CODEGEN_CPU_PASSES_TD
#define NEO_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def NeoSelectSchedules : Pass<"neo-select-schedules", "::mlir::func::FuncOp"> {
  let summary = "Choose the CPU schedule of each linalg op on buffers (typed neo.schedule)";
  let description = [{
    Runs after bufferization, before `neo-tile`. Puts on every linalg op on
    buffers a `neo.schedule` attribute that `neo-tile` applies:
    `#neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>`
    on contractions the packed GEMM generator handles and (with
    `implicit-gemm`) on bilinear generics that run as implicit GEMMs,
    `#neo.cpu_generic<vector = 16, threads = 2>` on every other op. The
    schedule comes from, in order:

    1. the op's own `neo.schedule` (written on a `neo.compute`, it follows it
       to its linalg op): kept, and checked against the op (vector width of
       its element type; a `#neo.cpu_gemm` on an op that is not a GEMM is an
       error);
    2. with `records=FILE`, the op's tuning record for the target (`target=`,
       default: the `cpu` with `threads` threads); a corrupt or mismatched
       record is reported with a warning and ignored;
    3. the options; fields left at 0 come from the target CPU (`cpu=`,
       default the host): two native vectors per row and as many rows as
       leave four vector registers free, e.g. 6x16 f32 on AVX2 (12 of 16
       ymm registers) and 8x32 on AVX-512 (16 of 32 zmm), 6x8 and 8x16 for
       f64.

    Ops marked `neo.serial` or inside an `scf.forall` (the members of a
    row-blocked kernel) get `threads = 1`, and so does an elementwise op or
    reduction of fewer than `parallel-min-iterations` iterations (the
    product of its loop ranges; 0, the default, for none; neo-lower-to-cpu
    passes 32768, PyTorch's grain size) from the options: a bias vector's gradient or a 64 x 64 product takes a few
    microseconds, less than waking a second thread, and each parallel loop
    costs an OpenMP region in the compiled code. (Larger ones gain: softmax
    64 x 1024 forward+backward took 0.168 ms on one thread per op and 0.132
    ms on two, the MLP training step 7.0 and 5.0 ms, on a Zen 1-class EPYC.)
    Likewise a GEMM or implicit GEMM of fewer than `parallel-min-gemm-work`
    multiply-adds (M x N x K; neo-lower-to-cpu passes 2097152, 128^3): on
    the same EPYC a 64 x 256 x 64 GEMM took as long on two threads as on
    one, and the MI-LSTM cell's backward at batch 64, hidden 64 (GEMMs of
    1M multiply-adds and less) 0.38 ms on two against 0.28 on one.
    An invalid option or schedule
    is a pass failure. See docs/schedules.md.
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect"];
  let options =
      [Option<"threads", "threads", "int64_t", /*default=*/"2",
              "Ways to split the outer loops over threads (1: serial)">,
       Option<"vectorSize", "vector-size", "int64_t", /*default=*/"16",
              "Vector lanes of elementwise and reduction tiles">,
       Option<"parallelMinIterations", "parallel-min-iterations", "int64_t",
              /*default=*/"0",
              "Elementwise ops and reductions of fewer iterations run on one thread (0: every "
              "op on `threads`; neo-lower-to-cpu passes 32768)">,
       Option<"parallelMinGemmWork", "parallel-min-gemm-work", "int64_t", /*default=*/"0",
              "GEMMs and implicit GEMMs of fewer multiply-adds (M x N x K) run on one thread "
              "(0: every GEMM on `threads`; neo-lower-to-cpu passes 2097152)">,
       Option<"cpu", "cpu", "std::string", /*default=*/"\"host\"",
              "The CPU to choose schedules for: host, x86-64-v3 (AVX2), x86-64-v4 "
              "(AVX-512) or an LLVM CPU name; the GEMM defaults follow its vector "
              "registers">,
       Option<"gemmMR", "gemm-mr", "int64_t", /*default=*/"0",
              "GEMM register tile rows (0: from the cpu)">,
       Option<"gemmNR", "gemm-nr", "int64_t", /*default=*/"0",
              "GEMM register tile columns (0: from the cpu)">,
       Option<"gemmMC", "gemm-mc", "int64_t", /*default=*/"0", "GEMM row block (0: from the cpu)">,
       Option<"gemmNC", "gemm-nc", "int64_t", /*default=*/"0",
              "GEMM column block (0: from the cpu)">,
       Option<"gemmKC", "gemm-kc", "int64_t", /*default=*/"0",
              "GEMM depth block (0: from the cpu)">,
       Option<"implicitGemm", "implicit-gemm", "bool", /*default=*/"true",
              "Run bilinear generics (convolutions, forward and backward) as GEMMs "
              "whose packing gathers the operands">,
       Option<"records", "records", "std::string", /*default=*/"\"\"",
              "Tuning records (JSON, written by neo-tune) to take schedules from">,
       Option<"target", "target", "std::string", /*default=*/"\"\"",
              "Target of the records to use (default: this host with `threads` threads)">,
  ];
}

def NeoFoldGemmFills : Pass<"neo-fold-gemm-fills", "::mlir::func::FuncOp"> {
  let summary = "Let a GEMM write its C instead of adding to a zero fill";
  let description = [{
    Runs after `neo-select-schedules`. A contraction with a `#neo.cpu_gemm`
    schedule that the packed GEMM generator handles, or a bilinear generic
    that becomes an implicit GEMM or a direct convolution and whose output
    map is a permutation of its parallel dims, with a K of at least one, whose C buffer was filled with +0.0 earlier in
    the same block (or copied from a buffer that was: CSE shares one fill
    between small results of one shape), with no op in between that reads,
    writes or may touch that buffer (no use of it or of a view of it, no
    call), loses the fill (or the copy) and gets the unit attribute
    `neo.overwrite`: `neo-tile` then starts the
    first depth block's accumulators at zero instead of loading C (an
    implicit GEMM or direct convolution stores its sums instead of adding
    them). A weight
    gradient's C (an LSTM's `dW`, 1024 x 4096) is thereby written once
    instead of filled, read back and written again: two passes over 16 MiB
    less.
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect"];
}

def NeoPrefetchGathers : Pass<"neo-prefetch-gathers", "::mlir::func::FuncOp"> {
  let summary = "Prefetch the rows that a loop gathers through index values, iterations ahead";
  let description = [{
    Runs on loops over buffers (after `convert-linalg-to-loops`). In an
    `scf.for` or one-dim `scf.parallel`, a load (`memref.load`,
    `vector.load`, `vector.transfer_read`, `vector.maskedload`) whose indices
    come from a value that the loop loads from another buffer at its
    induction variable (`X[col[e], f]` in an SpMM, `B[col[e], f]` in an
    SDDMM, an embedding's `E[tok[n], d]`) is a gather: its addresses are
    random and each one waits for memory. The pass computes, at the top of
    the body, the same indices for the iteration `distance` steps ahead
    (the index buffer read there clamped into its shape) and issues
    `memref.prefetch` for the start of that row, one per 64-byte line up to
    `max-lines` (indices that vary in loops nested inside, the row's
    offset, start at 0). Gathers through one row index share their
    prefetches. Measured on an SDDMM with 1M nonzeros of 64 floats (AMD EPYC
    with AVX-512, one thread): 45 -> 14-17 ms.
  }];
  let options = [Option<"distance", "distance", "int64_t", /*default=*/"16",
                        "Iterations ahead (0: no prefetches)">,
                 Option<"maxLines", "max-lines", "int64_t", /*default=*/"8",
                        "Most 64-byte lines prefetched per gathered row">];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def NeoUnrollReductions : Pass<"neo-unroll-reductions", "::mlir::func::FuncOp"> {
  let summary = "Small fixed reduction windows summed in the body of a parallel op";
  let description = [{
    Runs after `neo-select-schedules`, on buffers. A `linalg.generic` with a
    `#neo.cpu_generic` schedule whose reduction dims have static ranges of
    at most `max-points` points in all (a depthwise convolution's 3 x 3
    taps, a pooling window), one output written at a permutation of exactly
    its parallel dims, and no input that views the output's buffer, becomes
    a generic over the parallel dims alone. Its body is the old body once
    per point of the window, in the loops' order, each copy reading through
    inputs whose maps have the reduction dims replaced by the point's
    constants (a read that does not move with the window is one input),
    `linalg.index` of a reduction dim replaced by the constant, and the
    output's old value threaded from one copy to the next. `neo-tile` then
    tiles it as an elementwise op (its constant offsets become subviews)
    and each output vector is written once, instead of read and written.

    Where the last op before it that touches the output's buffer is a
    `linalg.fill` of exactly the output with a constant, the sum starts
    from that constant and the fill goes: one pass over the output instead
    of three. The schedule and other attributes stay on the new op.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect"];
  let options = [Option<"maxPoints", "max-points", "int64_t", /*default=*/"27",
                        "Largest window (product of the reduction ranges) unrolled">];
}

def NeoShareGemms : Pass<"neo-share-gemms", "::mlir::ModuleOp"> {
  let summary = "One GEMM routine per variant, called by every GEMM of that variant";
  let description = [{
    Runs between `neo-select-schedules` and `neo-tile`. The GEMMs of a
    training step come in few variants (`x * W`, `dY * W^T`, `X^T * dY`)
    but many sizes; `neo-tile` would generate a packed GEMM (packing loops,
    micro-kernel, edge tiles) for each of them, and that code is most of what
    MLIR and LLVM then compile: 12 GEMMs were about 90% of SCRNN's LLVM IR
    (docs/performance.md, "Compile time").

    This pass groups the contractions with a `#neo.cpu_gemm` schedule by
    variant: the element type, the role order of each operand (the
    `layout=` of their tuning key, e.g. `mk,nk,mn`), the schedule (a
    `neo.serial` one has `threads = 1`) and whether C starts as zeros
    (`neo.overwrite`, from `neo-fold-gemm-fills`). A variant
    with at least `min-uses` GEMMs gets one private function,
    `@__neo_gemm_...`, holding the contraction on memrefs of dynamic sizes
    and strides (rebuilt inside by `memref.reinterpret_cast` from each
    operand's base pointer, offset, sizes and strides, which the
    bare-pointer calling convention can pass) with the variant's schedule;
    each GEMM becomes a call of it. `neo-tile` then generates each routine
    once, with its sizes and blocks read at run time. An offset, size or
    stride that every call passes as the same constant is that constant in
    the routine's views (the forward and backward GEMMs of one variant often
    agree on all of them), so `neo-tile` generates code for static sizes
    there: with two threads, LLVM could not propagate the constants into
    the column-block loop that OpenMP outlines, and the LSTM step's routines
    came out 1.6x larger (4,901 against 3,764 lines of optimized LLVM IR;
    compile 1.24-1.52 -> 0.95-1.24 s). A GEMM that reads B in
    place (`b-in-place`, as `neo-tile` decides it) keeps its own code.
  }];
  let options =
      [Option<"minUses", "min-uses", "int64_t", /*default=*/"2",
              "Share a variant used by at least this many GEMMs (0: never; 1: every GEMM)">,
       Option<"bInPlace", "b-in-place", "std::string", /*default=*/"\"auto\"",
              "neo-tile's b-in-place (auto, on, off): GEMMs that read B in place are not shared">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect", "::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def NeoTile : Pass<"neo-tile", "::mlir::func::FuncOp"> {
  let summary = "Apply the CPU schedules of linalg ops on buffers: GEMM kernels, threads, vector tiles";
  let description = [{
    Runs after `neo-select-schedules`, which decides; this pass only applies
    the `neo.schedule` attribute of each linalg op on buffers.
    `#neo.cpu_gemm<...>`: `linalg.matmul`, `linalg.batch_matmul` and other
    contractions become packed, register-blocked loops (BLIS-style: A and B
    packed into panels, an MR x NR tile of vector accumulators carried
    through the k loop), with the outer N blocks split over threads;
    bilinear generics (convolutions) become implicit GEMMs whose packing
    gathers the operands; an op that neither generator accepts is an error.
    `#neo.cpu_generic<vector = V, threads = T>`: row reductions keep vector
    accumulators; other ops get their outermost parallel dim split over
    threads (`scf.forall`) and, when `linalg`'s vectorizer accepts them,
    tiles of one vector along their innermost dim, marked for
    `neo-vectorize`. Ops inside an `scf.forall` or marked `neo.serial` run
    serially whatever their schedule says. An op without a `neo.schedule` is
    left as it is (it becomes plain loops later); any other attribute there
    is an error. The schedules are consumed: no linalg op keeps its
    `neo.schedule` after the pass. See docs/schedules.md.

    `b-in-place`: whether a GEMM with one block of rows and a B of 2 MiB or
    more (an LSTM's `x * W`, 64 x 4096 x 1024) reads B's rows in the
    micro-kernel instead of packing B first. `auto` (the default) does so on
    AMD Zen 4 and later hosts, where it measured faster (8.9 -> 8.2 ms on one
    thread, 5.3 -> 4.0 on two, Zen 4), and not elsewhere (an Intel Xeon with
    AVX-512: 4.2-4.6 ms packed against 7.2-7.4 in place; a Zen 1-class EPYC
    with AVX2: 19.5 against 26.7); `on` and `off` force it (also the
    neo-lower-to-cpu option of the same name).

    `direct-convolutions` (default true): a bilinear generic whose operand
    is read through a unit-stride window in its last two dims
    (`x[n, c, p + r - 1, q + s - 1]`, zero outside the plane: a
    convolution forward, data gradient or weight gradient) reads that
    operand from zero-padded copies of its planes, rows of one length, with
    no packing per block: V consecutive outputs of the forward and data
    gradient read V consecutive elements at a per-tap offset, and the
    weight gradient is a dot product along the padded rows. Off: such ops
    are implicit GEMMs. Also the neo-lower-to-cpu option of the same name.
  }];
  let options = [Option<"bInPlace", "b-in-place", "std::string", /*default=*/"\"auto\"",
                        "auto (on for AMD Zen 4 and later hosts), on or off: large B read in place "
                        "by single-row-block GEMMs">,
                 Option<"directConvolutions", "direct-convolutions", "bool", /*default=*/"true",
                        "Convolutions read their windowed operand from zero-padded planes "
                        "instead of packing im2col blocks">];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect",
                           "::mlir::neo::NeoDialect", "::mlir::LLVM::LLVMDialect"];
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

def NeoHoistInvariants : Pass<"neo-hoist-invariants", "::mlir::func::FuncOp"> {
  let summary = "Compute the values of a linalg.generic body that depend on some of its loops once, by a generic over those loops";
  let description = [{
    In a `linalg.generic` on tensors, a value of the body that depends on
    only some of the loops is computed again at every point of the others:
    layernorm's `1 / sqrt(var[i] + eps)` 1024 times per row, softmax's
    division by its row sum once per element. For each maximal such value
    whose computation has a division or a math function (a value that depends
    on no loop is left to constant folding), this pass builds a generic over
    just the loops it depends on (all parallel, its inputs the body's inputs
    with their indexing maps restricted to those loops) and makes the
    original op read its result. Values that depend on the same loops share
    one generic; CSE merges the same generic built for two ops.

    First, a division `a / b` of f32 or f64 where `b` is invariant along a
    loop that `a` varies along (or `b` is a constant) becomes `a * (1 / b)`,
    so that the reciprocal is hoisted: one division per row instead of one
    per element. The product differs from the quotient by at most one
    rounding (an ulp); f16 and bf16 keep their divisions, where a second
    rounding would show.

    Values that depend on the accumulators of a reduction, on ops with
    regions or side effects, and ops with dynamic loop ranges are left alone.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def NeoShareSubexpressions : Pass<"neo-share-subexpressions", "::mlir::func::FuncOp"> {
  let summary = "Compute a division or math function that several linalg.generic ops recompute once, into a tensor they read";
  let description = [{
    After autodiff, a forward value that was never materialized is
    recomputed by every kernel that needs it: softmax's `exp(x[i, j] -
    m[i])` by its row sum, its output and the input gradient, three
    exponentials per element where PyTorch computes one. This pass finds, in
    the `linalg.generic` ops on tensors of one block, values of the bodies
    that contain a division or a math function, depend on all the loops, and
    are the same computation (the same ops on the same tensors through the
    same indexing maps) over the same loop ranges in two or more ops. Each
    becomes a generic of its own, before the first op that computes it,
    whose result the ops read through the identity map. A value is shared
    as a whole (what it is computed from goes with it), except that a value
    inside it which the bodies still use elsewhere is shared too (the stable
    sigmoid's `e = exp(-|x|)`, inside `1 / (1 + e)` and feeding `e * r`),
    and the shared value's own generic then reads it. A read of a static,
    unit-stride slice counts as a read of its source at the offsets (the
    gate `g[:, 192:256]` and `g[n, 192 + j]` are one value). A value is
    shared only when its tensor has at most `max-bytes` bytes: where it
    would not stay in cache, writing and reading it again costs more than
    the recomputation.
    Run neo-hoist-invariants first, so that loop-invariant parts are gone.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"1048576",
           "Share values whose tensor has at most this many bytes">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"];
}

def NeoSplitIndexSets : Pass<"neo-split-index-sets", "::mlir::func::FuncOp"> {
  let summary = "Split linalg.generic ops along a dim at the thresholds their bodies test";
  let description = [{
    A generic whose body compares `linalg.index d` (plus constants) against
    constants, or clamps it with minsi/maxsi, is split along `d` into the
    pieces between the thresholds (tensor.extract_slice of the operands,
    tensor.insert_slice of the results). In each piece the comparisons and
    clamps are constants, so the canonicalizer removes the other pieces'
    code, and gathers (tensor.extract) at loop indices plus constants that
    are in bounds in the piece become input operands. This is what the
    band-masked gradients of sliced reads (LSTM gates) need to vectorize.
  }];
  let options = [
    Option<"maxPieces", "max-pieces", "unsigned", /*default=*/"8",
           "Split only into at most this many pieces">,
    Option<"minPiece", "min-piece", "int64_t", /*default=*/"8",
           "Split only when every piece is at least this long">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def NeoLowerStridedCopies : Pass<"neo-lower-strided-copies", "::mlir::func::FuncOp"> {
  let summary = "Rewrite memref.copy between strided memrefs as linalg.copy";
  let description = [{
    A memref.copy whose source or target is not contiguous lowers to a call
    of the `memrefCopy` runtime function, which Neo's JIT does not link. Such
    copies (bufferization makes them for a tensor.insert_slice it cannot do
    in place, e.g. after neo-split-index-sets) become linalg.copy, which the
    loop lowering turns into loops. Contiguous copies stay memcpy.
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

def NeoMathToLibm : Pass<"neo-math-to-libm", "::mlir::ModuleOp"> {
  let summary = "Lower log1p, expm1 and erf on f32 and f64 to libm calls";
  let description = [{
    Upstream's convert-math-to-llvm lowers `math.log1p` as `log(1 + x)` and
    `math.expm1` as `exp(x) - 1`, which lose all precision for |x| near 0
    (`log1p(1e-9)` is 0 in f32), and has no lowering for `math.erf`, whose
    libm lowering (convert-math-to-libm) unrolls vectors into vector ops that
    must come before convert-vector-to-llvm. This pass turns these three ops
    on f32 and f64 (scalars and vectors, one call per lane) into calls of
    `log1pf`/`log1p`, `expm1f`/`expm1` and `erff`/`erf`, and leaves every
    other op to the later conversions. The f32 ops of vectorized kernels
    are already polynomials (neo-vectorize); what remains are f64 ops and
    scalar code.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect"];
}

def NeoExpandBf16 : Pass<"neo-expand-bf16", "::mlir::ModuleOp"> {
  let summary = "Expand conversions to and from bf16 into integer arithmetic";
  let description = [{
    Rewrites `arith.truncf` to bf16 (round to nearest even; a NaN stays a
    quiet NaN) and `arith.extf` from bf16 (a shift), scalars and vectors,
    into integer arithmetic with upstream's bf16 expansion patterns, and
    leaves every other op as it is. Without it, LLVM lowers a truncation to
    bf16 on x86 without AVX512-BF16 (AVX2 machines, Zen 3 and before) to a
    call of `__truncsfbf2`, which the JIT cannot resolve where the C runtime
    lacks it (Debian 12's libgcc), and which would scalarize vectors. The
    CPU pipeline runs it before the LLVM conversions on every target.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect", "::mlir::vector::VectorDialect"];
}

def NeoOutlineKernels : Pass<"neo-outline-kernels", "::mlir::ModuleOp"> {
  let summary = "Move each loop nest of a large function into a function of its own";
  let description = [{
    In every function with at least `min-kernels` top-level loop nests
    (`scf.for`, `scf.parallel`: the kernels, after linalg-to-loops), moves
    each nest into a private function (internal linkage, `noinline`) and
    calls it. Values the nest reads from outside become arguments, except
    constants, which are cloned; the nest's results are the function's.
    A nest that reads a memref which the bare-pointer calling convention
    cannot pass (a non-identity layout or a dynamic shape) stays in place.

    LLVM's compile time grows faster than linearly with the size of a
    function (OpenMPIRBuilder's outlining scans the whole function once per
    parallel region; register allocation and scheduling are superlinear in
    it; IndVarSimplify and LoopRotate were 80% of `opt -O3` on one): a
    chain of 500 statements compiled in 50 s on one thread, 32 s with
    OpenMP, and in 18.5 s and 23 s with a function per nest
    (docs/errors.md). Functions with fewer nests (the MLP training step has
    44), which compile in well under a second, are left alone.
  }];
  let options = [
    Option<"minKernels", "min-kernels", "int64_t", /*default=*/"64",
           "Outline the loop nests of functions with at least this many (0: never)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"];
}

def NeoOutlineParallelBodies : Pass<"neo-outline-parallel-bodies", "::mlir::ModuleOp"> {
  let summary = "Move the body of each large parallel loop into a function of its own";
  let description = [{
    Runs before `convert-scf-to-openmp`. The body of every outermost
    `scf.parallel` without reductions that holds at least `min-ops`
    operations (a packed GEMM's column block) moves into a private function
    (internal linkage, `noinline`) whose arguments are the loop's indices
    and the values the body reads; the loop's body becomes a call of it.
    Constants, and side-effect-free ops whose results the bare-pointer
    calling convention cannot pass (the dynamic-shaped views of a shared
    GEMM routine, their sizes), are cloned into the function, their
    operands passed in turn. A body that reads anything else that cannot
    be passed stays in place.

    Why: in the function that OpenMP outlines around the loop, captured
    values arrive through a structure of pointers, and LLVM's loop
    unswitching copied part of a shared GEMM routine's column-block body
    once more (A * B^T of the LSTM step: 1,167 lines of optimized LLVM IR
    inside the OpenMP function, 1,047 as a function of its own). The LSTM's
    forward+backward compile with two threads went from 1.15-1.35 s to
    1.02-1.13 s (docs/performance.md). The one-thread routine is smaller
    still (592 lines) only because its callers pass the same constant
    sizes, which LLVM propagates into it; a block's sizes are not constants.
  }];
  let options =
      [Option<"minOps", "min-ops", "int64_t", /*default=*/"160",
              "Outline the bodies of parallel loops with at least this many operations (0: never)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::mlir::LLVM::LLVMDialect"];
}

def NeoBalanceParallelLoops : Pass<"neo-balance-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Hand out the iterations of OpenMP worksharing loops dynamically";
  let description = [{
    Runs after `convert-scf-to-openmp`. An `omp.wsloop` whose loop nest has
    at least `min-chunks` iterations per thread of the region (constant
    bounds; the column blocks of a GEMM, the rows of an implicit GEMM) gets
    `schedule(dynamic)`: each thread takes the next iteration when it is
    done, instead of a fixed share. On a machine whose cores are not all
    equally fast all the time (a virtual machine's cores share physical
    cores with other guests) the static split waits for the slowest thread:
    a 64 x 4096 x 1024 GEMM on two threads took 9.3 ms at best but 16.6 ms
    in the median on a Zen 1-class EPYC guest. Loops with fewer iterations
    (an elementwise op split in one tile per thread) keep the static split.

    Taking an iteration costs a call into the OpenMP runtime and a shared
    counter (about a microsecond between two cores of a guest), so iterations
    go out in chunks of at least `min-work` operations, estimated from the
    loop body (an operation counts one, a loop its constant trips times its
    body, a loop of run-time bounds 16 times its body, a call `min-work`).
    Debian's libomp formats its debug trace strings on every such call
    (about half a microsecond): a 100k-row SpMM whose rows each were a
    chunk took 70 ms on two threads against 40 on one. Chunks are also
    made large enough that there are at most `max-chunks` per thread (an
    estimate can be far too high: a run-time range holding one element).
    A loop that then
    has fewer than `min-chunks` chunks per thread stays static: the 64 rows
    of a 64 x 1024 layernorm (about a microsecond each) took 2x longer on two
    threads dynamically than statically.
  }];
  let options = [Option<"minChunks", "min-chunks", "int64_t", /*default=*/"2",
                        "Chunks per thread from which a loop is balanced (0: never)">,
                 Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
                        "Estimated operations of a chunk of iterations handed out at once">,
                 Option<"maxChunks", "max-chunks", "int64_t", /*default=*/"64",
                        "Most chunks per thread (larger chunks where min-work would make more)">,
                 Option<"threads", "threads", "int64_t", /*default=*/"2",
                        "Threads of the parallel regions">,
  ];
  let dependentDialects = ["::mlir::omp::OpenMPDialect", "::mlir::arith::ArithDialect"];
}

def NeoFlushDenormals : Pass<"neo-flush-denormals", "::mlir::ModuleOp"> {
  let summary = "Run each entry function with denormals flushed to zero (x86 MXCSR FTZ and DAZ)";
  let description = [{
    On x86, an arithmetic instruction whose input or result is a denormal
    (subnormal) float takes a microcode assist: 50-150 cycles instead of 4
    on Intel cores. Training graphs produce them whenever a gate saturates
    (the gradient of `sigmoid(40)` is 4e-18, products of two such are
    denormal in f32): the MI-LSTM cell's weight-gradient GEMMs ran 3.3x
    slower on random inputs for that reason alone (docs/performance.md).

    This pass makes every function with a body and external linkage (the
    entry points; neo-outline-kernels' kernels are internal and run inside
    them) save the MXCSR register at entry, set its flush-to-zero and
    denormals-are-zero bits (0x8040), and restore the saved value before
    each return, so the caller's floating-point environment is unchanged.
    OpenMP worker threads take the primary thread's MXCSR at each parallel
    region (libomp's KMP_INHERIT_FP_CONTROL, on by default), so the
    kernels' parallel loops run flushed too.

    The results differ from IEEE arithmetic only where a value is below the
    smallest normal number (1.2e-38 in f32, 2.2e-308 in f64), which then
    reads as a zero of its sign. XLA's CPU runtime (JAX) runs with the same
    setting; PyTorch runs without it unless `torch.set_flush_denormal(True)`.
    `neo-lower-to-cpu{denormals=ieee}` leaves this pass out.

    Runs on the LLVM dialect (after convert-func-to-llvm), for an x86-64
    target.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // NEO_CODEGEN_CPU_PASSES_TD
