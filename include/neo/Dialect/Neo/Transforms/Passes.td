//===- Passes.td - Transformations of the neo dialect ------*- tablegen -*-===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_PASSES_TD
#define NEO_DIALECT_NEO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NeoAutodiff : Pass<"neo-autodiff", "ModuleOp"> {
  let summary = "Reverse-mode differentiation of neo functions, in gather form";
  let description = [{
    For each selected `f(x...) -> (y...)` this pass adds

    * `f_grad(x..., dy...) -> (dx...)`, the vector-Jacobian product (forward
      values are recomputed), and
    * `f_fwdbwd(x..., dy...) -> (y..., dx...)`, forward and backward in one
      function that keeps the forward values the backward needs.

    Differentiation happens op by op on neo ops. The adjoint of each read
    `X[f(p, r)]` of an op is a new `neo.compute` over X's index space: the
    index equation `f(p, r) == q` is solved exactly with integer arithmetic
    (floordiv/mod linearized, non-unit strides give divisibility constraints),
    so the gradient of a strided, padded convolution with respect to its
    input is itself a convolution-like gather with a domain, with no scatter
    and no dense Jacobian. Scalar bodies are differentiated with the rules of
    `ScalarDifferentiableOpInterface`; sum and none reductions broadcast the
    adjoint, max and min send it to the first arg-extremum, prod to the
    product of the other factors (exactly, also with zeros). Adjoints of
    values used several times are summed. A read whose map cannot be inverted
    falls back to the dense scatter form with a remark naming the op.
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect", "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Function to differentiate (default: every public function)">,
    ListOption<"wrt", "wrt", "unsigned",
               "Indices of the arguments to differentiate (default: every float "
               "tensor argument)">,
    Option<"gradName", "grad-name", "std::string", /*default=*/"\"{f}_grad\"",
           "Name of the gradient function ({f} is the function's name)">,
    Option<"combinedName", "combined-name", "std::string", /*default=*/"\"{f}_fwdbwd\"",
           "Name of the combined forward+backward function">,
    Option<"gather", "gather", "bool", /*default=*/"true",
           "Invert index maps (false: dense scatter form for every read, for testing)">,
    Option<"split", "split", "bool", /*default=*/"false",
           "Also make the forward and backward halves, with the values the "
           "backward needs saved or recomputed">,
    Option<"fwdName", "fwd-name", "std::string", /*default=*/"\"{f}_fwd\"",
           "Name of the forward half: (x...) -> (y..., saved...)">,
    Option<"bwdName", "bwd-name", "std::string", /*default=*/"\"{f}_bwd\"",
           "Name of the backward half: (inputs read..., outputs read..., saved..., dy...) "
           "-> (dx...)">,
    Option<"maxSavedBytes", "max-saved-bytes", "int64_t", /*default=*/"-1",
           "At most this many bytes of forward values saved for the backward half "
           "(more are recomputed; negative: no bound)">,
  ];
}

def NeoEqSatFuse : Pass<"neo-eqsat-fuse", "ModuleOp"> {
  let summary = "Fuse and rewrite neo graphs by equality saturation with a memory-aware cost model";
  let description = [{
    Builds an e-graph of each function (one e-node per neo op, whose payload
    is the op with its operands abstracted), saturates it with rules over
    tensor expressions, and extracts the cheapest graph:

    * `inline`: a producer without reduction inlined into a consumer that
      reads it in bounds (elementwise chains, transpose of transpose,
      recomputation of forward values in the backward pass);
    * `horizontal`: two ops with one iteration space, kind and domain that
      read a common input become one multi-output `neo.fused` kernel;
    * `broadcast`: a sum over dims its body does not use is a product;
    * `factor`: a factor (or divisor) of a sum's body that depends on no
      reduction dim moves out: sum_r a * b(r) = a * sum_r b(r);
    * `distribute`: x*y + x*z = x*(y + z) in a body;
    * `assoc`: matmul associativity, (AB)C = A(BC), chosen by cost.

    After extraction (`row-blocks`, on by default), kernels that share their
    leading parallel dim and read each other's values only at the same row
    become one row-blocked `neo.fused` kernel (`row_block B`): per block of
    rows each op computes its rows in turn, in cache, and only the values
    used outside are written. A kernel joins only if the operands it reads
    whole (a GEMM's weights) fit in `row-block-bytes`; with `target=gpu`
    only if the merge also lowers the estimated time (a row-blocked kernel
    is a thread block per row there, on CUDA cores; docs/eqsat.md).

    The cost of a kernel is its bytes read and written over the memory
    bandwidth, its FLOPs over the peak (contraction-shaped kernels at the
    GEMM peak, others at a fraction), a launch overhead, and, for forward
    values that the backward pass reads, `activation-weight` per byte held
    live between the two. Extraction is an ILP over the DAG (each kernel
    counted once however many consumers share it) by default, warm-started
    from the DAG heuristic and bounded by the time limit. `report=FILE`
    writes a JSON report (saturation, rules, kernels and bytes before and
    after, the costs of each extractor).
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect", "::mlir::arith::ArithDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Function to rewrite (default: every function)">,
    Option<"maxNodes", "max-nodes", "unsigned", /*default=*/"4000", "E-node limit">,
    Option<"maxIterations", "max-iterations", "unsigned", /*default=*/"6", "Iteration limit">,
    Option<"maxSeconds", "max-seconds", "double", /*default=*/"10.0",
           "Time limit in seconds for the whole pass (every function's saturation, "
           "extraction and row grouping share it)">,
    Option<"ilpMaxSeconds", "ilp-max-seconds", "double", /*default=*/"1.0",
           "At most this many seconds for each function's ILP extraction (also "
           "bounded by its share of max-seconds)">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "Cost parameters: cpu or gpu">,
    Option<"bandwidth", "bandwidth", "double", /*default=*/"0",
           "Memory bandwidth in GB/s (0: the target's default)">,
    Option<"peak", "peak", "double", /*default=*/"0",
           "Peak GFLOP/s of contraction kernels (0: the target's default)">,
    Option<"launch", "launch", "double", /*default=*/"-1",
           "Per-kernel overhead in microseconds (negative: the target's default)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
           "target=gpu: SMs of the GPU (H100 SXM, H200: 132; H100 PCIe: 114; A100: 108); "
           "a block of 256 threads on each keeps it busy in the row-blocked kernels' costs">,
    Option<"activationWeight", "activation-weight", "double", /*default=*/"0.0",
           "Cost in microseconds per MB held live between forward and backward">,
    Option<"extractor", "extractor", "std::string", /*default=*/"\"ilp\"",
           "Extraction: greedy, dag or ilp (GLPK, warm-started from dag, never worse)">,
    Option<"compareExtractors", "compare-extractors", "bool", /*default=*/"false",
           "Also run the other extractors and report their costs">,
    ListOption<"rules", "rules", "std::string",
               "Rules to use (default: inline, horizontal, broadcast, factor, distribute, assoc)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write a JSON report to this file">,
    Option<"rowBlocks", "row-blocks", "bool", /*default=*/"true",
           "After extraction, group kernels that pass values row by row into "
           "row-blocked kernels (neo.fused row_block)">,
    Option<"minRowBlocks", "min-row-blocks", "int64_t", /*default=*/"4",
           "Fewest blocks of rows of a row-blocked kernel (its parallelism)">,
    Option<"rowBlockBytes", "row-block-bytes", "int64_t", /*default=*/"262144",
           "Most bytes of results and row slices per block of rows">,
  ];
}

def NeoInlineFused : Pass<"neo-inline-fused", "ModuleOp"> {
  let summary = "Dissolve neo.fused ops into the ops of their regions";
}

def NeoReuseResults : Pass<"neo-reuse-results", "::mlir::func::FuncOp"> {
  let summary = "Read an elementwise compute's result where a later compute recomputes it";
  let description = [{
    Autodiff writes a backward compute in terms of the forward's expressions:
    softmax's `dx` recomputes `exp(x[i, j] - m[i]) / z[i]`, which the forward
    compute `y` already holds. Where a compute's body contains exactly the
    yielded expression of an earlier elementwise compute of the same block
    (same ops and attributes, its reads of the same tensors at the same maps,
    over the same iteration dims: the same bounds, parallel then reduction),
    and that expression has a `math` op or a division, the expression is
    replaced by a read of the earlier result at the identity map. The value
    is the same bit for bit (the same operations on the same operands).
    Computes with index reads, pads or a domain are left alone as producers;
    consumers with index reads or pads too.
  }];
}

def NeoReuseContractions : Pass<"neo-reuse-contractions", "::mlir::func::FuncOp"> {
  let summary = "Read a contraction's result where a later sum multiplies out its product again";
  let description = [{
    Autodiff writes attention's backward term `D[i] = sum(j, e) p[i, j] *
    v[j, e] * do[i, e]` (the row sums of the softmax gradient), which sums
    over keys the same products that the forward's `o[i, e] = sum(j) p[i, j]
    * v[j, e]` summed: `D[i] = sum(e) o[i, e] * do[i, e]`, `L * E` work per
    row instead of `L * L * E` (FlashAttention's `rowsum(dO * O)`).

    Each body is read as a signed product of factors with integer exponents
    (`mulf`, `divf` and `negf` looked through; every other value, a read, a
    constant, `exp(...)`, is a factor, and factors are compared by
    structure: the same ops, reads of the same tensor at the same map). When
    an earlier sum `f` (same block, plain reads, arith and math ops only)
    has a product that divides a later sum `g`'s, under a mapping of f's
    dims onto g's dims of equal extent that takes f's reduction dims to g's
    reduction dims, and the factors left do not read those dims, `g` becomes
    a sum over its other dims of the factors left times f's result (a new
    last input; `kind none` when no reduction dim remains). The value is the
    same up to the rounding of a reassociated sum. Computes with index
    reads, pads, a domain or another reduction kind are left alone.
  }];
}

def NeoFactorSums : Pass<"neo-factor-sums", "::mlir::func::FuncOp"> {
  let summary = "Move the factors of a sum that do not depend on its reduction dims out of it";
  let description = [{
    A sum whose body is a product (read as in neo-reuse-contractions:
    `mulf`, `divf` and `negf` looked through) with factors that read none of
    its reduction dims, such as autodiff's `sum(e) do[i, e] * v[j, e] / z[i]
    * exp(s[i, j] - m[i])` or a scaled contraction `sum(j) ds[i, j] * 0.125
    * k[j, d]`, becomes the sum of the other factors (a plain contraction,
    which the CPU and GPU GEMM kernels take) and an elementwise compute of
    its result times the factors moved out (with the sign): the factors are
    evaluated once per output element instead of once per term. Only sums
    into results of rank 2 or more are rewritten (row sums such as softmax's
    and layernorm's keep their factors: a multiply per term saved against
    another compute over the rows, no faster on the CPU). Sums whose product
    has no such factor, or only such factors, are left alone, as are
    computes with index reads, pads, a domain or another reduction kind. The
    value is the same up to rounding.
  }];
}

def NeoNarrowStorage : Pass<"neo-narrow-storage", "::mlir::func::FuncOp"> {
  let summary = "Store an elementwise result that is an exact widening of 16 bits in 16 bits";
  let description = [{
    A compute whose yielded value is `arith.extf` of an f16 or bf16 value
    (mixed precision: the adjoint of a tensor stored as `bf16(...)` is
    rounded and widened again) stores an f32 tensor every element of which
    is a 16-bit value. When every use of that result is a read by another
    compute, the result is stored in the 16-bit type instead and each reader
    widens it in its body: the same values, half the memory, and a
    contraction of it with another 16-bit tensor becomes a 16-bit GEMM (the
    GPU pipeline runs it on tensor cores). Results returned by the function
    or read by other ops are left alone. The GPU pipeline runs it before
    convert-neo-to-linalg.
  }];
}

def NeoKeepFunctions : Pass<"neo-keep-functions", "ModuleOp"> {
  let summary = "Erase every function but the ones named (and those they call)";
  let description = [{
    Leaves in the module the functions listed in `functions` and the symbols
    they use, so that compiling the module compiles only them (neo.torch
    compiles f_fwd and f_bwd without f, f_fwdbwd and f_grad). A name that is
    not a function of the module is an error.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string", "Functions to keep">,
  ];
}

def NeoCheckBatch : Pass<"neo-check-batch", "ModuleOp"> {
  let summary = "Check that a function never mixes the rows of a batch dim";
  let description = [{
    For neo.torch's dynamic size parameters (docs/pytorch.md): the module is
    imported with the size parameter bound to `extent`, a value that no
    literal extent of the source takes, so that the dims of that extent are
    the batch dims. The pass checks that `function` computes each row of its
    results along the batch dim from the same rows of its inputs only, so
    that a batch of any size can run in chunks of one compiled size: every
    `neo.compute` reads its batched operands along one parallel dim `b` of
    its own (exactly `b` in their batch dim), reads nothing else at a point
    that depends on `b`, neither bounds (`where`) nor computes (`neo.index`)
    with `b`, and keeps `b` as its result's batch dim; a result of the batch
    extent that reads no batched operand is a broadcast, as is a splat
    `neo.constant`. Every result must have a batch dim (a loss summed over
    the batch cannot run in chunks). On success the function's batched
    arguments and results get `neo.batch_dim = K : i64`; otherwise the
    first op that mixes rows gets an error that says how, and the pass fails.
  }];
  let options = [Option<"function", "function", "std::string", /*default=*/"\"\"",
                        "The function to check">,
                 Option<"extent", "extent", "int64_t", /*default=*/"0",
                        "The extent that marks the batch dims (at least 2)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def NeoIndexChecks : Pass<"neo-index-checks", "ModuleOp"> {
  let summary = "Add the run-time checks of index values read from integer tensors";
  let description = [{
    For each public function `f` whose ops read index values (`indices(...)`
    of `neo.compute`), adds a public function `f__index_check` with `f`'s
    arguments. It returns two 0-d f64 tensors per check: the first iteration
    point (row-major over the dims the check depends on) where an index
    leaves its tensor, +inf when none does, and the index there. A check
    covers an index read whose index may leave its tensor, a `checked` read's
    indices that use index values (inside the op's domain), and the values of
    i64 index reads (which must lie in [-2^31, 2^31 - 1]). The function's
    `neo.index_checks` attribute describes each check (a message with the
    op's location, and the extents of its dims); `neo.index_check_of` names
    `f`. The runtime runs the checks before `f` and reports the first
    violation instead of running `f`. Index tensors must be arguments of `f`
    (as the frontend makes them); an op reading another one is an error.
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect", "::mlir::arith::ArithDialect"];
}

def NeoCountFlops : Pass<"neo-count-flops", "ModuleOp"> {
  let summary = "Print the iterations and floating-point operations of each neo.compute";
  let description = [{
    Prints, per function and per op, the iterations visited (the box of the
    iteration space), the iterations that satisfy the domain (counted
    exactly by enumerating the dims each constraint couples), and the FLOPs:
    valid iterations times the float operations of the body plus one for the
    reduction. Used to compare generated backward passes with textbook ones.
  }];
  let options = [
    Option<"summaryOnly", "summary-only", "bool", /*default=*/"false",
           "Print one line per function">,
  ];
}

#endif // NEO_DIALECT_NEO_TRANSFORMS_PASSES_TD
