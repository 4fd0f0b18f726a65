// A function that returns one value twice: the gradient sums the two
// cotangents. It crashed in detail::accumulate (SIGSEGV) when the function
// had no neo op, so the neo dialect was not loaded when the pass built one.
// RUN: neo-opt %s --neo-autodiff="function=same" | FileCheck %s
// Compiling a function that returns one computed value twice still crashes
// upstream (promote-buffer-results-to-out-params, in Engine::compile), so
// neo-run --gradcheck checks @same alone and FileCheck the others.
// RUN: sed -n '/^func.func @same(/,/^}/p' %s > %t.same.mlir
// RUN: neo-run %t.same.mlir --gradcheck | FileCheck %s --check-prefix=GRAD
// RUN: neo-opt %s --neo-autodiff="function=square" | FileCheck %s --check-prefix=SQUARE
// RUN: neo-opt %s --neo-autodiff="function=mixed" -o %t.discard
// CHECK-LABEL: func.func @same_fwdbwd(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[D0:[a-z0-9]+]]: tensor<4xf32> {neo.name = "dresult0"}, %[[D1:[a-z0-9]+]]: tensor<4xf32> {neo.name = "dresult1"})
// CHECK: %[[DX:.*]] = neo.compute ins(%[[D0]], %[[D1]] :
// CHECK: arith.addf
// CHECK: return %[[X]], %[[X]], %[[DX]]
// SQUARE-LABEL: func.func @square_fwdbwd(
// SQUARE-SAME: %[[X:[a-z0-9]+]]: tensor<4xf32>, %[[D0:[a-z0-9]+]]: tensor<4xf32> {neo.name = "dresult0"}, %[[D1:[a-z0-9]+]]: tensor<4xf32> {neo.name = "dresult1"})
// SQUARE: %[[DY:.*]] = neo.compute ins(%[[D0]], %[[D1]] :
// SQUARE: arith.addf
// SQUARE: neo.compute ins(%[[X]], %[[DY]]
// GRAD-NOT: FAIL
// GRAD: gradcheck {{.*}}: ok
// GRAD: compiled {{.*}}: ok
func.func @same(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
func.func @square(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    neo.yield %m : f32
  }
  return %0, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func @mixed(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    neo.yield %m : f32
  }
  return %0, %x, %0 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
