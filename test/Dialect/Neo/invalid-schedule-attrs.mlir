// RUN: neo-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect
// The verifiers of the schedule attributes: one rule each (NeoScheduleRules),
// absurd values (0, negative, huge) rejected, products checked without
// overflow.

// expected-error @+1 {{invalid cpu_gemm schedule: the register tile must have 1 <= mr <= 32 and nr a multiple of 8 of at most 8 vectors}}
"test.op"() {s = #neo.cpu_gemm<mr = 0, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_gemm schedule: the register tile must have 1 <= mr <= 32 and nr a multiple of 8}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = -16, mc = 128, nc = 512, kc = 256, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_gemm schedule: the register tile needs more than 30 vector registers}}
"test.op"() {s = #neo.cpu_gemm<mr = 16, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>} : () -> ()

// -----

// mc * kc overflows int64: rejected by the bounds before any product.
// expected-error @+1 {{invalid cpu_gemm schedule: cache blocks must be between 1 and 16777216}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = 32, mc = 4611686018427387904, nc = 512, kc = 4611686018427387904, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_gemm schedule: cache blocks are too large}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = 32, mc = 65536, nc = 512, kc = 65536, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_gemm schedule: cache blocks must be positive multiples of the register tile}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = 32, mc = 100, nc = 512, kc = 256, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_gemm schedule: threads must be between 1 and 256}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 0>} : () -> ()

// -----

// expected-error @+1 {{expected ','}}
"test.op"() {s = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_generic schedule: vector must be between 1 and 64}}
"test.op"() {s = #neo.cpu_generic<vector = 0, threads = 2>} : () -> ()

// -----

// expected-error @+1 {{invalid cpu_generic schedule: threads must be between 1 and 256}}
"test.op"() {s = #neo.cpu_generic<vector = 16, threads = 9223372036854775807>} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: bm, bn (at most 256) and bk (at most 64) must be powers of two}}
"test.op"() {s = #neo.gpu_gemm<bm = 96, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto">} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: the SIMT tile needs tm, tn in {4, 8, 12, 16}}}
"test.op"() {s = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 0, tn = 8, wm = 64, wn = 32, mma = "auto">} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: the warp tile needs wm, wn multiples of 16 of at most 256}}
"test.op"() {s = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 0, wn = 32, mma = "auto">} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: mma must be "none", "tf32", "wgmma" or "auto"}}
"test.op"() {s = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "fp8">} : () -> ()

// -----

// A warpgroup-MMA schedule reads a 128-byte swizzle row of k per tile (64
// halves; 32 floats as tf32) and 64 m per warpgroup.
// expected-error @+1 {{invalid gpu_gemm schedule: mma = "wgmma" needs bk = 64 (32 for tf32: a 128-byte row of k), wm = 64 dividing bm, wn a multiple of 64 dividing bn}}
"test.op"() {s = #neo.gpu_gemm<bm = 128, bn = 128, bk = 16, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: mma = "wgmma" needs bk = 64 (32 for tf32: a 128-byte row of k), wm = 64 dividing bm, wn a multiple of 64 dividing bn, at most 1024 threads}}
"test.op"() {s = #neo.gpu_gemm<bm = 256, bn = 256, bk = 64, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_gemm schedule: min_blocks must be between 0 and 2^31}}
"test.op"() {s = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto", min_blocks = -1>} : () -> ()

// -----

// expected-error @+1 {{invalid gpu_generic schedule: the block size must be a multiple of 32 between 32 and 1024}}
"test.op"() {s = #neo.gpu_generic<block = 100>} : () -> ()

// -----

// expected-error @+1 {{duplicate or unknown struct parameter name: bz}}
"test.op"() {s = #neo.gpu_generic<bz = 100>} : () -> ()
