// f16 products accumulated in f32 take tensor cores by default: the
// pipelined mma.sync kernel, or with gemm-stages=1 the WMMA one.
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t --bundle-reference none > /dev/null
// RUN: FileCheck %s < %t/kernels.ptx
// RUN: rm -rf %t.wmma && neo-run %s --emit-bundle %t.wmma --bundle-reference none --gpu-pipeline-options "gemm-stages=1" > /dev/null
// RUN: FileCheck %s --check-prefix=WMMA < %t.wmma/kernels.ptx
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT: wmma
// WMMA: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// WMMA: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
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
