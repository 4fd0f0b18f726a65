// RUN: neo-opt %s --neo-narrow-storage -split-input-file | FileCheck %s

// A bf16 value widened into an f32 tensor read by two computes: stored as
// bf16, each reader widens it.
// CHECK-LABEL: func.func @narrowed
// CHECK: %[[D:.*]] = neo.compute ins(%{{.*}} : tensor<4x8xf32>) space [4, 8] {{.*}} -> tensor<4x8xbf16> {
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: neo.yield %[[T]] : bf16
// CHECK: neo.compute ins(%[[D]], %{{.*}} : tensor<4x8xbf16>, tensor<8x3xbf16>) space [4, 3] sum [8]
// CHECK-NEXT: ^bb0(%[[A:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: arith.extf %[[A]] : bf16 to f32
// CHECK: neo.compute ins(%[[D]] : tensor<4x8xbf16>) space [4] sum [8]
// CHECK-NEXT: ^bb0(%[[B:.*]]: bf16):
// CHECK-NEXT: arith.extf %[[B]] : bf16 to f32
func.func @narrowed(%x: tensor<4x8xf32>, %w: tensor<8x3xbf16>) -> (tensor<4x3xf32>, tensor<4xf32>) {
  %d = neo.compute ins(%x : tensor<4x8xf32>) space [4, 8] maps [affine_map<(i, j) -> (i, j)>] -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    %t = arith.truncf %v : f32 to bf16
    %e = arith.extf %t : bf16 to f32
    neo.yield %e : f32
  }
  %g = neo.compute ins(%d, %w : tensor<4x8xf32>, tensor<8x3xbf16>) space [4, 3] sum [8]
      maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<4x3xf32> {
  ^bb0(%a: f32, %b: bf16):
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %a, %bf : f32
    neo.yield %p : f32
  }
  %s = neo.compute ins(%d : tensor<4x8xf32>) space [4] sum [8] maps [affine_map<(i, k) -> (i, k)>] -> tensor<4xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %g, %s : tensor<4x3xf32>, tensor<4xf32>
}

// -----

// Returned by the function: its type is the signature's, left alone.
// CHECK-LABEL: func.func @returned
// CHECK: -> tensor<4xf32> {
// CHECK: arith.extf
func.func @returned(%x: tensor<4xf32>) -> tensor<4xf32> {
  %d = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    %t = arith.truncf %v : f32 to f16
    %e = arith.extf %t : f16 to f32
    neo.yield %e : f32
  }
  return %d : tensor<4xf32>
}
