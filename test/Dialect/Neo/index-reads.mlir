// RUN: neo-opt %s | neo-opt | FileCheck %s
// Index reads round-trip: the operands, the index maps, the checked reads,
// a domain over index values and neo.index_read.

// CHECK-LABEL: func.func @embed
// CHECK: neo.compute ins(%{{.*}} : tensor<10x4xf32>) indices(%{{.*}} : tensor<6xi32>) space [6, 4] maps [#{{.*}}] index_maps [#{{.*}}] checked [0] -> tensor<6x4xf32>
func.func @embed(%e: tensor<10x4xf32>, %tok: tensor<6xi32>) -> tensor<6x4xf32> {
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%tok : tensor<6xi32>) space [6, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         checked [0] -> tensor<6x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @csr
// CHECK: indices(%{{.*}}, %{{.*}}, %{{.*}} : tensor<5xi32>, tensor<5xi32>, tensor<9xi64>) space [4, 3] sum [9]
// CHECK-SAME: where #{{.*}}
// CHECK: neo.index_read 2
func.func @csr(%rowptr: tensor<5xi32>, %col: tensor<9xi64>, %val: tensor<9xf32>, %x: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %0 = neo.compute ins(%val, %x : tensor<9xf32>, tensor<6x3xf32>)
         indices(%rowptr, %rowptr, %col : tensor<5xi32>, tensor<5xi32>, tensor<9xi64>)
         space [4, 3] sum [9]
         maps [affine_map<(i, f, e) -> (e)>, affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
         index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>,
                     affine_map<(i, f, e) -> (e)>] checked [1]
         where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<4x3xf32> {
  ^bb0(%v: f32, %xv: f32):
    %c = neo.index_read 2
    %m = arith.mulf %v, %xv : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4x3xf32>
}

// A nested index read: rowptr[col[e] + 1].
// CHECK-LABEL: func.func @nested
// CHECK: index_maps [#{{.*}}, #{{.*}}]
func.func @nested(%rowptr: tensor<5xi32>, %col: tensor<9xi32>) -> tensor<9xf32> {
  %0 = neo.compute indices(%col, %rowptr : tensor<9xi32>, tensor<5xi32>) space [9]
         maps [] index_maps [affine_map<(e) -> (e)>, affine_map<(e)[s0, s1] -> (s0 + 1)>]
         -> tensor<9xf32> {
    %r = neo.index_read 1
    %i = arith.index_cast %r : index to i64
    %f = arith.sitofp %i : i64 to f32
    neo.yield %f : f32
  }
  return %0 : tensor<9xf32>
}
