// RUN: my-opt %s --my-count-neo-ops | FileCheck %s
// RUN: my-opt %s --neo-autodiff --my-count-neo-ops | FileCheck %s --check-prefix=GRAD
// RUN: my-opt %s --neo-lower-to-cpu | FileCheck %s --check-prefix=CPU

// A pass of the embedding project on neo IR, Neo's autodiff before it, and
// Neo's whole CPU pipeline down to the LLVM dialect.

// CHECK: func.func @mm({{.*}}) -> tensor<2x4xf32> attributes {my.neo_ops = 1 : i64}
// GRAD: func.func @mm({{.*}}attributes {my.neo_ops = 1 : i64}
// GRAD: func.func @mm_fwdbwd({{.*}}attributes {my.neo_ops = 3 : i64
// GRAD: func.func @mm_grad({{.*}}attributes {my.neo_ops = 2 : i64
// CPU: llvm.func @mm(
func.func @mm(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = neo.compute ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>)
         space [2, 4] sum [3]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<2x4xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<2x4xf32>
}
