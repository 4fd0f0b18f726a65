// neo-check-batch: the dims of extent 7 are a batch; a function that never
// mixes its rows gets neo.batch_dim on its batched arguments and results.
// RUN: neo-opt %s -split-input-file --neo-check-batch="function=cell extent=7" -verify-diagnostics | FileCheck %s
// An extent below 2 is an error that names the value (it printed as a
// control character before).
// RUN: not neo-opt %s -split-input-file --neo-check-batch="function=cell extent=1" 2>&1 | FileCheck %s --check-prefix=EXTENT
// EXTENT: neo-check-batch: extent must be at least 2, not 1{{$}}

// An RNN-style cell: x * W + h * U, a tanh, and a broadcast bias that reads
// no batched operand (rows alike); h read transposed (its batch dim is 1).
// CHECK-LABEL: func.func @cell
// CHECK-SAME: %{{.+}}: tensor<7x16xf32> {neo.batch_dim = 0 : i64, neo.name = "x"}
// CHECK-SAME: %{{.+}}: tensor<8x7xf32> {neo.batch_dim = 1 : i64, neo.name = "h"}
// CHECK-SAME: %{{.+}}: tensor<16x8xf32> {neo.name = "W"}
// CHECK-SAME: -> (tensor<7x8xf32> {neo.batch_dim = 0 : i64, neo.name = "y"})
func.func @cell(%x: tensor<7x16xf32> {neo.name = "x"}, %h: tensor<8x7xf32> {neo.name = "h"},
                %w: tensor<16x8xf32> {neo.name = "W"}, %b: tensor<8xf32> {neo.name = "b"})
    -> (tensor<7x8xf32> {neo.name = "y"}) {
  %0 = neo.compute ins(%x, %w : tensor<7x16xf32>, tensor<16x8xf32>) space [7, 8] sum [16]
         maps [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>]
         -> tensor<7x8xf32> {
  ^bb0(%a: f32, %c: f32):
    %m = arith.mulf %a, %c : f32
    neo.yield %m : f32
  }
  %1 = neo.compute ins(%b : tensor<8xf32>) space [7, 8]
         maps [affine_map<(d0, d1) -> (d1)>] -> tensor<7x8xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %2 = neo.compute ins(%0, %1, %h : tensor<7x8xf32>, tensor<7x8xf32>, tensor<8x7xf32>) space [7, 8]
         maps [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
               affine_map<(d0, d1) -> (d1, d0)>] -> tensor<7x8xf32> {
  ^bb0(%a: f32, %c: f32, %e: f32):
    %s = arith.addf %a, %c : f32
    %t = arith.addf %s, %e : f32
    %u = math.tanh %t : f32
    neo.yield %u : f32
  }
  return %2 : tensor<7x8xf32>
}

// -----

// A sum over the batch (a loss): rows mix.
func.func @cell(%x: tensor<7x16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{sums over the batch dim of its operand #0 (d1 is a reduction dim): rows of the batch would mix}}
  %0 = neo.compute ins(%x : tensor<7x16xf32>) space [16] sum [7]
         maps [affine_map<(d0, d1) -> (d1, d0)>] -> tensor<16xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<16xf32>
}

// -----

// The next row: rows mix.
func.func @cell(%x: tensor<7x16xf32>) -> tensor<7x16xf32> {
  // expected-error @+1 {{reads the batch dim of its operand #0 at d0 + 1, not at one parallel dim of its own}}
  %0 = neo.compute ins(%x : tensor<7x16xf32>) space [7, 16]
         maps [affine_map<(d0, d1) -> (d0 + 1, d1)>] -> tensor<7x16xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<7x16xf32>
}

// -----

// A result of fewer rows than the batch (y[b < 5] = x[b]): chunks would drop
// rows.
func.func @cell(%x: tensor<7x16xf32>) -> tensor<5x16xf32> {
  // expected-error @+1 {{reads its batched operands along d0, which its result does not keep (a reduction over the batch, or fewer rows)}}
  %0 = neo.compute ins(%x : tensor<7x16xf32>) space [5, 16]
         maps [affine_map<(d0, d1) -> (d0, d1)>] -> tensor<5x16xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<5x16xf32>
}

// -----

// A row's position as a value (its index in the batch changes with the chunk).
func.func @cell(%x: tensor<7x16xf32>) -> tensor<7x16xf32> {
  // expected-error @+1 {{computes with the value of the batch index d0}}
  %0 = neo.compute ins(%x : tensor<7x16xf32>) space [7, 16]
         maps [affine_map<(d0, d1) -> (d0, d1)>] -> tensor<7x16xf32> {
  ^bb0(%a: f32):
    %i = neo.index 0
    %c = arith.index_cast %i : index to i64
    %f = arith.sitofp %c : i64 to f32
    %s = arith.addf %a, %f : f32
    neo.yield %s : f32
  }
  return %0 : tensor<7x16xf32>
}

// -----

// An unbatched operand read at a point that depends on the batch index.
func.func @cell(%x: tensor<7x16xf32>, %p: tensor<9x16xf32>) -> tensor<7x16xf32> {
  // expected-error @+1 {{reads its operand #1 at a point that depends on the batch index d0 (outside its batch dim)}}
  %0 = neo.compute ins(%x, %p : tensor<7x16xf32>, tensor<9x16xf32>) space [7, 16]
         maps [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>]
         -> tensor<7x16xf32> {
  ^bb0(%a: f32, %c: f32):
    %s = arith.addf %a, %c : f32
    neo.yield %s : f32
  }
  return %0 : tensor<7x16xf32>
}

// -----

// A result without the batch dim.
func.func @cell(%x: tensor<7x16xf32>, %w: tensor<16xf32>) -> tensor<16xf32> {
  %0 = neo.compute ins(%w : tensor<16xf32>) space [16]
         maps [affine_map<(d0) -> (d0)>] -> tensor<16xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  // expected-error @+1 {{returns result #0 without the batch dim: it cannot be computed in chunks}}
  return %0 : tensor<16xf32>
}
