// RUN: neo-opt %s -split-input-file -neo-fuse-elementwise | FileCheck %s

// neo-fuse-elementwise fuses a linalg producer into an all-parallel consumer
// when the consumer is its only use; never into an op with reduction loops.

// exp(x) * x: one generic whose body computes the producer's value inline.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<8x16xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[X]] : tensor<8x16xf32>) outs(%[[E]] : tensor<8x16xf32>)
// CHECK: ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[EXP:.+]] = math.exp %[[IN]] : f32
// CHECK: %[[MUL:.+]] = arith.mulf %[[EXP]], %[[IN]] : f32
// CHECK: linalg.yield %[[MUL]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
#id = affine_map<(i, j) -> (i, j)>
func.func @chain(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %x : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %0 = arith.mulf %in, %in2 : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  return %b : tensor<8x16xf32>
}

// -----

// A broadcast producer fuses too (through the consumer's indexing map).
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<8x16xf32>, %[[B:.+]]: tensor<16xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[B]] : tensor<8x16xf32>, tensor<16xf32>)
// CHECK: math.exp
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @broadcast(%x: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<8x16xf32> {
  %e1 = tensor.empty() : tensor<16xf32>
  %eb = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>, affine_map<(j) -> (j)>],
                        iterator_types = ["parallel"]}
      ins(%bias : tensor<16xf32>) outs(%e1 : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<16xf32>
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (j)>, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %eb : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %b: f32, %out: f32):
    %0 = arith.addf %in, %b : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// -----

// Not into a contraction: the matmul stays a named op that neo-tile packs.
// CHECK-LABEL: func.func @into_matmul
// CHECK: %[[T:.+]] = linalg.generic
// CHECK: math.tanh
// CHECK: linalg.matmul ins(%[[T]], %{{.+}} : tensor<8x16xf32>, tensor<16x4xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func @into_matmul(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %acc: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.tanh %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %m = linalg.matmul ins(%a, %w : tensor<8x16xf32>, tensor<16x4xf32>) outs(%acc : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %m : tensor<8x4xf32>
}

// -----

// Not into a reduction generic either (it would recompute the producer for
// every reduction step).
// CHECK-LABEL: func.func @into_reduction
// CHECK: %[[T:.+]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[T]] : tensor<8x16xf32>)
// CHECK-NOT: math.exp
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @into_reduction(%x: tensor<8x16xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x16xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// A producer with a second use stays (and is not duplicated).
// CHECK-LABEL: func.func @two_uses
// CHECK: %[[A:.+]] = linalg.generic
// CHECK: math.exp
// CHECK: %[[B:.+]] = linalg.generic {{.*}} ins(%[[A]] : tensor<8x16xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.negf
// CHECK: return %[[A]], %[[B]]
#id = affine_map<(i, j) -> (i, j)>
func.func @two_uses(%x: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {
  %e = tensor.empty() : tensor<8x16xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = math.exp %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<8x16xf32>
  return %a, %b : tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

// In a row-blocked kernel (the scf.forall of convert-neo-to-linalg) the ops
// of a block fuse, and the fused result is computed in place: its init
// becomes the block's slice of the shared output instead of a tensor.empty.
// CHECK-LABEL: func.func @row_blocks
// CHECK-SAME: (%[[X:.+]]: tensor<16x32xf32>, %[[INIT:.+]]: tensor<16x32xf32>)
// CHECK: scf.forall (%[[B:.+]]) in (4) shared_outs(%[[O:.+]] = %[[INIT]])
// CHECK: %[[ROW:.+]] = arith.muli %[[B]], %{{.+}} : index
// CHECK: %[[XS:.+]] = tensor.extract_slice %[[X]][%[[ROW]], 0] [4, 32] [1, 1]
// CHECK: %[[OS:.+]] = tensor.extract_slice %[[O]][%[[ROW]], 0] [4, 32] [1, 1]
// CHECK-NOT: tensor.empty
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<4x32xf32>) outs(%[[OS]] : tensor<4x32xf32>)
// CHECK: math.exp
// CHECK: arith.negf
// CHECK-NOT: linalg.generic
// CHECK: tensor.parallel_insert_slice %[[R]] into %[[O]][%[[ROW]], 0] [4, 32] [1, 1]
#id = affine_map<(i, j) -> (i, j)>
func.func @row_blocks(%x: tensor<16x32xf32>, %init: tensor<16x32xf32>) -> tensor<16x32xf32> {
  %c4 = arith.constant 4 : index
  %r = scf.forall (%blk) in (4) shared_outs(%o = %init) -> (tensor<16x32xf32>) {
    %row = arith.muli %blk, %c4 : index
    %xs = tensor.extract_slice %x[%row, 0] [4, 32] [1, 1] : tensor<16x32xf32> to tensor<4x32xf32>
    %e = tensor.empty() : tensor<4x32xf32>
    %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%xs : tensor<4x32xf32>) outs(%e : tensor<4x32xf32>) attrs = {neo.serial} {
    ^bb0(%in: f32, %out: f32):
      %0 = math.exp %in : f32
      linalg.yield %0 : f32
    } -> tensor<4x32xf32>
    %e2 = tensor.empty() : tensor<4x32xf32>
    %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%a : tensor<4x32xf32>) outs(%e2 : tensor<4x32xf32>) attrs = {neo.serial} {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.negf %in : f32
      linalg.yield %0 : f32
    } -> tensor<4x32xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %b into %o[%row, 0] [4, 32] [1, 1] : tensor<4x32xf32> into tensor<16x32xf32>
    }
  }
  return %r : tensor<16x32xf32>
}
