// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile{b-in-place=on}))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile{b-in-place=off}))' | FileCheck %s --check-prefix=OFF
// RUN: not neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile{b-in-place=maybe}))' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: neo-tile: b-in-place must be auto, on or off, not 'maybe'

// neo-tile on contractions, with the default schedule (no neo.schedule, no
// options): BLIS-style packed GEMMs. The register tile is 8 x 32 (two f32
// vectors of 16 per row: 16 accumulators), kc is clamped to K, and the
// column blocks are split over the 2 default threads.

// C[64x96] += A[64x48] * B[48x96]: per thread a block of 64 columns, packed
// into B panels [64/32][kc = 48][32] and A panels [64/8][48][8]; the k loop
// carries the 16 accumulator vectors, loaded from C before and stored after.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.+]]: memref<64x48xf32>, %[[B:.+]]: memref<48x96xf32>, %[[C:.+]]: memref<64x96xf32>)
// The fill of C: rows over threads, vector tiles of 16 (for neo-vectorize).
// CHECK: scf.forall (%{{.+}}) = (0) to (64) step (32)
// CHECK: linalg.fill {neo.vector_sizes = array<i64: 1, 16>}
// CHECK-DAG: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: scf.parallel (%{{.+}}, %{{.+}}) = (%{{.+}}, %{{.+}}) to (%{{.+}}, %[[TWO]])
// CHECK-DAG: %[[BP:.+]] = memref.alloc() {{.*}} : memref<2x48x32xf32>
// CHECK-DAG: %[[AP:.+]] = memref.alloc() {{.*}} : memref<8x48x8xf32>
// Packing B (vectors) and A (scalars).
// CHECK: %[[BV:.+]] = vector.load %[[B]][%{{.+}}, %{{.+}}] : memref<48x96xf32>, vector<16xf32>
// CHECK: vector.store %[[BV]], %[[BP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<2x48x32xf32>, vector<16xf32>
// CHECK: %[[AV:.+]] = memref.load %[[A]][%{{.+}}, %{{.+}}] : memref<64x48xf32>
// CHECK: memref.store %[[AV]], %[[AP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<8x48x8xf32>
// The micro-kernel.
// CHECK: %[[C0:.+]] = vector.load %[[C]][%{{.+}}, %{{.+}}] : memref<64x96xf32>, vector<16xf32>
// CHECK: %[[ACC:.+]]:16 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC0:[^ ]+]] = %[[C0]],
// CHECK-SAME: -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: %[[BROW:.+]] = vector.load %[[BP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<2x48x32xf32>, vector<16xf32>
// CHECK: %[[AS:.+]] = memref.load %[[AP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<8x48x8xf32>
// CHECK: %[[AB:.+]] = vector.broadcast %[[AS]] : f32 to vector<16xf32>
// CHECK: vector.fma %[[AB]], %[[BROW]], %[[ACC0]] : vector<16xf32>
// CHECK-COUNT-15: vector.fma
// CHECK: scf.yield
// CHECK: vector.store %[[ACC]]#0, %[[C]][%{{.+}}, %{{.+}}] : memref<64x96xf32>, vector<16xf32>
// CHECK: vector.store %[[ACC]]#15, %[[C]]
// CHECK: memref.dealloc %[[BP]]
// CHECK: memref.dealloc %[[AP]]
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @matmul(%a: memref<64x48xf32>, %b: memref<48x96xf32>, %c: memref<64x96xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<64x96xf32>)
  linalg.matmul ins(%a, %b : memref<64x48xf32>, memref<48x96xf32>) outs(%c : memref<64x96xf32>)
  return
}

// -----

// A batched GEMM: the batch is split over the threads, each batch is packed
// from its own slices of A and B.
// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: (%[[A:.+]]: memref<3x16x24xf32>, %[[B:.+]]: memref<3x24x64xf32>, %[[C:.+]]: memref<3x16x64xf32>)
// CHECK-DAG: %[[THREE:.+]] = arith.constant 3 : index
// CHECK: scf.parallel (%[[BATCH:.+]], %{{.+}}) = (%{{.+}}, %{{.+}}) to (%[[THREE]], %{{.+}})
// CHECK-DAG: %[[BP:.+]] = memref.alloc() {{.*}} : memref<2x24x32xf32>
// CHECK-DAG: %[[AP:.+]] = memref.alloc() {{.*}} : memref<2x24x8xf32>
// CHECK: vector.load %[[B]][%[[BATCH]], %{{.+}}, %{{.+}}] : memref<3x24x64xf32>, vector<16xf32>
// CHECK: memref.load %[[A]][%[[BATCH]], %{{.+}}, %{{.+}}] : memref<3x16x24xf32>
// CHECK: vector.load %[[C]][%[[BATCH]], %{{.+}}, %{{.+}}] : memref<3x16x64xf32>, vector<16xf32>
// CHECK: scf.for {{.*}} -> (vector<16xf32>,
// CHECK: vector.fma {{.*}} : vector<16xf32>
// CHECK: vector.store %{{.+}}, %[[C]][%[[BATCH]], %{{.+}}, %{{.+}}] : memref<3x16x64xf32>, vector<16xf32>
// CHECK-NOT: linalg.batch_matmul
// CHECK: return
func.func @batch_matmul(%a: memref<3x16x24xf32>, %b: memref<3x24x64xf32>, %c: memref<3x16x64xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x16x24xf32>, memref<3x24x64xf32>)
      outs(%c : memref<3x16x64xf32>)
  return
}

// -----

// f64 has 8 lanes: the default 8 x 32 tile would need 32 accumulators, so
// nr narrows to 16 (8 rows of two vector<8xf64>, 16 accumulators).
// CHECK-LABEL: func.func @matmul_f64
// CHECK-DAG: %[[BP:.+]] = memref.alloc() {{.*}} : memref<2x16x16xf64>
// CHECK-DAG: %[[AP:.+]] = memref.alloc() {{.*}} : memref<4x16x8xf64>
// CHECK: %{{.+}}:16 = scf.for {{.*}} -> (vector<8xf64>,
// CHECK: vector.load %[[BP]]{{.*}} : memref<2x16x16xf64>, vector<8xf64>
// CHECK: vector.fma {{.*}} : vector<8xf64>
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @matmul_f64(%a: memref<32x16xf64>, %b: memref<16x64xf64>, %c: memref<32x64xf64>) {
  linalg.matmul ins(%a, %b : memref<32x16xf64>, memref<16x64xf64>) outs(%c : memref<32x64xf64>)
  return
}

// -----

// A * B^T (B with k innermost, as a data gradient's W^T): B is packed by
// 8x8 transposes, 8 vector loads of 8 depths from 8 columns, 24 shuffles and
// 8 vector stores into rows of the B panel per block, over the depths that
// fill blocks of 8 (20 = 16 + 4), then element by element for the rest.
// CHECK-LABEL: func.func @matmul_transpose_b
// CHECK-SAME: (%[[A:.+]]: memref<32x20xf32>, %[[B:.+]]: memref<64x20xf32>, %[[C:.+]]: memref<32x64xf32>)
// CHECK: %[[BP:.+]] = memref.alloc() {{.*}} : memref<1x20x32xf32>
// CHECK: scf.for
// CHECK-COUNT-8: vector.load %[[B]][%{{.+}}, %{{.+}}] : memref<64x20xf32>, vector<8xf32>
// CHECK-COUNT-24: vector.shuffle
// CHECK-COUNT-8: vector.store %{{.+}}, %[[BP]][%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x20x32xf32>, vector<8xf32>
// CHECK: memref.load %[[B]][%{{.+}}, %{{.+}}] : memref<64x20xf32>
// CHECK: memref.store %{{.+}}, %[[BP]]
// CHECK: vector.fma
// CHECK: return
func.func @matmul_transpose_b(%a: memref<32x20xf32>, %b: memref<64x20xf32>, %c: memref<32x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>,
                                   affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<32x20xf32>, memref<64x20xf32>) outs(%c : memref<32x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// One block of rows (M = 20 <= mc) and a B of 2.3 MiB (600 x 1024): B is
// read in place by the micro-kernel (vector loads of B's rows in the k loop),
// with no B panel and no packing loop; A is packed as usual.
// With b-in-place=off (the default on hosts other than AMD Zen), B is
// packed into panels as for any other GEMM.
// OFF-LABEL: func.func @matmul_small_m
// OFF: memref.alloc() {{.*}} : memref<{{[0-9]+}}x{{[0-9]+}}x32xf32>
// CHECK-LABEL: func.func @matmul_small_m
// CHECK-SAME: (%[[A:.+]]: memref<20x600xf32>, %[[B:.+]]: memref<600x1024xf32>, %[[C:.+]]: memref<20x1024xf32>)
// CHECK-NOT: memref<16x512x32xf32>
// CHECK: %[[AP:.+]] = memref.alloc() {{.*}} : memref<3x512x8xf32>
// CHECK-NOT: vector.store %{{.+}}, %{{.+}} : memref<{{.+}}x512x32xf32>
// CHECK: %{{.+}}:16 = scf.for
// CHECK: vector.load %[[B]][%{{.+}}, %{{.+}}] : memref<600x1024xf32>, vector<16xf32>
// CHECK: vector.fma
// CHECK: return
func.func @matmul_small_m(%a: memref<20x600xf32>, %b: memref<600x1024xf32>, %c: memref<20x1024xf32>) {
  linalg.matmul ins(%a, %b : memref<20x600xf32>, memref<600x1024xf32>) outs(%c : memref<20x1024xf32>)
  return
}
