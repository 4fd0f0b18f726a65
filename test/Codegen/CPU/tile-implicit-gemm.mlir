// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile{direct-convolutions=false}))' | FileCheck %s
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

// -----

// Rows of 45 (at least NR = 32 wide): each block of 32 columns lies in at
// most two rows of the output's q. B (the padded read of x) is packed by
// one masked vector load per row part, the second shifted so that its
// lanes line up, the padding masked off; no gathers and no separable
// tables. C's rows take a masked add per part.
// CHECK-LABEL: func.func @conv45
// CHECK-NOT: vector.gather
// CHECK-NOT: xi32>
// CHECK: %[[BP:.+]] = memref.alloc() {{.*}} : memref<9x27x32xf32>
// CHECK: scf.if
// CHECK: %[[P0:.+]] = vector.maskedload %arg0[{{.*}}], %{{.+}}, %{{.+}} : memref<2x3x6x45xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: %[[P1:.+]] = vector.maskedload %arg0[{{.*}}], %{{.+}}, %[[P0]] : memref<2x3x6x45xf32>
// CHECK: vector.store %[[P1]], %[[BP]]
// CHECK: } else {
// Inside one row: a plain load where all 32 lanes are in it, else masked.
// CHECK: %[[Q:.+]] = scf.if %{{.+}} -> (vector<32xf32>) {
// CHECK: vector.load %arg0[{{.*}}] : memref<2x3x6x45xf32>, vector<32xf32>
// CHECK: } else {
// CHECK: vector.maskedload %arg0
// CHECK: vector.store %[[Q]], %[[BP]]
// CHECK: vector.fma
// CHECK: vector.maskedload %arg2
// CHECK: vector.maskedstore %arg2
// CHECK: scf.if
// CHECK: vector.maskedload %arg2
// CHECK: vector.maskedstore %arg2
// CHECK-NOT: vector.gather
// CHECK: return
func.func @conv45(%arg0: memref<2x3x6x45xf32> , %arg1: memref<4x3x3x3xf32> , %arg2: memref<2x4x6x45xf32> ) {
  %c44 = arith.constant 44 : index
  %c45 = arith.constant 45 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c-1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<2x4x6x45xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<4x3x3x3xf32>) outs(%arg2 : memref<2x4x6x45xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = linalg.index 4 : index
    %4 = linalg.index 5 : index
    %5 = linalg.index 6 : index
    %6 = arith.addi %1, %4 : index
    %7 = arith.addi %6, %c-1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.maxsi %7, %c0 : index
    %10 = arith.cmpi slt, %9, %c6 : index
    %11 = arith.andi %8, %10 : i1
    %12 = arith.minsi %9, %c5 : index
    %13 = arith.addi %2, %5 : index
    %14 = arith.addi %13, %c-1 : index
    %15 = arith.cmpi sge, %14, %c0 : index
    %16 = arith.andi %11, %15 : i1
    %17 = arith.maxsi %14, %c0 : index
    %18 = arith.cmpi slt, %17, %c45 : index
    %19 = arith.andi %16, %18 : i1
    %20 = arith.minsi %17, %c44 : index
    %21 = memref.load %arg0[%0, %3, %12, %20] : memref<2x3x6x45xf32>
    %22 = arith.select %19, %21, %cst : f32
    %23 = arith.mulf %22, %in : f32
    %24 = arith.addf %out, %23 : f32
    linalg.yield %24 : f32
  }
  return
}

// -----

// A weight gradient: columns (c, r, s) (a lane dim of 3), depth (n, p, q).
// Each column's 16 depths along q are one vector load where they lie in
// the row, else one masked vector (two where they cross a row of 21: the
// first scf.if), stored into a 16 x 16 scratch block and
// transposed (64 shuffles) into 16 rows of Bp, whose depth is padded to
// whole blocks (294 -> 304). No gathers.
// CHECK-LABEL: func.func @weight_grad
// CHECK-NOT: vector.gather
// CHECK: %[[BP:.+]] = memref.alloc() {{.*}} : memref<1x304x32xf32>
// CHECK: %[[BLOCK:.+]] = memref.alloc() {{.*}} : memref<16x16xf32>
// CHECK: %[[COL:.+]] = scf.if %{{.+}} -> (vector<16xf32>)
// CHECK: %[[D0:.+]] = vector.maskedload %arg1[{{.*}}], %{{.+}}, %{{.+}} : memref<2x3x7x21xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: vector.maskedload %arg1[{{.*}}], %{{.+}}, %[[D0]]
// CHECK: } else {
// CHECK: vector.load %arg1[{{.*}}] : memref<2x3x7x21xf32>, vector<16xf32>
// CHECK: vector.maskedload %arg1
// CHECK: vector.store %[[COL]], %[[BLOCK]]
// CHECK-COUNT-16: vector.load %[[BLOCK]]
// CHECK-COUNT-64: vector.shuffle
// CHECK-COUNT-16: vector.store %{{.+}}, %[[BP]]
// CHECK: vector.fma
// CHECK-NOT: vector.gather
// CHECK: return
func.func @weight_grad(%arg0: memref<2x4x7x21xf32> , %arg1: memref<2x3x7x21xf32> , %arg2: memref<4x3x3x3xf32> ) {
  %c20 = arith.constant 20 : index
  %c21 = arith.constant 21 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c-1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<4x3x3x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0 : memref<2x4x7x21xf32>) outs(%arg2 : memref<4x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 1 : index
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = linalg.index 4 : index
    %4 = linalg.index 5 : index
    %5 = linalg.index 6 : index
    %6 = arith.addi %1, %4 : index
    %7 = arith.addi %6, %c-1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.maxsi %7, %c0 : index
    %10 = arith.cmpi slt, %9, %c7 : index
    %11 = arith.andi %8, %10 : i1
    %12 = arith.minsi %9, %c6 : index
    %13 = arith.addi %2, %5 : index
    %14 = arith.addi %13, %c-1 : index
    %15 = arith.cmpi sge, %14, %c0 : index
    %16 = arith.andi %11, %15 : i1
    %17 = arith.maxsi %14, %c0 : index
    %18 = arith.cmpi slt, %17, %c21 : index
    %19 = arith.andi %16, %18 : i1
    %20 = arith.minsi %17, %c20 : index
    %21 = memref.load %arg1[%3, %0, %12, %20] : memref<2x3x7x21xf32>
    %22 = arith.select %19, %21, %cst : f32
    %23 = arith.mulf %in, %22 : f32
    %24 = arith.addf %out, %23 : f32
    linalg.yield %24 : f32
  }
  return
}
