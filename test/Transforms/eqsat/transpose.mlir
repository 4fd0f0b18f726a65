// RUN: neo-opt %s --neo-eqsat-fuse --canonicalize | FileCheck %s
// A transpose of a transpose is the input itself: inlining composes the two
// maps into the identity and the copy folds away.
// CHECK-LABEL: func.func @tt
// CHECK-SAME: (%[[X:.*]]: tensor<3x5xf32>)
// CHECK-NOT: neo.compute
// CHECK: return %[[X]]
func.func @tt(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %t = neo.compute ins(%x : tensor<3x5xf32>) space [5, 3] maps [affine_map<(i, j) -> (j, i)>] -> tensor<5x3xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %u = neo.compute ins(%t : tensor<5x3xf32>) space [3, 5] maps [affine_map<(i, j) -> (j, i)>] -> tensor<3x5xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %u : tensor<3x5xf32>
}
