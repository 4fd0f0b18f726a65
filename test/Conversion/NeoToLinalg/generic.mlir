// RUN: neo-opt %s -split-input-file -convert-neo-to-linalg | FileCheck %s
// RUN: neo-opt %s -split-input-file -convert-neo-to-linalg=slice-reads=false | FileCheck %s --check-prefix=NOSLICE

// In-bounds reads are generic inputs; the init of a sum is filled with 0.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32)
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : tensor<4x8xf32>) outs(%[[INIT]] : tensor<4xf32>)
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[E:.*]] = math.exp %[[IN]]
// CHECK: %[[S:.*]] = arith.addf %[[ACC]], %[[E]]
// CHECK: linalg.yield %[[S]]
func.func @row_sum(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4x8xf32>) space [4] sum [8]
         maps [affine_map<(i, k) -> (i, k)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    neo.yield %e : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// A max reduction starts from -inf and combines with maximumf.
// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
func.func @row_max(%a: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4x8xf32>) space [4] max [8]
         maps [affine_map<(i, k) -> (i, k)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// A padded read is taken in the body: only the lower bound can be left here,
// so only it is checked; the index is clamped and the pad value selected.
// CHECK-LABEL: func.func @shift
// CHECK: linalg.generic {{.*}} outs(
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: %[[IDX:.*]] = arith.addi %[[I]], %{{.*}}
// CHECK: %[[OK:.*]] = arith.cmpi sge, %[[IDX]], %{{.*}}
// CHECK: %[[CL:.*]] = arith.maxsi %[[IDX]], %{{.*}}
// CHECK-NOT: arith.cmpi slt
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[%[[CL]]] : tensor<8xf32>
// CHECK: %[[PAD:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: arith.select %[[OK]], %[[V]], %[[PAD]]
func.func @shift(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = neo.compute ins(%a : tensor<8xf32>) space [8]
         maps [affine_map<(i) -> (i - 1)>] pad [2.5] -> tensor<8xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<8xf32>
}

// -----

// The domain is evaluated in the body; skipped iterations keep the accumulator.
// CHECK-LABEL: func.func @tril
// CHECK: linalg.fill
// CHECK: %[[I:.*]] = linalg.index 0
// CHECK: %[[J:.*]] = linalg.index 1
// CHECK: %[[IN:.*]] = arith.cmpi sge, %{{.*}}, %{{.*}}
// CHECK: arith.select %[[IN]], %{{.*}}, %{{.*}}
func.func @tril(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = neo.compute ins(%a : tensor<4x4xf32>) space [4, 4]
         maps [affine_map<(i, j) -> (i, j)>] where affine_set<(i, j) : (i - j >= 0)> -> tensor<4x4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<4x4xf32>
}

// -----

// A reduction dim that no read names directly gets a shape-only operand.
// CHECK-DAG: #[[STRIDED:.*]] = affine_map<(d0, d1) -> (d0 * 2 + d1)>
// CHECK-DAG: #[[CARRIER:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @strided_sum
// CHECK: %[[SHAPE:.*]] = tensor.empty() : tensor<2xf32>
// CHECK: linalg.generic {indexing_maps = [#[[STRIDED]], #[[CARRIER]], #{{.*}}]
// CHECK-SAME: ins(%{{.*}}, %[[SHAPE]] : tensor<8xf32>, tensor<2xf32>)
// CHECK-NOT: tensor.extract
func.func @strided_sum(%a: tensor<8xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<8xf32>) space [4] sum [2]
         maps [affine_map<(i, r) -> (i * 2 + r)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// A sub-range read through a bare dim (4 iterations over a dim of 8) reads
// the leading slice of that extent as a generic input (which the vectorizer
// takes), not an element in the body.
// CHECK-LABEL: func.func @slice
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<4xf32>)
// CHECK-NOT: tensor.extract
// With slice-reads=false (the GPU pipeline's), it is taken in the body,
// without bounds checks.
// NOSLICE-LABEL: func.func @slice
// NOSLICE: linalg.generic {{.*}} outs(
// NOSLICE-NOT: arith.cmpi
// NOSLICE: tensor.extract %{{.*}} : tensor<8xf32>
func.func @slice(%a: tensor<8xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<8xf32>) space [4]
         maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    neo.yield %x : f32
  }
  return %0 : tensor<4xf32>
}

// -----

// neo.index becomes linalg.index; 0-d results; neo.constant becomes arith.constant.
// CHECK-LABEL: func.func @index_and_constant
// CHECK: arith.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK: linalg.index 0
// CHECK: -> tensor<f32>
func.func @index_and_constant() -> tensor<f32> {
  %c = neo.constant dense<1.0> : tensor<4xf32>
  %0 = neo.compute ins(%c : tensor<4xf32>) space [] sum [4]
         maps [affine_map<(k) -> (k)>] -> tensor<f32> {
  ^bb0(%x: f32):
    %k = neo.index 0
    %ki = arith.index_cast %k : index to i64
    %kf = arith.sitofp %ki : i64 to f32
    %m = arith.mulf %x, %kf : f32
    neo.yield %m : f32
  }
  return %0 : tensor<f32>
}

// -----

// neo.fused is inlined.
// CHECK-LABEL: func.func @fused
// CHECK-NOT: neo.
// CHECK: linalg.generic
// CHECK: return
func.func @fused(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = neo.fused ins(%a : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %s = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (3 - i)>] -> tensor<4xf32> {
    ^bb0(%u: f32):
      neo.yield %u : f32
    }
    neo.return %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A fused op whose members share one iteration space and read only the
// fused op's operands becomes one multi-output generic.
// CHECK-LABEL: func.func @horizontal
// CHECK: %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<16x64xf32>) outs(%{{.*}}, %{{.*}} : tensor<16xf32>, tensor<16xf32>)
// CHECK: ^bb0(%[[X:.*]]: f32, %[[A:.*]]: f32, %[[B:.*]]: f32):
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[X]]
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: %[[T:.*]] = arith.addf %[[B]], %[[SQ]]
// CHECK: linalg.yield %[[S]], %[[T]]
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @horizontal(%x: tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %r:2 = neo.fused ins(%x, %x : tensor<16x64xf32>, tensor<16x64xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%a: tensor<16x64xf32>, %b: tensor<16x64xf32>):
    %s = neo.compute ins(%a : tensor<16x64xf32>) space [16] sum [64] maps [affine_map<(i, k) -> (i, k)>] -> tensor<16xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    %q = neo.compute ins(%b : tensor<16x64xf32>) space [16] sum [64] maps [affine_map<(i, k) -> (i, k)>] -> tensor<16xf32> {
    ^bb0(%v: f32):
      %m = arith.mulf %v, %v : f32
      neo.yield %m : f32
    }
    neo.return %s, %q : tensor<16xf32>, tensor<16xf32>
  }
  return %r#0, %r#1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// Gate slices of one fused matrix (an LSTM's `g[n, j]` and `g[n, 4 + j]`, j
// < 4, of g: [2, 8]): the bare read takes the leading [2, 4] slice, the
// offset one stays whole with its map; both are generic inputs.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SHIFT:.*]] = affine_map<(d0, d1) -> (d0, d1 + 4)>
// CHECK-LABEL: func.func @gate_slices
// CHECK: %[[S:.*]] = tensor.extract_slice %[[G:.*]][0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SHIFT]], #[[ID]]]
// CHECK-SAME: ins(%[[S]], %[[G]] : tensor<2x4xf32>, tensor<2x8xf32>)
// CHECK-NOT: tensor.extract
func.func @gate_slices(%g: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %0 = neo.compute ins(%g, %g : tensor<2x8xf32>, tensor<2x8xf32>) space [2, 4]
         maps [affine_map<(n, j) -> (n, j)>, affine_map<(n, j) -> (n, j + 4)>] -> tensor<2x4xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = math.tanh %b : f32
    %p = arith.mulf %a, %t : f32
    neo.yield %p : f32
  }
  return %0 : tensor<2x4xf32>
}
