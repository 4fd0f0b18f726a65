// RUN: neo-opt %s -split-input-file -convert-neo-to-linalg | FileCheck %s
// RUN: neo-opt %s -split-input-file -convert-neo-to-linalg="use-named-ops=false" | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @matmul
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<4x16xf32>)
// GENERIC-LABEL: func.func @matmul
// GENERIC: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = neo.compute ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) space [4, 16] sum [8]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<4x16xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
// CHECK: linalg.batch_matmul
func.func @batch_matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %0 = neo.compute ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) space [2, 4, 16] sum [8]
         maps [affine_map<(b, i, j, k) -> (b, i, k)>, affine_map<(b, i, j, k) -> (b, k, j)>] -> tensor<2x4x16xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<2x4x16xf32>
}

// -----

// A matmul with a different body stays generic.
// CHECK-LABEL: func.func @not_matmul
// CHECK-NOT: linalg.matmul
// CHECK: linalg.generic
func.func @not_matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = neo.compute ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) space [4, 16] sum [8]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<4x16xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.addf %x, %y : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4x16xf32>
}
