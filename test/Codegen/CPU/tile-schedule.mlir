// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-tile))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 threads=1 vector-size=8 gemm-mr=4 gemm-nr=16 gemm-mc=32 gemm-nc=48 gemm-kc=16},neo-tile))' | FileCheck %s --check-prefix=OPT

// neo-tile with explicit schedules: an op's typed `neo.schedule` attribute (kept by neo-select-schedules), or
// the pass's options (which the dictionary overrides). Kept apart from the
// default-schedule tests (tile-gemm.mlir, tile-generic.mlir) because the way
// schedules are given is expected to change.

// mr 4, nr 16, mc 32, nc 48, kc 16, one thread: B panels [48/16][16][16], A
// panels [32/4][16][4], a 4 x 16 tile (4 accumulators); the options do not
// change it.
// CHECK-LABEL: func.func @gemm_dict
// CHECK-NOT: scf.parallel
// CHECK-DAG: memref.alloc() {{.*}} : memref<3x16x16xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<8x16x4xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x16xf32>
// CHECK: %{{.+}}:4 = scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-COUNT-4: vector.fma
// CHECK-NOT: vector.fma
// CHECK: scf.yield
// OPT-LABEL: func.func @gemm_dict
// OPT-DAG: memref.alloc() {{.*}} : memref<3x16x16xf32>
// OPT-DAG: memref.alloc() {{.*}} : memref<8x16x4xf32>
func.func @gemm_dict(%a: memref<64x48xf32>, %b: memref<48x96xf32>, %c: memref<64x96xf32>) {
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 16, mc = 32, nc = 48, kc = 16, threads = 1>}
      ins(%a, %b : memref<64x48xf32>, memref<48x96xf32>) outs(%c : memref<64x96xf32>)
  return
}

// -----

// The same blocks from the options; without them, the default schedule
// (8 x 32, two threads).
// CHECK-LABEL: func.func @gemm_options
// CHECK: scf.parallel
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x48x32xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<8x48x8xf32>
// CHECK: %{{.+}}:16 = scf.for
// OPT-LABEL: func.func @gemm_options
// OPT-NOT: scf.parallel
// OPT-DAG: memref.alloc() {{.*}} : memref<3x16x16xf32>
// OPT-DAG: memref.alloc() {{.*}} : memref<8x16x4xf32>
// OPT-DAG: memref.alloc() {{.*}} : memref<4x16xf32>
// OPT: %{{.+}}:4 = scf.for
func.func @gemm_options(%a: memref<64x48xf32>, %b: memref<48x96xf32>, %c: memref<64x96xf32>) {
  linalg.matmul ins(%a, %b : memref<64x48xf32>, memref<48x96xf32>) outs(%c : memref<64x96xf32>)
  return
}

// -----

// vector = 8, threads = 4: thread tiles of 2 rows, vector tiles of 8.
// CHECK-LABEL: func.func @generic_dict
// CHECK: scf.forall (%{{.+}}) = (0) to (8) step (2) {
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : memref<1x8xf32, {{.*}}>)
// CHECK-SAME: neo.vector_sizes = array<i64: 1, 8>
// OPT-LABEL: func.func @generic_dict
// OPT: scf.forall (%{{.+}}) = (0) to (8) step (2) {
// OPT: neo.vector_sizes = array<i64: 1, 8>
func.func @generic_dict(%x: memref<8x40xf32>, %y: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x40xf32>) outs(%y : memref<8x40xf32>)
      attrs = {neo.schedule = #neo.cpu_generic<vector = 8, threads = 4>} {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// threads = 1 and vector-size = 8 from the options: no thread split.
// CHECK-LABEL: func.func @generic_options
// CHECK: scf.forall
// CHECK: neo.vector_sizes = array<i64: 1, 16>
// OPT-LABEL: func.func @generic_options
// OPT-NOT: scf.forall
// OPT: linalg.generic {{.*}} ins(%{{.+}} : memref<1x8xf32, {{.*}}>)
// OPT-SAME: neo.vector_sizes = array<i64: 1, 8>
func.func @generic_options(%x: memref<8x40xf32>, %y: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x40xf32>) outs(%y : memref<8x40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}
