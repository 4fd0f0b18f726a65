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
// rows (64 / 32 = 2 blocks) of 128 threads, tiles of q, k and v and the
// block's probabilities in shared memory (pitch 17: 16 + 1), an online
// softmax over key tiles (row max and sum across the row's 4 lanes by xor
// shuffles, the accumulator rescaled by exp(m_old - m_new)); the 64 x 128
// scores and the row statistics are never allocated.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: memref.alloc
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c2, {{.*}} = %c1, {{.*}}) threads({{.*}}) in ({{.*}} = %c128,
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
