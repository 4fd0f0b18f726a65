// RUN: neo-opt %s --convert-neo-to-linalg="split-borders=true" --canonicalize | FileCheck %s
// RUN: neo-opt %s --convert-neo-to-linalg | FileCheck %s --check-prefix=OFF
// A padded window (x[p + r - 1]) leaves its operand only near the ends of p:
// split-borders lowers it as an interior generic that reads x with a plain
// affine map (no clamps, no selects) and border generics that check.

// CHECK-DAG: #[[DW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>

// 1-D window: p in [0, 1), [1, 15), [15, 16); each writes its slice.
// CHECK-LABEL: func.func @window1d
// CHECK: %[[E:.*]] = tensor.empty() : tensor<16xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0] [1] [1]
// CHECK: %[[F0:.*]] = linalg.fill {{.*}} outs(%[[S0]] : tensor<1xf32>)
// CHECK: %[[B0:.*]] = linalg.generic {{.*}} outs(%[[F0]] : tensor<1xf32>)
// CHECK: arith.maxsi
// CHECK: tensor.extract %arg0
// CHECK: arith.select
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[B0]] into %[[E]][0] [1] [1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[I0]][1] [14] [1]
// CHECK: %[[F1:.*]] = linalg.fill {{.*}} outs(%[[S1]] : tensor<14xf32>)
// CHECK: %[[B1:.*]] = linalg.generic {indexing_maps = [#[[WIN:.*]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%arg0, %arg1 : tensor<16xf32>, tensor<3xf32>) outs(%[[F1]] : tensor<14xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %[[O:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[W]]
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[O]], %[[M]]
// CHECK-NEXT: linalg.yield %[[A]]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[B1]] into %[[I0]][1] [14] [1]
// CHECK: tensor.extract_slice %[[I1]][15] [1] [1]
// CHECK: arith.minsi
// CHECK: tensor.insert_slice {{.*}}[15] [1] [1]
// OFF-LABEL: func.func @window1d
// OFF-COUNT-1: linalg.generic
// OFF-NOT: linalg.generic
// OFF-LABEL: func.func @depthwise
func.func @window1d(%x: tensor<16xf32>, %w: tensor<3xf32>) -> tensor<16xf32> {
  %0 = neo.compute ins(%x, %w : tensor<16xf32>, tensor<3xf32>) space [16] sum [3]
         maps [affine_map<(p, r) -> (p + r - 1)>, affine_map<(p, r) -> (r)>] -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<16xf32>
}

// The depthwise window: p and q split into 5 boxes, peeled like an onion:
// the first and last rows (the whole width, checked along p and q), the
// first and last columns of the other rows, and the interior, which reads
// x at (n, c, p + r, q + s) of the box, unchecked.
// CHECK-LABEL: func.func @depthwise
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [2, 3, 1, 12]
// CHECK: linalg.generic
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 0] [2, 3, 10, 1]
// CHECK: linalg.generic
// CHECK: linalg.generic {indexing_maps = [#[[DW]], #{{.*}}, #{{.*}}], {{.*}} outs(%{{.*}} : tensor<2x3x10x10xf32>)
// CHECK-NOT: tensor.extract %
// CHECK: linalg.yield
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 1, 11] [2, 3, 10, 1]
// CHECK: linalg.generic
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 11, 0] [2, 3, 1, 12]
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
func.func @depthwise(%x: tensor<2x3x12x12xf32>, %w: tensor<3x3x3xf32>) -> tensor<2x3x12x12xf32> {
  %0 = neo.compute ins(%x, %w : tensor<2x3x12x12xf32>, tensor<3x3x3xf32>) space [2, 3, 12, 12] sum [3, 3]
         maps [affine_map<(n, c, p, q, r, s) -> (n, c, p + r - 1, q + s - 1)>,
               affine_map<(n, c, p, q, r, s) -> (c, r, s)>] -> tensor<2x3x12x12xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<2x3x12x12xf32>
}

// The gradient's domain (the forward point in its space) holds everywhere in
// the interior: no select there.
// CHECK-LABEL: func.func @domain
// CHECK: linalg.generic
// CHECK: arith.select
// CHECK: tensor.insert_slice {{.*}}[0] [1] [1]
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<14xf32>)
// CHECK-NOT: arith.select
// CHECK: linalg.yield
// CHECK: tensor.insert_slice {{.*}}[1] [14] [1]
func.func @domain(%dy: tensor<16xf32>, %w: tensor<3xf32>) -> tensor<16xf32> {
  %0 = neo.compute ins(%dy, %w : tensor<16xf32>, tensor<3xf32>) space [16] sum [3]
         maps [affine_map<(h, r) -> (h - r + 1)>, affine_map<(h, r) -> (r)>]
         where affine_set<(h, r) : (h - r + 1 >= 0, -h + r + 14 >= 0)> -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<16xf32>
}

// A window over a reduction dim (the weight gradient): p is split into three
// reductions that accumulate into one result in turn; q, the innermost
// reduction dim (the CPU's vector dim), is not split.
// CHECK-LABEL: func.func @reduction_window
// CHECK: %[[F:.*]] = linalg.fill
// CHECK: %[[R0:.*]] = linalg.generic {{.*}} outs(%[[F]] : tensor<3x3xf32>)
// CHECK: %[[R1:.*]] = linalg.generic {{.*}} outs(%[[R0]] : tensor<3x3xf32>)
// CHECK: %[[R2:.*]] = linalg.generic {{.*}} outs(%[[R1]] : tensor<3x3xf32>)
// CHECK: return %[[R2]]
func.func @reduction_window(%x: tensor<12x12xf32>, %dy: tensor<12x12xf32>) -> tensor<3x3xf32> {
  %0 = neo.compute ins(%x, %dy : tensor<12x12xf32>, tensor<12x12xf32>) space [3, 3] sum [12, 12]
         maps [affine_map<(r, s, p, q) -> (p + r - 1, q + s - 1)>,
               affine_map<(r, s, p, q) -> (p, q)>] -> tensor<3x3xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<3x3xf32>
}

// Max pooling with -inf padding, stride 2: only the low end leaves x, so
// two boxes, p in [0, 1) (filled with -inf, checked) and [1, 8).
// CHECK-LABEL: func.func @maxpool
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: linalg.generic
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<7xf32>)
// CHECK-NOT: arith.select
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
func.func @maxpool(%x: tensor<16xf32>) -> tensor<8xf32> {
  %0 = neo.compute ins(%x : tensor<16xf32>) space [8] max [3]
         maps [affine_map<(p, r) -> (2 * p + r - 1)>] pad [-inf] -> tensor<8xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<8xf32>
}

// Left alone: a convolution with output channels (GEMM-shaped: the implicit
// GEMM generator packs its window), a window without a reduction dim, and
// dims too short to split.
// CHECK-LABEL: func.func @conv
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @conv(%x: tensor<1x2x12x12xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x12x12xf32> {
  %0 = neo.compute ins(%x, %w : tensor<1x2x12x12xf32>, tensor<4x2x3x3xf32>) space [1, 4, 12, 12] sum [2, 3, 3]
         maps [affine_map<(n, k, p, q, c, r, s) -> (n, c, p + r - 1, q + s - 1)>,
               affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>] -> tensor<1x4x12x12xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<1x4x12x12xf32>
}

// CHECK-LABEL: func.func @shift
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @shift(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = neo.compute ins(%x : tensor<16xf32>) space [16] maps [affine_map<(p) -> (p - 1)>] -> tensor<16xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<16xf32>
}

// CHECK-LABEL: func.func @short
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @short(%x: tensor<4xf32>, %w: tensor<3xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x, %w : tensor<4xf32>, tensor<3xf32>) space [4] sum [3]
         maps [affine_map<(p, r) -> (p + r - 1)>, affine_map<(p, r) -> (r)>] -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    neo.yield %1 : f32
  }
  return %0 : tensor<4xf32>
}
