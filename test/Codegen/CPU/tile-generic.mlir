// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules,neo-tile))' | FileCheck %s

// neo-tile on elementwise linalg ops with the default schedule (2 threads,
// vectors of 16): the first parallel loop is split over threads
// (scf.forall), then the op is tiled into one vector along its innermost
// loop, and each tile is marked with `neo.vector_sizes` for neo-vectorize.

// 8 x 40: two thread tiles of 4 rows; per row, tiles of 16 columns marked
// [1, 16]. The last tile is partial (8 columns): it is peeled off, so the
// full tiles have static shapes (unmasked vectors) and only the last one
// has a dynamic width (masked).
// CHECK-LABEL: func.func @elementwise
// CHECK-SAME: (%[[X:.+]]: memref<8x40xf32>, %[[Y:.+]]: memref<8x40xf32>)
// CHECK: scf.forall (%[[T:.+]]) = (0) to (8) step (4) {
// CHECK: %[[XT:.+]] = memref.subview %[[X]][%[[T]], 0] [4, 40] [1, 1]
// CHECK: %[[YT:.+]] = memref.subview %[[Y]][%[[T]], 0] [4, 40] [1, 1]
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %[[C32:.+]] step %[[S16:.+]] {
// CHECK: %[[XV:.+]] = memref.subview %[[XT]][%[[I]], %[[J]]] [1, 16] [1, 1] {{.*}} to memref<1x16xf32, strided<[40, 1], offset: ?>>
// CHECK: %[[YV:.+]] = memref.subview %[[YT]][%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[XV]] : memref<1x16xf32, {{.*}}>) outs(%[[YV]] : memref<1x16xf32, {{.*}}>)
// CHECK-SAME: attrs = {neo.vector_sizes = array<i64: 1, 16>}
// CHECK: arith.negf
// CHECK: scf.for %[[L:.+]] = %[[C32]] to %{{.+}} step %[[S16]] {
// CHECK: %[[W:.+]] = affine.apply #{{.+}}(%[[L]])
// CHECK: %[[XL:.+]] = memref.subview %[[XT]][%[[I]], %[[L]]] [1, %[[W]]] [1, 1] {{.*}} to memref<1x?xf32, strided<[40, 1], offset: ?>>
// CHECK: linalg.generic {{.*}} ins(%[[XL]] : memref<1x?xf32, {{.*}}>)
// CHECK-SAME: attrs = {neo.vector_sizes = array<i64: 1, 16>}
func.func @elementwise(%x: memref<8x40xf32>, %y: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x40xf32>) outs(%y : memref<8x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Rows shorter than a vector: one tile per row, of the row's width.
// CHECK-LABEL: func.func @short_rows
// CHECK: scf.forall (%{{.+}}) = (0) to (8) step (4) {
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : memref<1x12xf32, {{.*}}>)
// CHECK-SAME: attrs = {neo.vector_sizes = array<i64: 1, 12>}
func.func @short_rows(%x: memref<8x12xf32>, %y: memref<8x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x12xf32>) outs(%y : memref<8x12xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A fill is tiled the same way.
// CHECK-LABEL: func.func @fill
// CHECK: scf.forall (%{{.+}}) = (0) to (64) step (32) {
// CHECK: linalg.fill {neo.vector_sizes = array<i64: 1, 16>} ins(%{{.+}} : f32) outs(%{{.+}} : memref<1x16xf32, {{.*}}>)
func.func @fill(%y: memref<64x96xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<64x96xf32>)
  return
}

// -----

// Reads through floordiv: thread tiles are a multiple of the divisor (6 rows
// read x[i // 2]: tiles of 4, not 3), and vector tiles that 15 (of j // 15)
// does not divide are not made.
// CHECK-LABEL: func.func @floordiv_reads
// CHECK: scf.forall (%{{.+}}) = (0) to (6) step (4) {
// CHECK: linalg.generic
// CHECK-NOT: neo.vector_sizes
// CHECK: return
func.func @floordiv_reads(%x: memref<3x4xf32>, %y: memref<6x60xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i floordiv 2, j floordiv 15)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<3x4xf32>) outs(%y : memref<6x60xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Constant offsets in the indices (a gate's columns j + 1024 of a fused
// 4-gate matrix, a bias read at the constant 3) move into views read at
// (i, j) and 0, which the vectorizer takes: vector tiles, not scalar loops.
// CHECK-LABEL: func.func @offset_reads
// CHECK-SAME: (%[[X:.+]]: memref<8x4096xf32>, %[[B:.+]]: memref<16xf32>, %[[Y:.+]]: memref<8x64xf32>)
// CHECK-DAG: %[[XO:.+]] = memref.subview %[[X]][0, 1024] [8, 64] [1, 1] : memref<8x4096xf32> to memref<8x64xf32, strided<[4096, 1], offset: 1024>>
// CHECK-DAG: %[[BO:.+]] = memref.subview %[[B]][3] [1] [1] : memref<16xf32> to memref<1xf32, strided<[1], offset: 3>>
// CHECK: scf.forall
// CHECK: linalg.generic {indexing_maps = [#[[ID:.+]], #[[ZERO:.+]], #[[ID]]]
// CHECK-SAME: neo.vector_sizes = array<i64: 1, 16>
func.func @offset_reads(%x: memref<8x4096xf32>, %b: memref<16xf32>, %y: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j + 1024)>, affine_map<(i, j) -> (3)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<8x4096xf32>, memref<16xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %0 = arith.addf %in, %bias : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// An offset on a strided index (2 * j + 1) is not moved: the op stays
// scalar, as the vectorizer would not take it either way.
// CHECK-LABEL: func.func @offsets_not_moved
// CHECK-NOT: memref.subview %{{.+}}[0, 1]
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}]
// CHECK-NOT: neo.vector_sizes
// CHECK: return
func.func @offsets_not_moved(%x: memref<8x128xf32>, %y: memref<8x63xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, 2 * j + 1)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x128xf32>) outs(%y : memref<8x63xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// A read that runs backwards (63 - i) cannot be sliced into tiles: the op
// stays whole.
// CHECK-LABEL: func.func @reversed_read
// CHECK-NOT: scf.forall
// CHECK-NOT: scf.for
// CHECK: linalg.generic
// CHECK-NOT: neo.vector_sizes
// CHECK: return
func.func @reversed_read(%x: memref<64x40xf32>, %y: memref<64x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (63 - i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x40xf32>) outs(%y : memref<64x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// An op of a row-blocked kernel (neo.serial) runs on one thread: no
// scf.forall, but vector tiles.
// CHECK-LABEL: func.func @serial
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: neo.serial, neo.vector_sizes = array<i64: 1, 16>
func.func @serial(%x: memref<8x40xf32>, %y: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x40xf32>) outs(%y : memref<8x40xf32>) attrs = {neo.serial} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Dynamic shapes are left alone.
// CHECK-LABEL: func.func @dynamic
// CHECK-NOT: scf.
// CHECK: linalg.generic
// CHECK-NOT: neo.vector_sizes
// CHECK: return
func.func @dynamic(%x: memref<?x40xf32>, %y: memref<?x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x40xf32>) outs(%y : memref<?x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Ops on tensors are not neo-tile's (it runs after bufferization).
// CHECK-LABEL: func.func @tensors
// CHECK-NOT: scf.
// CHECK: linalg.generic
// CHECK-NOT: neo.vector_sizes
// CHECK: return
func.func @tensors(%x: tensor<8x40xf32>, %y: tensor<8x40xf32>) -> tensor<8x40xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x40xf32>) outs(%y : tensor<8x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x40xf32>
  return %r : tensor<8x40xf32>
}
