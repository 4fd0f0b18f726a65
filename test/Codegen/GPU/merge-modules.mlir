// RUN: neo-opt %s --neo-gpu-merge-modules="module-name=all" | FileCheck %s
// Found by neo-options-fuzzer: merging a gpu.module with several kernels
// (one that was merged already) named each kernel after the module, and the
// launches called the wrong kernel. A module's only kernel takes the
// module's name; the kernels of a module with several keep theirs, prefixed.

module attributes {gpu.container_module} {
  // CHECK-LABEL: func.func @f
  func.func @f(%arg0: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    // CHECK: gpu.launch_func @all::@a_k1
    gpu.launch_func @a::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%arg0 : memref<4xf32>)
    // CHECK: gpu.launch_func @all::@a_k2
    gpu.launch_func @a::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    // CHECK: gpu.launch_func @all::@b blocks
    gpu.launch_func @b::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  // CHECK: gpu.module @all
  // CHECK-DAG: gpu.func @a_k1(
  // CHECK-DAG: gpu.func @a_k2(
  // CHECK-DAG: gpu.func @b(
  // CHECK-NOT: gpu.module
  gpu.module @a {
    gpu.func @k1(%arg0: memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @k2() kernel {
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k() kernel {
      gpu.return
    }
  }
}
