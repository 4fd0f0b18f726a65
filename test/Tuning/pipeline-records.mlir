// The CPU pipeline passes its records to neo-tile (tuning-records=), and the
// execution engine reads them from NEO_TUNING_RECORDS; the compiled code
// still matches the interpreter, and bad or missing files only warn.
//
// RUN: neo-opt %s --pass-pipeline="builtin.module(neo-lower-to-cpu{tuning-records=%S/Inputs/records.json tuning-target=lit stop-after=schedule})" 2>/dev/null | FileCheck %s
// RUN: neo-run %s --check --pipeline-options "tuning-records=%S/Inputs/records.json tuning-target=lit" | FileCheck %s --check-prefix=EXEC
// RUN: env NEO_TUNING_RECORDS=%S/Inputs/records.json neo-run %s --check --pipeline-options "tuning-target=lit" | FileCheck %s --check-prefix=EXEC
// RUN: env NEO_TUNING_RECORDS=%S/Inputs/corrupt.json neo-run %s --check | FileCheck %s --check-prefix=EXEC
// RUN: env NEO_TUNING_RECORDS=%t.missing.json neo-run %s --check | FileCheck %s --check-prefix=EXEC
// RUN: env NEO_TUNING_RECORDS=%S/Inputs/corrupt.json neo-run %s --check 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: env NEO_TUNING_RECORDS=%S/Inputs/records.json neo-run %s --check 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN2
// WARN: neo-run: warning: {{.*}}corrupt.json: not a valid JSON file (parse error at line 4, column 1
// WARN2: neo-run: warning: {{.*}}records.json: record #2 {{.*}} has an invalid schedule
// WARN2: neo-run: warning: {{.*}}records.json: record #3 {{.*}} schedule field 'kc' is a string

// CHECK-LABEL: func.func @mm(
// CHECK-NOT: scf.parallel
// CHECK-DAG: memref.alloc() {{.*}} : memref<2x40x48xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<8x40x4xf32>
// CHECK-DAG: memref.alloc() {{.*}} : memref<4x48xf32>
// EXEC-NOT: MISMATCH
// EXEC: check C: {{.*}}: ok
func.func @mm(%a: tensor<128x96xf32> {neo.name = "A"}, %b: tensor<96x160xf32> {neo.name = "B"})
    -> (tensor<128x160xf32> {neo.name = "C"}) {
  %c = neo.compute ins(%a, %b : tensor<128x96xf32>, tensor<96x160xf32>) space [128, 160] sum [96]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<128x160xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<128x160xf32>
}
