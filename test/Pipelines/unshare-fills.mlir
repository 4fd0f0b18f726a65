// RUN: neo-opt %s --neo-lower-to-cpu="stop-after=bufferize" | FileCheck %s
// Two reductions of the same shape start from equal zero-filled tensors,
// which CSE merges; each gets a fill of its own before bufferization, so no
// result is copied (a shared 64 KiB init would be copied per op).
// CHECK-LABEL: func.func @two_products
// CHECK-COUNT-2: linalg.fill
// CHECK-NOT: memref.copy
// CHECK: return
func.func @two_products(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>)
    -> (tensor<128x128xf32>, tensor<128x128xf32>) {
  %0 = neo.compute ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>)
         space [128, 128] sum [128]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<128x128xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  %1 = neo.compute ins(%b, %a : tensor<128x128xf32>, tensor<128x128xf32>)
         space [128, 128] sum [128]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<128x128xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0, %1 : tensor<128x128xf32>, tensor<128x128xf32>
}
