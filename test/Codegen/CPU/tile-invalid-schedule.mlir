// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-tile))' -verify-diagnostics

// Invalid explicit schedules of neo-tile (a separate file: the way schedules
// are given is expected to change).

func.func @unknown_field(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid neo.schedule: unknown gemm schedule field 'mz'}}
  linalg.matmul {neo.schedule = {gemm = {mz = 4}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @not_an_integer(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid neo.schedule: gemm schedule field 'mr' must be an integer}}
  linalg.matmul {neo.schedule = {gemm = {mr = "eight"}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @too_many_registers(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid gemm schedule: the register tile needs more than 30 vector registers}}
  linalg.matmul {neo.schedule = {gemm = {mr = 16, nr = 32, mc = 64, nc = 64, kc = 64, threads = 1}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @nr_not_vectors(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid gemm schedule: the register tile must have 1 <= mr <= 32 and nr a multiple of 16 of at most 8 vectors}}
  linalg.matmul {neo.schedule = {gemm = {mr = 4, nr = 24, mc = 64, nc = 48, kc = 64, threads = 1}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @blocks_not_multiples(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid gemm schedule: cache blocks must be positive multiples of the register tile}}
  linalg.matmul {neo.schedule = {gemm = {mr = 8, nr = 32, mc = 12, nc = 64, kc = 64, threads = 1}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @bad_vector(%x: memref<8x40xf32>, %y: memref<8x40xf32>) {
  // expected-error @below {{invalid schedule: vector size must be 1 to 64 and threads >= 1}}
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x40xf32>) outs(%y : memref<8x40xf32>) attrs = {neo.schedule = {vector = 128}} {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}
