// neo-tune on a small program with a tiny budget writes records that the
// CPU pipeline then uses: the tuned matmul record replaces a slow one that
// was there before, and the generic op gets a record too.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/records_tool.py seed %t/records.json "gemm f32 batch=1 m=67 n=53 k=45 layout=mk,kn,mn" 1
// RUN: neo-opt %s --pass-pipeline="builtin.module(neo-lower-to-cpu{threads=1 tuning-records=%t/records.json stop-after=schedule})" | FileCheck %s --check-prefix=BEFORE
// RUN: neo-tune %s --time-budget 3 --trials 4 --seed 1 --target-threads 1 --records %t/records.json --quiet | FileCheck %s --check-prefix=TUNE
// RUN: neo-opt %s --pass-pipeline="builtin.module(neo-lower-to-cpu{threads=1 tuning-records=%t/records.json stop-after=schedule})" -o %t/after.mlir
// RUN: %python %S/Inputs/records_tool.py check-gemm %t/records.json "gemm f32 batch=1 m=67 n=53 k=45 layout=mk,kn,mn" 67 53 45 1 %t/after.mlir | FileCheck %s --check-prefix=AFTER
// RUN: %python %S/Inputs/records_tool.py check-generic %t/records.json "generic f32 linalg.generic loops=37x29 iterators=pp" 29 f %t/after.mlir | FileCheck %s --check-prefix=GENERIC
// RUN: env NEO_TUNING_RECORDS=%t/records.json neo-run %s --check --pipeline-options threads=1 | FileCheck %s --check-prefix=EXEC
// RUN: ls %t | FileCheck %s --check-prefix=FILES

// BEFORE-LABEL: func.func @f(
// BEFORE-DAG: memref.alloc() {{.*}} : memref<1x1x16xf32>
// BEFORE-DAG: memref.alloc() {{.*}} : memref<1x1x1xf32>
// BEFORE-DAG: memref.alloc() {{.*}} : memref<1x16xf32>

// TUNE: neo-tune: target {{.*}}/1threads, 2 tunable op signatures
// TUNE: op 1/2: gemm f32 batch=1 m=67 n=53 k=45 layout=mk,kn,mn (@f,
// The default is the host's (6x16 and kc 256 on AVX2, 8x32 and kc 512 on AVX-512).
// TUNE-NEXT: default mr={{[68]}} nr={{16|32}} mc={{96|128}} nc=512 kc={{256|512}} threads=1: {{.*}} ms ({{.*}} GFLOP/s)
// TUNE-NEXT: best {{.*}} ms
// TUNE: checked: interpreter, max abs error
// TUNE-NEXT: recorded in {{.*}}records.json
// TUNE: op 2/2: generic f32 linalg.generic loops=37x29 iterators=pp sig=
// TUNE-NEXT: default vector=16 threads=1:
// TUNE: recorded in {{.*}}records.json
// TUNE: neo-tune: done in

// AFTER: the tuned record replaced the seed
// AFTER: the schedule {{.*}} is applied
// GENERIC: the generic schedule vector={{[0-9]+}} threads=1 is applied
// EXEC-NOT: MISMATCH
// EXEC: check C: {{.*}}: ok
// EXEC: check Y: {{.*}}: ok
// Saving leaves the records and their lock, no temporary file.
// FILES: after.mlir
// FILES-NEXT: records.json
// FILES-NEXT: records.json.lock
// FILES-NOT: tmp

// Progress lines go to stderr (one per trial when it is not a terminal).
// RUN: neo-tune %s --time-budget 2 --trials 2 --target-threads 1 --function f 2>&1 >/dev/null | FileCheck %s --check-prefix=PROGRESS
// PROGRESS: warning: no --records FILE: the results are not saved
// PROGRESS: [op 1/2] trial 1/2 [mr={{[68]}} nr={{16|32}} mc={{96|128}} nc=512 kc={{256|512}} threads=1]: {{.*}} ms ({{.*}} GFLOP/s); best {{.*}} GFLOP/s {{.*}} s

func.func @f(%a: tensor<67x45xf32> {neo.name = "A"}, %b: tensor<45x53xf32> {neo.name = "B"},
             %x: tensor<37x29xf32> {neo.name = "X"})
    -> (tensor<67x53xf32> {neo.name = "C"}, tensor<37x29xf32> {neo.name = "Y"}) {
  %c = neo.compute ins(%a, %b : tensor<67x45xf32>, tensor<45x53xf32>) space [67, 53] sum [45]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<67x53xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.mulf %p, %q : f32
    neo.yield %m : f32
  }
  %y = neo.compute ins(%x : tensor<37x29xf32>) space [37, 29]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<37x29xf32> {
  ^bb0(%v: f32):
    %t = math.tanh %v : f32
    neo.yield %t : f32
  }
  return %c, %y : tensor<67x53xf32>, tensor<37x29xf32>
}
