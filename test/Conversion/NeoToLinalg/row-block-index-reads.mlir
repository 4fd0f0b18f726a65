// RUN: neo-opt %s --convert-neo-to-linalg | FileCheck %s
// RUN: %python %S/../../Transforms/eqsat/Inputs/csr.py 8 20 8 %t
// RUN: neo-run %s --function edge_softmax --input rowptr=%t.rowptr.npy --input col=%t.col.npy --check | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %s --function edge_softmax --input rowptr=%t.rowptr.npy --input col=%t.col.npy --check --pipeline-options=threads=2 | FileCheck %s --check-prefix=EXEC
// RUN: neo-run %s --function sym --check | FileCheck %s --check-prefix=EXEC2
// RUN: neo-run %s --function sym --check --pipeline-options=threads=2 | FileCheck %s --check-prefix=EXEC2
// A row-blocked kernel of ops that read index values (GAT's edge softmax
// over CSR rows, as neo-eqsat-fuse forms it): each block of 2 rows reads
// rowptr[i] and rowptr[i + 1] from two slices of the row pointers (at the
// block's first row and one after), col, t and H whole (gathers), s by row;
// the ops' loop nests over their rows are serial (scf.for: the block loop
// is the parallel one).
// CHECK-LABEL: func.func @edge_softmax
// CHECK: scf.forall (%[[B:.*]]) in (4) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<8x4xf32>)
// CHECK: %[[F:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK: tensor.extract_slice %arg2[%[[F]]] [2] [1] : tensor<8xf32> to tensor<2xf32>
// CHECK: tensor.extract_slice %arg0[%[[F]]] [2] [1] : tensor<9xi32> to tensor<2xi32>
// CHECK: %[[N:.*]] = arith.addi %[[F]], %{{.*}} : index
// CHECK: tensor.extract_slice %arg0[%[[N]]] [2] [1] : tensor<9xi32> to tensor<2xi32>
// CHECK-NOT: scf.forall
// CHECK: scf.for {{.*}} -> (tensor<2xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2xf32>)
// CHECK: scf.for {{.*}} -> (tensor<2x4xf32>)
// CHECK: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[F]], 0] [2, 4] [1, 1]
// EXEC: check Y: {{.*}}: ok
  func.func @edge_softmax(%arg0: tensor<9xi32> {neo.name = "rowptr"}, %arg1: tensor<20xi32> {neo.name = "col"}, %arg2: tensor<8xf32> {neo.name = "s"}, %arg3: tensor<8xf32> {neo.name = "t"}, %arg4: tensor<8x4xf32> {neo.name = "H"}) -> (tensor<8x4xf32> {neo.name = "Y"}) {
    %0 = neo.fused ins(%arg2, %arg3, %arg4, %arg0, %arg1 : tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>, tensor<9xi32>, tensor<20xi32>) row_block 2 -> (tensor<8x4xf32>) {
    ^bb0(%arg5: tensor<8xf32>, %arg6: tensor<8xf32>, %arg7: tensor<8x4xf32>, %arg8: tensor<9xi32>, %arg9: tensor<20xi32>):
      %1 = neo.compute ins(%arg5, %arg6 : tensor<8xf32>, tensor<8xf32>) indices(%arg8, %arg8, %arg9 : tensor<9xi32>, tensor<9xi32>, tensor<20xi32>) space [8] max [20] maps [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1)[s0, s1, s2] -> (s2)>] index_maps [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0 + 1)>, affine_map<(d0, d1) -> (d1)>] checked [1] where affine_set<(d0, d1)[s0, s1, s2] : (d1 - s0 >= 0, -d1 + s1 - 1 >= 0)> -> tensor<8xf32> {
      ^bb0(%in: f32, %in_0: f32):
        %cst = arith.constant 2.000000e-01 : f32
        %4 = arith.addf %in, %in_0 : f32
        %5 = arith.addf %in, %in_0 : f32
        %6 = arith.mulf %5, %cst : f32
        %7 = arith.maximumf %4, %6 : f32
        neo.yield %7 : f32
      }
      %2 = neo.compute ins(%arg5, %arg6, %1 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) indices(%arg8, %arg8, %arg9 : tensor<9xi32>, tensor<9xi32>, tensor<20xi32>) space [8] sum [20] maps [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1)[s0, s1, s2] -> (s2)>, affine_map<(d0, d1) -> (d0)>] index_maps [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0 + 1)>, affine_map<(d0, d1) -> (d1)>] checked [1] where affine_set<(d0, d1)[s0, s1, s2] : (d1 - s0 >= 0, -d1 + s1 - 1 >= 0)> -> tensor<8xf32> {
      ^bb0(%in: f32, %in_0: f32, %in_1: f32):
        %cst = arith.constant 2.000000e-01 : f32
        %4 = arith.addf %in, %in_0 : f32
        %5 = arith.addf %in, %in_0 : f32
        %6 = arith.mulf %5, %cst : f32
        %7 = arith.maximumf %4, %6 : f32
        %8 = arith.subf %7, %in_1 : f32
        %9 = math.exp %8 : f32
        neo.yield %9 : f32
      }
      %3 = neo.compute ins(%arg5, %arg6, %1, %2, %arg7 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4xf32>) indices(%arg8, %arg8, %arg9 : tensor<9xi32>, tensor<9xi32>, tensor<20xi32>) space [8, 4] sum [20] maps [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2)[s0, s1, s2] -> (s2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2)[s0, s1, s2] -> (s2, d1)>] index_maps [affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0 + 1)>, affine_map<(d0, d1, d2) -> (d2)>] checked [1, 4] where affine_set<(d0, d1, d2)[s0, s1, s2] : (d2 - s0 >= 0, -d2 + s1 - 1 >= 0)> -> tensor<8x4xf32> {
      ^bb0(%in: f32, %in_0: f32, %in_1: f32, %in_2: f32, %in_3: f32):
        %cst = arith.constant 2.000000e-01 : f32
        %4 = arith.addf %in, %in_0 : f32
        %5 = arith.addf %in, %in_0 : f32
        %6 = arith.mulf %5, %cst : f32
        %7 = arith.maximumf %4, %6 : f32
        %8 = arith.subf %7, %in_1 : f32
        %9 = math.exp %8 : f32
        %10 = arith.divf %9, %in_2 : f32
        %11 = arith.mulf %10, %in_3 : f32
        neo.yield %11 : f32
      }
      neo.return %3 : tensor<8x4xf32>
    }
    return %0 : tensor<8x4xf32>
  }

// One operand read by row and transposed (x[i, j] + x[j, i]): two slices of
// it, rows [F, F + 2) and columns [F, F + 2), each read by its own map.
// CHECK-LABEL: func.func @sym
// CHECK: scf.forall (%[[B:.*]]) in (4)
// CHECK: %[[F:.*]] = arith.muli %[[B]], %{{.*}} : index
// CHECK-DAG: %[[R:.*]] = tensor.extract_slice %arg0[%[[F]], 0] [2, 8] [1, 1]
// CHECK-DAG: %[[C:.*]] = tensor.extract_slice %arg0[0, %[[F]]] [8, 2] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[R]], %[[C]] : tensor<2x8xf32>, tensor<8x2xf32>)
// EXEC2: check {{.*}}: ok
func.func @sym(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = neo.fused ins(%x : tensor<8x8xf32>) row_block 2 -> (tensor<8x8xf32>) {
  ^bb0(%a: tensor<8x8xf32>):
    %s = neo.compute ins(%a, %a : tensor<8x8xf32>, tensor<8x8xf32>) space [8, 8] maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j, i)>] -> tensor<8x8xf32> {
    ^bb0(%u: f32, %v: f32):
      %w = arith.subf %u, %v : f32
      neo.yield %w : f32
    }
    %t = neo.compute ins(%s : tensor<8x8xf32>) space [8, 8] maps [affine_map<(i, j) -> (i, j)>] -> tensor<8x8xf32> {
    ^bb0(%u: f32):
      %w = math.exp %u : f32
      neo.yield %w : f32
    }
    neo.return %t : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}
