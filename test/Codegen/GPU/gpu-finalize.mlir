// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(neo-gpu-finalize))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(gpu.module(neo-gpu-finalize{alignment=64}))' | FileCheck %s --check-prefix=A64

// neo-gpu-finalize raises the alignment of shared-memory (address space 3)
// globals of a lowered kernel module to at least 128 bytes (the default),
// for 16-byte vector loads and WMMA fragment loads; it never lowers one, and
// leaves globals in other address spaces alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global internal @a_tile() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<1056 x f32>
// CHECK: llvm.mlir.global internal @b_tile() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<1024 x f32>
// CHECK: llvm.mlir.global internal @wide() {addr_space = 3 : i32, alignment = 256 : i64} : !llvm.array<64 x f32>
// CHECK: llvm.mlir.global internal constant @table({{.*}}) {addr_space = 0 : i32, alignment = 4 : i64} : !llvm.array<4 x f32>
// CHECK: llvm.mlir.global external @global_mem() {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<4 x f32>
// With alignment=64.
// A64-LABEL: gpu.module @kernels
// A64: @a_tile() {addr_space = 3 : i32, alignment = 64 : i64}
// A64: @b_tile() {addr_space = 3 : i32, alignment = 64 : i64}
// A64: @wide() {addr_space = 3 : i32, alignment = 256 : i64}
// A64: @table({{.*}}) {addr_space = 0 : i32, alignment = 4 : i64}
// A64: @global_mem() {addr_space = 1 : i32, alignment = 8 : i64}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.mlir.global internal @a_tile() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<1056 x f32>
    llvm.mlir.global internal @b_tile() {addr_space = 3 : i32} : !llvm.array<1024 x f32>
    llvm.mlir.global internal @wide() {addr_space = 3 : i32, alignment = 256 : i64} : !llvm.array<64 x f32>
    llvm.mlir.global internal constant @table(dense<1.0> : tensor<4xf32>) {alignment = 4 : i64} : !llvm.array<4 x f32>
    llvm.mlir.global external @global_mem() {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<4 x f32>
  }
}

// -----

// Every gpu.module is finalized on its own; ops outside them are not touched.
// CHECK-LABEL: gpu.module @first
// CHECK: @s() {addr_space = 3 : i32, alignment = 128 : i64}
// CHECK-LABEL: gpu.module @second
// CHECK: @t() {addr_space = 3 : i32, alignment = 128 : i64}
// CHECK: llvm.mlir.global internal @host() {addr_space = 3 : i32, alignment = 4 : i64}
module attributes {gpu.container_module} {
  gpu.module @first {
    llvm.mlir.global internal @s() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<8 x f32>
  }
  gpu.module @second {
    llvm.mlir.global internal @t() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<8 x f32>
  }
  llvm.mlir.global internal @host() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<8 x f32>
}
