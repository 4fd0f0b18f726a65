// RUN: neo-opt %s -split-input-file -verify-diagnostics
// Huge shapes are verifier errors (docs/errors.md): a tensor of a neo op has
// at most 2^40 elements and an iteration space at most 2^62 points, so that
// no size, byte count or FLOP count overflows int64 later on.

func.func @huge_read(%a: tensor<1099511627776x1099511627776xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.compute' op operand #0 of type 'tensor<1099511627776x1099511627776xf32>' has more than 2^40 elements}}
  %0 = neo.compute ins(%a : tensor<1099511627776x1099511627776xf32>) space [4]
         maps [affine_map<(i) -> (i, i)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @huge_result() -> tensor<2199023255552xf32> {
  // expected-error @+1 {{'neo.compute' op result #0 of type 'tensor<2199023255552xf32>' has more than 2^40 elements}}
  %0 = neo.compute space [2199023255552] maps [] -> tensor<2199023255552xf32> {
    %c = arith.constant 1.0 : f32
    neo.yield %c : f32
  }
  return %0 : tensor<2199023255552xf32>
}

// -----

func.func @huge_space() -> tensor<1099511627776xf32> {
  // expected-error @+1 {{'neo.compute' op iteration space [1099511627776, 1099511627776, 4096] has more than 2^62 points}}
  %0 = neo.compute space [1099511627776] sum [1099511627776, 4096] maps [] -> tensor<1099511627776xf32> {
    %c = arith.constant 1.0 : f32
    neo.yield %c : f32
  }
  return %0 : tensor<1099511627776xf32>
}

// -----

func.func @huge_constant() -> tensor<2199023255552xf32> {
  // expected-error @+1 {{'neo.constant' op result #0 of type 'tensor<2199023255552xf32>' has more than 2^40 elements}}
  %0 = neo.constant dense<1.0> : tensor<2199023255552xf32>
  return %0 : tensor<2199023255552xf32>
}

// -----

func.func @huge_fused(%a: tensor<2199023255552xf32>) -> tensor<2199023255552xf32> {
  // expected-error @+1 {{'neo.fused' op operand #0 of type 'tensor<2199023255552xf32>' has more than 2^40 elements}}
  %r = neo.fused ins(%a : tensor<2199023255552xf32>) -> (tensor<2199023255552xf32>) {
  ^bb0(%x: tensor<2199023255552xf32>):
    neo.return %x : tensor<2199023255552xf32>
  }
  return %r : tensor<2199023255552xf32>
}
