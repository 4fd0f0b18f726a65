// RUN: neo-opt %s --neo-index-checks | FileCheck %s
// RUN: neo-opt %s --neo-index-checks --neo-index-checks | FileCheck %s
// neo-index-checks adds f__index_check next to each function that reads
// index values: two 0-d f64 results per check (first bad position, value
// there), described by neo.index_checks. Running it twice adds nothing.

// An embedding: E's index is tok[n]; the check runs over n only (d does not
// matter), without a domain.
// CHECK-LABEL: func.func @embed__index_check
// CHECK-SAME: -> (tensor<f64>, tensor<f64>)
// CHECK-SAME: neo.index_check_of = "embed"
// CHECK-SAME: dims = ["d0"], extents = array<i64: 6>, message = "{{.*}}index #0 of read #0 ('E', dim size 10)"
// CHECK: neo.compute indices(%arg1 : tensor<6xi32>) space [] min [6]
// CHECK: arith.cmpi sgt, %{{.*}}, %c9
// CHECK: neo.compute ins(%{{.*}} : tensor<f64>) indices(%arg1 : tensor<6xi32>) space [] max [6]
// CHECK-NOT: func.func @embed__index_check
func.func @embed(%e: tensor<10x4xf32> {neo.name = "E"}, %tok: tensor<6xi32> {neo.name = "tok"}) -> tensor<6x4xf32> {
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%tok : tensor<6xi32>) space [6, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         checked [0] -> tensor<6x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<6x4xf32>
}

// CSR: X[col[e], f] is checked inside the domain rowptr[i] <= e < rowptr[i+1]
// (dims i and e); col is i64, so its values are checked too (over e); the
// range itself must satisfy 0 <= rowptr[i] <= rowptr[i + 1] <= 9 (over i).
// CHECK-LABEL: func.func @spmm__index_check
// CHECK-SAME: -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>)
// CHECK-SAME: message = "{{.*}}the value of index read #2 ('col', which must lie in [-2^31, 2^31 - 1])"
// CHECK-SAME: dims = ["d0"], extents = array<i64: 4>, message = "{{.*}}the lower bound of the range of d2 (extent 9)"
// CHECK-SAME: message = "{{.*}}the upper bound of the range of d2 (extent 9)"
// CHECK-SAME: message = "{{.*}}the length (upper - lower bound) of the range of d2 (extent 9)"
// CHECK-SAME: dims = ["d0", "d2"], extents = array<i64: 4, 9>, message = "{{.*}}index #0 of read #1 ('X', dim size 6)"
// CHECK: space [] min [9]
// CHECK: space [] max [9]
// CHECK: space [] min [4]
// CHECK: indices(%arg0, %arg0, %arg1 : tensor<5xi32>, tensor<5xi32>, tensor<9xi64>) space [] min [4, 9]
// CHECK-SAME: where
func.func @spmm(%rowptr: tensor<5xi32> {neo.name = "rowptr"}, %col: tensor<9xi64> {neo.name = "col"}, %val: tensor<9xf32>, %x: tensor<6x3xf32> {neo.name = "X"}) -> tensor<4x3xf32> {
  %0 = neo.compute ins(%val, %x : tensor<9xf32>, tensor<6x3xf32>)
         indices(%rowptr, %rowptr, %col : tensor<5xi32>, tensor<5xi32>, tensor<9xi64>)
         space [4, 3] sum [9]
         maps [affine_map<(i, f, e) -> (e)>, affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
         index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>,
                     affine_map<(i, f, e) -> (e)>] checked [1]
         where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<4x3xf32> {
  ^bb0(%v: f32, %xv: f32):
    %m = arith.mulf %v, %xv : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4x3xf32>
}

// A function without index reads gets no check; a padded indirect read is
// not checked either.
// CHECK-NOT: func.func @affine__index_check
// CHECK-NOT: func.func @padded__index_check
func.func @affine(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4xf32>
}
func.func @padded(%e: tensor<10x4xf32>, %tok: tensor<6xi32>) -> tensor<6x4xf32> {
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%tok : tensor<6xi32>) space [6, 4]
         maps [affine_map<(n, d)[s0] -> (s0 + 1, d)>] index_maps [affine_map<(n, d) -> (n)>]
         -> tensor<6x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<6x4xf32>
}
