// f32 contractions with mma=wgmma run as tf32. Extents multiples of a tile:
// the wgmma GEMM kernel (k tiles of 32 floats). K-major operands (A·Bᵀ) go
// by 16-byte copies of 4 floats as they lie; MN-major ones (B stored k by
// n, A stored k by m) are transposed by the threads: 16-byte loads of 4
// floats along n (m) from 4 k rows, 16-byte stores of 4 k into the
// swizzled K-major rows that tf32 wgmma reads, stored after the wgmmas of
// the tile before theirs, loaded an iteration earlier. A ragged n: the implicit kernel (float by float, K-major in
// shared memory). Tiles that leave SMs idle on a K of 512 or more: the
// implicit kernel too, which splits K (the GEMM kernel does not).
// mma=tf32 takes no wgmma for contractions.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a mma=wgmma}))' | FileCheck %s --check-prefix=SEL
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a mma=wgmma},neo-gpu-map))' | FileCheck %s --check-prefix=MAP
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_90a mma=tf32},neo-gpu-map))' | FileCheck %s --check-prefix=TF32


#a = affine_map<(i, j, k) -> (i, k)>
#bt = affine_map<(i, j, k) -> (j, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>

// SEL-LABEL: func.func @nt
// SEL: #neo.gpu_gemm<bm = 64, bn = 64, bk = 32, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">
// MAP-LABEL: func.func @nt
// MAP: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}})
// MAP: neo.kernel = "gemm_wgmma"
// MAP-NOT: gemm_implicit
// TF32-LABEL: func.func @nt
// TF32-NOT: wgmma
// TF32: neo.kernel = "gemm_
// TF32-NOT: wgmma
func.func @nt(%x: memref<256x96xf32>, %y: memref<192x96xf32>, %z: memref<256x192xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<256x96xf32>, memref<192x96xf32>) outs(%z : memref<256x192xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#bt = affine_map<(i, j, k) -> (j, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>

// B transposed: per k tile, after the wgmmas are committed and before the
// wait that leaves them in flight, the 16-byte shared stores of B's tile
// from the registers that the iteration before loaded, then the 16-byte
// global loads of the tile after it, carried by the loop.
// SEL-LABEL: func.func @nn
// SEL: #neo.gpu_gemm<bm = 64, bn = 64, bk = 32, tm = 8, tn = 8, wm = 64, wn = 64, mma = "wgmma">
// MAP-LABEL: func.func @nn
// MAP: gpu.launch blocks({{.*}}) in ({{.*}} = %c3{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c1{{.*}})
// MAP: vector.load {{.*}} {alignment = 16 : i64} : memref<18432xf32>, vector<4xf32>
// MAP: scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<{{.*}}>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>)
// MAP: nvvm.fence.proxy
// MAP: gpu.barrier
// MAP: nvvm.wgmma.commit.group.sync.aligned
// MAP: nvgpu.device_async_copy
// MAP-NOT: vector.load
// MAP: vector.from_elements
// MAP: vector.store {{.*}} {alignment = 16 : i64} : memref<{{.*}}xf32, #gpu.address_space<workgroup>>, vector<4xf32>
// MAP: nvvm.cp.async.commit.group
// MAP: vector.load {{.*}} {alignment = 16 : i64} : memref<18432xf32>, vector<4xf32>
// MAP: nvvm.wgmma.wait.group.sync.aligned 1
// MAP: scf.yield {{.*}} : !llvm.struct<{{.*}}>, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>
// MAP: neo.kernel = "gemm_wgmma"
// MAP-NOT: gemm_implicit
func.func @nn(%x: memref<256x96xf32>, %y: memref<96x192xf32>, %z: memref<256x192xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<256x96xf32>, memref<96x192xf32>) outs(%z : memref<256x192xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Both transposed (a weight gradient's Aᵀ·B): no cp.async copies at all.
// SEL-LABEL: func.func @tn
// SEL: mma = "wgmma"
// MAP-LABEL: func.func @tn
// MAP-NOT: nvgpu.device_async_copy
// MAP: vector.load {{.*}} : memref<24576xf32>, vector<4xf32>
// MAP-NOT: nvgpu.device_async_copy
// MAP: vector.load {{.*}} : memref<18432xf32>, vector<4xf32>
// MAP-NOT: nvgpu.device_async_copy
// MAP: neo.kernel = "gemm_wgmma"
func.func @tn(%x: memref<96x256xf32>, %y: memref<96x192xf32>, %z: memref<256x192xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<96x256xf32>, memref<96x192xf32>) outs(%z : memref<256x192xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A ragged n (200): the implicit kernel.
// SEL-LABEL: func.func @nn_ragged
// SEL: mma = "wgmma", min_blocks = 264
// MAP-LABEL: func.func @nn_ragged
// MAP: neo.kernel = "gemm_implicit_wgmma"
func.func @nn_ragged(%x: memref<256x96xf32>, %y: memref<96x200xf32>, %z: memref<256x200xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<256x96xf32>, memref<96x200xf32>) outs(%z : memref<256x200xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

#a = affine_map<(i, j, k) -> (i, k)>
#bt = affine_map<(i, j, k) -> (j, k)>
#b = affine_map<(i, j, k) -> (k, j)>
#c = affine_map<(i, j, k) -> (i, j)>

// 8 blocks of 64 x 128 for 132 SMs: K (4096) split in 16 over grid z.
// SEL-LABEL: func.func @nt_long_k
// SEL: mma = "wgmma", min_blocks = 264
// MAP-LABEL: func.func @nt_long_k
// MAP: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}} = %c4{{.*}}, {{.*}} = %c16{{.*}})
// MAP: neo.kernel = "gemm_implicit_wgmma"
func.func @nt_long_k(%x: memref<256x4096xf32>, %y: memref<256x4096xf32>, %z: memref<256x256xf32>) {
  linalg.generic {indexing_maps = [#a, #bt, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<256x4096xf32>, memref<256x4096xf32>) outs(%z : memref<256x256xf32>) {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %r, %m : f32
    linalg.yield %s : f32
  }
  return
}
