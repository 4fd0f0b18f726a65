// RUN: neo-opt %s --allow-unregistered-dialect | neo-opt --allow-unregistered-dialect | FileCheck %s
// RUN: neo-opt %s --allow-unregistered-dialect --mlir-print-op-generic | neo-opt --allow-unregistered-dialect | FileCheck %s
// Round trip of the typed schedule attributes.

// CHECK-LABEL: func.func @schedules
// CHECK: "test.op"() {a = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>
// CHECK-SAME: b = #neo.cpu_generic<vector = 16, threads = 2>
// CHECK-SAME: c = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto">
// CHECK-SAME: d = #neo.gpu_gemm<bm = 64, bn = 32, bk = 16, tm = 4, tn = 4, wm = 16, wn = 16, mma = "tf32", min_blocks = 264>
// CHECK-SAME: e = #neo.gpu_generic<block = 256>
// CHECK-SAME: f = #neo.cpu_gemm<mr = 4, nr = 24, mc = 8, nc = 48, kc = 1, threads = 1>
func.func @schedules() {
  "test.op"() {a = #neo.cpu_gemm<mr = 8, nr = 32, mc = 128, nc = 512, kc = 256, threads = 2>,
               b = #neo.cpu_generic<vector = 16, threads = 2>,
               c = #neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32, mma = "auto">,
               d = #neo.gpu_gemm<bm = 64, bn = 32, bk = 16, tm = 4, tn = 4, wm = 16, wn = 16, mma = "tf32", min_blocks = 264>,
               e = #neo.gpu_generic<block = 256>,
               f = #neo.cpu_gemm<mr = 4, nr = 24, mc = 8, nc = 48, kc = 1, threads = 1>} : () -> ()
  return
}

// As the schedule of a linalg op.
// CHECK-LABEL: func.func @on_linalg
// CHECK: linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
func.func @on_linalg(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
      ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}
