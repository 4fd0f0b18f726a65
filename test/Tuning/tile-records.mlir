// (The default schedules checked here are the AVX-512 ones: cpu=x86-64-v4.)
// neo-select-schedules takes the schedule of a contraction from tuning records when the
// op has no neo.schedule of its own; bad records are warnings, never errors.
//
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%S/Inputs/records.json target=lit},neo-tile))" 2>&1 | FileCheck %s
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%S/Inputs/records.json target=another-cpu/2threads},neo-tile))" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%S/Inputs/records.json target=nowhere},neo-tile))" 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%S/Inputs/corrupt.json target=lit},neo-tile))" 2>&1 | FileCheck %s --check-prefixes=CORRUPT,DEFAULT
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%S/Inputs/version2.json target=lit},neo-tile))" 2>&1 | FileCheck %s --check-prefixes=VERSION,DEFAULT
// RUN: neo-opt %s --pass-pipeline="builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4 records=%t.missing.json target=lit},neo-tile))" 2>&1 | FileCheck %s --check-prefixes=MISSING,DEFAULT

// The two bad records for "lit" are reported; the record for another target is not.
// CHECK-DAG: warning: neo-select-schedules: {{.*}}records.json: record #2 ('gemm f32 batch=1 m=128 n=160 k=96 layout=mk,kn,mn') has an invalid schedule: the register tile needs more than 30 vector registers; ignored
// CHECK-DAG: warning: neo-select-schedules: {{.*}}records.json: record #3 ('gemm f32 batch=1 m=128 n=160 k=96 layout=mk,kn,mn') schedule field 'kc' is a string, not an integer; ignored
// CHECK-NOT: another-cpu

// The recorded register tile (4 x 48), blocks (mc 32, nc 96, kc 40) and
// threads (1): B panels [nc/nr][kc][nr], A panels [mc/mr][kc][mr], the tile.
// CHECK-LABEL: func.func @mm(
// CHECK-NOT: scf.parallel
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x40x48xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<8x40x4xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x48xf32>
// CHECK: return

// OTHER-LABEL: func.func @mm(
// OTHER: scf.parallel
// OTHER-DAG: memref.alloc() {{.*}} : memref<2x8x16xf32>
// OTHER-DAG: memref.alloc() {{.*}} : memref<2x8x5xf32>
// OTHER-DAG: memref.alloc() {{.*}} : memref<5x16xf32>

// Without a usable record: the default schedule (8 x 32, kc clamped to k = 96,
// nc split for two threads).
// CORRUPT: warning: neo-select-schedules: {{.*}}corrupt.json: not a valid JSON file (parse error at line 4, column 1: {{.*}}); its records are ignored
// VERSION: warning: neo-select-schedules: {{.*}}version2.json: unsupported version 2 (this Neo reads version 1); the file is ignored
// MISSING: warning: neo-select-schedules: {{.*}}missing.json: cannot read the tuning records: No such file or directory
// DEFAULT-LABEL: func.func @mm(
// DEFAULT: scf.parallel
// DEFAULT-DAG: memref.alloc() {{.*}} : memref<3x96x32xf32>
// DEFAULT-DAG: memref.alloc() {{.*}} : memref<16x96x8xf32>
// DEFAULT-DAG: memref.alloc() {{.*}} : memref<8x32xf32>
func.func @mm(%a: memref<128x96xf32>, %b: memref<96x160xf32>, %c: memref<128x160xf32>) {
  linalg.matmul ins(%a, %b : memref<128x96xf32>, memref<96x160xf32>) outs(%c : memref<128x160xf32>)
  return
}

// An explicit schedule wins over the records.
// CHECK-LABEL: func.func @explicit(
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x8x16xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<8x8x2xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x16xf32>
func.func @explicit(%a: memref<128x96xf32>, %b: memref<96x160xf32>, %c: memref<128x160xf32>) {
  linalg.matmul {neo.schedule = #neo.cpu_gemm<mr = 2, nr = 16, mc = 16, nc = 32, kc = 8, threads = 1>}
      ins(%a, %b : memref<128x96xf32>, memref<96x160xf32>) outs(%c : memref<128x160xf32>)
  return
}
