// RUN: neo-opt %s --neo-index-checks -split-input-file -verify-diagnostics | FileCheck %s
// Reads through neo.invert_index results are in range by construction
// (offsets in [0, N] and non-decreasing, positions in [0, N)): the gather
// form of an embedding's gradient needs no run-time check.

// CHECK-LABEL: func.func @embed_grad
// CHECK-NOT: func.func @embed_grad__index_check
func.func @embed_grad(%tok: tensor<6xi32>, %dy: tensor<6x4xf32>) -> tensor<10x4xf32> {
  %off, %pos = neo.invert_index of %tok : (tensor<6xi32>) -> (tensor<11xi32>, tensor<6xi32>)
  %0 = neo.compute ins(%dy : tensor<6x4xf32>)
         indices(%off, %off, %pos : tensor<11xi32>, tensor<11xi32>, tensor<6xi32>)
         space [10, 4] sum [6]
         maps [affine_map<(v, d, t)[s0, s1, s2] -> (s2, d)>]
         index_maps [affine_map<(v, d, t) -> (v)>, affine_map<(v, d, t) -> (v + 1)>,
                     affine_map<(v, d, t) -> (t)>]
         where affine_set<(v, d, t)[s0, s1, s2] : (t - s0 >= 0, s1 - t - 1 >= 0)>
         -> tensor<10x4xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<10x4xf32>
}

// -----

// A position used as an index into a shorter tensor is not in range by
// construction: refused at compile time (the check function reads only the
// arguments): "reads values of a neo.invert_index result that are not in
// range by construction: <location>: index #0 of index read #3 ...".
func.func @short(%tok: tensor<6xi32>, %len: tensor<3xi32>, %x: tensor<4xf32>) -> tensor<10xf32> {
  %off, %pos = neo.invert_index of %tok : (tensor<6xi32>) -> (tensor<11xi32>, tensor<6xi32>)
  // expected-error @+1 {{index #0 of index read #3 (an intermediate tensor, dim size 3)}}
  %0 = neo.compute ins(%x : tensor<4xf32>)
         indices(%off, %off, %pos, %len : tensor<11xi32>, tensor<11xi32>, tensor<6xi32>, tensor<3xi32>)
         space [10] sum [6]
         maps [affine_map<(v, t)[s0, s1, s2, s3] -> (s3)>]
         index_maps [affine_map<(v, t) -> (v)>, affine_map<(v, t) -> (v + 1)>,
                     affine_map<(v, t) -> (t)>, affine_map<(v, t)[s0, s1, s2, s3] -> (s2)>]
         where affine_set<(v, t)[s0, s1, s2, s3] : (t - s0 >= 0, s1 - t - 1 >= 0)>
         -> tensor<10xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<10xf32>
}
