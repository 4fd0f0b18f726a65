// What neo-tile cannot apply is a pass failure.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-tile))' -verify-diagnostics
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-cpu{threads=0})' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: neo-select-schedules: invalid gemm options: threads must be between 1 and 256

func.func @f32_width(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @below {{invalid cpu_gemm schedule: the register tile must have 1 <= mr <= 32 and nr a multiple of 16 of at most 8 vectors}}
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 24, mc = 8, nc = 48, kc = 8, threads = 1>}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

func.func @untyped(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{neo.schedule must be a #neo.cpu_gemm or #neo.cpu_generic attribute (see neo-select-schedules)}}
  linalg.copy {neo.schedule = {vector = 4}} ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}
