// RUN: neo-opt %s | neo-opt | FileCheck %s
// RUN: neo-opt %s --mlir-print-op-generic | neo-opt | FileCheck %s
// Round trip of every op form, in custom and in generic syntax.

// CHECK-LABEL: func.func @matmul
// CHECK: neo.compute ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) space [2, 4] sum [3]
// CHECK-SAME: maps [#{{.*}}, #{{.*}}] -> tensor<2x4xf32> {
// CHECK: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK: %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK: neo.yield %[[M]] : f32
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = neo.compute ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
         space [2, 4] sum [3]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<2x4xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<2x4xf32>
}

// Padding values (with -inf), a domain constraint, max reduction.
// CHECK-LABEL: func.func @maxpool
// CHECK: space [1, 4, 4] max [3, 3]
// CHECK-SAME: pad [-inf] where #{{.*}} -> tensor<1x4x4xf32>
func.func @maxpool(%x: tensor<1x8x8xf32>) -> tensor<1x4x4xf32> {
  %0 = neo.compute ins(%x : tensor<1x8x8xf32>)
         space [1, 4, 4] max [3, 3]
         maps [affine_map<(c, p, q, r, s) -> (c, p * 2 + r - 1, q * 2 + s - 1)>]
         pad [-inf]
         where affine_set<(c, p, q, r, s) : (p * 2 + r >= 0)>
         -> tensor<1x4x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<1x4x4xf32>
}

// No inputs, iteration indices in the body (an identity matrix), f64.
// CHECK-LABEL: func.func @eye
// CHECK: neo.compute space [3, 3] maps [] -> tensor<3x3xf64> {
// CHECK: neo.index 0
// CHECK: neo.index 1
func.func @eye() -> tensor<3x3xf64> {
  %0 = neo.compute space [3, 3] maps [] -> tensor<3x3xf64> {
    %i = neo.index 0
    %j = neo.index 1
    %eq = arith.cmpi eq, %i, %j : index
    %one = arith.constant 1.0 : f64
    %zero = arith.constant 0.0 : f64
    %v = arith.select %eq, %one, %zero : f64
    neo.yield %v : f64
  }
  return %0 : tensor<3x3xf64>
}

// A 0-d scalar loss with a prod and a min reduction, f16 and bf16 tensors,
// and several reads of one tensor with different maps (a stencil).
// CHECK-LABEL: func.func @scalars
// CHECK: space [] sum [4] maps [#{{.*}}] -> tensor<f32>
// CHECK: space [] prod [4]
// CHECK: space [] min [4]
// CHECK: space [2] maps [#{{.*}}, #{{.*}}] pad [1.500000e+00, 0.000000e+00] -> tensor<2xf16>
func.func @scalars(%x: tensor<4xf32>, %h: tensor<4xf16>, %g: tensor<4xbf16>)
    -> (tensor<f32>, tensor<f32>, tensor<bf16>, tensor<2xf16>) {
  %s = neo.compute ins(%x : tensor<4xf32>) space [] sum [4]
         maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %p = neo.compute ins(%x : tensor<4xf32>) space [] prod [4]
         maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %m = neo.compute ins(%g : tensor<4xbf16>) space [] min [4]
         maps [affine_map<(k) -> (k)>] -> tensor<bf16> {
  ^bb0(%v: bf16):
    neo.yield %v : bf16
  }
  %st = neo.compute ins(%h, %h : tensor<4xf16>, tensor<4xf16>) space [2]
          maps [affine_map<(i) -> (i * 2 - 1)>, affine_map<(i) -> (i floordiv 2 + i mod 2)>]
          pad [1.5, 0.0] -> tensor<2xf16> {
  ^bb0(%u: f16, %w: f16):
    %a = arith.addf %u, %w : f16
    neo.yield %a : f16
  }
  return %s, %p, %m, %st : tensor<f32>, tensor<f32>, tensor<bf16>, tensor<2xf16>
}

// CHECK-LABEL: func.func @constant_and_fused
// CHECK: %[[C:.*]] = neo.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK: %[[R:.*]]:2 = neo.fused ins(%{{.*}}, %[[C]] : tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// CHECK: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
// CHECK: neo.return %{{.*}}, %[[X]] : tensor<4xf32>, tensor<4xf32>
func.func @constant_and_fused(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = neo.constant dense<2.0> : tensor<4xf32>
  %r:2 = neo.fused ins(%a, %c : tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = neo.compute ins(%x, %y : tensor<4xf32>, tensor<4xf32>) space [4]
           maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%u: f32, %v: f32):
      %m = arith.mulf %u, %v : f32
      neo.yield %m : f32
    }
    neo.return %s, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// Discardable attributes survive the round trip.
// CHECK-LABEL: func.func @attrs
// CHECK: -> tensor<4xf32> attributes {neo.schedule = "tile"} {
func.func @attrs(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (3 - i)>]
         -> tensor<4xf32> attributes {neo.schedule = "tile"} {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}
