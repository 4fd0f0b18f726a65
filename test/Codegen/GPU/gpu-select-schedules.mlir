// neo-gpu-select-schedules puts a typed schedule on every op: the options'
// (the default GEMM schedule adapts to small problems: min_blocks), or the
// op's own, kept. neo-gpu-map then applies them.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{bm=64 tm=4 min-blocks=0 block-size=128}))' | FileCheck %s --check-prefix=OPTS
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules,neo-gpu-map))' | FileCheck %s --check-prefix=MAP

// CHECK-LABEL: func.func @mm
// CHECK: linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto", min_blocks = 264>}
// CHECK: linalg.copy {neo.schedule = #neo.gpu_generic<block = 256>}
// OPTS-LABEL: func.func @mm
// OPTS: linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 64, bn = 128, bk = 8, tm = 4, tn = 8, wm = 64, wn = 32, mma = "auto">}
// OPTS: linalg.copy {neo.schedule = #neo.gpu_generic<block = 128>}
// MAP-LABEL: func.func @mm
// MAP: {neo.kernel = "gemm_simt"}
// MAP-NOT: linalg.
func.func @mm(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>, %d: memref<64x64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  memref.copy %c, %d : memref<64x64xf32> to memref<64x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func @explicit
// CHECK: linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 32, bn = 32, bk = 8, tm = 4, tn = 4, wm = 16, wn = 16, mma = "none">}
// OPTS-LABEL: func.func @explicit
// OPTS: #neo.gpu_gemm<bm = 32, bn = 32, bk = 8, tm = 4, tn = 4, wm = 16, wn = 16, mma = "none">
func.func @explicit(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 32, bn = 32, bk = 8, tm = 4, tn = 4, wm = 16, wn = 16, mma = "none">}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}
