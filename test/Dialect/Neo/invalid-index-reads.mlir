// RUN: neo-opt %s -split-input-file -verify-diagnostics
// The verifier messages of index reads (reads of i32/i64 tensors whose values
// index other reads, the domain and later index reads).

func.func @index_maps_count(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op expected 1 index maps (one per index read), but got 0}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @index_map_dims(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op index map #0 has 1 dims but the iteration space has 2}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n) -> (n)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @index_map_rank(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op index map #0 has 2 results but index read #0 is of rank 1}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n, d)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @index_map_own_symbol(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op index map #0: index #0 (s0) must be affine in the iteration dims and the values of earlier index reads}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d)[s0] -> (s0)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @index_read_never_in_bounds(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op index read #0 is never in bounds: index #0 ranges over [8, 15] but the dim has size 8}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n + 8)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @symbol_count(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0 has 2 symbols but the op has 1 index reads}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0, s1] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @symbol_product(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0: index #0 (d0 * s0) is not affine}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0 * n, d)>] index_maps [affine_map<(n, d) -> (n)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @symbol_overflow(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0: the range of index #0 (s0 * 8589934592) overflows 64-bit integers}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0 * 8589934592, d)>] index_maps [affine_map<(n, d) -> (n)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @checked_affine(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op checked read #0 does not use an index read}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d) -> (n, d)>] index_maps [affine_map<(n, d) -> (n)>] checked [0]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @checked_order(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op checked reads must be increasing read numbers below 1, got 1}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>] checked [1]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @float_index_tensor(%e: tensor<10x4xf32>, %t: tensor<8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{operand #1 must be variadic of statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = "neo.compute"(%e, %t) <{bounds = array<i64: 8, 4>, reduction_bounds = array<i64>, kind = #neo<reduction none>, indexing_maps = [affine_map<(n, d)[s0] -> (s0, d)>], index_maps = [affine_map<(n, d) -> (n)>], operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%v: f32):
    neo.yield %v : f32
  }) : (tensor<10x4xf32>, tensor<8xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @index_read_number(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'neo.index_read' op reads index read #1 but the enclosing neo.compute has 1}}
    %i = neo.index_read 1
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @domain_symbols(%e: tensor<10x4xf32>, %t: tensor<8xi32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'neo.compute' op domain has 2 symbols but the op has 1 index reads}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%t : tensor<8xi32>) space [8, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         where affine_set<(n, d)[s0, s1] : (s0 - s1 >= 0)>
         -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<8x4xf32>
}

// -----

func.func @invert_not_1d(%v: tensor<2x4xi32>) {
  // expected-error @+1 {{'neo.invert_index' op the values must be a 1-D tensor, but has type 'tensor<2x4xi32>'}}
  %o, %p = neo.invert_index of %v : (tensor<2x4xi32>) -> (tensor<5xi32>, tensor<8xi32>)
  return
}

// -----

func.func @invert_positions_size(%v: tensor<8xi32>) {
  // expected-error @+1 {{'neo.invert_index' op the positions must have one element per value (8), but have 7}}
  %o, %p = neo.invert_index of %v : (tensor<8xi32>) -> (tensor<5xi32>, tensor<7xi32>)
  return
}

// -----

func.func @invert_no_values(%v: tensor<8xi32>) {
  // expected-error @+1 {{'neo.invert_index' op the offsets must have at least 2 elements (J + 1 for J >= 1 values), but have 1}}
  %o, %p = neo.invert_index of %v : (tensor<8xi32>) -> (tensor<1xi32>, tensor<8xi32>)
  return
}

// -----

func.func @invert_owners_without_segments(%v: tensor<8xi32>) {
  // expected-error @+1 {{'neo.invert_index' op without segments has no owners: it has two results}}
  %o, %p, %r = "neo.invert_index"(%v) {operandSegmentSizes = array<i32: 1, 0>} : (tensor<8xi32>) -> (tensor<5xi32>, tensor<8xi32>, tensor<8xi32>)
  return
}

// -----

func.func @invert_segments_without_owners(%v: tensor<8xi32>, %s: tensor<3xi32>) {
  // expected-error @+1 {{'neo.invert_index' op with segments needs a third result (the owners)}}
  %o, %p = "neo.invert_index"(%v, %s) {operandSegmentSizes = array<i32: 1, 1>} : (tensor<8xi32>, tensor<3xi32>) -> (tensor<5xi32>, tensor<8xi32>)
  return
}

// -----

func.func @invert_owners_size(%v: tensor<8xi32>, %s: tensor<3xi32>) {
  // expected-error @+1 {{'neo.invert_index' op the owners must have one element per value (8), but have 4}}
  %o, %p, %r = neo.invert_index of %v segments %s : (tensor<8xi32>, tensor<3xi32>) -> (tensor<5xi32>, tensor<8xi32>, tensor<4xi32>)
  return
}

// -----

func.func @invert_nothing() {
  // expected-error @+1 {{'neo.invert_index' op needs values to invert, segments, or both}}
  %o, %p = "neo.invert_index"() {operandSegmentSizes = array<i32: 0, 0>} : () -> (tensor<5xi32>, tensor<8xi32>)
  return
}

// -----

func.func @invert_identity_size(%s: tensor<3xi32>) {
  // expected-error @+1 {{'neo.invert_index' op without values inverts the positions themselves: the offsets must have N + 1 = 9 elements, but have 5}}
  %o, %p, %r = neo.invert_index segments %s : (tensor<3xi32>) -> (tensor<5xi32>, tensor<8xi32>, tensor<8xi32>)
  return
}
