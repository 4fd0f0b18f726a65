// RUN: neo-opt %s --neo-autodiff="wrt=1" -verify-diagnostics

// Found by neo-options-fuzzer: wrt= naming an argument that is not a tensor
// of floats (a memref of a bufferized function) failed an assertion.
// expected-error @+1 {{neo-autodiff: argument #1 is not a tensor of floats (its type is 'memref<4xf32>')}}
func.func @g(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}
