// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-map))' | FileCheck %s

// neo-gpu-map with explicit schedules (neo.schedule; a separate file because
// the way schedules are given is expected to change) and with its options.

// An explicit schedule: tensor cores for f32 operands.
// CHECK-LABEL: func.func @scheduled
// CHECK: gpu.subgroup_mma_load_matrix
// CHECK: gpu.subgroup_mma_compute
// CHECK: gpu.subgroup_mma_store_matrix
// CHECK: {neo.kernel = "gemm_mma"}
func.func @scheduled(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul {neo.schedule = {gpu_gemm = {mma = "tf32"}}}
      ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// A SIMT schedule: 64 x 64 block tiles, bk 16 (shared tiles 16 x 68 for A,
// transposed and padded, and 16 x 64 for B), a 4 x 4 thread tile; explicit
// schedules do not adapt to the grid (one block per 64 x 64 tile of C:
// 256 / 64 along x, 128 / 64 along y).
// CHECK-LABEL: func.func @simt_schedule
// CHECK-DAG: %[[GX:.+]] = arith.constant 4 : index
// CHECK-DAG: %[[GY:.+]] = arith.constant 2 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[GX]], {{.*}} = %[[GY]], {{[^)]*}}) threads
// CHECK-SAME: workgroup(%{{.*}} : memref<16x68xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK: {neo.kernel = "gemm_simt"}
func.func @simt_schedule(%a: memref<128x64xf32>, %b: memref<64x256xf32>, %c: memref<128x256xf32>) {
  linalg.matmul {neo.schedule = {gpu_gemm = {bm = 64, bn = 64, bk = 16, tm = 4, tn = 4}}}
      ins(%a, %b : memref<128x64xf32>, memref<64x256xf32>) outs(%c : memref<128x256xf32>)
  return
}
