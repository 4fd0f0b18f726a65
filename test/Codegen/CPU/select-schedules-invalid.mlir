// Invalid schedules and schedule options are pass failures (non-zero exit,
// no output), not "error: invalid gemm schedule" followed by exit 0 and the
// output (issue 18).
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules))' -verify-diagnostics
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{gemm-mr=-1}))' 2>&1 | FileCheck %s --check-prefix=MR
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{gemm-mc=4611686018427387904 gemm-kc=4611686018427387904}))' 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{vector-size=0}))' 2>&1 | FileCheck %s --check-prefix=VECTOR
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{threads=0}))' 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{parallel-min-iterations=-1}))' 2>&1 | FileCheck %s --check-prefix=GRAIN
// GRAIN: neo-select-schedules: parallel-min-iterations must be >= 0, got -1
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{parallel-min-gemm-work=-5}))' 2>&1 | FileCheck %s --check-prefix=GEMM-GRAIN
// GEMM-GRAIN: neo-select-schedules: parallel-min-gemm-work must be >= 0, got -5
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{gemm-nr=24 gemm-nc=480}))' 2>&1 | FileCheck %s --check-prefix=NR
// RUN: not neo-opt %S/Inputs/matmul.mlir --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=pentium-nope}))' 2>&1 | FileCheck %s --check-prefix=CPU
// MR: error: neo-select-schedules: invalid gemm options: the register tile must have 1 <= mr <= 32
// CPU: error: neo-select-schedules: cpu=pentium-nope: unknown CPU (use host, x86-64-v2, x86-64-v3, x86-64-v4
// MR-NOT: func.func
// HUGE: error: neo-select-schedules: invalid gemm options: cache blocks must be between 1 and 16777216
// VECTOR: error: neo-select-schedules: invalid options: vector must be between 1 and 64
// THREADS: error: neo-select-schedules: invalid gemm options: threads must be between 1 and 256
// 24 columns are 1.5 of f32's 16-lane vectors.
// NR: error: 'linalg.matmul' op invalid cpu_gemm schedule from the options: the register tile must have 1 <= mr <= 32 and nr a multiple of 16
// NR-NOT: func.func

func.func @f32_width(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  // expected-error @below {{invalid cpu_gemm schedule: the register tile must have 1 <= mr <= 32 and nr a multiple of 16 of at most 8 vectors}}
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 24, mc = 8, nc = 48, kc = 8, threads = 1>}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

func.func @not_a_gemm(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{has a #neo.cpu_gemm schedule but is not a GEMM that the CPU generators handle}}
  linalg.copy {neo.schedule = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>}
      ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}

// -----

func.func @untyped(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{neo.schedule must be a #neo.cpu_gemm or #neo.cpu_generic attribute, not {vector = 4 : i64}}}
  linalg.copy {neo.schedule = {vector = 4}} ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}
