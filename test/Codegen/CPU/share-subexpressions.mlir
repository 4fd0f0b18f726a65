// RUN: neo-opt %s -split-input-file -neo-share-subexpressions | FileCheck %s
// RUN: neo-opt %s -split-input-file -neo-share-subexpressions=max-bytes=1024 | FileCheck %s --check-prefix=SMALL

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// softmax's exp(x[i, j] - m[i]), recomputed by its row sum, its output and
// (after autodiff) the input gradient, is computed once, before the first
// of them, and read by all three; what it is computed from (the
// subtraction) goes with it.
// CHECK-LABEL: func.func @softmax
// CHECK-SAME: (%[[X:.+]]: tensor<64x32xf32>, %[[M:.+]]: tensor<64xf32>, %[[DY:.+]]: tensor<64x32xf32>)
// CHECK: %[[E:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[M]] :
// CHECK: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[Z:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: %[[Y:.+]] = linalg.generic {{.*}} ins(%[[Z]], %[[E]] :
// CHECK-NOT: math.exp
// CHECK: %[[DX:.+]] = linalg.generic {{.*}} ins(%[[DY]], %[[E]] :
// CHECK-NOT: math.exp
// CHECK: return
// With at most 1 KiB to share (the 8 KiB tensor would be more), nothing is.
// SMALL-LABEL: func.func @softmax
// SMALL-COUNT-3: math.exp
func.func @softmax(%x: tensor<64x32xf32>, %m: tensor<64xf32>, %dy: tensor<64x32xf32>) -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %z = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<64x32xf32>, tensor<64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    %r = arith.addf %acc, %ex : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m, %z : tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    %r = arith.mulf %ex, %s : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  %dx = linalg.generic {indexing_maps = [#id, #id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%dy, %x, %m : tensor<64x32xf32>, tensor<64x32xf32>, tensor<64xf32>) outs(%e2 : tensor<64x32xf32>) {
  ^bb0(%g: f32, %a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %ex = math.exp %d : f32
    %r = arith.mulf %g, %ex : f32
    linalg.yield %r : f32
  } -> tensor<64x32xf32>
  return %y, %dx : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>

// Not shared: the same exp through different indexing maps (x and its
// transpose), and a value computed by one op only.
// CHECK-LABEL: func.func @different
// CHECK-COUNT-3: math.exp
func.func @different(%x: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %e = tensor.empty() : tensor<32x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %b = linalg.generic {indexing_maps = [#t, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<32x32xf32>
  return %a, %b, %c : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

#m = affine_map<(d0) -> (d0)>

// Two shared values first seen in different orders: exp(x) (read by @g0
// and @g2) and exp(t) (read by @g1 and @g2). Each is computed before the
// first generic in block order that reads it, so exp(t) goes before the
// second generic, not before the third (a use before its definition; found
// by neo-pipeline-fuzzer on a chain of exp and tanh after autodiff).
// CHECK-LABEL: func.func @block_order
// CHECK-SAME: (%[[X:.+]]: tensor<16xf32>, %[[D:.+]]: tensor<16xf32>)
// CHECK: %[[EX:.+]] = linalg.generic {{.*}} ins(%[[X]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[T:.+]] = linalg.generic {{.*}} ins(%[[EX]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.tanh
// CHECK: %[[ET:.+]] = linalg.generic {{.*}} ins(%[[T]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: %[[U:.+]] = linalg.generic {{.*}} ins(%[[ET]] :
// CHECK-NOT: math.exp
// CHECK: math.tanh
// CHECK: linalg.generic {{.*}} ins(%[[D]], %[[EX]], %[[ET]] :
// CHECK-NOT: math.exp
// CHECK: return
func.func @block_order(%x: tensor<16xf32>, %d: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %t = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    %1 = math.tanh %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16xf32>
  %u = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]}
      ins(%t : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = math.exp %a : f32
    %1 = math.tanh %0 : f32
    linalg.yield %1 : f32
  } -> tensor<16xf32>
  %g = linalg.generic {indexing_maps = [#m, #m, #m, #m], iterator_types = ["parallel"]}
      ins(%d, %x, %t : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%dd: f32, %a: f32, %b: f32, %o: f32):
    %0 = math.exp %a : f32
    %1 = math.exp %b : f32
    %2 = arith.mulf %dd, %0 : f32
    %3 = arith.mulf %2, %1 : f32
    linalg.yield %3 : f32
  } -> tensor<16xf32>
  return %u, %g : tensor<16xf32>, tensor<16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#hi = affine_map<(d0, d1) -> (d0, d1 + 192)>

// A read of a static slice keys like the read of its source at the offset:
// exp(g[n, 192 + j]) read through the map of g and through the slice
// g[:, 192:256] is one value, computed once.
// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[G:.+]]: tensor<64x256xf32>)
// CHECK: %[[E:.+]] = linalg.generic {{.*}} ins(%[[G]] :
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: return
func.func @slices(%g: tensor<64x256xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %a = linalg.generic {indexing_maps = [#hi, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<64x256xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    %s = arith.addf %r, %r : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  %slice = tensor.extract_slice %g[0, 192] [64, 64] [1, 1] : tensor<64x256xf32> to tensor<64x64xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%slice : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    %s = arith.mulf %r, %r : f32
    linalg.yield %s : f32
  } -> tensor<64x64xf32>
  return %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

#m = affine_map<(d0) -> (d0)>

// The stable sigmoid's e = exp(-|x|) is inside r = 1 / (1 + e), and the
// bodies also use e itself (e * r): both r and e are shared, so that no op
// computes the exponential again (it used to go with r alone, and each op
// recomputed it for e * r), and r's own generic reads e.
// CHECK-LABEL: func.func @inner_still_used
// CHECK-SAME: (%[[X:.+]]: tensor<16xf32>, %[[D:.+]]: tensor<16xf32>)
// CHECK: %[[E:.+]] = linalg.generic {{.*}} ins(%[[X]] :
// CHECK: math.exp
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[E]] :
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} ins(%[[X]], {{.*}}%[[R]]{{.*}} :
// CHECK-NOT: math.exp
// CHECK-NOT: arith.divf
// CHECK: linalg.yield
// CHECK: linalg.generic {{.*}} ins(%[[D]], {{.*}}%[[R]]{{.*}} :
// CHECK-NOT: math.exp
// CHECK-NOT: arith.divf
// CHECK: return
func.func @inner_still_used(%x: tensor<16xf32>, %d: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %e0 = tensor.empty() : tensor<16xf32>
  %a = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%p: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf oge, %p, %zero : f32
    %n = arith.negf %p : f32
    %m = arith.select %pos, %n, %p : f32
    %ex = math.exp %m : f32
    %den = arith.addf %one, %ex : f32
    %r = arith.divf %one, %den : f32
    %er = arith.mulf %ex, %r : f32
    %s = arith.select %pos, %r, %er : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]}
      ins(%x, %d : tensor<16xf32>, tensor<16xf32>) outs(%e0 : tensor<16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf oge, %p, %zero : f32
    %n = arith.negf %p : f32
    %m = arith.select %pos, %n, %p : f32
    %ex = math.exp %m : f32
    %den = arith.addf %one, %ex : f32
    %r = arith.divf %one, %den : f32
    %gr = arith.mulf %g, %r : f32
    %ge = arith.mulf %gr, %ex : f32
    linalg.yield %ge : f32
  } -> tensor<16xf32>
  return %a, %b : tensor<16xf32>, tensor<16xf32>
}
