// RUN: neo-opt %s --neo-eqsat-fuse="rules=broadcast" | FileCheck %s
// RUN: neo-opt %s --neo-eqsat-fuse="rules=broadcast" | neo-run - --check | FileCheck %s --check-prefix=EXEC
// A sum over a dim the body does not read is a product by its extent.
// CHECK-LABEL: func.func @bsum
// CHECK: neo.compute ins(%{{.*}} : tensor<8xf32>) space [8] maps [#{{.*}}] -> tensor<8xf32>
// CHECK: arith.constant 3.200000e+01 : f32
// CHECK: arith.mulf
// EXEC: check {{.*}}: ok
func.func @bsum(%b: tensor<8xf32>) -> tensor<8xf32> {
  %s = neo.compute ins(%b : tensor<8xf32>) space [8] sum [32] maps [affine_map<(i, k) -> (i)>] -> tensor<8xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %s : tensor<8xf32>
}
