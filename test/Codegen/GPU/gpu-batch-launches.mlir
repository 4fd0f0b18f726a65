// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules,neo-gpu-map,neo-gpu-batch-launches))' | FileCheck %s
// RUN: not neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-batch-launches{max-blocks=0}))' 2>&1 | FileCheck %s --check-prefix=BAD

// Two independent fills and an elementwise op on other buffers: one launch
// of 4 + 4 + 2 blocks, each range running its kernel's body with its own
// block index.
// CHECK-LABEL: func.func @independent
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %[[C10:.*]], {{.*}}) threads
// CHECK: arith.cmpi uge, %[[BX]], %c0
// CHECK: arith.cmpi ult, %[[BX]], %c4
// CHECK: scf.if
// CHECK: memref.store {{.*}} : memref<1024xf32>
// CHECK: arith.cmpi ult, %[[BX]], %c8
// CHECK: scf.if
// CHECK: arith.subi %[[BX]], %c4
// CHECK: memref.store {{.*}} : memref<1024xf32>
// CHECK: arith.cmpi ult, %[[BX]], %c10
// CHECK: scf.if
// CHECK: math.exp
// CHECK: neo.batched = ["pointwise", "pointwise", "pointwise"], neo.kernel = "batched"
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @independent(%a: memref<1024xf32>, %b: memref<1024xf32>, %x: memref<512xf32>, %y: memref<512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%a : memref<1024xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<1024xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// The second kernel reads what the first writes: two launches.
// CHECK-LABEL: func.func @dependent
// CHECK: gpu.launch
// CHECK: {neo.kernel = "pointwise"}
// CHECK: gpu.launch
// CHECK: {neo.kernel = "pointwise"}
func.func @dependent(%x: memref<512xf32>, %y: memref<512xf32>, %z: memref<512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%y : memref<512xf32>) outs(%z : memref<512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// The second kernel writes what the first reads (a view of it): two
// launches.
// CHECK-LABEL: func.func @anti_dependent
// CHECK: {neo.kernel = "pointwise"}
// CHECK: {neo.kernel = "pointwise"}
func.func @anti_dependent(%x: memref<2x512xf32>, %y: memref<512xf32>) {
  %row = memref.subview %x[0, 0] [1, 512] [1, 1] : memref<2x512xf32> to memref<512xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%row : memref<512xf32, strided<[1]>>) outs(%y : memref<512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%x : memref<2x512xf32>)
  return
}

// -----

// Two independent GEMMs with the same tiles (2-D grids of 8 x 4 blocks,
// the same shared buffers): one launch of 64 blocks, the second range's
// block index split back into x and y.
// CHECK-LABEL: func.func @gemms
// CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}} = %c64, {{.*}}) threads({{.*}}) in ({{.*}} = %c128{{.*}}, {{.*}}) workgroup(
// CHECK: scf.if
// CHECK: arith.remui {{.*}}, %c8
// CHECK: arith.divui {{.*}}, %c8
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: arith.subi %[[BX]], %c32
// CHECK: gpu.barrier
// CHECK: neo.batched = ["gemm_simt", "gemm_simt"]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @gemms(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>, %d: memref<256x256xf32>, %e: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  linalg.matmul ins(%a, %d : memref<256x256xf32>, memref<256x256xf32>) outs(%e : memref<256x256xf32>)
  return
}

// -----

// The copy (a kernel too) joins the first op's launch; the third op writes
// u, which the copy reads, so it starts a launch of its own; the fourth,
// 64 threads in one block, runs in that launch's 256-thread blocks, its
// threads renumbered (a thread of its range stands for thread lin % 64 of
// block lin / 64; threads past its 64 do nothing).
// CHECK-LABEL: func.func @apart
// CHECK: neo.batched = ["pointwise", "pointwise"]
// CHECK: gpu.launch {{.*}} in ({{.*}} = %c3, {{.*}}) threads({{.*}}) in ({{.*}} = %c256
// CHECK: scf.if
// CHECK: scf.if
// CHECK: %[[LIN:.*]] = arith.addi {{.*}}, %{{.*}} : index
// CHECK: arith.cmpi ult, %[[LIN]], %c64
// CHECK: arith.divui %[[LIN]], %c64
// CHECK: arith.remui %[[LIN]], %c64
// CHECK: memref.store {{.*}} : memref<64xf32>
// CHECK: neo.batched = ["pointwise", "pointwise"]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @apart(%x: memref<512xf32>, %y: memref<512xf32>, %u: memref<512xf32>, %v: memref<512xf32>, %s: memref<64xf32>, %t: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<512xf32>) outs(%y : memref<512xf32>) {
  ^bb0(%q: f32, %o: f32):
    %e = math.exp %q : f32
    linalg.yield %e : f32
  }
  memref.copy %u, %v : memref<512xf32> to memref<512xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : memref<512xf32>) outs(%u : memref<512xf32>) {
  ^bb0(%q: f32, %o: f32):
    %e = math.exp %q : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%s : memref<64xf32>) outs(%t : memref<64xf32>) {
  ^bb0(%q: f32, %o: f32):
    %e = math.exp %q : f32
    linalg.yield %e : f32
  }
  return
}

// BAD: error: neo-gpu-batch-launches: max-blocks must be positive

// -----

// Split-K GEMMs keep their fills. The second fill moves up over the first
// GEMM (independent of it) to join the first fill; the GEMMs, independent
// too, then run together: two launches instead of four.
// CHECK-LABEL: func.func @hoisted
// CHECK: gpu.launch
// CHECK: neo.batched = ["pointwise", "pointwise"]
// CHECK: gpu.launch
// CHECK: memref.atomic_rmw addf
// CHECK: neo.batched = ["gemm_simt", "gemm_simt"]
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @hoisted(%a: memref<64x4096xf32>, %b: memref<4096x64xf32>, %c: memref<64x64xf32>, %d: memref<4096x64xf32>, %e: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x4096xf32>, memref<4096x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.fill ins(%zero : f32) outs(%e : memref<64x64xf32>)
  linalg.matmul ins(%a, %d : memref<64x4096xf32>, memref<4096x64xf32>) outs(%e : memref<64x64xf32>)
  return
}

// -----

// The second fill writes what the first GEMM reads: it stays after it.
// CHECK-LABEL: func.func @not_hoisted
// CHECK: {neo.kernel = "pointwise"}
// CHECK: {neo.kernel = "gemm_simt"}
// CHECK: {neo.kernel = "pointwise"}
// CHECK: return
func.func @not_hoisted(%a: memref<64x4096xf32>, %b: memref<4096x64xf32>, %c: memref<64x64xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x64xf32>)
  linalg.matmul ins(%a, %b : memref<64x4096xf32>, memref<4096x64xf32>) outs(%c : memref<64x64xf32>)
  linalg.fill ins(%zero : f32) outs(%b : memref<4096x64xf32>)
  return
}

// -----

// Kernels with barriers and shared memory keep their block shapes: two
// GEMMs with different tiles (128 and 256 threads) stay two launches.
// CHECK-LABEL: func.func @shapes
// CHECK: {neo.kernel = "gemm_simt"}
// CHECK: {neo.kernel = "gemm_simt"}
// CHECK-NOT: batched
// CHECK: return
func.func @shapes(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>, %d: memref<256x256xf32>, %e: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "none">}
      ins(%a, %d : memref<256x256xf32>, memref<256x256xf32>) outs(%e : memref<256x256xf32>)
  return
}

// -----

// A one-thread kernel and a 256-thread one: the batch takes the larger
// block (the one-thread kernel renumbered into its first block), not one
// thread per block.
// CHECK-LABEL: func.func @serial_and_wide
// CHECK: gpu.launch {{.*}} in ({{.*}} = %c5, {{.*}}) threads({{.*}}) in ({{.*}} = %c256{{.*}},
// CHECK: scf.if
// CHECK: %[[LIN:.*]] = arith.addi
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[LIN]], %c1
// CHECK: scf.if %[[OK]]
// CHECK: memref.store {{.*}} : memref<f32>
// CHECK: neo.batched = ["serial", "pointwise"]
func.func @serial_and_wide(%s: memref<f32>, %x: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %s[] : memref<f32>
    gpu.terminator
  } {neo.kernel = "serial"}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c256 : index
    %j = arith.addi %i, %tx : index
    memref.store %one, %x[%j] : memref<1024xf32>
    gpu.terminator
  } {neo.kernel = "pointwise"}
  return
}

// -----

// A body that reads its block index through gpu.block_id (an op, not the
// launch's argument) would read the batched launch's: never batched.
// CHECK-LABEL: func.func @block_id_op
// CHECK: gpu.launch
// CHECK: gpu.launch
// CHECK-NOT: batched
// CHECK: return
func.func @block_id_op(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c256 = arith.constant 256 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %b = gpu.block_id x
    %i = arith.muli %b, %c256 : index
    %j = arith.addi %i, %tx : index
    memref.store %one, %x[%j] : memref<1024xf32>
    gpu.terminator
  } {neo.kernel = "pointwise"}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %c256 : index
    %j = arith.addi %i, %tx : index
    memref.store %one, %y[%j] : memref<1024xf32>
    gpu.terminator
  } {neo.kernel = "pointwise"}
  return
}
