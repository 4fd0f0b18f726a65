// RUN: neo-opt %s -split-input-file --neo-autodiff -verify-diagnostics

func.func @no_rule(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'math.atan' op has no derivative rule: attach ScalarDifferentiableOpInterface to differentiate through it}}
    %e = math.atan %v : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @call(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'func.call' op cannot be differentiated by neo-autodiff}}
  %0 = func.call @external(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
