// neo-unroll-reductions: a generic whose reduction is a small window becomes
// a parallel generic summing the window's points in its body; a constant
// fill of its output just before it folds into the sum.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-unroll-reductions))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-unroll-reductions{max-points=2}))' | FileCheck %s --check-prefix=SMALL
// RUN: not neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-unroll-reductions{max-points=-1}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: neo-unroll-reductions: max-points must be >= 0, got -1

// A 3-tap window over a row, y filled with zeros first: the fill goes, the
// sum starts from its constant, each tap reads x through a shifted map (the
// unshifted one through a leading subview of the loop's extent), and the
// schedule stays.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[S1:.*]] = affine_map<(d0, d1) -> (d0, d1 + 1)>
// CHECK-DAG: #[[S2:.*]] = affine_map<(d0, d1) -> (d0, d1 + 2)>
// CHECK-DAG: #[[W0:.*]] = affine_map<(d0, d1) -> (0)>
// CHECK-LABEL: func.func @taps(
// CHECK-SAME: %[[X:[^:]*]]: memref<4x10xf32>, %[[W:[^:]*]]: memref<3xf32>, %[[Y:[^:]*]]: memref<4x8xf32>
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: %[[X0:.*]] = memref.subview %[[X]][0, 0] [4, 8] [1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[W0]], #[[S1]], #{{.*}}, #[[S2]], #{{.*}}, #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X0]], %[[W]], %[[X]], %[[W]], %[[X]], %[[W]] :
// CHECK-SAME: outs(%[[Y]] : memref<4x8xf32>) attrs = {neo.schedule = #neo.cpu_generic<vector = 16, threads = 1>}
// CHECK: ^bb0(%[[A0:.*]]: f32, %[[B0:.*]]: f32, %[[A1:.*]]: f32, %[[B1:.*]]: f32, %[[A2:.*]]: f32, %[[B2:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[P0:.*]] = arith.mulf %[[A0]], %[[B0]]
// CHECK: %[[S0:.*]] = arith.addf %[[ZERO]], %[[P0]]
// CHECK: %[[P1:.*]] = arith.mulf %[[A1]], %[[B1]]
// CHECK: %[[T1:.*]] = arith.addf %[[S0]], %[[P1]]
// CHECK: %[[P2:.*]] = arith.mulf %[[A2]], %[[B2]]
// CHECK: %[[T2:.*]] = arith.addf %[[T1]], %[[P2]]
// CHECK: linalg.yield %[[T2]]
// With max-points=2 the window of 3 stays a reduction.
// SMALL-LABEL: func.func @taps(
// SMALL: linalg.fill
// SMALL: iterator_types = ["parallel", "parallel", "reduction"]
#x = affine_map<(i, j, k) -> (i, j + k)>
#w = affine_map<(i, j, k) -> (k)>
#y = affine_map<(i, j, k) -> (i, j)>
func.func @taps(%x: memref<4x10xf32>, %w: memref<3xf32>, %y: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<4x8xf32>)
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<4x10xf32>, memref<3xf32>) outs(%y : memref<4x8xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 16, threads = 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Without a fill the sum starts from the output's value; a linalg.index of
// the window's dim becomes its constant, of a parallel dim the new dim.
// CHECK-LABEL: func.func @from_output(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[OUT:.*]]: f32):
// CHECK: linalg.index 0 : index
// CHECK: arith.constant 0 : index
// CHECK: arith.addf %[[OUT]],
// CHECK: arith.constant 1 : index
// CHECK-NOT: linalg.index 1
// CHECK: linalg.yield
#a = affine_map<(i, k) -> (i + k)>
#k = affine_map<(i, k) -> (k)>
#o = affine_map<(i, k) -> (i)>
func.func @from_output(%x: memref<9xf32>, %w: memref<2xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#a, #k, #o], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<9xf32>, memref<2xf32>) outs(%y : memref<8xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 8, threads = 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %i = linalg.index 0 : index
    %k = linalg.index 1 : index
    %s = arith.addi %i, %k : index
    %c = arith.index_cast %s : index to i32
    %f = arith.sitofp %c : i32 to f32
    %p = arith.mulf %a, %f : f32
    %q = arith.mulf %p, %b : f32
    %r = arith.addf %o, %q : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Unchanged: an op that touches the output between the fill and the
// generic keeps the fill (the sum then starts from the output); a generic
// without a CPU schedule; one whose input views its output's buffer; one
// whose output is not written at exactly the parallel dims.
// CHECK-LABEL: func.func @kept(
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[OUT2:.*]]: f32):
// CHECK: arith.addf %[[OUT2]],
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : memref<8x2xf32>)
#a2 = affine_map<(i, k) -> (i + k)>
#k2 = affine_map<(i, k) -> (k)>
#o2 = affine_map<(i, k) -> (i)>
#o3 = affine_map<(i, k) -> (i, k)>
func.func @kept(%x: memref<9xf32>, %w: memref<2xf32>, %y: memref<8xf32>, %z: memref<8x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%y : memref<8xf32>)
  memref.store %zero, %y[%c0] : memref<8xf32>
  linalg.generic {indexing_maps = [#a2, #k2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<9xf32>, memref<2xf32>) outs(%y : memref<8xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 8, threads = 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a2, #k2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : memref<9xf32>, memref<2xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  %v = memref.subview %y[0] [8] [1] : memref<8xf32> to memref<8xf32, strided<[1]>>
  linalg.generic {indexing_maps = [#o2, #k2, #o2], iterator_types = ["parallel", "reduction"]}
      ins(%v, %w : memref<8xf32, strided<[1]>>, memref<2xf32>) outs(%y : memref<8xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 8, threads = 1>} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %o, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#a2, #o3], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<9xf32>) outs(%z : memref<8x2xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 8, threads = 1>} {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}
