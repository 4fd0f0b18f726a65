// bf16 operands, a batch of two (grid z), four cp.async stages
// (gemm-stages=4).
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t --gpu-pipeline-options "gemm-stages=4" > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: %python %S/../../../../scripts/gpu/gpusim.py --source %s --gpu-pipeline-options "gemm-stages=4" --bundle %t --rtol 1e-2 --atol 1e-2 | FileCheck %s
// PTX-DAG: cp.async.wait_group{{[[:space:]]+}}2
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: gpusim: match (eager copies
// CHECK: gpusim: match (lazy copies
func.func @g(%a: tensor<2x128x192xbf16> {neo.name = "a"}, %b: tensor<2x192x128xbf16> {neo.name = "b"}) -> (tensor<2x128x128xf32> {neo.name = "c"}) {
  %c = neo.compute ins(%a, %b : tensor<2x128x192xbf16>, tensor<2x192x128xbf16>) space [2, 128, 128] sum [192]
      maps [affine_map<(n, i, j, k) -> (n, i, k)>, affine_map<(n, i, j, k) -> (n, k, j)>] -> tensor<2x128x128xf32> {
  ^bb0(%x: bf16, %y: bf16):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %p = arith.mulf %xf, %yf : f32
    neo.yield %p : f32
  }
  return %c : tensor<2x128x128xf32>
}
