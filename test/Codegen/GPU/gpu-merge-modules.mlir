// RUN: neo-opt %s -split-input-file -neo-gpu-merge-modules | FileCheck %s
// RUN: neo-opt %s -split-input-file -neo-gpu-merge-modules=module-name=all_kernels | FileCheck %s --check-prefix=NAMED

// neo-gpu-merge-modules moves the kernels of the gpu.modules that
// gpu-kernel-outlining made (one per kernel) into one gpu.module,
// `neo_kernels` by default. Each kernel takes its old module's name; the
// gpu.launch_func ops follow; the first module's targets and attributes
// carry over.

// Outlining names two kernels of @f `f_kernel`, in modules @f_kernel and
// @f_kernel_0: they become @neo_kernels::@f_kernel and @neo_kernels::@f_kernel_0.
// CHECK-LABEL: func.func @f
// CHECK: gpu.launch_func @neo_kernels::@f_kernel blocks
// CHECK: gpu.launch_func @neo_kernels::@f_kernel_0 blocks
// CHECK-NOT: gpu.module @f_kernel
// CHECK: gpu.module @neo_kernels [#nvvm.target<chip = "sm_90">] attributes {neo.tag} {
// CHECK-NEXT: gpu.func @f_kernel(%{{.+}}: memref<64xf32>) kernel
// CHECK: memref.store
// CHECK: gpu.func @f_kernel_0(%{{.+}}: memref<64xf32>) kernel
// CHECK: memref.load
// CHECK-NOT: gpu.module
// NAMED-LABEL: func.func @f
// NAMED: gpu.launch_func @all_kernels::@f_kernel blocks
// NAMED: gpu.launch_func @all_kernels::@f_kernel_0 blocks
// NAMED: gpu.module @all_kernels [#nvvm.target<chip = "sm_90">] attributes {neo.tag} {
// NAMED-NOT: gpu.module @f_kernel
module attributes {gpu.container_module} {
  func.func @f(%x: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    gpu.launch_func @f_kernel::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    gpu.launch_func @f_kernel_0::@f_kernel blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1) args(%x : memref<64xf32>)
    return
  }
  gpu.module @f_kernel [#nvvm.target<chip = "sm_90">] attributes {neo.tag} {
    gpu.func @f_kernel(%x: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %x[%c0] : memref<64xf32>
      gpu.return
    }
  }
  gpu.module @f_kernel_0 [#nvvm.target<chip = "sm_90">] {
    gpu.func @f_kernel(%x: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<64xf32>
      gpu.return
    }
  }
}

// -----

// Launches from several functions; a non-kernel symbol of a module (a
// function its kernel calls) gets the module's name as a prefix, and the
// calls follow.
// CHECK-LABEL: func.func @g
// CHECK: gpu.launch_func @neo_kernels::@g_kernel blocks
// CHECK-LABEL: func.func @h
// CHECK: gpu.launch_func @neo_kernels::@h_kernel blocks
// CHECK: gpu.module @neo_kernels {
// CHECK-NEXT: gpu.func @g_kernel() kernel
// CHECK-NEXT: func.call @g_kernel_one() : () -> f32
// CHECK: func.func @g_kernel_one() -> f32
// CHECK: gpu.func @h_kernel() kernel
// CHECK-NEXT: func.call @h_kernel_one() : () -> f32
// CHECK: func.func @h_kernel_one() -> f32
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @g() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @g_kernel::@g_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  func.func @h() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @h_kernel::@h_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
  gpu.module @g_kernel {
    gpu.func @g_kernel() kernel {
      %0 = func.call @one() : () -> f32
      gpu.return
    }
    func.func @one() -> f32 {
      %c = arith.constant 1.0 : f32
      return %c : f32
    }
  }
  gpu.module @h_kernel {
    gpu.func @h_kernel() kernel {
      %0 = func.call @one() : () -> f32
      gpu.return
    }
    func.func @one() -> f32 {
      %c = arith.constant 2.0 : f32
      return %c : f32
    }
  }
}

// -----

// Without gpu.modules nothing changes.
// CHECK-LABEL: func.func @host_only
// CHECK-NOT: gpu.module
// NAMED-LABEL: func.func @host_only
// NAMED-NOT: gpu.module
module {
  func.func @host_only() {
    return
  }
}
