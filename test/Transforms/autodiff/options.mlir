// RUN: neo-opt %s --neo-autodiff="function=f wrt=1 grad-name=df combined-name=f_both" | FileCheck %s
// RUN: not neo-opt %s --neo-autodiff="function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not neo-opt %s --neo-autodiff="function=f wrt=5" 2>&1 | FileCheck %s --check-prefix=NOARG

// Only the second argument is differentiated; the first function is left alone.
// CHECK-LABEL: func.func @f_both
// CHECK-SAME: -> (tensor<4xf32> {neo.name = "result0"}, tensor<4xf32> {neo.name = "darg1"})
// CHECK-LABEL: func.func @df
// CHECK-SAME: -> (tensor<4xf32> {neo.name = "darg1"})
// CHECK-NOT: func.func @g_grad
// NOFUNC: error: neo-autodiff: no function named 'nope'
// NOARG: error: neo-autodiff: argument #5 does not exist (the function has 2 arguments)
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x, %y : tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4xf32>
}
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
