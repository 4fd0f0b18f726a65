// neo-select-schedules decides the CPU schedule of every linalg op on
// buffers once: the op's own (kept), else its tuning record, else the
// options. neo-tile then applies what it finds.
// The defaults follow the cpu's vector registers (x86-64-v4: 32 zmm, v3:
// 16 ymm); on the host they are one of the two (or another ISA's).
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4}))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v3}))' | FileCheck %s --check-prefix=V3
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=znver3 gemm-mr=4}))' | FileCheck %s --check-prefix=ZEN3
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules))' | FileCheck %s --check-prefix=HOST
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{threads=1 vector-size=8 gemm-mr=4 gemm-nr=16 gemm-mc=64 gemm-nc=128 gemm-kc=64}))' | FileCheck %s --check-prefix=OPTS
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{records=%S/../../Tuning/Inputs/records.json target=lit}))' 2>/dev/null | FileCheck %s --check-prefix=RECORDS
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{parallel-min-iterations=6401}))' | FileCheck %s --check-prefix=GRAIN
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{parallel-min-iterations=6400}))' | FileCheck %s --check-prefix=GRAIN-AT
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v3 parallel-min-gemm-work=1966081}))' | FileCheck %s --check-prefix=GEMM-GRAIN
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v3 parallel-min-gemm-work=1966080}))' | FileCheck %s --check-prefix=GEMM-GRAIN-AT

// CHECK-LABEL: func.func @mm(
// AVX-512: 8 rows of two zmm vectors, and a depth block of 512.
// CHECK: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 512, threads = 2>}
// AVX2: 6 rows of two ymm vectors, 12 accumulators.
// V3-LABEL: func.func @mm(
// V3: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 2>}
// An explicit field wins, the blocks follow it.
// ZEN3-LABEL: func.func @mm(
// ZEN3: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 16, mc = 64, nc = 512, kc = 256, threads = 2>}
// HOST-LABEL: func.func @mm(
// HOST: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = {{[0-9]+}}, nr = {{16|32}},
// OPTS-LABEL: func.func @mm(
// OPTS: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 16, mc = 64, nc = 128, kc = 64, threads = 1>}
// The recorded schedule (tile-records.mlir shows what neo-tile makes of it).
// A GEMM of fewer multiply-adds than parallel-min-gemm-work (128 x 160 x 96
// = 1966080 here) runs on one thread; at the bound it keeps the threads.
// GEMM-GRAIN-LABEL: func.func @mm(
// GEMM-GRAIN: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 1>}
// GEMM-GRAIN-AT-LABEL: func.func @mm(
// GEMM-GRAIN-AT: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 2>}
// RECORDS-LABEL: func.func @mm(
// RECORDS: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 48, mc = 32, nc = 96, kc = 40, threads = 1>}
func.func @mm(%a: memref<128x96xf32>, %b: memref<96x160xf32>, %c: memref<128x160xf32>) {
  linalg.matmul ins(%a, %b : memref<128x96xf32>, memref<96x160xf32>) outs(%c : memref<128x160xf32>)
  return
}

// -----

// f64 (the generator's vectors have 8 lanes): two native vectors per row.
// CHECK-LABEL: func.func @mm_f64(
// CHECK: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 8, nr = 16, mc = 128, nc = 512, kc = 512, threads = 2>}
// V3-LABEL: func.func @mm_f64(
// V3: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 6, nr = 8, mc = 96, nc = 512, kc = 256, threads = 2>}
func.func @mm_f64(%a: memref<16x16xf64>, %b: memref<16x16xf64>, %c: memref<16x16xf64>) {
  linalg.matmul ins(%a, %b : memref<16x16xf64>, memref<16x16xf64>) outs(%c : memref<16x16xf64>)
  return
}

// -----

// Other ops get a generic schedule; the members of a row-blocked kernel run
// serially, and so do ops of fewer than parallel-min-iterations iterations
// (64 x 100 = 6400 here); GEMMs keep the threads.
// CHECK-LABEL: func.func @generic(
// CHECK: linalg.generic {{.*}}neo.schedule = #neo.cpu_generic<vector = 16, threads = 2>
// CHECK: linalg.generic {{.*}}neo.schedule = #neo.cpu_generic<vector = 16, threads = 1>
// OPTS-LABEL: func.func @generic(
// OPTS: neo.schedule = #neo.cpu_generic<vector = 8, threads = 1>
// GRAIN-LABEL: func.func @mm(
// GRAIN: threads = 2>
// GRAIN-LABEL: func.func @generic(
// GRAIN: linalg.generic {{.*}}neo.schedule = #neo.cpu_generic<vector = 16, threads = 1>
// GRAIN-AT-LABEL: func.func @generic(
// GRAIN-AT: linalg.generic {{.*}}neo.schedule = #neo.cpu_generic<vector = 16, threads = 2>
#id = affine_map<(i, j) -> (i, j)>
func.func @generic(%x: memref<64x100xf32>, %y: memref<64x100xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%y : memref<64x100xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.tanh %v : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%y : memref<64x100xf32>) attrs = {neo.serial} {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// An explicit schedule is kept, whatever the options and records say.
// CHECK-LABEL: func.func @explicit(
// CHECK: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
// OPTS-LABEL: func.func @explicit(
// OPTS: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
// RECORDS-LABEL: func.func @explicit(
// RECORDS: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
func.func @explicit(%a: memref<128x96xf32>, %b: memref<96x160xf32>, %c: memref<128x160xf32>) {
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
      ins(%a, %b : memref<128x96xf32>, memref<96x160xf32>) outs(%c : memref<128x160xf32>)
  return
}
