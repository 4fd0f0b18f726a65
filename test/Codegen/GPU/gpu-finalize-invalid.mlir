// RUN: neo-opt %s --pass-pipeline='builtin.module(gpu.module(neo-gpu-finalize{alignment=48}))' -verify-diagnostics
// RUN: neo-opt %s --pass-pipeline='builtin.module(gpu.module(neo-gpu-finalize{alignment=0}))' -verify-diagnostics

// The alignment of neo-gpu-finalize must be a power of two.
module attributes {gpu.container_module} {
  // expected-error @below {{neo-gpu-finalize: alignment must be a power of two}}
  gpu.module @kernels {
    llvm.mlir.global internal @a_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<64 x f32>
  }
}
