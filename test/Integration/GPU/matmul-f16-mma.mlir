// f16 products accumulated in f32 take tensor cores by default.
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t --bundle-reference none > /dev/null
// RUN: FileCheck %s < %t/kernels.ptx
// CHECK: wmma.load.a.sync.aligned.row.m16n16k16.shared.f16
// CHECK: wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
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
