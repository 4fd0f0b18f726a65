// neo-gpu-map applies schedules; what it cannot apply is an error (a pass
// failure), never a crash or a silent fallback.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-map))' -verify-diagnostics

func.func @too_much_shared(%a: memref<256x256xf32>, %b: memref<256x256xf32>, %c: memref<256x256xf32>) {
  // expected-error @below {{its tiles need 66048 bytes of shared memory, more than the 49152 a kernel holds statically}}
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 256, bn = 256, bk = 32, tm = 16, tn = 16, wm = 64, wn = 32, mma = "auto">}
      ins(%a, %b : memref<256x256xf32>, memref<256x256xf32>) outs(%c : memref<256x256xf32>)
  return
}

// -----

// Valid fields, but not for the SIMT kernel: 16 threads.
func.func @simt_rule(%a: memref<64x64xf32>, %b: memref<64x64xf32>, %c: memref<64x64xf32>) {
  // expected-error @below {{invalid gpu_gemm schedule: the SIMT tile needs tm, tn in {4, 8, 12, 16} dividing bm, bn, between 32 and 1024 threads}}
  linalg.matmul {neo.schedule = #neo.gpu_gemm<bm = 16, bn = 16, bk = 8, tm = 4, tn = 4, wm = 16, wn = 16, mma = "none">}
      ins(%a, %b : memref<64x64xf32>, memref<64x64xf32>) outs(%c : memref<64x64xf32>)
  return
}

// -----

func.func @unscheduled(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{has no neo.schedule: run neo-gpu-select-schedules first}}
  linalg.copy ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}

// -----

func.func @untyped(%x: memref<100xf32>, %y: memref<100xf32>) {
  // expected-error @below {{neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic attribute}}
  linalg.copy {neo.schedule = {gpu_block = 128}} ins(%x : memref<100xf32>) outs(%y : memref<100xf32>)
  return
}

// -----

// A schedule whose stages do not fit in shared memory is an error.
func.func @too_deep(%a: memref<256x256xf16>, %b: memref<256x256xf16>, %c: memref<256x256xf32>) {
  // expected-error@+1 {{invalid gpu_gemm schedule: its 8 stages need 299008 bytes of shared memory, more than the 232448 a block may have}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 256, bn = 256, bk = 32, tm = 8, tn = 8, wm = 64, wn = 64, mma = "auto", stages = 8>}
      ins(%a, %b : memref<256x256xf16>, memref<256x256xf16>) outs(%c : memref<256x256xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Warpgroup MMA on request for a schedule it cannot run: an error, not
// another kernel. f32 operands run in tf32 (as an implicit GEMM, each float
// copied K-major), whose tiles hold 32 k, not 64.
func.func @wgmma_f32(%a: memref<128x64xf32>, %b: memref<64x128xf32>, %c: memref<128x128xf32>) {
  // expected-error@+1 {{gpu_gemm schedule with mma = "wgmma": wgmma needs bk = 32, wm = 64 dividing bm}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 128, bn = 128, bk = 64, tm = 8, tn = 8, wm = 64, wn = 128, mma = "wgmma">}
      ins(%a, %b : memref<128x64xf32>, memref<64x128xf32>) outs(%c : memref<128x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// ... or whose extents the tile does not divide.
func.func @wgmma_ragged(%a: memref<100x64xf16>, %b: memref<64x128xf16>, %c: memref<100x128xf32>) {
  // expected-error@+1 {{gpu_gemm schedule with mma = "wgmma": the extents are not multiples of the block tile}}
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 64, bn = 128, bk = 64, tm = 8, tn = 8, wm = 64, wn = 128, mma = "wgmma">}
      ins(%a, %b : memref<100x64xf16>, memref<64x128xf16>) outs(%c : memref<100x128xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Warpgroup MMA on request for an implicit GEMM (a 1-D convolution) whose
// operands differ in type (f16 and bf16): an error.
func.func @wgmma_implicit_types(%x: memref<130x64xf16>, %w: memref<3x64x64xbf16>, %y: memref<128x64xf32>) {
  // expected-error@+1 {{gpu_gemm schedule with mma = "wgmma": its operands are not both plain reads of f16, bf16 or f32 memrefs of one type}}
  linalg.generic {indexing_maps = [affine_map<(p, k, r, c) -> (p + r, c)>, affine_map<(p, k, r, c) -> (r, c, k)>, affine_map<(p, k, r, c) -> (p, k)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 128, bn = 64, bk = 64, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">}
      ins(%x, %w : memref<130x64xf16>, memref<3x64x64xbf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f16, %b: bf16, %o: f32):
    %af = arith.extf %a : f16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// ... or f32 operands (tf32) with a tile of 64 k: tf32 tiles take 32 (a
// 128-byte row).
func.func @wgmma_implicit_tf32_bk(%x: memref<130x64xf32>, %w: memref<3x64x64xf32>, %y: memref<128x64xf32>) {
  // expected-error@+1 {{gpu_gemm schedule with mma = "wgmma": wgmma needs bk = 32, wm = 64 dividing bm}}
  linalg.generic {indexing_maps = [affine_map<(p, k, r, c) -> (p + r, c)>, affine_map<(p, k, r, c) -> (r, c, k)>, affine_map<(p, k, r, c) -> (p, k)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 128, bn = 64, bk = 64, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">}
      ins(%x, %w : memref<130x64xf32>, memref<3x64x64xf32>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// ... or with a tile whose threads would each make more than 24 copies.
func.func @wgmma_implicit_tile(%x: memref<130x64xbf16>, %w: memref<3x64x64xbf16>, %y: memref<128x64xf32>) {
  // expected-error@+1 {{gpu_gemm schedule with mma = "wgmma": each thread would make more than 24 copies per tile}}
  linalg.generic {indexing_maps = [affine_map<(p, k, r, c) -> (p + r, c)>, affine_map<(p, k, r, c) -> (r, c, k)>, affine_map<(p, k, r, c) -> (p, k)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"],
                  neo.schedule = #neo.gpu_gemm<bm = 64, bn = 64, bk = 64, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">}
      ins(%x, %w : memref<130x64xbf16>, memref<3x64x64xbf16>) outs(%y : memref<128x64xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %af = arith.extf %a : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %p = arith.mulf %af, %bf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// 3 * 2^38 points, 3 * 2^30 blocks of 256 threads: past CUDA's 2^31 - 1
// blocks along x.
func.func @grid_too_large(%x: memref<1048576x786432xf32>) {
  %c = arith.constant 1.0 : f32
  // expected-error @below {{cannot run as one launch: its grid of 3221225472 x 1 x 1 blocks passes CUDA's limit along x (2147483647)}}
  linalg.fill {neo.schedule = #neo.gpu_generic<block = 256>} ins(%c : f32) outs(%x : memref<1048576x786432xf32>)
  return
}
