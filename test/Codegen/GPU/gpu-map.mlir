// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules,neo-gpu-map))' | FileCheck %s

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

// An explicit schedule: tensor cores for f32 operands (tf32), the pipelined
// kernel: three stages of cp.async copies in dynamic shared memory
// (3 x (128 x 36 + 32 x 136) floats), ldmatrix-free tf32 fragments,
// mma.sync m16n8k8.
// CHECK-LABEL: func.func @scheduled
// CHECK: %[[SHARED:.*]] = arith.constant 107520 : i32
// CHECK: gpu.launch {{.*}} dynamic_shared_memory_size %[[SHARED]]
// CHECK: gpu.dynamic_shared_memory
// CHECK: memref.view {{.*}} to memref<3x128x36xf32, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<3x32x136xf32, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 4 {bypassL1}
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: gpu.barrier
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 8], tf32Enabled}
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: {neo.kernel = "gemm_mma_sync"}
func.func @scheduled(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "tf32">}
      ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// stages = 1: the single-buffered WMMA kernel.
// CHECK-LABEL: func.func @wmma
// CHECK: gpu.subgroup_mma_load_matrix
// CHECK: gpu.subgroup_mma_compute
// CHECK: gpu.subgroup_mma_store_matrix
// CHECK: {neo.kernel = "gemm_mma"}
func.func @wmma(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "tf32", stages = 1>}
      ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>)
  return
}

// -----

// bf16 operands accumulated in f32, both transposed, four stages: ldmatrix
// with .trans for A (stored k-major) and without for B (stored n-major).
// CHECK-LABEL: func.func @bf16
// CHECK: memref.view {{.*}} to memref<4x32x136xbf16, #gpu.address_space<workgroup>>
// CHECK: memref.view {{.*}} to memref<4x128x40xbf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy {{.*}}, 8 {bypassL1}
// CHECK: nvvm.cp.async.wait.group 2
// CHECK-DAG: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = true}
// CHECK-DAG: nvgpu.ldmatrix {{.*}} {numTiles = 4 : i32, transpose = false}
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xbf16>, vector<2x2xbf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: {neo.kernel = "gemm_mma_sync"}
func.func @bf16(%a: memref<64x128xbf16>, %b: memref<128x64xbf16>, %c: memref<128x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 32, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto", stages = 4>}
      ins(%a, %b : memref<64x128xbf16>, memref<128x64xbf16>) outs(%c : memref<128x128xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}


// -----

// C's constant fill folds into the GEMM kernel: the accumulators start from
// the constant and replace C without reading it (one launch, not two).
// CHECK-LABEL: func.func @fill_folded
// CHECK-NOT: linalg.fill
// CHECK: %[[INIT:.*]] = arith.constant 5.000000e-01 : f32
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]],
// CHECK-NOT: vector.load {{.*}} : memref<8388608xf32>
// CHECK: vector.store {{.*}} : memref<8388608xf32>, vector<4xf32>
// CHECK-NOT: gpu.launch
// CHECK: {neo.kernel = "gemm_simt"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @fill_folded(%a: memref<4096x256xf32>, %b: memref<256x2048xf32>, %c: memref<4096x2048xf32>) {
  %init = arith.constant 0.5 : f32
  linalg.fill ins(%init : f32) outs(%c : memref<4096x2048xf32>)
  linalg.matmul ins(%a, %b : memref<4096x256xf32>, memref<256x2048xf32>) outs(%c : memref<4096x2048xf32>)
  return
}

// -----

// Batched WMMA: the fragments start as the constant.
// CHECK-LABEL: func.func @fill_folded_wmma
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: gpu.subgroup_mma_load_matrix {{.*}} -> !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: gpu.subgroup_mma_constant_matrix %{{.*}} : !gpu.mma_matrix<16x16xf32, "COp">
// CHECK: {neo.kernel = "gemm_mma"}
// CHECK-NOT: gpu.launch
func.func @fill_folded_wmma(%a: memref<2x128x64xf32>, %b: memref<2x64x128xf32>, %c: memref<2x128x128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<2x128x128xf32>)
  linalg.batch_matmul {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "tf32", stages = 1>}
      ins(%a, %b : memref<2x128x64xf32>, memref<2x64x128xf32>) outs(%c : memref<2x128x128xf32>)
  return
}

// -----

// K split over blocks adds into C atomically: the fill stays, a launch of
// its own before the GEMM's.
// CHECK-LABEL: func.func @fill_split_k
// CHECK: gpu.launch
// CHECK: {neo.kernel = "pointwise"}
// CHECK: gpu.launch
// CHECK: memref.atomic_rmw addf
// CHECK: {neo.kernel = "gemm_simt"}
func.func @fill_split_k(%a: memref<64x4096xf32>, %b: memref<4096x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x4096xf32>, memref<4096x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

// C is read between the fill and the GEMM (the copy's kernel): the fill
// stays.
// CHECK-LABEL: func.func @fill_read_before
// CHECK: {neo.kernel = "pointwise"}
// CHECK: {neo.kernel = "pointwise"}
// CHECK: gpu.launch
// CHECK: {neo.kernel = "gemm_simt"}
func.func @fill_read_before(%a: memref<4096x256xf32>, %b: memref<256x2048xf32>, %c: memref<4096x2048xf32>, %d: memref<4096x2048xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4096x2048xf32>)
  memref.copy %c, %d : memref<4096x2048xf32> to memref<4096x2048xf32>
  linalg.matmul ins(%a, %b : memref<4096x256xf32>, memref<256x2048xf32>) outs(%c : memref<4096x2048xf32>)
  return
}

// -----

// An f32 GEMM with an elementwise consumer (bias and relu) on the SIMT
// kernel: the kernel takes the fill over and applies the consumer as it
// stores each element (its epilogue), C never written: one launch.
// CHECK-LABEL: func.func @fill_folded_consumer
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: memref.store {{.*}} : memref<262144xf32>
// CHECK: arith.maximumf
// CHECK: memref.store {{.*}} : memref<512x512xf32>
// CHECK: {neo.kernel = "gemm_simt_epilogue"}
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @fill_folded_consumer(%a: memref<512x256xf32>, %b: memref<256x512xf32>, %bias: memref<512xf32>, %y: memref<512x512xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<512x512xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<512x512xf32>)
  linalg.matmul ins(%a, %b : memref<512x256xf32>, memref<256x512xf32>) outs(%c : memref<512x512xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c, %bias : memref<512x512xf32>, memref<512xf32>) outs(%y : memref<512x512xf32>) {
  ^bb0(%v: f32, %bv: f32, %o: f32):
    %s = arith.addf %v, %bv : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A consumer whose output map drops a dim (rows of C all writing one row of
// y) stays a kernel of its own: applied at the GEMM's stores, blocks would
// race on y. The GEMM still takes the fill over.
// CHECK-LABEL: func.func @consumer_dropping_dim
// CHECK-NOT: linalg.fill
// CHECK: {neo.kernel = "gemm_simt"}
// CHECK: gpu.launch
// CHECK: arith.maximumf
func.func @consumer_dropping_dim(%a: memref<512x256xf32>, %b: memref<256x512xf32>, %y: memref<512xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<512x512xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<512x512xf32>)
  linalg.matmul ins(%a, %b : memref<512x256xf32>, memref<256x512xf32>) outs(%c : memref<512x512xf32>)
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<512x512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A padded convolution (an implicit GEMM): its kernel takes the fill over
// too and stores its sums without reading the output.
// CHECK-LABEL: func.func @fill_folded_conv
// CHECK-NOT: linalg.fill
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK-NOT: memref.load {{.*}} : memref<2x32x12x12xf32>
// CHECK: memref.store %{{[0-9]+}}#0, {{.*}} : memref<2x32x12x12xf32>
// CHECK-NOT: gpu.launch
// CHECK: {neo.kernel = "gemm_implicit"}
func.func @fill_folded_conv(%x: memref<2x16x14x14xf32>, %w: memref<32x16x3x3xf32>, %y: memref<2x32x12x12xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x32x12x12xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, k, p, q, c, r, s) -> (n, c, p + r, q + s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>,
                                   affine_map<(n, k, p, q, c, r, s) -> (n, k, p, q)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w : memref<2x16x14x14xf32>, memref<32x16x3x3xf32>) outs(%y : memref<2x32x12x12xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
