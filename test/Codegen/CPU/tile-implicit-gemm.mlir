// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 implicit-gemm=false},neo-tile))' | FileCheck %s --check-prefix=OFF

// neo-tile on a bilinear generic (a convolution), default schedule: an
// implicit GEMM (CpuImplicitGemm.cpp). M = k (8 output channels), N = n*p*q
// (128 output points, 64 per thread), K = c*r*s (27). Index tables hold the
// (n, p, q) of each column and the (c, r, s) of each depth step. The read
// x[n, c, p + r, q + s] is separable (SeparableReads.h): a table holds the
// flat offset of each column's (n, p, q) part, and each packed row of B is
// one gather at the offset of its (c, r, s) part (NR = 32 columns never lie
// in one row of 8). The micro-kernel is the GEMM's (vector.fma into a tile
// buffer), and the tile is added into y element by element (its rows of 8
// are narrower than NR). A (w, the same for both column blocks) is packed
// once, before the parallel loop.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.+]]: memref<2x3x10x10xf32>, %[[W:.+]]: memref<8x3x3x3xf32>, %[[Y:.+]]: memref<2x8x8x8xf32>)
// CHECK: %[[AP:.+]] = memref.alloc() {{.*}} : memref<1x27x8xf32>
// CHECK: %[[WV:.+]] = memref.load %[[W]][%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<8x3x3x3xf32>
// CHECK: memref.store %[[WV]], %[[AP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x27x8xf32>
// CHECK: scf.parallel
// CHECK-DAG: %[[BP:.+]] = memref.alloc() {{.*}} : memref<2x27x32xf32>
// CHECK-DAG: %[[TILE:.+]] = memref.alloc() {{.*}} : memref<1x2x8x32xf32>
// CHECK-DAG: %[[COLS:.+]] = memref.alloc() : memref<3x64xindex>
// CHECK-DAG: %[[DEPTH:.+]] = memref.alloc() : memref<3x27xindex>
// CHECK: memref.store %{{.+}}, %[[COLS]][%{{.+}}, %{{.+}}] : memref<3x64xindex>
// CHECK: %[[OFFS:.+]] = memref.alloc() : memref<64xi32>
// CHECK: memref.store %{{.+}}, %[[OFFS]][%{{.+}}] : memref<64xi32>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %[[X]] {{\[}}[0, 1, 2, 3]] : memref<2x3x10x10xf32> into memref<600xf32>
// CHECK: memref.store %{{.+}}, %[[DEPTH]][%{{.+}}, %{{.+}}] : memref<3x27xindex>
// CHECK: %[[COLOFF:.+]] = vector.load %[[OFFS]][%{{.+}}] : memref<64xi32>, vector<32xi32>
// CHECK: memref.load %[[DEPTH]][%{{.+}}, %{{.+}}] : memref<3x27xindex>
// CHECK-NOT: scf.if
// The row's offset joins the columns' in i32 (a 32-bit index vector).
// CHECK: %[[ROW32:.+]] = arith.index_cast %{{.+}} : index to i32
// CHECK: %[[ROWV:.+]] = vector.broadcast %[[ROW32]] : i32 to vector<32xi32>
// CHECK: %[[LANES:.+]] = arith.addi %[[COLOFF]], %[[ROWV]] : vector<32xi32>
// CHECK: %[[ROW:.+]] = vector.gather %[[FLAT]][%{{.+}}] [%[[LANES]]], %{{.+}}, %{{.+}} : memref<600xf32>, vector<32xi32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: vector.store %[[ROW]], %[[BP]]
// CHECK-NOT: memref.load %[[W]]
// CHECK: %{{.+}}:16 = scf.for {{.*}} -> (vector<16xf32>,
// CHECK: vector.load %[[BP]]{{.*}} : memref<2x27x32xf32>, vector<16xf32>
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[TILE]]
// CHECK: %[[T:.+]] = memref.load %[[TILE]]
// CHECK: %[[OLD:.+]] = memref.load %[[Y]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[T]] : f32
// CHECK: memref.store %[[NEW]], %[[Y]]
// CHECK-NOT: linalg.generic
// CHECK: return

// Without implicit GEMMs the convolution is a reduction per output point
// (its rows of 8 are narrower than a vector of 16): the 27 taps unrolled,
// the sum in a register, one load and store of the output.
// OFF-LABEL: func.func @conv
// OFF-NOT: vector.fma
// OFF-NOT: linalg.generic
// OFF: scf.parallel
// OFF-COUNT-27: arith.mulf
// OFF: memref.load %arg2
// OFF: memref.store %{{.*}}, %arg2
func.func @conv(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, k, p, q, c, r, s) -> (n, c, p + r, q + s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (n, k, p, q)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
