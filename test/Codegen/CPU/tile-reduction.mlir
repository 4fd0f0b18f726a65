// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules,neo-tile))' | FileCheck %s

// neo-tile on reductions (CpuReduction.cpp), default schedule: a vector
// accumulator stays in registers across the reduction loop.

// Reduction along rows (innermost in memory): per row (scf.parallel), a loop
// of full vectors, a masked tail (40 = 2 x 16 + 8), one horizontal
// vector.reduction, combined with the value already in the output.
// CHECK-LABEL: func.func @row_max
// CHECK-SAME: (%[[X:.+]]: memref<8x40xf32>, %[[M:.+]]: memref<8xf32>)
// CHECK: scf.parallel (%[[I:.+]]) =
// CHECK: %[[ACC:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %{{.+}}) -> (vector<16xf32>) {
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %{{.+}}] : memref<8x40xf32>, vector<16xf32>
// CHECK: %[[MX:.+]] = arith.maximumf %[[A]], %[[V]] : vector<16xf32>
// CHECK: scf.yield %[[MX]] : vector<16xf32>
// CHECK: %[[MASK:.+]] = vector.create_mask %{{.+}} : vector<16xi1>
// CHECK: %[[TAIL:.+]] = vector.maskedload %[[X]][%[[I]], %{{.+}}], %[[MASK]], %{{.+}} : memref<8x40xf32>, vector<16xi1>, vector<16xf32> into vector<16xf32>
// CHECK: %[[T:.+]] = arith.maximumf %[[ACC]], %[[TAIL]] : vector<16xf32>
// CHECK: %[[SEL:.+]] = arith.select %[[MASK]], %[[T]], %[[ACC]]
// CHECK: %[[R:.+]] = vector.reduction <maximumf>, %[[SEL]] : vector<16xf32> into f32
// CHECK: %[[OLD:.+]] = memref.load %[[M]][%[[I]]] : memref<8xf32>
// CHECK: %[[NEW:.+]] = arith.maximumf %[[R]], %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %[[M]][%[[I]]] : memref<8xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @row_max(%x: memref<8x40xf32>, %m: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<8x40xf32>) outs(%m : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Reduction along columns (the output's dim is innermost): per block of 16
// outputs, a vector of partial sums over the rows, added to the outputs.
// CHECK-LABEL: func.func @col_sum
// CHECK-SAME: (%[[X:.+]]: memref<40x64xf32>, %[[Y:.+]]: memref<64xf32>)
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[ACC:.+]] = scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %{{.+}}) -> (vector<16xf32>) {
// CHECK: %[[V:.+]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<40x64xf32>, vector<16xf32>
// CHECK: %[[S:.+]] = arith.addf %[[A]], %[[V]] : vector<16xf32>
// CHECK: scf.yield %[[S]] : vector<16xf32>
// CHECK: %[[OLD:.+]] = vector.load %[[Y]][%[[J]]] : memref<64xf32>, vector<16xf32>
// CHECK: %[[NEW:.+]] = arith.addf %[[ACC]], %[[OLD]] : vector<16xf32>
// CHECK: vector.store %[[NEW]], %[[Y]][%[[J]]] : memref<64xf32>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @col_sum(%x: memref<40x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(j, i) -> (i, j)>, affine_map<(j, i) -> (j)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<40x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
