// RUN: neo-opt %s --neo-autodiff="gather=false" -verify-diagnostics | FileCheck %s
// With gather=false every read takes the dense scatter form: the adjoint
// iterates over the whole forward space per index and keeps the points where
// the index equation holds, and a remark names the op.

// CHECK-LABEL: func.func @shift_grad
// CHECK: neo.compute ins(%{{.*}}, %{{.*}} : tensor<6xf32>, tensor<4xf32>) space [6] sum [4] maps [#{{.*}}, #{{.*}}] where #{{.*}} -> tensor<6xf32>
func.func @shift(%x: tensor<6xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{the gradient of read #0 of this op uses the scatter form: its index map was not inverted}}
  %0 = neo.compute ins(%x : tensor<6xf32>) space [4] maps [affine_map<(i) -> (i + 2)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}
