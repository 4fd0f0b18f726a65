// Invalid options of neo-lower-to-ptx fail (non-zero exit, no output) with a
// clear message: a zero tile used to die with SIGFPE in the GEMM kernel
// generator, an unknown format to print an error and exit 0 (issue 18).
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{gemm-tile=0 stop-after=gpu})' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{gemm-tile=128,128,8,0,8 stop-after=gpu})' 2>&1 | FileCheck %s --check-prefix=TM
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{format=bogus})' 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{sm-count=0})' 2>&1 | FileCheck %s --check-prefix=SMS
// RUN: not neo-run %s --emit-bundle %t --bundle-reference none --gpu-pipeline-options "sm-count=-4" 2>&1 | FileCheck %s --check-prefix=SMBUNDLE
// RUN: not neo-run %s --emit-bundle %t --bundle-reference none --gpu-pipeline-options "gemm-tile=0" 2>&1 | FileCheck %s --check-prefix=BUNDLE
// RUN: not neo-opt %s --pass-pipeline='builtin.module(neo-lower-to-ptx{tensor-cores=wgmma})' 2>&1 | FileCheck %s --check-prefix=WGMMA
// RUN: not neo-run %s --emit-bundle %t --bundle-reference none --gpu-pipeline-options "chip=sm_90a" --chip sm_90 2>&1 | FileCheck %s --check-prefix=CHIP
// WGMMA: tensor-cores=wgmma needs chip=sm_90a (warpgroup MMA is sm_90a's), not chip=sm_90
// WGMMA-NOT: func.func
// CHIP: the chip for ptxas (sm_90) differs from the pipeline's (chip=sm_90a
// ZERO: invalid gemm options: bm, bn (at most 256) and bk (at most 64) must be powers of two
// ZERO-NOT: func.func
// TM: invalid gemm options: the SIMT tile needs tm, tn in {4, 8, 12, 16}
// TM-NOT: func.func
// FORMAT: neo-lower-to-ptx: format must be isa, bin, fatbin, offload, llvm or empty, not 'bogus'
// FORMAT-NOT: func.func
// SMS: neo-lower-to-ptx: sm-count must be between 1 and 65536, not 0
// SMS-NOT: func.func
// SMBUNDLE: sm-count must be between 1 and 65536, not -4
// BUNDLE: invalid gemm options: bm, bn (at most 256) and bk (at most 64) must be powers of two

func.func @mm(%a: tensor<64x32xf32>, %b: tensor<32x48xf32>) -> tensor<64x48xf32> {
  %c = neo.compute ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) space [64, 48] sum [32]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<64x48xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    neo.yield %p : f32
  }
  return %c : tensor<64x48xf32>
}
