// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-factor-sums))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-factor-sums))' --verify-each | neo-opt -split-input-file > /dev/null

// Attention's backward p * dp, as neo-autodiff writes it:
// sum(e) do[i, e] * v[j, e] / z[i] * exp(s[i, j] - m[i]). 1 / z and
// exp(s - m) read no e: the sum keeps do * v (a plain contraction, a GEMM)
// and an elementwise compute multiplies its result by exp(s - m) and
// divides by z, once per element instead of once per term.
#ie = affine_map<(i, j, e) -> (i, e)>
#je = affine_map<(i, j, e) -> (j, e)>
#i = affine_map<(i, j, e) -> (i)>
#ij = affine_map<(i, j, e) -> (i, j)>
// CHECK-DAG: #[[IE:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[JE:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[I:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @attention_dp
// CHECK-SAME: (%[[S:.+]]: tensor<6x9xf32>, %[[M:.+]]: tensor<6xf32>, %[[Z:.+]]: tensor<6xf32>, %[[V:.+]]: tensor<9x4xf32>, %[[DO:.+]]: tensor<6x4xf32>)
// CHECK: %[[T:.+]] = neo.compute ins(%[[V]], %[[DO]] : tensor<9x4xf32>, tensor<6x4xf32>) space [6, 9] sum [4] maps [#[[JE]], #[[IE]]]
// CHECK-NEXT: ^bb0(%[[VV:.+]]: f32, %[[DV:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[DV]], %[[VV]] : f32
// CHECK-NEXT: neo.yield %[[P]] : f32
// CHECK: %[[U:.+]] = neo.compute ins(%[[S]], %[[M]], %[[Z]], %[[T]] : {{.*}}) space [6, 9] maps [#[[ROW]], #[[I]], #[[I]], #[[ROW]]]
// CHECK-NEXT: ^bb0(%[[SV:.+]]: f32, %[[MV:.+]]: f32, %[[ZV:.+]]: f32, %[[TV:.+]]: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[SV]], %[[MV]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[X:.+]] = arith.mulf %[[TV]], %[[E]] : f32
// CHECK-NEXT: %[[Y:.+]] = arith.divf %[[X]], %[[ZV]] : f32
// CHECK-NEXT: neo.yield %[[Y]] : f32
// CHECK: return %[[U]]
func.func @attention_dp(%s: tensor<6x9xf32>, %m: tensor<6xf32>, %z: tensor<6xf32>,
                        %v: tensor<9x4xf32>, %do: tensor<6x4xf32>) -> tensor<6x9xf32> {
  %r = neo.compute ins(%s, %m, %z, %v, %do : tensor<6x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<9x4xf32>, tensor<6x4xf32>)
         space [6, 9] sum [4] maps [#ij, #i, #i, #je, #ie] -> tensor<6x9xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32, %w: f32, %g: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    %2 = arith.mulf %g, %w : f32
    %3 = arith.divf %2, %c : f32
    %4 = arith.mulf %3, %1 : f32
    neo.yield %4 : f32
  }
  return %r : tensor<6x9xf32>
}

// -----

// A scaled, negated contraction (dq = -sum(j) ds * 0.125 * k): the
// constant and the sign move out; the sum is ds * k.
#ij = affine_map<(i, d, j) -> (i, j)>
#jd = affine_map<(i, d, j) -> (j, d)>
// CHECK-LABEL: func.func @scaled
// CHECK: %[[T:.+]] = neo.compute ins(%{{.+}}, %{{.+}} : tensor<5x7xf32>, tensor<7x3xf32>) space [5, 3] sum [7]
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: neo.yield %[[P]]
// CHECK: neo.compute ins(%[[T]] : tensor<5x3xf32>) space [5, 3] maps
// CHECK-NEXT: ^bb0(%[[TV:.+]]: f32):
// CHECK-NEXT: %[[C:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-NEXT: %[[X:.+]] = arith.mulf %[[TV]], %[[C]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[X]] : f32
// CHECK-NEXT: neo.yield %[[N]]
func.func @scaled(%ds: tensor<5x7xf32>, %k: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %r = neo.compute ins(%ds, %k : tensor<5x7xf32>, tensor<7x3xf32>) space [5, 3] sum [7]
         maps [#ij, #jd] -> tensor<5x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 1.250000e-01 : f32
    %0 = arith.mulf %a, %c : f32
    %1 = arith.mulf %0, %b : f32
    %2 = arith.negf %1 : f32
    neo.yield %2 : f32
  }
  return %r : tensor<5x3xf32>
}

// -----

// Left alone: a row sum (rank 1: softmax's and layernorm's keep their
// factors), a plain contraction (no factor to move), a sum of factors that
// all read the reduction dim, and a max.
#a = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
#x3 = affine_map<(i, j, k) -> (i, k)>
#w3 = affine_map<(i, j, k) -> (k, j)>
#c3 = affine_map<(i, j, k) -> (i)>
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: neo.compute
// CHECK-NOT: neo.compute
// CHECK: return
func.func @left_alone(%x: tensor<3x4xf32>, %c: tensor<3xf32>, %w: tensor<4x4xf32>)
    -> (tensor<3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %row = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %mm = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4x4xf32>) space [3, 4] sum [4] maps [#x3, #w3] -> tensor<3x4xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %sum = neo.compute ins(%x, %w, %c : tensor<3x4xf32>, tensor<4x4xf32>, tensor<3xf32>) space [3, 4] sum [4] maps [#x3, #w3, #c3] -> tensor<3x4xf32> {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.addf %0, %s : f32
    neo.yield %1 : f32
  }
  %max = neo.compute ins(%x, %w, %c : tensor<3x4xf32>, tensor<4x4xf32>, tensor<3xf32>) space [3, 4] max [4] maps [#x3, #w3, #c3] -> tensor<3x4xf32> {
  ^bb0(%p: f32, %q: f32, %s: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.mulf %0, %s : f32
    neo.yield %1 : f32
  }
  return %row, %mm, %sum, %max : tensor<3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}
