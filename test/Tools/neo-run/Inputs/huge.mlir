// 2^40 x 2^40 elements: the element count overflows int64.
func.func @f(%a: tensor<1099511627776x1099511627776xf32>) -> tensor<1099511627776x1099511627776xf32> {
  return %a : tensor<1099511627776x1099511627776xf32>
}
