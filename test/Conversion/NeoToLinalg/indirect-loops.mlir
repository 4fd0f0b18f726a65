// RUN: neo-opt %s --convert-neo-to-linalg | FileCheck %s
// Ops whose domain ranges a reduction dim by index values (a CSR row) or
// pins a parallel dim to one (a scatter-add) become loop nests that visit
// only the domain's points, not the whole box.

// SpMM: an scf.forall over the rows i (each fills and computes its row:
// threads; the result is not filled first), the row's bounds read once, e
// from rowptr[i] to rowptr[i + 1] (clamped to [0, 9)) with col[e] and val[e]
// read once per nonzero, then the dense dim f innermost.
// CHECK-LABEL: func.func @csr
// CHECK: %[[INIT:.*]] = tensor.empty
// CHECK-NOT: linalg.fill
// CHECK: scf.forall (%[[I:.*]]) in (4) shared_outs(%[[OUT:.*]] = %[[INIT]])
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[OUT]][%[[I]], 0] [1, 3] [1, 1]
// CHECK: %[[ROW:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[SLICE]] : tensor<1x3xf32>)
// CHECK: tensor.extract %arg0[
// CHECK: tensor.extract %arg0[
// CHECK: scf.for %[[E:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[ROW]])
// CHECK: tensor.extract %arg1[
// CHECK: tensor.extract %arg2[%[[E]]]
// CHECK: scf.for %[[F:.*]] = %{{.*}} to %{{.*}} step
// CHECK: tensor.extract %arg3[
// CHECK: arith.mulf
// CHECK: tensor.insert
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.generic
func.func @csr(%rowptr: tensor<5xi32>, %col: tensor<9xi64>, %val: tensor<9xf32>, %x: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %0 = neo.compute ins(%val, %x : tensor<9xf32>, tensor<6x3xf32>)
         indices(%rowptr, %rowptr, %col : tensor<5xi32>, tensor<5xi32>, tensor<9xi64>)
         space [4, 3] sum [9]
         maps [affine_map<(i, f, e) -> (e)>, affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
         index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>,
                     affine_map<(i, f, e) -> (e)>] checked [1]
         where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<4x3xf32> {
  ^bb0(%v: f32, %xv: f32):
    %m = arith.mulf %v, %xv : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4x3xf32>
}

// The scatter form of an embedding's gradient: n outermost with v = tok[n]
// read once per n, d innermost, v tested against [0, 10); sequential (two
// points may write one v).
// CHECK-LABEL: func.func @scatter
// CHECK-NOT: scf.forall
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: tensor.extract %arg1[
// CHECK: scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step
// CHECK: arith.cmpi slt
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK-NOT: linalg.generic
func.func @scatter(%dy: tensor<6x4xf32>, %tok: tensor<6xi32>) -> tensor<10x4xf32> {
  %0 = neo.compute ins(%dy : tensor<6x4xf32>) indices(%tok : tensor<6xi32>) space [10, 4] sum [6]
         maps [affine_map<(v, d, n) -> (n, d)>] index_maps [affine_map<(v, d, n) -> (n)>]
         where affine_set<(v, d, n)[s0] : (s0 - v == 0)> -> tensor<10x4xf32> {
  ^bb0(%g: f32):
    neo.yield %g : f32
  }
  return %0 : tensor<10x4xf32>
}

// A condition on index values that neither ranges nor pins (t < len[b] on
// a reduction dim with a unit coefficient does range it): masked pooling is
// a loop over t up to len[b].
// CHECK-LABEL: func.func @pool
// CHECK: tensor.extract %arg1[
// CHECK: scf.for
// CHECK-NOT: linalg.generic
func.func @pool(%x: tensor<3x5x2xf32>, %len: tensor<3xi32>) -> tensor<3x2xf32> {
  %0 = neo.compute ins(%x : tensor<3x5x2xf32>) indices(%len : tensor<3xi32>) space [3, 2] sum [5]
         maps [affine_map<(b, d, t) -> (b, t, d)>] index_maps [affine_map<(b, d, t) -> (b)>]
         where affine_set<(b, d, t)[s0] : (s0 - t - 1 >= 0)> -> tensor<3x2xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<3x2xf32>
}

// An embedding lookup has no domain: a linalg.generic.
// CHECK-LABEL: func.func @embed
// CHECK: linalg.generic
func.func @embed(%e: tensor<10x4xf32>, %tok: tensor<6xi32>) -> tensor<6x4xf32> {
  %0 = neo.compute ins(%e : tensor<10x4xf32>) indices(%tok : tensor<6xi32>) space [6, 4]
         maps [affine_map<(n, d)[s0] -> (s0, d)>] index_maps [affine_map<(n, d) -> (n)>]
         checked [0] -> tensor<6x4xf32> {
  ^bb0(%v: f32):
    neo.yield %v : f32
  }
  return %0 : tensor<6x4xf32>
}

// The result's dense last dim (SpMM's features), innermost, runs on vectors:
// the gathered row and the result row are vector transfers, the value is
// broadcast, and the 4 features left over run scalar.
// CHECK-LABEL: func.func @csr_vector
// CHECK: scf.forall
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: vector.transfer_read {{.*}} : tensor<10x20xf32>, vector<16xf32>
// CHECK: vector.broadcast {{.*}} : f32 to vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: arith.addf {{.*}} fastmath<reassoc,contract> : vector<16xf32>
// CHECK: vector.transfer_write
// CHECK: scf.for %{{.*}} = %c16{{.*}} to
// CHECK: tensor.extract
func.func @csr_vector(%rowptr: tensor<11xi32>, %col: tensor<40xi32>, %val: tensor<40xf32>,
                      %x: tensor<10x20xf32>) -> tensor<10x20xf32> {
  %y = neo.compute ins(%val, %x : tensor<40xf32>, tensor<10x20xf32>)
         indices(%rowptr, %rowptr, %col : tensor<11xi32>, tensor<11xi32>, tensor<40xi32>)
         space [10, 20] sum [40]
         maps [affine_map<(i, f, e)[s0, s1, s2] -> (e)>,
               affine_map<(i, f, e)[s0, s1, s2] -> (s2, f)>]
         index_maps [affine_map<(i, f, e) -> (i)>, affine_map<(i, f, e) -> (i + 1)>,
                     affine_map<(i, f, e) -> (e)>] checked [1]
         where affine_set<(i, f, e)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<10x20xf32> {
  ^bb0(%v: f32, %a: f32):
    %m = arith.mulf %v, %a : f32
    neo.yield %m : f32
  }
  return %y : tensor<10x20xf32>
}

// A sum over a CSR row's nonzeros e and a dense dim h whose body is linear
// in the one value that varies along h (GAT's attention gradient:
// exp(s[i] + t[col[e]]) * dY[i, h] * H[col[e], h]): the loop over h sums
// dY[i, h] * H[col[e], h] alone, 16 lanes at a time, and the exp and the
// multiplication run once per nonzero on the sum (not once per (e, h)).
// CHECK-LABEL: func.func @factored
// CHECK: scf.for %{{.*}} iter_args
// CHECK: %[[DOT:.*]] = scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c16{{.*}} iter_args(%[[P:.*]] = %{{.*}}) -> (vector<16xf32>)
// CHECK-NOT: math.exp
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: arith.addf %[[P]], {{.*}} fastmath<reassoc,contract> : vector<16xf32>
// CHECK: scf.yield
// CHECK: %[[S:.*]] = vector.reduction <add>, %[[DOT]] fastmath<reassoc> : vector<16xf32> into f32
// CHECK: math.exp
// CHECK: arith.mulf %{{.*}}, %[[S]]
// CHECK: tensor.insert
func.func @factored(%rowptr: tensor<5xi32>, %col: tensor<9xi32>, %s: tensor<4xf32>, %t: tensor<6xf32>, %dy: tensor<4x32xf32>, %h: tensor<6x32xf32>) -> tensor<4xf32> {
  %y = neo.compute ins(%s, %t, %dy, %h : tensor<4xf32>, tensor<6xf32>, tensor<4x32xf32>, tensor<6x32xf32>)
         indices(%rowptr, %rowptr, %col : tensor<5xi32>, tensor<5xi32>, tensor<9xi32>)
         space [4] sum [9, 32]
         maps [affine_map<(i, e, h)[s0, s1, s2] -> (i)>, affine_map<(i, e, h)[s0, s1, s2] -> (s2)>,
               affine_map<(i, e, h)[s0, s1, s2] -> (i, h)>, affine_map<(i, e, h)[s0, s1, s2] -> (s2, h)>]
         index_maps [affine_map<(i, e, h) -> (i)>, affine_map<(i, e, h) -> (i + 1)>, affine_map<(i, e, h) -> (e)>]
         checked [1, 3]
         where affine_set<(i, e, h)[s0, s1, s2] : (e - s0 >= 0, s1 - e - 1 >= 0)>
         -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32, %g: f32, %x: f32):
    %z = arith.addf %a, %b : f32
    %w = math.exp %z : f32
    %p = arith.mulf %g, %x : f32
    %q = arith.mulf %w, %p : f32
    neo.yield %q : f32
  }
  return %y : tensor<4xf32>
}
