// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops | FileCheck %s
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="min-chunks=0" | FileCheck %s --check-prefix=NONE
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="threads=1" | FileCheck %s --check-prefix=NONE
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="min-chunks=8" | FileCheck %s --check-prefix=EIGHT
// RUN: not neo-opt %s --neo-balance-parallel-loops="min-chunks=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// Worksharing loops with at least min-chunks iterations per thread (2 x 2
// threads by default), or bounds only known at run time, take their
// iterations dynamically; one tile per thread stays static.
// CHECK-LABEL: func.func @blocks(
// CHECK: omp.wsloop schedule(dynamic)
// CHECK-LABEL: func.func @tiles(
// CHECK: omp.wsloop {
// CHECK-LABEL: func.func @unknown(
// CHECK: omp.wsloop schedule(dynamic)
// NONE-NOT: schedule(dynamic)
// EIGHT-LABEL: func.func @blocks(
// EIGHT: omp.wsloop {
// EIGHT-LABEL: func.func @unknown(
// EIGHT: omp.wsloop schedule(dynamic)
// BAD: neo-balance-parallel-loops: min-chunks must be >= 0 and threads >= 1, got -1 and 2
func.func @blocks(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %m[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
func.func @tiles(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    memref.store %one, %m[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
func.func @unknown(%m: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %m[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
