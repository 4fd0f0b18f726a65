// RUN: neo-opt %s -split-input-file -neo-vectorize | FileCheck %s

// neo-vectorize on the tiles neo-tile marks with `neo.vector_sizes`: each
// becomes vector code, the unit dims of the [1, ..., V] tiles are dropped and
// transfers lower to plain (or masked) loads and stores.

// A full tile: one vector load, the body on vectors, one vector store.
// CHECK-LABEL: func.func @full_tile
// CHECK-SAME: (%[[X:.+]]: memref<1x16xf32, {{.*}}>, %[[Y:.+]]: memref<1x16xf32, {{.*}}>)
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK-DAG: %[[XS:.+]] = memref.subview %[[X]][0, 0] [1, 16] [1, 1] : {{.*}} to memref<16xf32, {{.*}}>
// CHECK: %[[V:.+]] = vector.load %[[XS]][%{{.+}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK: %[[R:.+]] = arith.maximumf %[[V]], %[[ZERO]] : vector<16xf32>
// CHECK: %[[YS:.+]] = memref.subview %[[Y]][0, 0] [1, 16] [1, 1]
// CHECK: vector.store %[[R]], %[[YS]][%{{.+}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: vector.transfer_
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @full_tile(%x: memref<1x16xf32, strided<[40, 1], offset: ?>>,
                     %y: memref<1x16xf32, strided<[40, 1], offset: ?>>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x16xf32, strided<[40, 1], offset: ?>>)
      outs(%y : memref<1x16xf32, strided<[40, 1], offset: ?>>)
      attrs = {neo.vector_sizes = array<i64: 1, 16>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %zero : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The last, partial tile of a row (dynamic width): a mask of the tile's
// width, a masked load and a masked store.
// CHECK-LABEL: func.func @partial_tile
// CHECK-SAME: (%[[X:.+]]: memref<1x?xf32, {{.*}}>, %[[Y:.+]]: memref<1x?xf32, {{.*}}>)
// CHECK: %[[W:.+]] = memref.dim %[[X]], %{{.+}}
// CHECK: %[[MASK:.+]] = vector.create_mask %[[W]] : vector<16xi1>
// CHECK: %[[V:.+]] = vector.maskedload %{{.+}}[%{{.+}}], %[[MASK]], %{{.+}} : memref<?xf32, {{.*}}>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[R:.+]] = arith.negf %[[V]] : vector<16xf32>
// CHECK: vector.maskedstore %{{.+}}[%{{.+}}], %[[MASK]], %[[R]] : memref<?xf32, {{.*}}>, vector<16xi1>, vector<16xf32>
// CHECK-NOT: vector.mask {
// CHECK-NOT: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @partial_tile(%x: memref<1x?xf32, strided<[40, 1], offset: ?>>,
                        %y: memref<1x?xf32, strided<[40, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x?xf32, strided<[40, 1], offset: ?>>)
      outs(%y : memref<1x?xf32, strided<[40, 1], offset: ?>>)
      attrs = {neo.vector_sizes = array<i64: 1, 16>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A fill tile is one store of a constant vector.
// CHECK-LABEL: func.func @fill
// CHECK: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: vector.store %[[ZERO]], %{{.+}}[%{{.+}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT: linalg.fill
func.func @fill(%y: memref<1x16xf32, strided<[96, 1], offset: ?>>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill {neo.vector_sizes = array<i64: 1, 16>} ins(%zero : f32)
      outs(%y : memref<1x16xf32, strided<[96, 1], offset: ?>>)
  return
}

// -----

// exp is replaced by a polynomial on vectors (no libm call per lane): clamps,
// math.fma steps and an exponent built from bits.
// CHECK-LABEL: func.func @exp_tile
// CHECK: %[[V:.+]] = vector.load {{.*}} vector<16xf32>
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: arith.fptosi {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shli {{.*}} : vector<16xi32>
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.store {{.*}} vector<16xf32>
// CHECK-NOT: math.exp
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @exp_tile(%x: memref<1x16xf32, strided<[40, 1], offset: ?>>,
                    %y: memref<1x16xf32, strided<[40, 1], offset: ?>>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x16xf32, strided<[40, 1], offset: ?>>)
      outs(%y : memref<1x16xf32, strided<[40, 1], offset: ?>>)
      attrs = {neo.vector_sizes = array<i64: 1, 16>} {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A reduction tile along a row: the multi-reduction lowers to one
// vector.reduction that starts from the accumulator in memory.
// CHECK-LABEL: func.func @row_sum_tile
// CHECK: %[[V:.+]] = vector.load %{{.+}}[%{{.+}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK: %[[ACC:.+]] = vector.load %{{.+}}[] : memref<f32, {{.*}}>, vector<f32>
// CHECK: %[[A:.+]] = vector.extract %[[ACC]][] : f32 from vector<f32>
// CHECK: %[[S:.+]] = vector.reduction <add>, %[[V]], %[[A]] : vector<16xf32> into f32
// CHECK: %[[SV:.+]] = vector.insert %[[S]], %{{.+}} [] : f32 into vector<f32>
// CHECK: vector.store %[[SV]], %{{.+}}[] : memref<f32, {{.*}}>, vector<f32>
// CHECK-NOT: vector.multi_reduction
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @row_sum_tile(%x: memref<1x16xf32, strided<[40, 1], offset: ?>>,
                        %y: memref<1xf32, strided<[1], offset: ?>>) {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<1x16xf32, strided<[40, 1], offset: ?>>)
      outs(%y : memref<1xf32, strided<[1], offset: ?>>)
      attrs = {neo.vector_sizes = array<i64: 1, 16>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// An op without `neo.vector_sizes` stays a linalg op (its exp still becomes
// the scalar polynomial).
// CHECK-LABEL: func.func @unmarked
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: math.fma {{.*}} : f32
// CHECK-NOT: vector.
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @unmarked(%x: memref<8x16xf32>, %y: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x16xf32>) outs(%y : memref<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Vector sizes the vectorizer refuses (smaller than the static tile): the op
// stays scalar and loses the marker.
// CHECK-LABEL: func.func @refused
// CHECK: linalg.generic
// CHECK-NOT: neo.vector_sizes
// CHECK: arith.negf %{{.+}} : f32
// CHECK-NOT: vector.
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @refused(%x: memref<1x32xf32>, %y: memref<1x32xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<1x32xf32>) outs(%y : memref<1x32xf32>)
      attrs = {neo.vector_sizes = array<i64: 1, 16>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}
