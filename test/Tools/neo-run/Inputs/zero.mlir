// A zero-sized dim in the signature of a function without neo ops.
func.func @z(%a: tensor<0x3xf32>) -> tensor<0x3xf32> {
  return %a : tensor<0x3xf32>
}
