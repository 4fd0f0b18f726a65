// Both operands transposed (A stored k-major, B stored n-major): the tiles
// are copied as they lie and loaded with ldmatrix .trans for A and without
// for B.
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: %python %S/../../../../scripts/gpu/gpusim.py --source %s --bundle %t --rtol 2e-3 --atol 1e-3 | FileCheck %s
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: gpusim: match (eager copies
// CHECK: gpusim: match (lazy copies
func.func @g(%a: tensor<96x128xf16> {neo.name = "at"}, %b: tensor<256x96xf16> {neo.name = "bt"}) -> (tensor<128x256xf32> {neo.name = "c"}) {
  %c = neo.compute ins(%a, %b : tensor<96x128xf16>, tensor<256x96xf16>) space [128, 256] sum [96]
      maps [affine_map<(i, j, k) -> (k, i)>, affine_map<(i, j, k) -> (j, k)>] -> tensor<128x256xf32> {
  ^bb0(%x: f16, %y: f16):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    neo.yield %p : f32
  }
  return %c : tensor<128x256xf32>
}
