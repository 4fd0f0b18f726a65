// neo-split-index-sets: a kernel that selects between bands of columns by
// comparing linalg.index 1 with constants, and reads the shifted operand
// through clamped gathers (the shape of an LSTM gate gradient after fusion),
// is split at j = 8 into two kernels on column slices. In each, the
// comparison and the clamps are constants, the other band's code is gone,
// and the gathers are plain input operands.
// RUN: neo-opt %s --neo-split-index-sets --canonicalize --cse | FileCheck %s
// CHECK-LABEL: func.func @bands(
// The first band is a copy of %arg1 (its kernel folds away):
// CHECK: tensor.insert_slice %arg1 into {{.*}}[0, 0] [4, 8] [1, 1]
// CHECK: %[[G1:.*]] = tensor.extract_slice %arg0[0, 8] [4, 8] [1, 1]
// CHECK: linalg.generic {{.*}} ins(%[[G1]], %arg1 : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: math.exp
// CHECK: tensor.insert_slice {{.*}}[0, 8] [4, 8] [1, 1]
// CHECK-NOT: tensor.extract %
// CHECK-NOT: arith.cmpi
// CHECK: return
//
// Pieces narrower than min-piece are not made: the kernel stays whole.
// RUN: neo-opt %s --neo-split-index-sets=min-piece=9 | FileCheck %s --check-prefix=WHOLE
// WHOLE-COUNT-1: linalg.generic
// WHOLE: tensor.extract %arg1
//
// A comparison whose threshold only shows once a clamp is resolved (j - 8
// clamped at 0, then compared with 4) splits at 12 too (pieces 8, 4, 12).
// RUN: neo-opt %s --neo-split-index-sets=min-piece=4 --canonicalize | FileCheck %s --check-prefix=NESTED
// The first two pieces copy x (their kernels fold away), the third adds 1.
// NESTED-LABEL: func.func @nested(
// NESTED: tensor.insert_slice {{.*}}[0, 0] [4, 8] [1, 1]
// NESTED: tensor.insert_slice {{.*}}[0, 8] [4, 4] [1, 1]
// NESTED: linalg.generic
// NESTED: arith.addf
// NESTED: tensor.insert_slice {{.*}}[0, 12] [4, 12] [1, 1]
// NESTED-NOT: arith.cmpi
func.func @bands(%g: tensor<4x16xf32>, %d: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %c8 = arith.constant 8 : index
  %cm8 = arith.constant -8 : index
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %lo = arith.cmpi slt, %j, %c8 : index
    %jj = arith.minsi %j, %c7 : index
    %a = tensor.extract %d[%i, %jj] : tensor<4x8xf32>
    %s = arith.addi %j, %cm8 : index
    %s0 = arith.maxsi %s, %c0 : index
    %b = tensor.extract %d[%i, %s0] : tensor<4x8xf32>
    %ex = math.exp %x : f32
    %bb = arith.mulf %b, %ex : f32
    %v = arith.select %lo, %a, %bb : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

func.func @nested(%g: tensor<4x24xf32>) -> tensor<4x24xf32> {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %cm8 = arith.constant -8 : index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x24xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x24xf32>) outs(%e : tensor<4x24xf32>) {
  ^bb0(%x: f32, %o: f32):
    %j = linalg.index 1 : index
    %s = arith.addi %j, %cm8 : index
    %s0 = arith.maxsi %s, %c0 : index
    %small = arith.cmpi slt, %s0, %c4 : index
    %y = arith.addf %x, %one : f32
    %v = arith.select %small, %x, %y : f32
    linalg.yield %v : f32
  } -> tensor<4x24xf32>
  return %r : tensor<4x24xf32>
}
