// The PTX pipeline's phases, from neo IR to a gpu.binary and a host function
// of launches with constant sizes.
// RUN: neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{stop-after=outline})' | FileCheck %s --check-prefix=OUTLINE
// RUN: neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx)' | FileCheck %s --check-prefix=PTX
// RUN: neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{chip=sm_80 features=+ptx75})' | FileCheck %s --check-prefix=SM80
// OUTLINE-LABEL: func.func @f(
// OUTLINE-SAME: memref<64x32xf32>
// OUTLINE: gpu.launch_func @neo_kernels::@f_kernel blocks in
// OUTLINE: gpu.launch_func @neo_kernels::@f_kernel_0 blocks in
// OUTLINE: gpu.module @neo_kernels [#nvvm.target<O = 3, chip = "sm_90">]
// OUTLINE: gpu.func @f_kernel(
// OUTLINE-SAME: kernel
// PTX: gpu.binary @neo_kernels
// PTX-SAME: .target sm_90
// PTX-SAME: .visible .entry f_kernel(
// SM80: .target sm_80
func.func @f(%x: tensor<64x32xf32> {neo.name = "x"}) -> (tensor<64xf32> {neo.name = "s"}) {
  %0 = neo.compute ins(%x : tensor<64x32xf32>) space [64] sum [32]
      maps [affine_map<(i, j) -> (i, j)>] -> tensor<64xf32> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    neo.yield %t : f32
  }
  return %0 : tensor<64xf32>
}
