// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-reuse-contractions))' | FileCheck %s
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-reuse-contractions))' --verify-each | neo-opt -split-input-file > /dev/null

// Attention's backward row term, as neo-autodiff writes it:
// d[i] = sum(e, j) -(exp(s - m) / z * (do * v)) / z. The forward's
// o[i, e] = sum(j) exp(s - m) / z * v already sums exp(s - m) / z * v over
// j, so d becomes sum(e) -(o * do / z): the sum over j and the reads of s,
// m and v are gone, and o is read at (i, e).
#ij = affine_map<(i, e, j) -> (i, j)>
#i = affine_map<(i, e, j) -> (i)>
#je = affine_map<(i, e, j) -> (j, e)>
#ie = affine_map<(i, e, j) -> (i, e)>
// CHECK-DAG: #[[I:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[IE:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @attention_row_term
// CHECK-SAME: (%[[S:.+]]: tensor<6x9xf32>, %[[M:.+]]: tensor<6xf32>, %[[Z:.+]]: tensor<6xf32>, %[[V:.+]]: tensor<9x4xf32>, %[[DO:.+]]: tensor<6x4xf32>)
// CHECK: %[[O:.+]] = neo.compute ins(%[[S]], %[[M]], %[[Z]], %[[V]] : {{.*}}) space [6, 4] sum [9]
// CHECK: %[[D:.+]] = neo.compute ins(%[[Z]], %[[DO]], %[[O]] : tensor<6xf32>, tensor<6x4xf32>, tensor<6x4xf32>) space [6] sum [4] maps [#[[I]], #[[IE]], #[[IE]]]
// CHECK-NEXT: ^bb0(%[[ZV:.+]]: f32, %[[DOV:.+]]: f32, %[[OV:.+]]: f32):
// CHECK-NEXT: %[[P:.+]] = arith.mulf %[[OV]], %[[DOV]] : f32
// CHECK-NEXT: %[[Q:.+]] = arith.divf %[[P]], %[[ZV]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.negf %[[Q]] : f32
// CHECK-NEXT: neo.yield %[[N]] : f32
// CHECK: return %[[O]], %[[D]]
func.func @attention_row_term(%s: tensor<6x9xf32>, %m: tensor<6xf32>, %z: tensor<6xf32>,
                              %v: tensor<9x4xf32>, %do: tensor<6x4xf32>)
    -> (tensor<6x4xf32>, tensor<6xf32>) {
  %o = neo.compute ins(%s, %m, %z, %v : tensor<6x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<9x4xf32>)
         space [6, 4] sum [9] maps [#ij, #i, #i, #je] -> tensor<6x4xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32, %w: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %c : f32
    %3 = arith.mulf %2, %w : f32
    neo.yield %3 : f32
  }
  %d = neo.compute ins(%s, %m, %z, %v, %do : tensor<6x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<9x4xf32>, tensor<6x4xf32>)
         space [6] sum [4, 9] maps [#ij, #i, #i, #je, #ie] -> tensor<6xf32> {
  ^bb0(%a: f32, %b: f32, %c: f32, %w: f32, %g: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    %2 = arith.divf %1, %c : f32
    %3 = arith.mulf %g, %w : f32
    %4 = arith.mulf %3, %2 : f32
    %5 = arith.divf %4, %c : f32
    %6 = arith.negf %5 : f32
    neo.yield %6 : f32
  }
  return %o, %d : tensor<6x4xf32>, tensor<6xf32>
}

// -----

// A full contraction of a contraction: t = sum(i, j) x[i, j] * w[j] * u[i]
// with y[i] = sum(j) x[i, j] * w[j] becomes sum(i) y[i] * u[i], an
// all-reduction (space [] sum [5]); the producer's dims map onto dims of
// other positions (its parallel i is the consumer's reduction dim).
#xr = affine_map<(i, j) -> (i, j)>
#wr = affine_map<(i, j) -> (j)>
#x2 = affine_map<(j, i) -> (i, j)>
#w2 = affine_map<(j, i) -> (j)>
#u2 = affine_map<(j, i) -> (i)>
// CHECK-LABEL: func.func @nested_sum
// CHECK: %[[Y:.+]] = neo.compute ins(%{{.+}}, %{{.+}} : tensor<5x7xf32>, tensor<7xf32>) space [5] sum [7]
// CHECK: %[[T:.+]] = neo.compute ins(%{{.+}}, %[[Y]] : tensor<5xf32>, tensor<5xf32>) space [] sum [5] maps [#[[U:.+]], #[[U]]]
// CHECK-NEXT: ^bb0(%[[UV:.+]]: f32, %[[YV:.+]]: f32):
// CHECK-NEXT: arith.mulf %[[YV]], %[[UV]]
func.func @nested_sum(%x: tensor<5x7xf32>, %w: tensor<7xf32>, %u: tensor<5xf32>)
    -> (tensor<5xf32>, tensor<f32>) {
  %y = neo.compute ins(%x, %w : tensor<5x7xf32>, tensor<7xf32>) space [5] sum [7]
         maps [#xr, #wr] -> tensor<5xf32> {
  ^bb0(%a: f32, %b: f32):
    %0 = arith.mulf %a, %b : f32
    neo.yield %0 : f32
  }
  %t = neo.compute ins(%x, %w, %u : tensor<5x7xf32>, tensor<7xf32>, tensor<5xf32>) space [] sum [7, 5]
         maps [#x2, #w2, #u2] -> tensor<f32> {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %c, %a : f32
    %1 = arith.mulf %0, %b : f32
    neo.yield %1 : f32
  }
  return %y, %t : tensor<5xf32>, tensor<f32>
}

// -----

// Left alone: what remains of the product still reads the summed dim j
// (a[i, j] * b[j] * c[j] over j is not (sum(j) a * b) * c).
#a = affine_map<(i, j) -> (i, j)>
#b = affine_map<(i, j) -> (j)>
// CHECK-LABEL: func.func @rest_reads_summed_dim
// CHECK: space [3] sum [4]
// CHECK: space [3] sum [4]
// CHECK-NOT: neo.compute
func.func @rest_reads_summed_dim(%x: tensor<3x4xf32>, %w: tensor<4xf32>, %c: tensor<4xf32>)
    -> (tensor<3xf32>, tensor<3xf32>) {
  %y = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4xf32>) space [3] sum [4] maps [#a, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %t = neo.compute ins(%x, %w, %c : tensor<3x4xf32>, tensor<4xf32>, tensor<4xf32>) space [3] sum [4] maps [#a, #b, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32, %r: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.mulf %0, %r : f32
    neo.yield %1 : f32
  }
  return %y, %t : tensor<3xf32>, tensor<3xf32>
}

// -----

// Left alone: a max is not a sum (max(j) a * b is not read from sum(j) a * b),
// a sum over a shorter range, and a factor that is not in the product
// (a + b is one factor, not a and b).
#a = affine_map<(i, j) -> (i, j)>
#b = affine_map<(i, j) -> (j)>
#a3 = affine_map<(i, j) -> (i, j)>
// CHECK-LABEL: func.func @not_reused
// CHECK-COUNT-4: space [3]
// CHECK: return
func.func @not_reused(%x: tensor<3x4xf32>, %w: tensor<4xf32>, %x3: tensor<3x3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4xf32>) space [3] sum [4] maps [#a, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %mx = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4xf32>) space [3] max [4] maps [#a, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %short = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4xf32>) space [3] sum [3] maps [#a3, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %add = neo.compute ins(%x, %w : tensor<3x4xf32>, tensor<4xf32>) space [3] sum [4] maps [#a, #b] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.addf %p, %q : f32
    neo.yield %0 : f32
  }
  return %y, %mx, %short, %add : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Left alone: reading y = sum(j) x / c would divide by c where t only
// multiplies (t = sum(j) x * c is not y * c * c: c may be 0), and reading
// y2 = sum(j) x * c * c would divide by c (t has c once).
#a = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @no_new_division
// CHECK-COUNT-3: sum [4]
// CHECK: return
func.func @no_new_division(%x: tensor<3x4xf32>, %c: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.divf %p, %q : f32
    neo.yield %0 : f32
  }
  %y2 = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.mulf %0, %q : f32
    neo.yield %1 : f32
  }
  %t = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %q, %p : f32
    neo.yield %0 : f32
  }
  return %y, %y2, %t : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Left alone: f's power of a factor must be part of g's, with the same sign
// and no larger. y = sum(j) x * c against t = sum(j) x / c (t is not y / c
// / c: at c = 0, t is infinite but y / c / c is 0 / 0), w = sum(j) x / c / c
// against t (t is not w * c: w overflows where t does not). And a producer
// whose product cancels a division (n = sum(j) x * c / c, NaN at c = 0) is
// not read for x (u = sum(j) x * d is not n * d).
#a = affine_map<(i, j) -> (i, j)>
#r = affine_map<(i, j) -> (i)>
// CHECK-LABEL: func.func @powers_must_divide
// CHECK-COUNT-5: sum [4]
// CHECK: return
func.func @powers_must_divide(%x: tensor<3x4xf32>, %c: tensor<3xf32>, %d: tensor<3xf32>)
    -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %y = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  %w = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.divf %p, %q : f32
    %1 = arith.divf %0, %q : f32
    neo.yield %1 : f32
  }
  %n = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    %1 = arith.divf %0, %q : f32
    neo.yield %1 : f32
  }
  %t = neo.compute ins(%x, %c : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.divf %p, %q : f32
    neo.yield %0 : f32
  }
  %u = neo.compute ins(%x, %d : tensor<3x4xf32>, tensor<3xf32>) space [3] sum [4] maps [#a, #r] -> tensor<3xf32> {
  ^bb0(%p: f32, %q: f32):
    %0 = arith.mulf %p, %q : f32
    neo.yield %0 : f32
  }
  return %y, %w, %n, %t, %u : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
