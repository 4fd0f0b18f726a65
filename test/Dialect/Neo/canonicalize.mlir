// RUN: neo-opt %s -split-input-file -canonicalize | FileCheck %s

// A pure copy folds into its input.
// CHECK-LABEL: func.func @fold_copy
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xf32>)
// CHECK-NOT: neo.compute
// CHECK: return %[[A]]
func.func @fold_copy(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = neo.compute ins(%a : tensor<4x4xf32>) space [4, 4] maps [affine_map<(i, j) -> (i, j)>] -> tensor<4x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4x4xf32>
}

// -----

// A transpose is not a copy.
// CHECK-LABEL: func.func @keep_transpose
// CHECK: neo.compute
func.func @keep_transpose(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = neo.compute ins(%a : tensor<4x4xf32>) space [4, 4] maps [affine_map<(i, j) -> (j, i)>] -> tensor<4x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<4x4xf32>
}

// -----

// Unused reads are dropped, with their maps and pads.
// CHECK-LABEL: func.func @unused_read
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: neo.compute ins(%[[B]] : tensor<4xf32>) space [4] maps [#{{.*}}] pad [-inf] -> tensor<4xf32>
// CHECK: ^bb0(%[[V:.*]]: f32):
// CHECK: math.exp %[[V]]
func.func @unused_read(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a, %b : tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i - 1)>] pad [2.0, -inf] -> tensor<4xf32> {
  ^bb0(%u: f32, %v: f32):
    %e = math.exp %v : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// Two reads of the same value through the same map merge.
// CHECK-LABEL: func.func @duplicate_reads
// CHECK: neo.compute ins(%{{.*}} : tensor<4xf32>)
// CHECK: ^bb0(%[[V:.*]]: f32):
// CHECK: arith.mulf %[[V]], %[[V]]
func.func @duplicate_reads(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a, %a : tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%u: f32, %v: f32):
    %m = arith.mulf %u, %v : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// Reads of one value through different maps (a stencil) stay apart.
// CHECK-LABEL: func.func @stencil
// CHECK: neo.compute ins(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
func.func @stencil(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a, %a : tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i + 1)>] -> tensor<4xf32> {
  ^bb0(%u: f32, %v: f32):
    %m = arith.subf %v, %u : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// Reads of a splat constant become a scalar constant in the body; a padded
// read keeps its operand when the pad differs from the splat.
// CHECK-LABEL: func.func @splat_read
// CHECK: %[[C:.*]] = neo.constant dense<2.000000e+00>
// CHECK: neo.compute ins(%{{.*}}, %[[C]] : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.constant 2.000000e+00 : f32
func.func @splat_read(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = neo.constant dense<2.0> : tensor<4xf32>
  %0 = neo.compute ins(%a, %c, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i + 1)>] -> tensor<4xf32> {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %m, %w : f32
    neo.yield %s : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// A neo.fused whose body returns an operand (here once the identity
// neo.compute inside folds away) forwards it: the result is the operand and
// the op goes, since nothing else is returned. A row-blocked kernel may not
// return an operand, so canonicalization used to leave IR that did not
// verify (found by neo-ir-fuzzer).
// CHECK-LABEL: func.func @fused_pass_through
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>)
// CHECK-NOT: neo.fused
// CHECK: return %[[A]]
func.func @fused_pass_through(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) row_block 1 -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %s = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// With another result computed, the kernel keeps that one (and its
// row_block) and the passed-through result is the operand.
// CHECK-LABEL: func.func @fused_partly_pass_through
// CHECK-SAME: (%[[A:.+]]: tensor<4xf32>)
// CHECK: %[[F:.+]] = neo.fused ins(%[[A]] : tensor<4xf32>) row_block 2 -> (tensor<4xf32>)
// CHECK: math.exp
// CHECK: neo.return %{{.+}} : tensor<4xf32>
// CHECK: return %[[A]], %[[F]]
func.func @fused_partly_pass_through(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = neo.fused ins(%a : tensor<4xf32>) row_block 2 -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %s = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    %e = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      %y = math.exp %v : f32
      neo.yield %y : f32
    }
    neo.return %s, %e : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
