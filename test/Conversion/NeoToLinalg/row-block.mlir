// RUN: neo-opt %s --convert-neo-to-linalg | FileCheck %s
// RUN: neo-opt %s --convert-neo-to-linalg=row-blocks=false | FileCheck %s --check-prefix=INLINE
// RUN: neo-run %s --check | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %s --check --pipeline-options=threads=2 | FileCheck %s --check-prefix=EXEC
// A row-blocked kernel becomes a loop over blocks of 4 rows: x is sliced by
// row once for both ops, the bias is read whole, the row sums stay a block
// buffer, and only the result is inserted into the whole tensor.
// CHECK-LABEL: func.func @norm
// CHECK: %[[R:.*]] = scf.forall (%[[B:.*]]) in (4) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<16x32xf32>)
// CHECK: %[[F:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: %[[X:.*]] = tensor.extract_slice %{{.*}}[%[[F]], 0] [4, 32] [1, 1] : tensor<16x32xf32> to tensor<4x32xf32>
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<4x32xf32>) outs(%{{.*}} : tensor<4xf32>) attrs = {neo.serial}
// CHECK: linalg.generic {{.*}} ins(%[[X]], %{{.*}}, %{{.*}} : tensor<4x32xf32>, tensor<4xf32>, tensor<32xf32>) outs(%{{.*}} : tensor<4x32xf32>) attrs = {neo.serial}
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[F]], 0] [4, 32] [1, 1]
// CHECK: return %[[R]]
// INLINE-NOT: scf.forall
// EXEC: check {{.*}}: ok
func.func @norm(%x: tensor<16x32xf32>, %g: tensor<32xf32>) -> tensor<16x32xf32> {
  %r = neo.fused ins(%x, %g : tensor<16x32xf32>, tensor<32xf32>) row_block 4 -> (tensor<16x32xf32>) {
  ^bb0(%a: tensor<16x32xf32>, %b: tensor<32xf32>):
    %s = neo.compute ins(%a : tensor<16x32xf32>) space [16] sum [32] maps [affine_map<(i, j) -> (i, j)>] -> tensor<16xf32> {
    ^bb0(%v: f32):
      %q = arith.mulf %v, %v : f32
      neo.yield %q : f32
    }
    %y = neo.compute ins(%a, %s, %b : tensor<16x32xf32>, tensor<16xf32>, tensor<32xf32>) space [16, 32] maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>] -> tensor<16x32xf32> {
    ^bb0(%v: f32, %n: f32, %w: f32):
      %d = arith.divf %v, %n : f32
      %m = arith.mulf %d, %w : f32
      neo.yield %m : f32
    }
    neo.return %y : tensor<16x32xf32>
  }
  return %r : tensor<16x32xf32>
}
