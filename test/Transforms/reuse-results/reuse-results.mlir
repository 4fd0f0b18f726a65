// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-reuse-results))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-reuse-results))' --verify-each | neo-opt -split-input-file > /dev/null

// Softmax's backward reduction recomputes y = exp(x - m) / z: it reads y
// (the forward's result, a new last input at the identity map) instead, and
// the exp and the division are gone from its body.
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @softmax_backward
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>, %[[M:.+]]: tensor<4xf32>, %[[Z:.+]]: tensor<4xf32>, %[[DY:.+]]: tensor<4x8xf32>)
// CHECK: %[[Y:.+]] = neo.compute ins(%[[X]], %[[M]], %[[Z]] :
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: %[[S:.+]] = neo.compute ins(%[[X]], %[[M]], %[[Z]], %[[DY]], %[[Y]] : {{.*}}) space [4] sum [8] maps [#{{.+}}, #{{.+}}, #{{.+}}, #{{.+}}, #[[ID:.+]]]
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %{{.+}}: f32, %{{.+}}: f32, %[[DYV:.+]]: f32, %[[YV:.+]]: f32):
// CHECK-NOT: math.exp
// CHECK-NOT: arith.divf
// CHECK: %[[P:.+]] = arith.mulf %[[DYV]], %[[YV]] : f32
// CHECK: neo.yield %[[P]] : f32
// CHECK: return %[[Y]], %[[S]]
func.func @softmax_backward(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %z: tensor<4xf32>,
                            %dy: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %y = neo.compute ins(%x, %m, %z : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
         space [4, 8] maps [#id, #row, #row] -> tensor<4x8xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %c : f32
    neo.yield %q : f32
  }
  %s = neo.compute ins(%x, %m, %z, %dy : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
         space [4] sum [8] maps [#id, #row, #row, #id] -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32, %g: f32):
    %d = arith.subf %a, %b : f32
    %e = math.exp %d : f32
    %q = arith.divf %e, %c : f32
    %p = arith.mulf %g, %q : f32
    neo.yield %p : f32
  }
  return %y, %s : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// Left alone: a read at another map (x transposed), an expression without a
// math op or a division (recomputing x - m is cheaper than a read), other
// iteration bounds, and a producer that is itself a reduction.
#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#row = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: math.exp
// CHECK-NOT: math.exp
// CHECK: return
func.func @left_alone(%x: tensor<4x4xf32>, %m: tensor<4xf32>, %w: tensor<4x8xf32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = neo.compute ins(%x : tensor<4x4xf32>) space [4, 4] maps [#id] -> tensor<4x4xf32> {
  ^bb0(%a: f32):
    %v = math.exp %a : f32
    neo.yield %v : f32
  }
  // exp(x[j, i]): another map.
  %et = neo.compute ins(%x : tensor<4x4xf32>) space [4, 4] maps [#t] -> tensor<4x4xf32> {
  ^bb0(%a: f32):
    %v = math.exp %a : f32
    %w2 = arith.addf %v, %v : f32
    neo.yield %w2 : f32
  }
  // x - m twice: cheap.
  %d = neo.compute ins(%x, %m : tensor<4x4xf32>, tensor<4xf32>) space [4, 4] maps [#id, #row] -> tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %v = arith.subf %a, %b : f32
    neo.yield %v : f32
  }
  %d2 = neo.compute ins(%x, %m : tensor<4x4xf32>, tensor<4xf32>) space [4, 4] maps [#id, #row] -> tensor<4x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %v = arith.subf %a, %b : f32
    %s = arith.mulf %v, %v : f32
    neo.yield %s : f32
  }
  // A reduction as the producer: its result is not the expression's value.
  %r = neo.compute ins(%w : tensor<4x8xf32>) space [4] sum [8] maps [#id] -> tensor<4xf32> {
  ^bb0(%a: f32):
    %v = math.exp %a : f32
    neo.yield %v : f32
  }
  %r2 = neo.compute ins(%w : tensor<4x8xf32>) space [4] max [8] maps [#id] -> tensor<4xf32> {
  ^bb0(%a: f32):
    %v = math.exp %a : f32
    neo.yield %v : f32
  }
  return %e, %et, %d, %d2, %r, %r2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>
}
