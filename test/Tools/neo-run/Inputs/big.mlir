// 2^40 f32 elements (4 TiB): within the limits, but not in memory.
func.func @g(%a: tensor<1099511627776xf32>) -> tensor<1099511627776xf32> {
  return %a : tensor<1099511627776xf32>
}
