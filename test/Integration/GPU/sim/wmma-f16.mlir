// gemm-stages=1 keeps the single-buffered WMMA kernel (m16n16k16 fragments
// through gpu.subgroup_mma_*); the simulator holds a WMMA fragment whole in
// every lane of its warp.
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t --gpu-pipeline-options "gemm-stages=1" > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: %python %S/../../../../scripts/gpu/gpusim.py --source %s --gpu-pipeline-options "gemm-stages=1" --bundle %t --rtol 2e-3 --atol 1e-3 | FileCheck %s
// PTX: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// PTX-NOT: cp.async
// CHECK: gpusim: match (eager copies
// CHECK: gpusim: match (lazy copies
func.func @g(%a: tensor<128x64xf16> {neo.name = "a"}, %b: tensor<64x128xf16> {neo.name = "b"}) -> (tensor<128x128xf32> {neo.name = "c"}) {
  %c = neo.compute ins(%a, %b : tensor<128x64xf16>, tensor<64x128xf16>) space [128, 128] sum [64]
      maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<128x128xf32> {
  ^bb0(%x: f16, %y: f16):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    neo.yield %p : f32
  }
  return %c : tensor<128x128xf32>
}
