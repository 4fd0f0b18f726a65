// GPU schedules from tuning records (what scripts/gpu/bench.py writes from
// the device's schedule search): a GEMM whose key has a record for the
// target takes its schedule; a record for another target, or an invalid one
// (bm = 96; mma = 4: warnings at the file), changes nothing. For
// cuda-sm_90a the record is a warpgroup-MMA schedule (mma = 3).
// RUN: neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{records=%S/Inputs/gpu-records.json}))' 2>&1 | FileCheck %s
// RUN: neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{records=%S/Inputs/gpu-records.json target=cuda-sm_80}))' 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{stop-after=gpu tuning-records=%S/Inputs/gpu-records.json})' 2>&1 | FileCheck %s --check-prefix=PIPE
// CHECK-DAG: warning: neo-gpu-select-schedules: {{.*}}gemm f32 batch=1 m=8 n=8 k=8 {{.*}}bm, bn (at most 256) and bk (at most 64) must be powers of two
// CHECK-DAG: warning: neo-gpu-select-schedules: {{.*}}mma must be 0 (auto), 1 (none), 2 (tf32) or 3 (wgmma)
// RUN: neo-opt %s --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{records=%S/Inputs/gpu-records.json target=cuda-sm_90a}))' 2>&1 | FileCheck %s --check-prefix=SM90A
// RUN: neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{chip=sm_90a stop-after=gpu tuning-records=%S/Inputs/gpu-records.json})' 2>&1 | FileCheck %s --check-prefix=PIPE90A
// CHECK-LABEL: func.func @f16
// CHECK: #neo.gpu_gemm<bm = 128, bn = 64, bk = 32, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto", stages = 4>
// SM80-LABEL: func.func @f16
// SM80: #neo.gpu_gemm<bm = 64, bn = 64, bk = 32, tm = 8, tn = 8, wm = 32, wn = 32, mma = "auto", stages = 2>
// SM90A-LABEL: func.func @f16
// SM90A: #neo.gpu_gemm<bm = 128, bn = 128, bk = 64, tm = 8, tn = 8, wm = 64, wn = 128, mma = "wgmma", stages = 3>
// PIPE90A-LABEL: func.func @f16
// PIPE90A: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// PIPE90A: neo.kernel = "gemm_wgmma"
// PIPE-LABEL: func.func @f16
// PIPE: dynamic_shared_memory_size
// PIPE: neo.kernel = "gemm_mma_sync"
func.func @f16(%a: memref<256x64xf16>, %b: memref<64x128xf16>, %c: memref<256x128xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<256x64xf16>, memref<64x128xf16>) outs(%c : memref<256x128xf32>) {
  ^bb0(%x: f16, %y: f16, %o: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
