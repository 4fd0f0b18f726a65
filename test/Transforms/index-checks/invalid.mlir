// RUN: neo-opt %s --neo-index-checks -verify-diagnostics --allow-unregistered-dialect
// Index tensors must be function arguments: a check function has only them.
func.func @fused(%e: tensor<10x4xf32>, %tok: tensor<6xi32>) -> tensor<6x4xf32> {
  %r = "test.make_index"() : () -> tensor<6xi32>
  // expected-error @+1 {{'neo.compute' op reads index values from a tensor that is not an argument of '@fused': its indices cannot be checked at run time}}
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%r : tensor<6xi32>) space [6, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         checked [0] -> tensor<6x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<6x4xf32>
}
