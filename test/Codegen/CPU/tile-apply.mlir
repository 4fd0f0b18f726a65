// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// neo-tile applies the schedules it finds and decides nothing: a GEMM
// schedule becomes packed panels of its blocks, a generic one vector tiles
// of its width; an op without a schedule is left as it is.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-tile))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 threads=1},neo-tile))' | FileCheck %s --check-prefix=DEFAULT

// mr 4, nr 16, mc 8, nc 32, kc 8, serial: B panels [nc/nr][kc][nr], A panels
// [mc/mr][kc][mr], the edge tile.
// CHECK-LABEL: func.func @gemm(
// CHECK-NOT: scf.parallel
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x8x16xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x8x4xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x16xf32>
// CHECK-NOT: linalg.matmul
func.func @gemm(%a: memref<64x48xf32>, %b: memref<48x80xf32>, %c: memref<64x80xf32>) {
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 16, mc = 8, nc = 32, kc = 8, threads = 1>}
      ins(%a, %b : memref<64x48xf32>, memref<48x80xf32>) outs(%c : memref<64x80xf32>)
  return
}

// -----

// CHECK-LABEL: func.func @generic(
// CHECK: linalg.generic {{.*}}neo.vector_sizes = array<i64: 1, 4>
#id = affine_map<(i, j) -> (i, j)>
func.func @generic(%x: memref<64x100xf32>, %y: memref<64x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%y : memref<64x100xf32>) attrs = {neo.schedule = #neo.cpu_generic<vector = 4, threads = 1>} {
  ^bb0(%v: f32, %o: f32):
    %e = math.tanh %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// Without a schedule: nothing (plain loops later); with the select pass: the
// default GEMM kernel.
// CHECK-LABEL: func.func @unscheduled(
// CHECK-NEXT: linalg.matmul ins(
// DEFAULT-LABEL: func.func @unscheduled(
// DEFAULT-DAG: memref.alloc() {{.*}} : memref<3x64x32xf32>
// DEFAULT-DAG: memref.alloc() {{.*}} : memref<8x64x8xf32>
// DEFAULT-NOT: linalg.matmul
func.func @unscheduled(%a: memref<64x64xf32>, %b: memref<64x80xf32>, %c: memref<64x80xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x80xf32>) outs(%c : memref<64x80xf32>)
  return
}
