// RUN: neo-opt %s -split-input-file --neo-fold-gemm-fills | FileCheck %s
// RUN: neo-opt %s -split-input-file --neo-fold-gemm-fills --neo-tile | FileCheck %s --check-prefix=TILED
// A CPU GEMM whose C holds zeros from a fill (or a copy of a zero-filled
// buffer) with nothing touching C in between loses the fill and writes C:
// neo.overwrite. The fill stays where C is read or written in between, where
// something with unknown effects (a call) runs in between, where the fill is
// not +0.0, and where the op also reads C (an implicit GEMM that loads its own
// output).

#s = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 1>
// CHECK-LABEL: func.func @folded(
// CHECK-NOT: memref.copy
// CHECK-NOT: outs(%arg{{[234]}}
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg5 : memref<8xf32>)
// CHECK-NOT: memref.copy
// CHECK: linalg.matmul {neo.overwrite, neo.schedule
// CHECK-SAME: outs(%arg2
// CHECK: linalg.matmul {neo.overwrite, neo.schedule
// CHECK-SAME: outs(%arg3
// CHECK: linalg.matmul {neo.overwrite, neo.schedule
// CHECK-SAME: outs(%arg4
func.func @folded(%a: memref<13x45xf32>, %b: memref<45x60xf32>, %c: memref<13x60xf32>,
                  %d: memref<13x60xf32>, %e: memref<13x60xf32>, %x: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<13x60xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<13x60xf32>)
  // Shared by CSE: d copies e's zeros.
  memref.copy %e, %d : memref<13x60xf32> to memref<13x60xf32>
  // Another buffer in between is fine.
  linalg.fill ins(%one : f32) outs(%x : memref<8xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%c : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%d : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%e : memref<13x60xf32>)
  return
}

// -----

#s = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 1>
func.func private @opaque()
// CHECK-LABEL: func.func @kept(
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg2
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg3
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg4
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%arg5
// CHECK-NOT: neo.overwrite
// CHECK: return
func.func @kept(%a: memref<13x45xf32>, %b: memref<45x60xf32>, %c: memref<13x60xf32>,
                %d: memref<13x60xf32>, %e: memref<13x60xf32>, %f: memref<13x60xf32>, %y: memref<13x60xf32>) {
  %zero = arith.constant 0.0 : f32
  %minus = arith.constant -0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<13x60xf32>)
  linalg.fill ins(%zero : f32) outs(%d : memref<13x60xf32>)
  linalg.fill ins(%minus : f32) outs(%e : memref<13x60xf32>)
  linalg.fill ins(%zero : f32) outs(%f : memref<13x60xf32>)
  // c is read in between; d is written through a view; a call may touch f.
  memref.copy %c, %y : memref<13x60xf32> to memref<13x60xf32>
  %v = memref.subview %d[0, 0] [1, 60] [1, 1] : memref<13x60xf32> to memref<1x60xf32, strided<[60, 1]>>
  linalg.fill ins(%zero : f32) outs(%v : memref<1x60xf32, strided<[60, 1]>>)
  func.call @opaque() : () -> ()
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%c : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%d : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%e : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x45xf32>, memref<45x60xf32>) outs(%f : memref<13x60xf32>)
  return
}

// -----

// neo-tile: the first depth block's accumulators start at zero (an scf.if
// yielding zero vectors or the loaded tile); the edge tiles copy C into the
// scratch tile only after the first block.
// TILED-LABEL: func.func @tiled(
// TILED: %[[FIRST:.+]] = arith.cmpi eq, %{{.+}}, %c0
// TILED: scf.if %[[FIRST]] {
// TILED-NEXT: } else {
// TILED: memref.load
// TILED: scf.if %[[FIRST]] -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// TILED: scf.yield %cst{{.*}}, %cst
// TILED: } else {
// TILED: vector.load
#s = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 1>
func.func @tiled(%a: memref<13x300xf32>, %b: memref<300x60xf32>, %c: memref<13x60xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<13x60xf32>)
  linalg.matmul {neo.schedule = #s} ins(%a, %b : memref<13x300xf32>, memref<300x60xf32>) outs(%c : memref<13x60xf32>)
  return
}

// -----

// Implicit GEMMs (a 1-D convolution, y[n, k, p] = sum(c, r) x[n, c, p + r] *
// w[k, c, r]) lose their zero fill too; neo-tile then stores C's sums. One
// that reads its own output (x is y) keeps the fill.
#c = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 1>
// CHECK-LABEL: func.func @implicit(
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {{.*}}neo.overwrite
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[Y2:.+]] : memref<2x4x8xf32>)
// CHECK-NOT: neo.overwrite
// CHECK: return
// TILED-LABEL: func.func @implicit(
// TILED-NOT: linalg.generic
// TILED: return
func.func @implicit(%x: memref<2x3x10xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x8xf32>,
                    %y2: memref<2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, k, p, c, r) -> (n, c, p + r)>,
                                   affine_map<(n, k, p, c, r) -> (k, c, r)>,
                                   affine_map<(n, k, p, c, r) -> (n, k, p)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x8xf32>)
      attrs = {neo.schedule = #c} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%y2 : memref<2x4x8xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, k, p, c, r) -> (k, c, r)>,
                                   affine_map<(n, k, p, c, r) -> (n, k, p)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%w : memref<4x3x3xf32>) outs(%y2 : memref<2x4x8xf32>)
      attrs = {neo.schedule = #c} {
  ^bb0(%b: f32, %o: f32):
    %n = linalg.index 0 : index
    %c = linalg.index 3 : index
    %p = linalg.index 2 : index
    %r = linalg.index 4 : index
    %i = arith.addi %p, %r : index
    %c7 = arith.constant 7 : index
    %j = arith.minsi %i, %c7 : index
    %a = memref.load %y2[%n, %c, %j] : memref<2x4x8xf32>
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
