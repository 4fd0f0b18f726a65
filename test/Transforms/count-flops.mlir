// RUN: neo-opt %s -neo-count-flops -o /dev/null | FileCheck %s
// RUN: neo-opt %s -neo-count-flops=summary-only -o /dev/null | FileCheck %s --check-prefix=SUMMARY

// neo-count-flops prints, per function and per neo.compute, the iterations
// of the box, those that satisfy the domain, and the FLOPs: valid
// iterations times (the body's float ops + 1 for the reduction).

// 2 x 4 outputs, 3 steps each: 24 iterations, one mulf and one add each.
// CHECK-LABEL: function matmul
// CHECK-NEXT: sum visited 24 valid 24 flops 48 loc({{.*}}count-flops.mlir":[[@LINE+4]]:
// CHECK-NEXT: matmul: 1 ops, visited 24, valid 24, flops 48
// SUMMARY: matmul: 1 ops, visited 24, valid 24, flops 48
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = neo.compute ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) space [2, 4] sum [3]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<2x4xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<2x4xf32>
}

// A causal domain (j <= i) keeps 10 of the 16 iterations, counted exactly;
// math.exp counts as one op. An op without reduction (kind none) and without
// float ops costs nothing; ops inside neo.fused are counted too.
// CHECK-LABEL: function causal
// CHECK-NEXT: sum visited 16 valid 10 flops 30 loc(
// CHECK-NEXT: none visited 4 valid 4 flops 0 loc(
// CHECK-NEXT: none visited 4 valid 4 flops 4 loc(
// CHECK-NEXT: causal: 3 ops, visited 24, valid 18, flops 34
// SUMMARY-NOT: function
// SUMMARY: causal: 3 ops, visited 24, valid 18, flops 34
func.func @causal(%a: tensor<4x4xf32>, %v: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a, %v : tensor<4x4xf32>, tensor<4xf32>) space [4] sum [4]
         maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>]
         where affine_set<(i, j) : (i - j >= 0)> -> tensor<4xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    %e = math.exp %m : f32
    neo.yield %e : f32
  }
  %1 = neo.compute ins(%0 : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  %2 = neo.fused ins(%1 : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%in: tensor<4xf32>):
    %n = neo.compute ins(%in : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%x: f32):
      %r = arith.negf %x : f32
      neo.yield %r : f32
    }
    neo.return %n : tensor<4xf32>
  }
  return %2 : tensor<4xf32>
}

// Domains that read index values. A CSR range rowptr[i] <= e < rowptr[i+1]
// (bounds that depend on i) holds each nonzero e in one row: 9 nonzeros
// times 3 features = 27 of the 4 x 3 x 9 = 108 iterations (evaluating the
// symbols as 0 used to count none, and enumerated the box for it). A
// scatter-form read pinned by tok[n] == v takes one v of 5 per n: 8 x 4.
// CHECK-LABEL: function csr
// CHECK-NEXT: sum visited 108 valid 27 flops 54 loc(
// CHECK-NEXT: sum visited 160 valid 32 flops 32 loc(
func.func @csr(%rowptr: tensor<5xi32>, %col: tensor<9xi32>, %val: tensor<9xf32>, %x: tensor<6x3xf32>, %tok: tensor<8xi32>, %dy: tensor<8x4xf32>) -> (tensor<4x3xf32>, tensor<5x4xf32>) {
  %0 = neo.compute ins(%val, %x : tensor<9xf32>, tensor<6x3xf32>)
         indices(%rowptr, %rowptr, %col : tensor<5xi32>, tensor<5xi32>, tensor<9xi32>)
         space [4, 3] sum [9]
         maps [affine_map<(i, f, e)[s0, s1, s2] -> (e)>, affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
         index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>, affine_map<(i, f, e) -> (e)>]
         checked [1]
         where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<4x3xf32> {
  ^bb0(%v: f32, %a: f32):
    %m = arith.mulf %v, %a : f32
    neo.yield %m : f32
  }
  %1 = neo.compute ins(%dy : tensor<8x4xf32>) indices(%tok : tensor<8xi32>)
         space [5, 4] sum [8]
         maps [affine_map<(v, d, n)[s0] -> (n, d)>]
         index_maps [affine_map<(v, d, n) -> (n)>]
         where affine_set<(v, d, n)[s0] : (v - s0 == 0)>
         -> tensor<5x4xf32> {
  ^bb0(%g: f32):
    neo.yield %g : f32
  }
  return %0, %1 : tensor<4x3xf32>, tensor<5x4xf32>
}
