// RUN: neo-opt %s -split-input-file --neo-autodiff -verify-diagnostics

// Found by neo-options-fuzzer: a generated function whose name the module
// already has (there from an earlier run, as in `neo-autodiff,neo-autodiff`)
// made IR with the name twice instead of an error.

// expected-error @+1 {{neo-autodiff: a function named 'f_fwdbwd' already exists}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    %e = math.exp %v : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}
func.func private @f_fwdbwd(tensor<4xf32>) -> tensor<4xf32>
