// RUN: neo-opt %s -split-input-file -neo-hoist-invariants | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// layernorm's normalization: 1 / sqrt(var[i] + eps) is computed once per
// row by a generic over i, and the per-element division becomes a
// multiplication; var is no longer an input of the 2-d op.
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @norm
// CHECK-SAME: (%[[X:.+]]: tensor<8x32xf32>, %[[MU:.+]]: tensor<8xf32>, %[[VAR:.+]]: tensor<8xf32>, %[[G:.+]]: tensor<32xf32>)
// CHECK: %[[RSTD:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} ins(%[[VAR]] : tensor<8xf32>)
// CHECK: arith.addf
// CHECK-NEXT: math.sqrt
// CHECK-NEXT: arith.divf
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[COL]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[MU]], %[[G]], %[[RSTD]] :
// CHECK-NEXT: ^bb0(%[[A:.+]]: f32, %[[M:.+]]: f32, %[[S:.+]]: f32, %[[R:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[A]], %[[M]]
// CHECK-NEXT: %[[N:.+]] = arith.mulf %[[C]], %[[R]]
// CHECK-NEXT: %[[Y:.+]] = arith.mulf %[[N]], %[[S]]
// CHECK-NEXT: linalg.yield %[[Y]]
func.func @norm(%x: tensor<8x32xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %g: tensor<32xf32>) -> tensor<8x32xf32> {
  %eps = arith.constant 1.0e-5 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mu, %var, %g : tensor<8x32xf32>, tensor<8xf32>, tensor<8xf32>, tensor<32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %s: f32, %o: f32):
    %c = arith.subf %a, %m : f32
    %ve = arith.addf %v, %eps : f32
    %sd = math.sqrt %ve : f32
    %n = arith.divf %c, %sd : f32
    %r = arith.mulf %n, %s : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// In a reduction: the division by z[i] (invariant along the reduced j)
// becomes a multiplication by 1 / z[i], computed per row; exp(b[i]) too. The
// accumulator's combination stays.
// CHECK-LABEL: func.func @reduction
// CHECK: %[[H:.+]]:2 = linalg.generic {{.*}} iterator_types = ["parallel"]
// CHECK-DAG: math.exp
// CHECK-DAG: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}}, %[[H]]#{{[01]}}, %[[H]]#{{[01]}} :
// CHECK-NOT: arith.divf
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK-NEXT: linalg.yield
func.func @reduction(%x: tensor<8x32xf32>, %z: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %z, %b : tensor<8x32xf32>, tensor<8xf32>, tensor<8xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %zz: f32, %bb: f32, %acc: f32):
    %q = arith.divf %a, %zz : f32
    %eb = math.exp %bb : f32
    %t = arith.addf %q, %eb : f32
    %r = arith.addf %acc, %t : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Left alone: f16 divisions (a second rounding would show), cheap invariant
// values (an add), values of the accumulator, and divisions whose divisor
// varies along every loop the dividend does.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: iterator_types = ["parallel"]}
// CHECK: arith.divf %{{.+}}, %{{.+}} : f16
// CHECK: arith.addf
// CHECK: arith.divf %{{.+}}, %{{.+}} : f32
// CHECK: math.exp
func.func @alone(%x: tensor<8x32xf16>, %z: tensor<8xf16>, %y: tensor<8x32xf32>, %w: tensor<8xf32>) -> (tensor<8x32xf16>, tensor<8x32xf32>) {
  %c1 = arith.constant 1.0 : f32
  %e16 = tensor.empty() : tensor<8x32xf16>
  %e32 = tensor.empty() : tensor<8x32xf32>
  %a = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<8x32xf16>, tensor<8xf16>) outs(%e16 : tensor<8x32xf16>) {
  ^bb0(%p: f16, %q: f16, %o: f16):
    %d = arith.divf %p, %q : f16
    linalg.yield %d : f16
  } -> tensor<8x32xf16>
  %b = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y, %w : tensor<8x32xf32>, tensor<8xf32>) outs(%e32 : tensor<8x32xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %q, %c1 : f32
    %d = arith.divf %s, %p : f32
    %t = math.exp %o : f32
    %u = arith.addf %d, %t : f32
    linalg.yield %u : f32
  } -> tensor<8x32xf32>
  return %a, %b : tensor<8x32xf16>, tensor<8x32xf32>
}

// -----

// Attention's dv = sum(i) p[i, j] * do[i, e] with p = exp(s[i, j] - m[i]) *
// r[i], a loop nest (j, e, i): p depends on the loops j and i. It is hoisted
// into a tensor indexed as s is, p[i, j] (a generic over (i, j) reading s
// row by row), not p[j, i] in the loops' order (which would walk s down its
// columns); dv reads it at (i, j).
#s = affine_map<(j, e, i) -> (i, j)>
#m = affine_map<(j, e, i) -> (i)>
#do = affine_map<(j, e, i) -> (i, e)>
#dv = affine_map<(j, e, i) -> (j, e)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[PT:.+]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-LABEL: func.func @transposed_read
// CHECK-SAME: (%[[S:.+]]: tensor<6x9xf32>, %[[M:.+]]: tensor<6xf32>, %[[R:.+]]: tensor<6xf32>, %[[DO:.+]]: tensor<6x4xf32>)
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[S]], %[[M]], %[[R]] : tensor<6x9xf32>, tensor<6xf32>, tensor<6xf32>) outs(%{{.+}} : tensor<6x9xf32>)
// CHECK: math.exp
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[PT]], #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DO]], %[[P]] : tensor<6x4xf32>, tensor<6x9xf32>)
func.func @transposed_read(%s: tensor<6x9xf32>, %m: tensor<6xf32>, %r: tensor<6xf32>,
                           %do: tensor<6x4xf32>) -> tensor<9x4xf32> {
  %e = tensor.empty() : tensor<9x4xf32>
  %dv = linalg.generic {indexing_maps = [#s, #m, #m, #do, #dv], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %m, %r, %do : tensor<6x9xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6x4xf32>) outs(%e : tensor<9x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %g: f32, %acc: f32):
    %0 = arith.subf %a, %b : f32
    %1 = math.exp %0 : f32
    %2 = arith.mulf %1, %c : f32
    %3 = arith.mulf %2, %g : f32
    %4 = arith.addf %acc, %3 : f32
    linalg.yield %4 : f32
  } -> tensor<9x4xf32>
  return %dv : tensor<9x4xf32>
}
