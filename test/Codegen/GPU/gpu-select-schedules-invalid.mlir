// Invalid schedule options and schedules are pass failures (non-zero exit),
// not a message followed by the output (issue 18).
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules))' -verify-diagnostics
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{tm=0}))' 2>&1 | FileCheck %s --check-prefix=TM
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{mma=fp8}))' 2>&1 | FileCheck %s --check-prefix=MMA
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{block-size=100}))' 2>&1 | FileCheck %s --check-prefix=BLOCK
// TM: invalid gemm options: the SIMT tile needs tm, tn in {4, 8, 12, 16}
// MMA: invalid gemm options: mma must be "none", "tf32", "wgmma" or "auto", not "fp8"
// BLOCK: invalid options: the block size must be a multiple of 32 between 32 and 1024

func.func @not_a_gemm(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{has a #neo.gpu_gemm schedule but is not a GEMM that the GPU kernels handle}}
  linalg.copy {neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto">}
      ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}

// -----

func.func @untyped(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic attribute}}
  linalg.copy {neo.schedule = {gpu_block = 128}} ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}
