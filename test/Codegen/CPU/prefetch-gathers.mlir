// RUN: neo-opt %s --neo-prefetch-gathers | FileCheck %s
// RUN: neo-opt %s --neo-prefetch-gathers=distance=0 | FileCheck %s --check-prefix=OFF
// RUN: not neo-opt %s --neo-prefetch-gathers=distance=-1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %python %S/../../Transforms/eqsat/Inputs/csr.py 40 300 50 %t
// RUN: neo-run %S/Inputs/gathers.neo --function spmm --input rowptr=%t.rowptr.npy --input col=%t.col.npy --check | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %S/Inputs/gathers.neo --function spmm --input rowptr=%t.rowptr.npy --input col=%t.col.npy --check --pipeline-options=threads=2 | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %S/Inputs/gathers.neo --function sddmm --input row=%t.col.npy --input col=%t.col.npy --check --pipeline-options="threads=2 prefetch-gathers=4" | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %S/Inputs/gathers.neo --function rowdot --input rowptr=%t.rowptr.npy --input col=%t.col.npy --check | FileCheck %s --check-prefix=EXEC
// (The gradient check runs the instrumented interpreter for 40 s under ASan;
// other gradchecks cover its C++ there.)
// RUN: %if !asan %{ neo-run %S/Inputs/gathers.neo --function rowdot --input rowptr=%t.rowptr.npy --input col=%t.col.npy --gradcheck | FileCheck %s --check-prefix=GRAD %}
// RUN: neo-translate --import-neo %S/Inputs/gathers.neo | neo-opt --neo-lower-to-cpu="stop-after=loops" | FileCheck %s --check-prefix=PIPE
// RUN: neo-translate --import-neo %S/Inputs/gathers.neo | neo-opt --neo-lower-to-cpu="stop-after=loops prefetch-gathers=0" | FileCheck %s --check-prefix=OFF

// SpMM's loop over a row's nonzeros: X's row col[e] is read by an inner
// loop over the features. At the top of the body: e + 16 (step 1), col read
// there clamped into col, the same clamps as the gather's row index, and a
// prefetch of each of the row's 4 lines (64 floats; the inner loop's
// offset starts at 0). val[e] (sequential) and col itself are not gathers.
// CHECK-LABEL: func.func @spmm_row
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %[[S:.*]] {
// CHECK: %[[D:.*]] = arith.muli %[[S]], %c16
// CHECK: %[[A:.*]] = arith.addi %[[E]], %[[D]]
// CHECK: %[[LO:.*]] = arith.minsi %[[A]], %c999
// CHECK: %[[I:.*]] = arith.maxsi %[[LO]], %c0
// CHECK: memref.load %arg2[%[[I]]] : memref<1000xi32>
// CHECK-COUNT-4: memref.prefetch %arg3[%{{.*}}, %{{.*}}], read, locality<3>, data : memref<50x64xf32>
// CHECK-NOT: memref.prefetch
// CHECK: memref.load %arg2[%[[E]]]
// CHECK: scf.for
// CHECK: vector.load %arg3
// OFF-NOT: memref.prefetch
// In the CPU pipeline (on by default): the SpMM prefetches X's rows (4
// lines of 64 floats), the SDDMM A's and B's (3 lines of 40 floats each).
// PIPE-LABEL: func.func @spmm
// PIPE-COUNT-4: memref.prefetch %arg3
// PIPE-LABEL: func.func @sddmm
// PIPE-COUNT-3: memref.prefetch %arg2
// PIPE-COUNT-3: memref.prefetch %arg3
// EXEC: check {{.*}}: ok
// GRAD-COUNT-2: gradcheck d{{.*}}: ok
// BAD: neo-prefetch-gathers: distance and max-lines must be >= 0
func.func @spmm_row(%lo: index, %hi: index, %col: memref<1000xi32>, %x: memref<50x64xf32>, %val: memref<1000xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c49 = arith.constant 49 : index
  %c64 = arith.constant 64 : index
  scf.for %e = %lo to %hi step %c1 {
    %raw = memref.load %col[%e] : memref<1000xi32>
    %j = arith.index_cast %raw : i32 to index
    %j0 = arith.maxsi %j, %c0 : index
    %j1 = arith.minsi %j0, %c49 : index
    %v = memref.load %val[%e] : memref<1000xf32>
    %vv = vector.broadcast %v : f32 to vector<16xf32>
    scf.for %f = %c0 to %c64 step %c16 {
      %row = vector.load %x[%j1, %f] : memref<50x64xf32>, vector<16xf32>
      %acc = vector.load %out[%f] : memref<64xf32>, vector<16xf32>
      %p = arith.mulf %row, %vv : vector<16xf32>
      %s = arith.addf %acc, %p : vector<16xf32>
      vector.store %s, %out[%f] : memref<64xf32>, vector<16xf32>
    }
  }
  return
}

// A scalar lookup through token ids in a parallel loop: one line.
// CHECK-LABEL: func.func @lookup
// CHECK: scf.parallel
// CHECK: memref.load %arg0[
// CHECK-COUNT-1: memref.prefetch %arg1[
// CHECK-NOT: memref.prefetch
// CHECK: scf.reduce
func.func @lookup(%tok: memref<256xi64>, %e: memref<1000x3xf32>, %y: memref<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%n) = (%c0) to (%c256) step (%c1) {
    %t = memref.load %tok[%n] : memref<256xi64>
    %i = arith.index_cast %t : i64 to index
    %v = memref.load %e[%i, %c2] : memref<1000x3xf32>
    memref.store %v, %y[%n] : memref<256xf32>
    scf.reduce
  }
  return
}

// Reads at the loop's variable or at values computed without a load are
// not gathers: nothing to prefetch.
// CHECK-LABEL: func.func @dense
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @dense(%x: memref<100x8xf32>, %y: memref<100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c33 = arith.constant 33 : index
  scf.for %i = %c0 to %c33 step %c1 {
    %k = arith.muli %i, %c3 : index
    %v = memref.load %x[%k, %c1] : memref<100x8xf32>
    memref.store %v, %y[%i] : memref<100xf32>
  }
  return
}

// A generated kernel's table of offsets (`index` elements: an implicit
// GEMM's taps) addresses rows the hardware prefetchers follow: only i32/i64
// buffers, a program's index tensors, make gathers.
// CHECK-LABEL: func.func @offset_table
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @offset_table(%taps: memref<576xindex>, %x: memref<100000xf32>, %y: memref<576xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c576 = arith.constant 576 : index
  scf.for %k = %c0 to %c576 step %c1 {
    %o = memref.load %taps[%k] : memref<576xindex>
    %v = memref.load %x[%o] : memref<100000xf32>
    memref.store %v, %y[%k] : memref<576xf32>
  }
  return
}
