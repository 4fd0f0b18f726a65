// Code tiled with explicit schedules matches the interpreter, including
// register tiles and cache blocks that do not divide the extents, blocks
// larger than the problem, batched, transposed and f64 contractions, and
// vector tiles of odd lengths.
//
// RUN: neo-run %s --check --function mm_edges | FileCheck %s
// RUN: neo-run %s --check --function mm_edges --pipeline-options threads=1 | FileCheck %s
// RUN: neo-run %s --check --function mm_tiny_tiles | FileCheck %s
// RUN: neo-run %s --check --function mm_large_tiles | FileCheck %s
// RUN: neo-run %s --check --function mm_wide | FileCheck %s
// RUN: neo-run %s --check --function bmm | FileCheck %s
// RUN: neo-run %s --check --function mm_bt | FileCheck %s
// RUN: neo-run %s --check --function mm_f64 | FileCheck %s
// RUN: neo-run %s --check --function tanh_v7 | FileCheck %s
// RUN: neo-run %s --check --function rowsum_v3 | FileCheck %s
// RUN: neo-run %s --check --function rowsum_v3 --pipeline-options threads=1 | FileCheck %s
// RUN: neo-run %s --check --function tanh_v64 | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: check {{.*}}: ok

// The schedules are the ones given.
// RUN: neo-opt %s --pass-pipeline="builtin.module(neo-lower-to-cpu{stop-after=schedule})" | FileCheck %s --check-prefix=TILED
// TILED-LABEL: func.func @mm_edges(
// TILED-DAG: memref.alloc() {{.*}} : memref<2x7x32xf32>
// TILED-DAG: memref.alloc() {{.*}} : memref<3x7x5xf32>
// TILED-DAG: memref.alloc() {{.*}} : memref<5x32xf32>
// TILED-LABEL: func.func @tanh_v7(
// TILED: vector<7xf32>
// TILED-LABEL: func.func @rowsum_v3(
// TILED: vector<3xf32>

#mk = affine_map<(i, j, k) -> (i, k)>
#kn = affine_map<(i, j, k) -> (k, j)>
#nk = affine_map<(i, j, k) -> (j, k)>

// mr = 5, nr = 32, kc = 7 divide none of 67, 53, 45.
func.func @mm_edges(%a: tensor<67x45xf32>, %b: tensor<45x53xf32>) -> tensor<67x53xf32> {
  %c = neo.compute ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>) space [67, 53] sum [45]
         maps [#mk, #kn] -> tensor<67x53xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 5, nr = 32, mc = 15, nc = 64, kc = 7, threads = 2>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<67x53xf32>
}

func.func @mm_tiny_tiles(%a: tensor<67x45xf32>, %b: tensor<45x53xf32>) -> tensor<67x53xf32> {
  %c = neo.compute ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>) space [67, 53] sum [45]
         maps [#mk, #kn] -> tensor<67x53xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 1, nr = 16, mc = 1, nc = 16, kc = 1, threads = 1>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<67x53xf32>
}

func.func @mm_large_tiles(%a: tensor<67x45xf32>, %b: tensor<45x53xf32>) -> tensor<67x53xf32> {
  %c = neo.compute ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>) space [67, 53] sum [45]
         maps [#mk, #kn] -> tensor<67x53xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 14, nr = 32, mc = 56, nc = 96, kc = 256, threads = 2>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<67x53xf32>
}

func.func @mm_wide(%a: tensor<67x45xf32>, %b: tensor<45x53xf32>) -> tensor<67x53xf32> {
  %c = neo.compute ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>) space [67, 53] sum [45]
         maps [#mk, #kn] -> tensor<67x53xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 3, nr = 128, mc = 9, nc = 128, kc = 13, threads = 2>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<67x53xf32>
}

func.func @bmm(%a: tensor<3x17x19xf32>, %b: tensor<3x19x21xf32>) -> tensor<3x17x21xf32> {
  %c = neo.compute ins(%a, %b : tensor<3x17x19xf32>, tensor<3x19x21xf32>) space [3, 17, 21] sum [19]
         maps [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>]
         -> tensor<3x17x21xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 3, nr = 16, mc = 9, nc = 32, kc = 5, threads = 2>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<3x17x21xf32>
}

// C = A B^T: B is gathered element by element when packed.
func.func @mm_bt(%a: tensor<29x31xf32>, %b: tensor<23x31xf32>) -> tensor<29x23xf32> {
  %c = neo.compute ins(%a, %b : tensor<29x31xf32>, tensor<23x31xf32>) space [29, 23] sum [31]
         maps [#mk, #nk] -> tensor<29x23xf32>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 6, nr = 16, mc = 12, nc = 16, kc = 9, threads = 2>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<29x23xf32>
}

func.func @mm_f64(%a: tensor<33x17xf64>, %b: tensor<17x41xf64>) -> tensor<33x41xf64> {
  %c = neo.compute ins(%a, %b : tensor<33x17xf64>, tensor<17x41xf64>) space [33, 41] sum [17]
         maps [#mk, #kn] -> tensor<33x41xf64>
         attributes {neo.schedule = #neo.cpu_gemm<mr = 3, nr = 24, mc = 6, nc = 48, kc = 10, threads = 2>} {
  ^bb0(%x: f64, %y: f64):
    %m = arith.mulf %x, %y : f64
    neo.yield %m : f64
  }
  return %c : tensor<33x41xf64>
}

func.func @tanh_v7(%x: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %y = neo.compute ins(%x : tensor<37x29xf32>) space [37, 29]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<37x29xf32>
         attributes {neo.schedule = #neo.cpu_generic<vector = 7, threads = 2>} {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    neo.yield %t : f32
  }
  return %y : tensor<37x29xf32>
}

func.func @rowsum_v3(%x: tensor<37x29xf32>) -> tensor<37xf32> {
  %y = neo.compute ins(%x : tensor<37x29xf32>) space [37] sum [29]
         maps [affine_map<(i, k) -> (i, k)>] -> tensor<37xf32>
         attributes {neo.schedule = #neo.cpu_generic<vector = 3, threads = 2>} {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    neo.yield %e : f32
  }
  return %y : tensor<37xf32>
}

func.func @tanh_v64(%x: tensor<37x29xf32>) -> tensor<37x29xf32> {
  %y = neo.compute ins(%x : tensor<37x29xf32>) space [37, 29]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<37x29xf32>
         attributes {neo.schedule = #neo.cpu_generic<vector = 64, threads = 1>} {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    neo.yield %t : f32
  }
  return %y : tensor<37x29xf32>
}
