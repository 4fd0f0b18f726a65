//===- NeoOps.td - Operations of the neo dialect -----------*- tablegen -*-===//
#ifndef NEO_OPS_TD
#define NEO_OPS_TD

include "neo/Dialect/Neo/IR/NeoBase.td"
include "neo/Dialect/Neo/IR/NeoAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

/// The element types that neo tensors may hold.
def Neo_FloatElement : AnyTypeOf<[F16, BF16, F32, F64]>;
/// A statically shaped tensor of f16, bf16, f32 or f64 (0-d allowed).
def Neo_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
/// A statically shaped tensor of i32 or i64 index values (0-d allowed).
def Neo_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// neo.compute
//===----------------------------------------------------------------------===//

def Neo_ComputeOp : Neo_Op<"compute", [
    Pure, IsolatedFromAbove, SingleBlock, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a tensor defined by an affine tensor expression";
  let description = [{
    Defines its result by an affine tensor expression over an iteration space
    of `P` parallel dims (`space [e_0, ..., e_(P-1)]`, equal to the result
    shape) followed by `R` reduction dims (`kind [e_P, ...]`). Iteration dims
    are `d0 .. d{P+R-1}` in the maps and in `neo.index`.

    Each operand is one *read*: operand `i` is read at `maps[i](d)` and its
    value is passed to the body as block argument `i`. A read whose index
    falls outside the operand's shape yields `pad[i]` instead (0 when `pad` is
    omitted). The same value may appear as several operands with different
    maps (stencils, shift convolution, `A[i,j] + A[j,i]`).

    *Index reads* make reads data-dependent. Operand `indices(...)` `j` (an
    i32 or i64 tensor) is read at `index_maps[j]` and its value is symbol
    `s<j>`: the maps of the reads, the domain and the index maps of later
    index reads (`rowptr[col[e] + 1]`) may use it, affinely. An index value
    must lie in [-2^31, 2^31 - 1]. An index read outside its tensor is an
    error at run time, as is a read listed in `checked` (by read number) whose
    index leaves its operand; other reads with symbols yield their pad value
    there. `neo.index_read j` gives the value of `s<j>` in the body (for
    conditions and `float(tok[n])`). Index tensors are never differentiated.

    An embedding lookup and a CSR row sum (with `where` bounding the
    reduction dim by `rowptr[i] <= e < rowptr[i + 1]`):

    ```mlir
    %y = neo.compute ins(%E : tensor<100x16xf32>) indices(%tok : tensor<8xi32>)
           space [8, 16] maps [affine_map<(n, d)[s0] -> (s0, d)>]
           index_maps [affine_map<(n, d) -> (n)>] checked [0]
           -> tensor<8x16xf32> {
    ^bb0(%e: f32):
      neo.yield %e : f32
    }
    %z = neo.compute ins(%val, %X : tensor<40xf32>, tensor<10x16xf32>)
           indices(%rowptr, %rowptr, %col : tensor<11xi32>, tensor<11xi32>, tensor<40xi32>)
           space [10, 16] sum [40]
           maps [affine_map<(i, f, e)[s0, s1, s2] -> (e)>,
                 affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
           index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>,
                       affine_map<(i, f, e) -> (e)>] checked [1]
           where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
           -> tensor<10x16xf32> { ... }
    ```

    If `where` is given, iterations whose dims do not satisfy the integer set
    are skipped. The body's yielded values are combined over the reduction
    dims by `kind`; an output element that receives no iteration holds the
    kind's identity (0 for `none` and `sum`, 1 for `prod`, -inf for `max`,
    +inf for `min`).

    Example, a 3x3 convolution with stride 2 and padding 1:

    ```mlir
    %o = neo.compute ins(%x, %w : tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>)
           space [1, 6, 4, 4] sum [4, 3, 3]
           maps [affine_map<(n, k, p, q, c, r, s) -> (n, c, p * 2 + r - 1, q * 2 + s - 1)>,
                 affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>]
           -> tensor<1x6x4x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      neo.yield %m : f32
    }
    ```
  }];
  let arguments = (ins
    Variadic<Neo_Tensor>:$inputs,
    Variadic<Neo_IndexTensor>:$index_inputs,
    DenseI64ArrayAttr:$bounds,
    DenseI64ArrayAttr:$reduction_bounds,
    Neo_ReductionKindAttr:$kind,
    AffineMapArrayAttr:$indexing_maps,
    OptionalAttr<AffineMapArrayAttr>:$index_maps,
    OptionalAttr<DenseI64ArrayAttr>:$checked_reads,
    OptionalAttr<DenseF64ArrayAttr>:$pad_values,
    OptionalAttr<IntegerSetAttr>:$domain
  );
  let results = (outs Neo_Tensor:$result);
  let regions = (region SizedRegion<1>:$body);

  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`indices` `(` $index_inputs^ `:` type($index_inputs) `)`)?
    `space` custom<IterationSpace>($bounds, $kind, $reduction_bounds)
    `maps` $indexing_maps
    (`index_maps` $index_maps^)?
    (`checked` $checked_reads^)?
    (`pad` custom<PadValues>($pad_values)^)?
    (`where` $domain^)?
    `->` type($result) attr-dict-with-keyword $body
  }];

  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::RankedTensorType":$resultType,
                   "::mlir::ValueRange":$inputs,
                   "::llvm::ArrayRef<::mlir::AffineMap>":$maps,
                   "::llvm::ArrayRef<int64_t>":$reductionBounds,
                   "::mlir::neo::ReductionKind":$kind,
                   CArg<"::llvm::ArrayRef<double>", "{}">:$padValues,
                   CArg<"::mlir::IntegerSet", "{}">:$domain,
                   CArg<"::mlir::ValueRange", "{}">:$indexInputs,
                   CArg<"::llvm::ArrayRef<::mlir::AffineMap>", "{}">:$indexMaps,
                   CArg<"::llvm::ArrayRef<int64_t>", "{}">:$checkedReads)>
  ];

  let extraClassDeclaration = [{
    /// Number of parallel dims (the rank of the result).
    unsigned getNumParallelDims() { return getBounds().size(); }
    /// Number of reduction dims.
    unsigned getNumReductionDims() { return getReductionBounds().size(); }
    /// Number of iteration dims, parallel then reduction.
    unsigned getNumDims() { return getNumParallelDims() + getNumReductionDims(); }
    /// Extents of all iteration dims, parallel then reduction.
    ::llvm::SmallVector<int64_t> getIterationBounds();
    /// The indexing map of read `i`.
    ::mlir::AffineMap getIndexingMap(unsigned i);
    ::llvm::SmallVector<::mlir::AffineMap> getIndexingMapsArray();
    /// The pad value of read `i` (0 when none is set).
    double getPadValue(unsigned i);
    ::llvm::SmallVector<double> getPadValuesArray();
    /// True if read `i` may fall outside its operand for some iteration.
    bool readMayBeOutOfBounds(unsigned i);
    /// Number of index reads (the symbols of the maps and the domain).
    unsigned getNumIndexReads() { return getIndexInputs().size(); }
    /// True if some read or the domain depends on index values.
    bool hasIndexReads() { return !getIndexInputs().empty(); }
    /// The index map of index read `j`.
    ::mlir::AffineMap getIndexMap(unsigned j);
    ::llvm::SmallVector<::mlir::AffineMap> getIndexMapsArray();
    /// True if read `i`'s map uses index values.
    bool isIndirectRead(unsigned i);
    /// True if an index of read `i` outside its operand is a run-time error.
    bool isCheckedRead(unsigned i);
    ::mlir::LogicalResult verifyIndexReads();
    /// The block of the body and its terminator.
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::mlir::Value getYieldedValue();
    ::mlir::RankedTensorType getResultType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    /// The identity of the reduction kind (also the value of output elements
    /// that receive no iteration).
    static double getIdentity(::mlir::neo::ReductionKind kind);
  }];

  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Neo_YieldOp : Neo_Op<"yield", [Pure, Terminator, ReturnLike,
                                  ParentOneOf<["ComputeOp"]>]> {
  let summary = "yields the scalar value of one iteration of a neo.compute";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
  let hasVerifier = 1;
}

def Neo_IndexReadOp : Neo_Op<"index_read", [Pure, HasParent<"ComputeOp">]> {
  let summary = "the value of an index read inside a neo.compute body";
  let description = [{
    `neo.index_read 1` is the value (symbol `s1`) of index read #1 of the
    enclosing `neo.compute` at the current iteration.
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$read);
  let results = (outs Index:$result);
  let assemblyFormat = "$read attr-dict";
  let hasVerifier = 1;
}

def Neo_IndexOp : Neo_Op<"index", [Pure, HasParent<"ComputeOp">]> {
  let summary = "the value of an iteration dim inside a neo.compute body";
  let description = [{
    `neo.index 2` is the current value of iteration dim `d2` of the enclosing
    `neo.compute` (parallel dims first, then reduction dims).
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
  let results = (outs Index:$result);
  let assemblyFormat = "$dim attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// neo.constant
//===----------------------------------------------------------------------===//

def Neo_ConstantOp : Neo_Op<"constant", [ConstantLike, Pure,
    TypesMatchWith<"result type matches the value's type", "value", "result",
                   "$_self">]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = neo.constant dense<1.0> : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Neo_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// neo.fused
//===----------------------------------------------------------------------===//

def Neo_FusedOp : Neo_Op<"fused", [IsolatedFromAbove, SingleBlock,
    RecursiveMemoryEffects]> {
  let summary = "a fused kernel: a region of neo ops run as one unit";
  let description = [{
    Groups a DAG of neo ops that are scheduled, tiled and launched together.
    The region's arguments are bound to the operands; `neo.return` gives the
    results. Produced by `neo-eqsat-fuse`; `neo-inline-fused` dissolves it.

    With `row_block B`, the kernel runs its ops block by block along their
    shared leading parallel dim `d0` (the *row*): for each block of `B` rows,
    every op computes its rows in order, so that values passed between the
    ops stay in cache and only the results are written. The region keeps its
    meaning (the same DAG of ops); the verifier checks that it can run so:
    every op is a `neo.compute` whose `d0` has one extent `E` (a multiple of
    `B`); `d0` appears in no domain and no `neo.index`; a read of another op
    of the region has `d0` as its first index and nowhere else; a read of an
    operand names `d0` only as a whole index into a dim of extent `E`. Ops
    with index reads may join (a CSR row range, an embedding lookup): an
    index operand names `d0` only as `d0 + c` (`c >= 0`) into a dim of at
    least `E + c` (a block reads `rowptr[i]` and `rowptr[i + 1]` for its
    rows), and a read through index values (`X[col[e], f]`) reads its
    operand whole, touching only the rows it gathers. Index tensors are
    operands only, never results.

    ```mlir
    %y = neo.fused ins(%x : tensor<64x1024xf32>) row_block 8 -> (tensor<64x1024xf32>) {
    ^bb0(%a: tensor<64x1024xf32>):
      %m = neo.compute ins(%a : ...) space [64] max [1024] ...
      %y = neo.compute ins(%a, %m : ...) space [64, 1024] ...
      neo.return %y : tensor<64x1024xf32>
    }
    ```

    ```mlir
    %r:2 = neo.fused ins(%a, %b : tensor<4xf32>, tensor<4xf32>)
             -> (tensor<4xf32>, tensor<4xf32>) {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      ...
      neo.return %p, %q : tensor<4xf32>, tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyTypeOf<[Neo_Tensor, Neo_IndexTensor]>>:$inputs,
      OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$row_block);
  let results = (outs Variadic<Neo_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCanonicalizer = 1;
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? (`row_block` $row_block^)?
    `->` `(` type($results) `)` attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// The extent of the shared leading dim of a row-blocked kernel.
    int64_t getRowExtent();
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

def Neo_ReturnOp : Neo_Op<"return", [Pure, Terminator, ReturnLike,
                                    HasParent<"FusedOp">]> {
  let summary = "returns the results of a neo.fused kernel";
  let arguments = (ins Variadic<Neo_Tensor>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// neo.invert_index
//===----------------------------------------------------------------------===//

def Neo_InvertIndexOp : Neo_Op<"invert_index", [Pure, AttrSizedOperandSegments]> {
  let summary = "the inverse of an index map, as CSR (a counting sort)";
  let description = [{
    Inverts the map `e -> values[e]` from the positions `[0, N)` of a 1-D
    index tensor to the values `[0, J)`, where `J + 1` is the size of
    `offsets`: the positions holding value `v` are
    `positions[offsets[v] .. offsets[v + 1]]`, in increasing order (a stable
    counting sort). Positions whose value lies outside `[0, J)` are left out
    (`offsets[J]` counts those kept); the rest of `positions` is 0.

    With `segments` (a 1-D tensor of `M + 1` row pointers, a CSR's `rowptr`),
    only the positions inside a segment are kept, and `owners` gives the
    segment of each kept position (`owners[t]` is the `i` with
    `segments[i] <= positions[t] < segments[i + 1]`). Segments are taken in
    order and clamped to be disjoint and within `[0, N)`: segment `i` covers
    `[lo_i, hi_i)` with `lo_i = clamp(segments[i], hi_(i-1), N)` and
    `hi_i = clamp(segments[i + 1], lo_i, N)`, which is the segment itself for
    a well-formed CSR (non-decreasing row pointers from 0 to at most N); for
    malformed row pointers every output still lies in range.

    Without `of` (only segments), the value of each position is the position
    itself (J = N): `offsets[e] .. offsets[e + 1]` holds one entry when `e`
    lies in a segment (none otherwise), and `owners` there is `e`'s row.

    It is what `neo-autodiff` builds for the gather form of a gradient
    through index values: `dX[j, f] = sum over e with col[e] == j` becomes a
    reduction over `positions[offsets[j] .. offsets[j + 1]]`, a deterministic
    gather without atomics (the transposed CSR of a sparse-dense product);
    the identity form gives each nonzero its row (`dval` of SpMM, SDDMM-
    shaped). As a pure op it is built once per index tensor and shared (CSE).

    ```mlir
    %off, %pos = neo.invert_index of %tok : (tensor<8xi32>) -> (tensor<101xi32>, tensor<8xi32>)
    %toff, %tpos, %trow = neo.invert_index of %col segments %rowptr
        : (tensor<40xi32>, tensor<11xi32>) -> (tensor<11xi32>, tensor<40xi32>, tensor<40xi32>)
    %eoff, %epos, %erow = neo.invert_index segments %rowptr
        : (tensor<11xi32>) -> (tensor<41xi32>, tensor<40xi32>, tensor<40xi32>)
    ```
  }];
  let arguments = (ins Optional<Neo_IndexTensor>:$values, Optional<Neo_IndexTensor>:$segments);
  let results = (outs Neo_IndexTensor:$offsets, Neo_IndexTensor:$positions,
                      Optional<Neo_IndexTensor>:$owners);
  let assemblyFormat = [{
    (`of` $values^)? (`segments` $segments^)? attr-dict `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// J: the number of values (the size of `offsets` minus one).
    int64_t getExtent() {
      return ::llvm::cast<::mlir::RankedTensorType>(getOffsets().getType()).getDimSize(0) - 1;
    }
    /// N: the number of positions.
    int64_t getNumPositions() {
      return ::llvm::cast<::mlir::RankedTensorType>(getPositions().getType()).getDimSize(0);
    }
  }];
  let hasVerifier = 1;
}

#endif // NEO_OPS_TD
