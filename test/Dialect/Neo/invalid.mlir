// RUN: neo-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect
// One case per verifier message of the neo dialect.

func.func @bound_positive(%a: tensor<4xf32>) -> tensor<0xf32> {
  // expected-error @+1 {{'neo.compute' op parallel bound #0 must be positive, got 0}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [0] maps [affine_map<(i) -> (i)>] -> tensor<0xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<0xf32>
}

// -----

func.func @reduction_bound_positive(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'neo.compute' op reduction bound #0 must be positive, got -2}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [] sum [-2] maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<f32>
}

// -----

func.func @result_shape(%a: tensor<4xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'neo.compute' op result shape [5] does not match the parallel bounds [4]}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<5xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<5xf32>
}

// -----

func.func @none_with_reduction(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'neo.compute' op reduction kind 'none' requires no reduction dims, but 1 were given}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [] none [4] maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<f32>
}

// -----

func.func @sum_without_reduction(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op reduction kind 'sum' requires at least one reduction dim}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] sum [] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @unknown_kind(%a: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{expected 'maps'}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [] avg [4] maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<f32>
}

// -----

func.func @map_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op expected 2 indexing maps (one per read), but got 1}}
  %0 = neo.compute ins(%a, %a : tensor<4xf32>, tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32, %w: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op expected 1 pad values (one per read), but got 2}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] pad [0.0, 1.0] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_symbols(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0 has 1 symbols but the op has 0 index reads}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i)[s] -> (i + s)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// A map naming more dims than the iteration space has.
func.func @map_dims(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0 has 2 dims but the iteration space has 1}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i, j) -> (j)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_rank(%a: tensor<4x4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0 has 1 results but read #0 is of rank 2}}
  %0 = neo.compute ins(%a : tensor<4x4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_not_affine(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0: index #0 (d0 floordiv -2) is not affine: only +, * by a constant and floordiv/ceildiv/mod by a positive constant are allowed}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i floordiv -2)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @map_overflow(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op indexing map #0: the range of index #0 (d0 * 4611686018427387904) overflows 64-bit integers}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i * 4611686018427387904)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @never_in_bounds(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op read #0 is never in bounds: index #0 ranges over [-8, -5] but the dim has size 4}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i - 8)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @domain_symbols(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op domain has 1 symbols but the op has 0 index reads}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] where affine_set<(i)[s] : (i - s >= 0)> -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @domain_dims(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op domain has 2 dims but the iteration space has 1}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] where affine_set<(i, j) : (i - j >= 0)> -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @domain_not_affine(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op domain constraint (d0 mod -3) is not affine in the iteration dims}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] where affine_set<(i) : (i mod -3 == 0)> -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @body_arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op body has 2 arguments but the op has 1 reads}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32, %w: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @body_arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op body argument #0 has type 'f64' but read #0 has element type 'f32'}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f64):
    %t = arith.truncf %v : f64 to f32
    neo.yield %t : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @no_yield(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op body must end with neo.yield}}
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    "test.terminator"(%v) : (f32) -> ()
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'neo.yield' op must yield exactly one value, but yields 2}}
    neo.yield %v, %v : f32, f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    %e = arith.extf %v : f32 to f64
    // expected-error @+1 {{'neo.yield' op yields a value of type 'f64' but the result element type is 'f32'}}
    neo.yield %e : f64
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @body_op_not_scalar(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'tensor.empty' op is not allowed in a neo.compute body: only side-effect-free ops on scalars are}}
    %t = tensor.empty() : tensor<2xf32>
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @body_op_side_effect(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'test.print' op is not allowed in a neo.compute body: only side-effect-free ops on scalars are}}
    "test.print"(%v) : (f32) -> ()
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @index_dim(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'neo.index' op dim 3 is out of range for an iteration space of 1 dims}}
    %i = neo.index 3
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @index_outside() -> index {
  // expected-error @+1 {{'neo.index' op expects parent op 'neo.compute'}}
  %i = neo.index 0
  return %i : index
}

// -----

func.func @integer_tensor(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{'neo.compute' op operand #0 must be variadic of statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = neo.compute ins(%a : tensor<4xi32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xi32> {
  ^bb0(%v: i32):
    neo.yield %v : i32
  }
  return %0 : tensor<4xi32>
}

// -----

func.func @dynamic_shape(%a: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op operand #0 must be variadic of statically shaped tensor}}
  %0 = neo.compute ins(%a : tensor<?xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_zero_sized() -> tensor<0xf32> {
  // expected-error @+1 {{'neo.constant' op zero-sized dims are not supported}}
  %c = neo.constant dense<> : tensor<0xf32>
  return %c : tensor<0xf32>
}

// -----

func.func @fused_arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.fused' op body has 2 arguments but the op has 1 operands}}
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    neo.return %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.fused' op body argument #0 has type 'tensor<4xf64>' but operand #0 has type 'tensor<4xf32>'}}
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf64>):
    neo.return %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_no_return(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.fused' op body must end with neo.return}}
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    "test.terminator"(%x) : (tensor<4xf32>) -> ()
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_return_types(%a: tensor<4xf32>, %b: tensor<2xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a, %b : tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<2xf32>):
    // expected-error @+1 {{'neo.return' op returns types ('tensor<2xf32>') that differ from the results ('tensor<4xf32>') of the fused op}}
    neo.return %y : tensor<2xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_return_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'neo.return' op returns 2 values but the fused op has 1 results}}
    neo.return %x, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @fused_foreign_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    // expected-error @+1 {{'tensor.empty' op is not allowed in a neo.fused body: only neo ops are}}
    %e = tensor.empty() : tensor<4xf32>
    neo.return %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @return_outside(%a: tensor<4xf32>) {
  // expected-error @+1 {{'neo.return' op expects parent op 'neo.fused'}}
  neo.return %a : tensor<4xf32>
}
