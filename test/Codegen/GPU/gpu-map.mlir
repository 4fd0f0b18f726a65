// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-map))' | FileCheck %s

// neo-gpu-map with the default schedules (no neo.schedule, no options):
// every linalg op becomes a gpu.launch of constant sizes, tagged with the
// kind of kernel (neo.kernel). Explicit schedules: gpu-map-schedule.mlir.

// A matmul: one launch of 128x128 tiles (16 x 32 of them) with two
// shared-memory tiles.
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.*]] = arith.constant 32 : index
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %[[C16]], {{.*}} = %[[C32]], {{[^)]*}}) threads
// CHECK-SAME: workgroup(%{{.*}} : memref<8x132xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<8x128xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: math.fma
// CHECK: {neo.kernel = "gemm_simt"}
func.func @matmul(%a: memref<4096x256xf32>, %b: memref<256x2048xf32>, %c: memref<4096x2048xf32>) {
  linalg.matmul ins(%a, %b : memref<4096x256xf32>, memref<256x2048xf32>) outs(%c : memref<4096x2048xf32>)
  return
}

// -----

// Few output tiles and a long K: smaller tiles, then K split over blocks
// (grid z) with atomic adds into C.
// CHECK-LABEL: func.func @split_k
// CHECK: gpu.launch
// CHECK: memref.atomic_rmw addf
// CHECK: {neo.kernel = "gemm_simt"}
func.func @split_k(%a: memref<64x4096xf32>, %b: memref<4096x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x4096xf32>, memref<4096x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// A row reduction with few rows: one block per row, shuffles and a shared
// buffer of one partial per warp.
// CHECK-LABEL: func.func @row_max
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK: gpu.shuffle  xor
// CHECK: arith.maximumf
// CHECK: gpu.barrier
// CHECK: {neo.kernel = "block_reduce"}
func.func @row_max(%x: memref<4x4096xf32>, %m: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x4096xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Elementwise: one thread per point, guarded when blocks overhang.
// CHECK-LABEL: func.func @scale
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: memref.load
// CHECK: arith.mulf
// CHECK: memref.store
// CHECK: {neo.kernel = "pointwise"}
func.func @scale(%x: memref<1000xf32>, %y: memref<1000xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<1000xf32>) outs(%y : memref<1000xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// f16 products accumulated in f32 take tensor cores by default (mma = auto):
// WMMA fragments loaded from shared-memory tiles, accumulators from C. The
// fill of C is a pointwise kernel of its own.
// CHECK-LABEL: func.func @matmul_f16
// CHECK: gpu.launch
// CHECK: {neo.kernel = "pointwise"}
// CHECK: gpu.launch
// CHECK-SAME: workgroup(%{{.+}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>, %{{.+}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>)
// CHECK: gpu.subgroup_mma_load_matrix {{.*}} -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: gpu.subgroup_mma_load_matrix {{.*}} #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "AOp">
// CHECK: gpu.subgroup_mma_load_matrix {{.*}} #gpu.address_space<workgroup>> -> !gpu.mma_matrix<16x16xf16, "BOp">
// CHECK: gpu.subgroup_mma_compute {{.*}} -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: gpu.subgroup_mma_store_matrix
// CHECK: {neo.kernel = "gemm_mma"}
// CHECK-NOT: linalg.
#ik = affine_map<(i, j, k) -> (i, k)>
#kj = affine_map<(i, j, k) -> (k, j)>
#ij = affine_map<(i, j, k) -> (i, j)>
func.func @matmul_f16(%a: memref<128x64xf16>, %b: memref<64x128xf16>, %c: memref<128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<128x128xf32>)
  linalg.generic {indexing_maps = [#ik, #kj, #ij], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<128x64xf16>, memref<64x128xf16>) outs(%c : memref<128x128xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A batched GEMM: the batch is grid z.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-DAG: %[[BATCH:.+]] = arith.constant 4 : index
// CHECK: gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %[[BATCH]]) threads
// CHECK-SAME: workgroup(
// CHECK: gpu.barrier
// CHECK: math.fma
// CHECK: {neo.kernel = "gemm_simt"}
func.func @batch_matmul(%a: memref<4x128x64xf32>, %b: memref<4x64x128xf32>, %c: memref<4x128x128xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<4x128x64xf32>, memref<4x64x128xf32>)
      outs(%c : memref<4x128x128xf32>)
  return
}

// -----

// A convolution is an implicit GEMM: the operand tiles are gathered into
// shared memory.
// CHECK-LABEL: func.func @conv
// CHECK: gpu.launch
// CHECK-SAME: workgroup(
// CHECK: gpu.barrier
// CHECK: math.fma
// CHECK: {neo.kernel = "gemm_implicit"}
// CHECK-NOT: linalg.generic
func.func @conv(%x: memref<2x3x10x10xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, k, p, q, c, r, s) -> (n, c, p + r, q + s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (n, k, p, q)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel",
                                    "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x3x10x10xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x8x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// memref.copy is mapped like a linalg.copy: one thread per element, guarded.
// CHECK-LABEL: func.func @copy
// CHECK-SAME: (%[[X:.+]]: memref<100xf32>, %[[Y:.+]]: memref<100xf32>)
// CHECK: gpu.launch
// CHECK: scf.if
// CHECK: %[[V:.+]] = memref.load %[[X]][%[[I:.+]]] : memref<100xf32>
// CHECK: memref.store %[[V]], %[[Y]][%[[I]]] : memref<100xf32>
// CHECK: {neo.kernel = "pointwise"}
// CHECK-NOT: memref.copy
func.func @copy(%x: memref<100xf32>, %y: memref<100xf32>) {
  memref.copy %x, %y : memref<100xf32> to memref<100xf32>
  return
}
