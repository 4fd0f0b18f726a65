// RUN: neo-opt %s --neo-outline-kernels="min-kernels=2" | FileCheck %s
// RUN: neo-opt %s --neo-outline-kernels="min-kernels=4" | FileCheck %s --check-prefix=FEW
// RUN: neo-opt %s --neo-outline-kernels="min-kernels=0" | FileCheck %s --check-prefix=FEW
// RUN: not neo-opt %s --neo-outline-kernels="min-kernels=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// Each top-level loop nest of a function with at least min-kernels of them
// moves to a private, internal, noinline function; constants are cloned into
// it, other values it reads are its arguments, its results the nest's. A nest
// that reads a memref the bare-pointer convention cannot pass (here a strided
// subview) stays.
// CHECK-LABEL: func.func @three(
// CHECK-SAME: %[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>, %[[S:.*]]: f32) -> f32
// CHECK: call @three_kernel0(%[[X]], %[[S]], %[[Y]]) : (memref<8xf32>, f32, memref<8xf32>) -> ()
// CHECK: %[[SUM:.*]] = call @three_kernel1(%[[Y]]) : (memref<8xf32>) -> f32
// CHECK: %[[SUB:.*]] = memref.subview
// CHECK: scf.for
// CHECK: memref.store {{.*}}, %[[SUB]]
// CHECK: return %[[SUM]]
// CHECK-LABEL: func.func private @three_kernel0(
// CHECK-SAME: %{{.*}}: memref<8xf32>, %{{.*}}: f32, %{{.*}}: memref<8xf32>)
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: arith.constant 0 : index
// CHECK: scf.parallel
// CHECK-LABEL: func.func private @three_kernel1(
// CHECK-SAME: -> f32
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
// FEW-NOT: _kernel
// BAD: neo-outline-kernels: min-kernels must be >= 0, got -1
func.func @three(%x: memref<8xf32>, %y: memref<8xf32>, %s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %y[%i] : memref<8xf32>
    scf.reduce
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %y[%i] : memref<8xf32>
    %a = arith.addf %acc, %v : f32
    scf.yield %a : f32
  }
  %sub = memref.subview %x[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %sum, %sub[%i] : memref<4xf32, strided<[2]>>
  }
  return %sum : f32
}
