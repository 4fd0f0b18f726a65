// The SMs of the target GPU (sm-count; H100 SXM and H200: 132, the default)
// steer the planners, never the results: the default GEMM schedule's
// min_blocks (twice the SMs), the K split of a GEMM with few blocks, and
// the wgmma tiles (the largest that give every SM a block). A 2048 x 2048
// bf16 GEMM has 128 blocks of 128 x 256: enough for 114 SMs (H100 PCIe),
// not for 132, which take 128 x 128 (256 blocks).
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a}))' | FileCheck %s --check-prefix=SM132
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a sm-count=114}))' | FileCheck %s --check-prefix=SM114
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{sm-count=114 min-blocks=0}))' | FileCheck %s --check-prefix=NOADAPT
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a},neo-gpu-map))' | FileCheck %s --check-prefix=MAP132
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a sm-count=114},neo-gpu-map{sm-count=114}))' | FileCheck %s --check-prefix=MAP114
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{sm-count=16},neo-gpu-map{sm-count=16}))' | FileCheck %s --check-prefix=MAP16
// Bad counts are errors before any IR is printed.
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{sm-count=0}))' 2>&1 | FileCheck %s --check-prefix=BADSELECT
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{min-blocks=-2}))' 2>&1 | FileCheck %s --check-prefix=BADMIN
// RUN: not neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-map{sm-count=-1}))' 2>&1 | FileCheck %s --check-prefix=BADMAP
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{sm-count=65537})' 2>&1 | FileCheck %s --check-prefix=BADHUGE
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-eqsat-fuse{target=gpu sm-count=0})' 2>&1 | FileCheck %s --check-prefix=BADFUSE
// BADSELECT: neo-gpu-select-schedules: sm-count must be between 1 and 65536, not 0
// BADSELECT-NOT: func.func
// BADMIN: neo-gpu-select-schedules: min-blocks must be -1 (twice sm-count), 0 (never adapt) or positive, not -2
// BADMAP: neo-gpu-map: sm-count must be between 1 and 65536, not -1
// BADMAP-NOT: func.func
// BADHUGE: neo-lower-to-ptx: sm-count must be between 1 and 65536, not 65537
// BADHUGE-NOT: func.func
// BADFUSE: neo-eqsat-fuse: sm-count must be between 1 and 65536, not 0

// SM132-LABEL: func.func @bf16
// SM132: #neo.gpu_gemm<bm = 128, bn = 128, bk = 64, tm = 8, tn = 8, wm = 64, wn = 128, mma = "wgmma">
// SM114-LABEL: func.func @bf16
// SM114: #neo.gpu_gemm<bm = 128, bn = 256, bk = 64, tm = 8, tn = 8, wm = 64, wn = 256, mma = "wgmma">
// MAP132-LABEL: func.func @bf16
// MAP132: gpu.launch blocks({{.*}}) in ({{.*}} = %c16{{.*}}, {{.*}} = %c16{{.*}}, {{.*}} = %c1{{.*}})
// MAP114-LABEL: func.func @bf16
// MAP114: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c16{{.*}}, {{.*}} = %c1{{.*}})
func.func @bf16(%a: memref<2048x64xbf16>, %b: memref<64x2048xbf16>, %c: memref<2048x2048xf32>) {
  linalg.matmul ins(%a, %b : memref<2048x64xbf16>, memref<64x2048xbf16>) outs(%c : memref<2048x2048xf32>)
  return
}

// -----

// An f32 GEMM of 32 blocks with a long K: split in ceil(2 x SMs / 32) parts
// over grid z (9 for 132 SMs, 8 for 114), none when the blocks fill 16 SMs
// twice; never with min-blocks=0.
// SM132-LABEL: func.func @long_k
// SM132: min_blocks = 264
// SM114-LABEL: func.func @long_k
// SM114: min_blocks = 228
// NOADAPT-LABEL: func.func @long_k
// NOADAPT-NOT: min_blocks
// NOADAPT: return
// MAP132-LABEL: func.func @long_k
// MAP132: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c9{{.*}})
// MAP114-LABEL: func.func @long_k
// MAP114: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c8{{.*}})
// MAP16-LABEL: func.func @long_k
// MAP16: gpu.launch blocks({{.*}}) in ({{.*}} = %c8{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}})
func.func @long_k(%a: memref<256x16384xf32>, %b: memref<16384x256xf32>, %c: memref<256x256xf32>) {
  linalg.matmul ins(%a, %b : memref<256x16384xf32>, memref<16384x256xf32>) outs(%c : memref<256x256xf32>)
  return
}
