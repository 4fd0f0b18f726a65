// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules,neo-gpu-map))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules,neo-gpu-map{attention=false}))' | FileCheck %s --check-prefix=OFF

// Softmax attention (neo-gpu-map's attention, lib/Codegen/GPU/GpuAttention.cpp)
// as convert-neo-to-linalg and bufferization leave it without eqsat:
// s = q k^T scaled, m = max_j s, z = sum_j exp(s - m), o = sum_j exp(s - m) / z * v.
// OFF-LABEL: func.func @attention
// OFF-NOT: neo.kernel = "attention"
// OFF: return

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The four ops of softmax attention become one launch: a block per 32 query
// rows (64 / 32 = 2 blocks) of 512 threads (16 a row: 64 rows are too few
// to fill the SMs with 4), tiles of q, k and v and the
// block's probabilities in shared memory (pitch 17: 16 + 1), an online
// softmax over key tiles (row max and sum across the row's 16 lanes by xor
// shuffles, the accumulator rescaled by exp(m_old - m_new)); the 64 x 128
// scores and the row statistics are never allocated.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c512,
// CHECK-SAME: workgroup({{.*}} : memref<32x17xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x17xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x16xf32, #gpu.address_space<workgroup>>, {{.*}} : memref<32x33xf32, #gpu.address_space<workgroup>>)
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: gpu.shuffle  xor
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: gpu.shuffle  xor
// CHECK: arith.divf
// CHECK: {neo.kernel = "attention"}
// CHECK-NOT: gpu.launch
// CHECK: return
module {
  func.func @attention(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The scores are also copied out: they must be written, so the ops stay as
// they are (a GEMM, reductions and a GEMM with a prologue).
// CHECK-LABEL: func.func @scores_read
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @scores_read(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>, %arg9: memref<64x128xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    memref.copy %alloc, %arg9 : memref<64x128xf32> to memref<64x128xf32>
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The max's expression of the score is not the sum's and o's (another
// scale): not a softmax, left alone.
// CHECK-LABEL: func.func @other_phi
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @other_phi(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.mulf %in, %cst_0 : f32
      %0 = arith.maximumf %out, %s : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// o accumulates onto a nonzero fill: left alone.
// CHECK-LABEL: func.func @nonzero_init
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @nonzero_init(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_0 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// k is overwritten between the scores and o (which the fused kernel would
// read after the write): left alone.
// CHECK-LABEL: func.func @key_written
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @key_written(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg1 : memref<128x16xf32>)
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// A causal mask written in place on the scores (an elementwise op reading
// the loop indices, as without eqsat) joins the kernel: each score goes
// through it with its row and key before the softmax; a block visits only
// the key tiles up to its last row (the mask j - i > 0, GpuAttentionMask.cpp).
// CHECK-LABEL: func.func @causal
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: arith.floordivsi
// CHECK: arith.cmpi sle
// CHECK: arith.select
// CHECK: {neo.kernel = "attention", neo.key_masks = array<i64: 1, -1, 0>}
// CHECK-NOT: gpu.launch
// CHECK: return
module {
  func.func @causal(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<64x128xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %le = arith.cmpi sle, %j, %i : index
      %big = arith.constant -1.000000e+30 : f32
      %t = arith.select %le, %in, %big : f32
      linalg.yield %t : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The sum reads m before the max writes it: left alone.
// CHECK-LABEL: func.func @sum_before_max
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @sum_before_max(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// o comes before the contraction (it reads the scores uninitialized): left
// alone, without walking past o.
// CHECK-LABEL: func.func @out_before_gemm
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @out_before_gemm(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// o's fill covers half of o (the rest accumulates onto what o held): left
// alone.
// CHECK-LABEL: func.func @partial_fill
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @partial_fill(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %half = memref.subview %arg3[0, 0] [32, 16] [1, 1] : memref<64x16xf32> to memref<32x16xf32, strided<[16, 1]>>
    linalg.fill ins(%cst_1 : f32) outs(%half : memref<32x16xf32, strided<[16, 1]>>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// k is freed between the contraction and o (the kernel reads it at o):
// left alone.
// CHECK-LABEL: func.func @key_freed
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @key_freed(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    memref.dealloc %arg1 : memref<128x16xf32>
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// neo-eqsat-fuse's form: the max and the sum in a row-block loop (row views
// of s, m and z, their fills, copies of a row onto itself) join the kernel.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: scf.forall
// CHECK: gpu.launch
// CHECK: {neo.kernel = "attention"}
// CHECK-NOT: gpu.launch
// CHECK: return
module {
  func.func @rows(%arg0: memref<200x32xf32>, %arg1: memref<300x32xf32>, %arg2: memref<300x36xf32>, %arg3: memref<200x36xf32>) {
    %cst = arith.constant 2.000000e-01 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<200x300xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<200x300xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<200x32xf32>, memref<300x32xf32>) outs(%alloc : memref<200x300xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    %alloc_2 = memref.alloc() : memref<200xf32>
    %alloc_3 = memref.alloc() : memref<200xf32>
    scf.forall (%arg4) in (200) {
      %subview = memref.subview %alloc[%arg4, 0] [1, 300] [1, 1] : memref<200x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_4 = memref.subview %alloc_2[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      linalg.fill ins(%cst_0 : f32) outs(%subview_4 : memref<1xf32, strided<[1], offset: ?>>)
      linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%subview : memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_4 : memref<1xf32, strided<[1], offset: ?>>) attrs =  {neo.serial} {
      ^bb0(%in: f32, %out: f32):
        %0 = arith.mulf %in, %cst : f32
        %1 = arith.maximumf %out, %0 : f32
        linalg.yield %1 : f32
      }
      %subview_5 = memref.subview %alloc_3[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      linalg.fill ins(%cst_1 : f32) outs(%subview_5 : memref<1xf32, strided<[1], offset: ?>>)
      linalg.generic {indexing_maps = [#map4, #map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%subview_4, %subview : memref<1xf32, strided<[1], offset: ?>>, memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_5 : memref<1xf32, strided<[1], offset: ?>>) attrs =  {neo.serial} {
      ^bb0(%in: f32, %in_8: f32, %out: f32):
        %0 = arith.mulf %in_8, %cst : f32
        %1 = arith.subf %0, %in : f32
        %2 = math.exp %1 : f32
        %3 = arith.addf %out, %2 : f32
        linalg.yield %3 : f32
      }
      %subview_6 = memref.subview %alloc_2[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.copy %subview_4, %subview_6 : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32, strided<[1], offset: ?>>
      %subview_7 = memref.subview %alloc_3[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.copy %subview_5, %subview_7 : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32, strided<[1], offset: ?>>
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<200x36xf32>)
    linalg.generic {indexing_maps = [#map5, #map5, #map6, #map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc_2, %alloc_3, %arg2, %alloc : memref<200xf32>, memref<200xf32>, memref<300x36xf32>, memref<200x300xf32>) outs(%arg3 : memref<200x36xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.mulf %in_6, %cst : f32
      %1 = arith.subf %0, %in : f32
      %2 = math.exp %1 : f32
      %3 = arith.divf %2, %in_4 : f32
      %4 = arith.mulf %3, %in_5 : f32
      %5 = arith.addf %out, %4 : f32
      linalg.yield %5 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// A second fill of m's row after the max, in the loop (the sum then reads
// zero, not the max): left alone.
// CHECK-LABEL: func.func @rows_refill
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @rows_refill(%arg0: memref<200x32xf32>, %arg1: memref<300x32xf32>, %arg2: memref<300x36xf32>, %arg3: memref<200x36xf32>) {
    %cst = arith.constant 2.000000e-01 : f32
    %cst_0 = arith.constant 0xFF800000 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<200x300xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<200x300xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<200x32xf32>, memref<300x32xf32>) outs(%alloc : memref<200x300xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    %alloc_2 = memref.alloc() : memref<200xf32>
    %alloc_3 = memref.alloc() : memref<200xf32>
    scf.forall (%arg4) in (200) {
      %subview = memref.subview %alloc[%arg4, 0] [1, 300] [1, 1] : memref<200x300xf32> to memref<1x300xf32, strided<[300, 1], offset: ?>>
      %subview_4 = memref.subview %alloc_2[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      linalg.fill ins(%cst_0 : f32) outs(%subview_4 : memref<1xf32, strided<[1], offset: ?>>)
      linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%subview : memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_4 : memref<1xf32, strided<[1], offset: ?>>) attrs =  {neo.serial} {
      ^bb0(%in: f32, %out: f32):
        %0 = arith.mulf %in, %cst : f32
        %1 = arith.maximumf %out, %0 : f32
        linalg.yield %1 : f32
      }
      linalg.fill ins(%cst_1 : f32) outs(%subview_4 : memref<1xf32, strided<[1], offset: ?>>)
      %subview_5 = memref.subview %alloc_3[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      linalg.fill ins(%cst_1 : f32) outs(%subview_5 : memref<1xf32, strided<[1], offset: ?>>)
      linalg.generic {indexing_maps = [#map4, #map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%subview_4, %subview : memref<1xf32, strided<[1], offset: ?>>, memref<1x300xf32, strided<[300, 1], offset: ?>>) outs(%subview_5 : memref<1xf32, strided<[1], offset: ?>>) attrs =  {neo.serial} {
      ^bb0(%in: f32, %in_8: f32, %out: f32):
        %0 = arith.mulf %in_8, %cst : f32
        %1 = arith.subf %0, %in : f32
        %2 = math.exp %1 : f32
        %3 = arith.addf %out, %2 : f32
        linalg.yield %3 : f32
      }
      %subview_6 = memref.subview %alloc_2[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.copy %subview_4, %subview_6 : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32, strided<[1], offset: ?>>
      %subview_7 = memref.subview %alloc_3[%arg4] [1] [1] : memref<200xf32> to memref<1xf32, strided<[1], offset: ?>>
      memref.copy %subview_5, %subview_7 : memref<1xf32, strided<[1], offset: ?>> to memref<1xf32, strided<[1], offset: ?>>
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<200x36xf32>)
    linalg.generic {indexing_maps = [#map5, #map5, #map6, #map, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc_2, %alloc_3, %arg2, %alloc : memref<200xf32>, memref<200xf32>, memref<300x36xf32>, memref<200x300xf32>) outs(%arg3 : memref<200x36xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.mulf %in_6, %cst : f32
      %1 = arith.subf %0, %in : f32
      %2 = math.exp %1 : f32
      %3 = arith.divf %2, %in_4 : f32
      %4 = arith.mulf %3, %in_5 : f32
      %5 = arith.addf %out, %4 : f32
      linalg.yield %5 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// o's v is the scores buffer itself (o = p s): the kernel would read s,
// which it never writes; left alone.
// CHECK-LABEL: func.func @v_is_scores
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @v_is_scores(%arg0: memref<64x16xf32>, %arg1: memref<64x16xf32>, %arg2: memref<64x16xf32>, %arg3: memref<64x64xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x64xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x64xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<64x16xf32>) outs(%alloc : memref<64x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x64xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x64xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x64xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %alloc : memref<64x64xf32>, memref<64xf32>, memref<64xf32>, memref<64x64xf32>) outs(%arg3 : memref<64x64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The mask rewrites the scores after the max read them (the sum and o see
// masked scores, the max did not): left alone.
// CHECK-LABEL: func.func @epilogue_after_max
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @epilogue_after_max(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<64x128xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %le = arith.cmpi sle, %j, %i : index
      %big = arith.constant -1.000000e+30 : f32
      %t = arith.select %le, %in, %big : f32
      linalg.yield %t : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// An additive bias read per score (b[i, j], in the in-place op on the
// scores) joins the kernel, loaded at each score's row and key.
// CHECK-LABEL: func.func @bias
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch
// CHECK: memref.load %{{.*}} : memref<64x128xf32>
// CHECK: {neo.kernel = "attention"}
// CHECK-NOT: gpu.launch
// CHECK: return
module {
  func.func @bias(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>, %bias: memref<64x128xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%alloc, %bias : memref<64x128xf32>, memref<64x128xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %t = arith.addf %in, %b : f32
      linalg.yield %t : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}

// -----

#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d0, d1)>
#map4 = affine_map<(d0, d1) -> (d0)>
#map5 = affine_map<(d0, d1, d2) -> (d0)>
#map6 = affine_map<(d0, d1, d2) -> (d2, d1)>
// The bias is overwritten after the scores read it and before o (the
// kernel would read it at o): left alone.
// CHECK-LABEL: func.func @bias_written
// CHECK-NOT: neo.kernel = "attention"
// CHECK: return
module {
  func.func @bias_written(%arg0: memref<64x16xf32>, %arg1: memref<128x16xf32>, %arg2: memref<128x16xf32>, %arg3: memref<64x16xf32>, %bias: memref<64x128xf32>) {
    %cst = arith.constant 0xFF800000 : f32
    %cst_0 = arith.constant 2.500000e-01 : f32
    %cst_1 = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() : memref<64x128xf32>
    linalg.fill ins(%cst_1 : f32) outs(%alloc : memref<64x128xf32>)
    linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : memref<64x16xf32>, memref<128x16xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.mulf %in, %in_4 : f32
      %1 = arith.mulf %0, %cst_0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = ["parallel", "parallel"]} ins(%alloc, %bias : memref<64x128xf32>, memref<64x128xf32>) outs(%alloc : memref<64x128xf32>) {
    ^bb0(%in: f32, %b: f32, %out: f32):
      %t = arith.addf %in, %b : f32
      linalg.yield %t : f32
    }
    %alloc_2 = memref.alloc() : memref<64xf32>
    %alloc_3 = memref.alloc() : memref<64xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_3 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc : memref<64x128xf32>) outs(%alloc_3 : memref<64xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.maximumf %out, %in : f32
      linalg.yield %0 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%alloc_2 : memref<64xf32>)
    linalg.generic {indexing_maps = [#map3, #map4, #map4], iterator_types = ["parallel", "reduction"]} ins(%alloc, %alloc_3 : memref<64x128xf32>, memref<64xf32>) outs(%alloc_2 : memref<64xf32>) {
    ^bb0(%in: f32, %in_4: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.addf %out, %1 : f32
      linalg.yield %2 : f32
    }
    linalg.fill ins(%cst_1 : f32) outs(%bias : memref<64x128xf32>)
    linalg.fill ins(%cst_1 : f32) outs(%arg3 : memref<64x16xf32>)
    linalg.generic {indexing_maps = [#map, #map5, #map5, #map6, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_3, %alloc_2, %arg2 : memref<64x128xf32>, memref<64xf32>, memref<64xf32>, memref<128x16xf32>) outs(%arg3 : memref<64x16xf32>) {
    ^bb0(%in: f32, %in_4: f32, %in_5: f32, %in_6: f32, %out: f32):
      %0 = arith.subf %in, %in_4 : f32
      %1 = math.exp %0 : f32
      %2 = arith.divf %1, %in_5 : f32
      %3 = arith.mulf %2, %in_6 : f32
      %4 = arith.addf %out, %3 : f32
      linalg.yield %4 : f32
    }
    return
  }
}
