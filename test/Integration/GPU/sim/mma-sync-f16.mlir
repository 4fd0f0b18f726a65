// The pipelined tensor-core GEMM (cp.async stages, ldmatrix, mma.sync
// m16n8k16) on f16 operands, simulated on the CPU against the interpreter:
// K = 160 is five 32-deep tiles, so the three shared-memory stages wrap.
// gpusim runs it twice: copies complete at once (a copy that overwrites a
// tile still being read shows) and as late as the waits allow (a read
// before its wait shows).
// REQUIRES: ptxas
// RUN: rm -rf %t && neo-run %s --emit-bundle %t > /dev/null
// RUN: FileCheck %s --check-prefix=PTX < %t/kernels.ptx
// RUN: %python %S/../../../../scripts/gpu/gpusim.py --source %s --bundle %t --rtol 2e-3 --atol 1e-3 | FileCheck %s
// PTX-DAG: cp.async.cg.shared.global
// PTX-DAG: cp.async.wait_group{{[[:space:]]+}}1
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: c: 32768 elements
// CHECK: gpusim: match (eager copies
// CHECK: gpusim: match (lazy copies
func.func @g(%a: tensor<256x160xf16> {neo.name = "a"}, %b: tensor<160x128xf16> {neo.name = "b"}) -> (tensor<256x128xf32> {neo.name = "c"}) {
  %c = neo.compute ins(%a, %b : tensor<256x160xf16>, tensor<160x128xf16>) space [256, 128] sum [160]
      maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>] -> tensor<256x128xf32> {
  ^bb0(%x: f16, %y: f16):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    neo.yield %p : f32
  }
  return %c : tensor<256x128xf32>
}
