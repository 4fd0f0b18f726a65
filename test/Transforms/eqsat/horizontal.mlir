// RUN: neo-opt %s --neo-eqsat-fuse="rules=horizontal" | FileCheck %s
// RUN: neo-opt %s --neo-eqsat-fuse="rules=horizontal" | neo-run - --function two_sums --check | FileCheck %s --check-prefix=EXEC
// Two reductions over one input with one iteration space run as one kernel.
// CHECK-LABEL: func.func @two_sums
// CHECK: %[[F:.*]]:2 = neo.fused ins(%{{.*}}, %{{.*}} : tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>)
// CHECK-COUNT-2: space [16] sum [64]
// CHECK: return %[[F]]#0, %[[F]]#1
// EXEC: check {{.*}}: ok
// EXEC: check {{.*}}: ok
func.func @two_sums(%x: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %s = neo.compute ins(%x : tensor<16x64xf32>) space [16] sum [64] maps [affine_map<(i, k) -> (i, k)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %q = neo.compute ins(%x : tensor<16x64xf32>) space [16] sum [64] maps [affine_map<(i, k) -> (i, k)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %m = arith.mulf %v, %v : f32
    neo.yield %m : f32
  }
  return %s, %q : tensor<16xf32>, tensor<16xf32>
}
