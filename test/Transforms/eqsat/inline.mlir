// RUN: neo-opt %s --neo-eqsat-fuse | FileCheck %s
// RUN: neo-opt %s --neo-eqsat-fuse | neo-run - --function chain --check | FileCheck %s --check-prefix=EXEC

// An elementwise chain (transpose, exp, scale) becomes one kernel reading x.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[R:.*]] = neo.compute ins(%[[X]] : tensor<4x8xf32>) space [8, 4] maps [#{{.*}}] -> tensor<8x4xf32>
// CHECK: math.exp
// CHECK: arith.mulf
// CHECK-NOT: neo.compute
// CHECK: return %[[R]]
// EXEC: check {{.*}}: ok
func.func @chain(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  %t = neo.compute ins(%x : tensor<4x8xf32>) space [8, 4] maps [affine_map<(i, j) -> (j, i)>] -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %e = neo.compute ins(%t : tensor<8x4xf32>) space [8, 4] maps [affine_map<(i, j) -> (i, j)>] -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    neo.yield %r : f32
  }
  %s = neo.compute ins(%e : tensor<8x4xf32>) space [8, 4] maps [affine_map<(i, j) -> (i, j)>] -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    %c = arith.constant 2.0 : f32
    %r = arith.mulf %v, %c : f32
    neo.yield %r : f32
  }
  return %s : tensor<8x4xf32>
}
