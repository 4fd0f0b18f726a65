// RUN: neo-opt %s -split-input-file -neo-inline-fused | FileCheck %s

// neo-inline-fused dissolves every neo.fused op: its ops are cloned in its
// place, on its inputs, and its results become the values its neo.return
// returns (a block argument returned as is becomes the input itself).

// CHECK-LABEL: func.func @fused
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = neo.constant dense<2.000000e+00> : tensor<4xf32>
// CHECK-NOT: neo.fused
// CHECK: %[[S:.+]] = neo.compute ins(%[[A]], %[[C]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.mulf
// CHECK-NOT: neo.return
// CHECK: return %[[S]], %[[A]] : tensor<4xf32>, tensor<4xf32>
func.func @fused(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %c = neo.constant dense<2.0> : tensor<4xf32>
  %r:2 = neo.fused ins(%a, %c : tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = neo.compute ins(%x, %y : tensor<4xf32>, tensor<4xf32>) space [4]
           maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%u: f32, %v: f32):
      %m = arith.mulf %u, %v : f32
      neo.yield %m : f32
    }
    neo.return %s, %x : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A row-blocked kernel dissolves the same way: its ops keep their order and
// the second reads the first's result.
// CHECK-LABEL: func.func @row_blocked
// CHECK-SAME: (%[[X:.+]]: tensor<16x32xf32>, %[[G:.+]]: tensor<32xf32>)
// CHECK-NOT: neo.fused
// CHECK: %[[S:.+]] = neo.compute ins(%[[X]] : tensor<16x32xf32>) space [16] sum [32]
// CHECK: %[[Y:.+]] = neo.compute ins(%[[X]], %[[S]], %[[G]] : tensor<16x32xf32>, tensor<16xf32>, tensor<32xf32>) space [16, 32]
// CHECK: return %[[Y]]
func.func @row_blocked(%x: tensor<16x32xf32>, %g: tensor<32xf32>) -> tensor<16x32xf32> {
  %r = neo.fused ins(%x, %g : tensor<16x32xf32>, tensor<32xf32>) row_block 4 -> (tensor<16x32xf32>) {
  ^bb0(%a: tensor<16x32xf32>, %b: tensor<32xf32>):
    %s = neo.compute ins(%a : tensor<16x32xf32>) space [16] sum [32] maps [affine_map<(i, j) -> (i, j)>] -> tensor<16xf32> {
    ^bb0(%v: f32):
      %q = arith.mulf %v, %v : f32
      neo.yield %q : f32
    }
    %y = neo.compute ins(%a, %s, %b : tensor<16x32xf32>, tensor<16xf32>, tensor<32xf32>) space [16, 32]
           maps [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>] -> tensor<16x32xf32> {
    ^bb0(%v: f32, %n: f32, %w: f32):
      %d = arith.divf %v, %n : f32
      %m = arith.mulf %d, %w : f32
      neo.yield %m : f32
    }
    neo.return %y : tensor<16x32xf32>
  }
  return %r : tensor<16x32xf32>
}

// -----

// Nested neo.fused ops dissolve from the inside out, in every function.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>)
// CHECK-NOT: neo.fused
// CHECK: %[[N:.+]] = neo.compute ins(%[[A]] : tensor<4xf32>)
// CHECK: arith.negf
// CHECK: %[[E:.+]] = neo.compute ins(%[[N]] : tensor<4xf32>)
// CHECK: math.exp
// CHECK: return %[[E]]
// CHECK-LABEL: func.func @other
// CHECK-NOT: neo.fused
// CHECK: return
func.func @nested(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %inner = neo.fused ins(%x : tensor<4xf32>) -> (tensor<4xf32>) {
    ^bb0(%y: tensor<4xf32>):
      %n = neo.compute ins(%y : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
      ^bb0(%v: f32):
        %0 = arith.negf %v : f32
        neo.yield %0 : f32
      }
      neo.return %n : tensor<4xf32>
    }
    %e = neo.compute ins(%inner : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      %0 = math.exp %v : f32
      neo.yield %0 : f32
    }
    neo.return %e : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
func.func @other(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    neo.return %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
