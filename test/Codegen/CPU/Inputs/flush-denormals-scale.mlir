// A function for flush-denormals.mlir's pipeline checks.
#map = affine_map<(d0) -> (d0)>
module {
  func.func @scale(%arg0: tensor<16xf32> {neo.name = "x"}) -> (tensor<16xf32> {neo.name = "y"}) {
    %0 = neo.compute ins(%arg0 : tensor<16xf32>) space [16] maps [#map] -> tensor<16xf32> {
    ^bb0(%in: f32):
      %cst = arith.constant 2.000000e+00 : f32
      %1 = arith.mulf %cst, %in : f32
      neo.yield %1 : f32
    }
    return %0 : tensor<16xf32>
  }
}
