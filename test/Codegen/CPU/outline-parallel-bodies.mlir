// RUN: neo-opt %s -split-input-file --neo-outline-parallel-bodies="min-ops=4" | FileCheck %s
// RUN: neo-opt %s -split-input-file --neo-outline-parallel-bodies="min-ops=100" | FileCheck %s --check-prefix=FEW
// RUN: neo-opt %s -split-input-file --neo-outline-parallel-bodies="min-ops=0" | FileCheck %s --check-prefix=FEW
// RUN: not neo-opt %s -split-input-file --neo-outline-parallel-bodies="min-ops=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// The body of a parallel loop with at least min-ops operations moves to a
// private, internal, noinline function of the loop's indices and the values
// it reads. The view of dynamic shape (which the bare-pointer convention
// cannot pass) is rebuilt inside from its base buffer and sizes, constants
// are cloned, and the scalar is passed. The small loop stays as it is.
// CHECK-LABEL: func.func @gemm_like(
// CHECK-SAME: %[[BASE:.*]]: memref<f32>, %[[N:.*]]: index, %[[S:.*]]: f32)
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK-NEXT: func.call @gemm_like_body0(%[[I]], %[[J]], %[[BASE]], %[[N]], %[[S]]) : (index, index, memref<f32>, index, f32) -> ()
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel (%[[K:.*]]) =
// CHECK-NEXT: memref.store
// CHECK-LABEL: func.func private @gemm_like_body0(
// CHECK-SAME: %[[BI:.*]]: index, %[[BJ:.*]]: index, %[[BB:.*]]: memref<f32>, %[[BN:.*]]: index, %[[BS:.*]]: f32)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: %[[V:.*]] = memref.reinterpret_cast %[[BB]] to offset: [0], sizes: [%[[BN]], %[[BN]]], strides: [%[[BN]], 1]
// CHECK: memref.load %[[V]][%[[BI]], %[[BJ]]]
// CHECK: arith.mulf %{{.*}}, %[[BS]]
// CHECK: memref.store %{{.*}}, %[[V]][%[[BJ]], %[[BI]]]
// CHECK: return
// FEW-NOT: _body
// BAD: neo-outline-parallel-bodies: min-ops must be >= 0, got -1
func.func @gemm_like(%base: memref<f32>, %n: index, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %view = memref.reinterpret_cast %base to offset: [0], sizes: [%n, %n], strides: [%n, 1]
      : memref<f32> to memref<?x?xf32, strided<[?, 1]>>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    %v = memref.load %view[%i, %j] : memref<?x?xf32, strided<[?, 1]>>
    %w = arith.mulf %v, %s : f32
    %u = arith.addf %w, %v : f32
    %t = arith.mulf %u, %u : f32
    memref.store %t, %view[%j, %i] : memref<?x?xf32, strided<[?, 1]>>
    scf.reduce
  }
  scf.parallel (%k) = (%c0) to (%n) step (%c1) {
    memref.store %s, %view[%k, %k] : memref<?x?xf32, strided<[?, 1]>>
    scf.reduce
  }
  return
}

// -----

// A body that reads a memref the convention cannot pass and that cannot be
// rebuilt (the function's own dynamic argument), or a loop with a
// reduction, stays in place.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: func.func private
func.func @kept(%x: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    %u = arith.addf %w, %v : f32
    %t = arith.mulf %u, %u : f32
    memref.store %t, %x[%i] : memref<?xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i) = (%c0) to (%n) step (%c1) init (%zero) -> f32 {
    %v = memref.load %x[%i] : memref<?xf32>
    %w = arith.mulf %v, %v : f32
    %u = arith.addf %w, %v : f32
    %t = arith.mulf %u, %u : f32
    scf.reduce(%t : f32) {
    ^bb0(%a: f32, %b: f32):
      %r = arith.addf %a, %b : f32
      scf.reduce.return %r : f32
    }
  }
  return %sum : f32
}
