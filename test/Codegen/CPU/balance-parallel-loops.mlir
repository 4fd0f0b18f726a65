// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops | FileCheck %s
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="min-chunks=0" | FileCheck %s --check-prefix=NONE
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="threads=1" | FileCheck %s --check-prefix=NONE
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="min-chunks=8" | FileCheck %s --check-prefix=EIGHT
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="min-work=1" | FileCheck %s --check-prefix=ONE
// RUN: not neo-opt %s --neo-balance-parallel-loops="min-chunks=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not neo-opt %s --neo-balance-parallel-loops="min-work=0" 2>&1 | FileCheck %s --check-prefix=BADWORK
// RUN: not neo-opt %s --neo-balance-parallel-loops="max-chunks=0" 2>&1 | FileCheck %s --check-prefix=BADMAX
// RUN: neo-opt %s --convert-scf-to-openmp --neo-balance-parallel-loops="max-chunks=100000" | FileCheck %s --check-prefix=MANY
// Worksharing loops with at least min-chunks chunks per thread (2 x 2
// threads by default), or bounds only known at run time, take their
// iterations dynamically, in chunks of at least min-work (32768) estimated
// operations; fewer chunks stay static.

// A call per iteration (a shared GEMM routine): a chunk is one iteration.
// CHECK-LABEL: func.func @blocks(
// CHECK: omp.wsloop schedule(dynamic) {
// EIGHT-LABEL: func.func @blocks(
// EIGHT: omp.wsloop {
func.func private @gemm(index)
func.func @blocks(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    func.call @gemm(%i) : (index) -> ()
    scf.reduce
  }
  return
}

// One tile per thread stays static.
// CHECK-LABEL: func.func @tiles(
// CHECK: omp.wsloop {
func.func @tiles(%m: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    func.call @gemm(%i) : (index) -> ()
    scf.reduce
  }
  return
}

// 64 rows of 128 vector steps of 4 operations (with the yield; 513 with the
// row's own yield): a chunk is 64 rows, one chunk in all, so the loop stays
// static. With min-work=1, every row is a chunk.
// CHECK-LABEL: func.func @rows(
// CHECK: omp.wsloop {
// ONE-LABEL: func.func @rows(
// ONE: omp.wsloop schedule(dynamic) {
func.func @rows(%m: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %z = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : vector<8xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %j = %c0 to %c1024 step %c8 {
      %v = vector.transfer_read %m[%i, %j], %z : memref<64x1024xf32>, vector<8xf32>
      %w = arith.mulf %v, %two : vector<8xf32>
      vector.transfer_write %w, %m[%i, %j] : vector<8xf32>, memref<64x1024xf32>
    }
    scf.reduce
  }
  return
}

// 4096 such rows: 64 chunks of 64 rows, handed out dynamically.
// CHECK-LABEL: func.func @many_rows(
// CHECK: %[[C:.+]] = arith.constant 64 : i32
// CHECK: omp.wsloop schedule(dynamic = %[[C]] : i32) {
func.func @many_rows(%m: memref<4096x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c4096 = arith.constant 4096 : index
  %c1024 = arith.constant 1024 : index
  %z = arith.constant 0.0 : f32
  %two = arith.constant dense<2.0> : vector<8xf32>
  scf.parallel (%i) = (%c0) to (%c4096) step (%c1) {
    scf.for %j = %c0 to %c1024 step %c8 {
      %v = vector.transfer_read %m[%i, %j], %z : memref<4096x1024xf32>, vector<8xf32>
      %w = arith.mulf %v, %two : vector<8xf32>
      vector.transfer_write %w, %m[%i, %j] : vector<8xf32>, memref<4096x1024xf32>
    }
    scf.reduce
  }
  return
}

// Bounds known at run time: balanced, in chunks of min-work operations (a
// store in the lowering's alloca scope, its terminator and the yield: 8192
// iterations).
// CHECK-LABEL: func.func @unknown(
// CHECK: %[[C:.+]] = arith.constant 8192 : i32
// CHECK: omp.wsloop schedule(dynamic = %[[C]] : i32) {
// EIGHT-LABEL: func.func @unknown(
// EIGHT: omp.wsloop schedule(dynamic
// NONE-NOT: schedule(dynamic)
func.func @unknown(%m: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %m[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
// BAD: neo-balance-parallel-loops: min-chunks must be >= 0, threads >= 1 and min-work >= 1, got -1, 2 and 32768
// BADWORK: neo-balance-parallel-loops: min-chunks must be >= 0, threads >= 1 and min-work >= 1, got 2, 2 and 0
// BADMAX: neo-balance-parallel-loops: max-chunks must be >= 1, got 0

// A row whose inner loop has bounds known only at run time (a CSR row's
// nonzeros: rowptr[i] .. rowptr[i + 1]) counts that loop as 16 trips of its
// body, not as a whole chunk: 16 x 3 operations (load, add, yield) and
// the row's own make 55 a row, so min-work takes 596 rows a chunk. (Counted
// as min-work, each row was a chunk: 100k runtime calls for a 100k-row
// SpMM.) And at most max-chunks (64) chunks per thread: 782 rows a chunk.
// CHECK-LABEL: func.func @csr_rows(
// CHECK: %[[C:.+]] = arith.constant 782 : i32
// MANY-LABEL: func.func @csr_rows(
// MANY: arith.constant 596 : i32
// CHECK: omp.wsloop schedule(dynamic = %[[C]] : i32) {
func.func @csr_rows(%rowptr: memref<100001xindex>, %val: memref<?xf32>, %y: memref<100000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 100000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%rows) step (%c1) {
    %lo = memref.load %rowptr[%i] : memref<100001xindex>
    %i1 = arith.addi %i, %c1 : index
    %hi = memref.load %rowptr[%i1] : memref<100001xindex>
    %s = scf.for %e = %lo to %hi step %c1 iter_args(%acc = %zero) -> f32 {
      %v = memref.load %val[%e] : memref<?xf32>
      %a = arith.addf %acc, %v : f32
      scf.yield %a : f32
    }
    memref.store %s, %y[%i] : memref<100000xf32>
    scf.reduce
  }
  return
}
