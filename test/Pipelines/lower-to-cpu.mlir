// RUN: neo-opt %s --pass-pipeline="builtin.module(neo-lower-to-cpu{stop-after=bufferize})" | FileCheck %s --check-prefix=BUF
// RUN: neo-opt %s --neo-lower-to-cpu | FileCheck %s --check-prefix=LLVM

// Results become out-params written in place; inputs are read-only memrefs.
// BUF-LABEL: func.func @softmax
// BUF-SAME: (%{{.*}}: memref<4x8xf32>, %{{.*}}: memref<4x8xf32>)
// BUF-NOT: memref.copy
// BUF: return
// LLVM: llvm.func @softmax(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// LLVM-NOT: neo.
// LLVM-NOT: linalg.
// LLVM-NOT: memref.
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %m = neo.compute ins(%x : tensor<4x8xf32>) space [4] max [8]
         maps [affine_map<(i, k) -> (i, k)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  %z = neo.compute ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) space [4] sum [8]
         maps [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32, %mv: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    neo.yield %e : f32
  }
  %y = neo.compute ins(%x, %m, %z : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) space [4, 8]
         maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>] -> tensor<4x8xf32> {
  ^bb0(%v: f32, %mv: f32, %zv: f32):
    %d = arith.subf %v, %mv : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %zv : f32
    neo.yield %q : f32
  }
  return %y : tensor<4x8xf32>
}
