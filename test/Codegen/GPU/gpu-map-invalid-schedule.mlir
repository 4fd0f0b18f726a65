// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-map))' -verify-diagnostics

// Invalid explicit schedules of neo-gpu-map (a separate file: the way
// schedules are given is expected to change).

func.func @unknown_field(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid neo.schedule: unknown gpu gemm field 'bz'}}
  linalg.matmul {neo.schedule = {gpu_gemm = {bz = 4}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @not_power_of_two(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid gpu gemm schedule: bm, bn (at most 256) and bk (at most 64) must be powers of two}}
  linalg.matmul {neo.schedule = {gpu_gemm = {bm = 96}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @too_much_shared(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  // expected-error @below {{its tiles need 66048 bytes of shared memory, more than the 49152 a kernel holds statically}}
  linalg.matmul {neo.schedule = {gpu_gemm = {bm = 256, bn = 256, bk = 32, tm = 16, tn = 16}}}
      ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

func.func @bad_mma(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid neo.schedule: gpu gemm field 'mma' must be "none", "tf32" or "auto"}}
  linalg.matmul {neo.schedule = {gpu_gemm = {mma = "fp8"}}}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @bad_block(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{invalid GPU schedule: the block size must be a multiple of 32 between 32 and 1024}}
  linalg.copy {neo.schedule = {gpu_block = 100}} ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}
