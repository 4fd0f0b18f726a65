// Direct convolutions (CpuDirectConv.cpp): neo-tile with the default
// direct-convolutions=true, after neo-fold-gemm-fills (AVX-512 schedules:
// cpu=x86-64-v4; mr = 8, nr = 32).
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-select-schedules{cpu=x86-64-v4},neo-fold-gemm-fills,neo-tile))' | FileCheck %s

// A 3x3 convolution's training step, x: 2x3x10x10, w: 8x3x3x3 (padding 1).
// Planes of rows of 11 (the zero right of a row is the next row's left
// padding), 10 rows of outputs = 110 flat columns; a plane holds 12 rows
// and room for the last block of 32 columns at the largest tap offset
// (128 + 24 -> 160 elements).
// The forward: the fill of y folded (y written, not added to); w packed
// once (1 block of 8 rows x 27 depths), a table of the 27 depths' offsets,
// x's 6 planes copied in parallel, then per (n, block of columns) a kernel
// of 8 x 2 vector accumulators whose B vectors are loads of the planes, and
// the tile stored into y's rows (plain vectors, masked at the rows' ends).
// CHECK-LABEL: func.func @conv_fwdbwd
// CHECK-SAME: (%[[X:[^:]+]]: memref<2x3x10x10xf32> {{.*}}, %[[W:[^:]+]]: memref<8x3x3x3xf32> {{.*}}, %[[DY:[^:]+]]: memref<2x8x10x10xf32> {{.*}}, %[[Y:[^:]+]]: memref<2x8x10x10xf32> {{.*}}, %[[DX:[^:]+]]: memref<2x3x10x10xf32> {{.*}}, %[[DW:[^:]+]]: memref<8x3x3x3xf32>
// CHECK-NOT: linalg.fill
// CHECK: %[[AP:.+]] = memref.alloc() {{.*}} : memref<1x27x8xf32>
// CHECK: memref.load %[[W]]
// CHECK: %[[OFF:.+]] = memref.alloc() : memref<27xindex>
// CHECK: %[[XP:.+]] = memref.alloc() {{.*}} : memref<960xf32>
// CHECK: scf.parallel
// CHECK: vector.maskedload %[[X]]
// CHECK: vector.maskedstore %[[XP]]
// CHECK: scf.parallel
// CHECK: memref.alloc() {{.*}} : memref<8x32xf32>
// CHECK: memref.load %[[OFF]]
// CHECK: vector.load %[[XP]]
// CHECK: vector.load %[[XP]]
// CHECK-COUNT-16: vector.fma
// CHECK: } {llvm.loop_annotation = #{{.+}}}
// CHECK: vector.store %{{.+}}, %[[Y]]
// CHECK: vector.maskedstore %[[Y]]
// The data gradient: the same kernel over dy's 16 planes (w transposed:
// 72 depths (k, r, s), taps counted down so that the offsets ascend).
// CHECK: memref.alloc() {{.*}} : memref<1x72x8xf32>
// CHECK: memref.alloc() : memref<72xindex>
// CHECK: %[[DYP:.+]] = memref.alloc() {{.*}} : memref<2560xf32>
// CHECK: vector.load %[[DYP]]
// CHECK: vector.store %{{.+}}, %[[DX]]
// The weight gradient: dy's planes exactly (rows of 11, the eleventh
// column zero: 16 planes of 112) and x's (6 of 144); per tile of 4 rows
// (k) x 4 columns (c, r, s), 4 + 4 row loads and 16 FMAs per 16 flat
// points, summed over the lanes once and stored into dw.
// CHECK: memref.alloc() : memref<8xindex>
// CHECK: memref.alloc() : memref<28xindex>
// CHECK: %[[AROWS:.+]] = memref.alloc() {{.*}} : memref<1792xf32>
// CHECK: %[[BROWS:.+]] = memref.alloc() {{.*}} : memref<864xf32>
// CHECK: scf.parallel
// CHECK-COUNT-4: vector.load %[[AROWS]]
// CHECK-COUNT-4: vector.load %[[BROWS]]
// CHECK-COUNT-16: vector.fma
// CHECK: vector.reduction <add>, %{{.+}} fastmath<reassoc>
// CHECK: memref.store %{{.+}}, %[[DW]]
// CHECK: return
func.func @conv_fwdbwd(%arg0: memref<2x3x10x10xf32> {neo.name = "x"}, %arg1: memref<8x3x3x3xf32> {neo.name = "w"}, %arg2: memref<2x8x10x10xf32> {neo.name = "dy"}, %arg3: memref<2x8x10x10xf32> {neo.name = "y"}, %arg4: memref<2x3x10x10xf32> {neo.name = "dx"}, %arg5: memref<8x3x3x3xf32> {neo.name = "dw"}) attributes {neo.autodiff.generated} {
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  %c10 = arith.constant 10 : index
  %c-1 = arith.constant -1 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg3 : memref<2x8x10x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<8x3x3x3xf32>) outs(%arg3 : memref<2x8x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = linalg.index 4 : index
    %4 = linalg.index 5 : index
    %5 = linalg.index 6 : index
    %6 = arith.addi %1, %4 : index
    %7 = arith.addi %6, %c-1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.maxsi %7, %c0 : index
    %10 = arith.cmpi slt, %9, %c10 : index
    %11 = arith.andi %8, %10 : i1
    %12 = arith.minsi %9, %c9 : index
    %13 = arith.addi %2, %5 : index
    %14 = arith.addi %13, %c-1 : index
    %15 = arith.cmpi sge, %14, %c0 : index
    %16 = arith.andi %11, %15 : i1
    %17 = arith.maxsi %14, %c0 : index
    %18 = arith.cmpi slt, %17, %c10 : index
    %19 = arith.andi %16, %18 : i1
    %20 = arith.minsi %17, %c9 : index
    %21 = memref.load %arg0[%0, %3, %12, %20] : memref<2x3x10x10xf32>
    %22 = arith.select %19, %21, %cst : f32
    %23 = arith.mulf %22, %in : f32
    %24 = arith.addf %out, %23 : f32
    linalg.yield %24 : f32
  }
  linalg.fill ins(%cst : f32) outs(%arg4 : memref<2x3x10x10xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d1, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<8x3x3x3xf32>) outs(%arg4 : memref<2x3x10x10xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = linalg.index 4 : index
    %4 = linalg.index 5 : index
    %5 = linalg.index 6 : index
    %6 = arith.subi %1, %4 : index
    %7 = arith.addi %6, %c1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.subi %4, %1 : index
    %10 = arith.addi %9, %c8 : index
    %11 = arith.cmpi sge, %10, %c0 : index
    %12 = arith.andi %8, %11 : i1
    %13 = arith.subi %2, %5 : index
    %14 = arith.addi %13, %c1 : index
    %15 = arith.cmpi sge, %14, %c0 : index
    %16 = arith.andi %12, %15 : i1
    %17 = arith.subi %5, %2 : index
    %18 = arith.addi %17, %c8 : index
    %19 = arith.cmpi sge, %18, %c0 : index
    %20 = arith.andi %16, %19 : i1
    %21 = arith.maxsi %7, %c0 : index
    %22 = arith.cmpi slt, %21, %c10 : index
    %23 = arith.andi %8, %22 : i1
    %24 = arith.minsi %21, %c9 : index
    %25 = arith.andi %23, %15 : i1
    %26 = arith.maxsi %14, %c0 : index
    %27 = arith.cmpi slt, %26, %c10 : index
    %28 = arith.andi %25, %27 : i1
    %29 = arith.minsi %26, %c9 : index
    %30 = memref.load %arg2[%0, %3, %24, %29] : memref<2x8x10x10xf32>
    %31 = arith.select %28, %30, %cst : f32
    %32 = arith.mulf %31, %in : f32
    %33 = arith.addf %out, %32 : f32
    %34 = arith.select %20, %33, %out : f32
    linalg.yield %34 : f32
  }
  linalg.fill ins(%cst : f32) outs(%arg5 : memref<8x3x3x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d4, d0, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg2 : memref<2x8x10x10xf32>) outs(%arg5 : memref<8x3x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 1 : index
    %1 = linalg.index 2 : index
    %2 = linalg.index 3 : index
    %3 = linalg.index 4 : index
    %4 = linalg.index 5 : index
    %5 = linalg.index 6 : index
    %6 = arith.addi %1, %4 : index
    %7 = arith.addi %6, %c-1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.maxsi %7, %c0 : index
    %10 = arith.cmpi slt, %9, %c10 : index
    %11 = arith.andi %8, %10 : i1
    %12 = arith.minsi %9, %c9 : index
    %13 = arith.addi %2, %5 : index
    %14 = arith.addi %13, %c-1 : index
    %15 = arith.cmpi sge, %14, %c0 : index
    %16 = arith.andi %11, %15 : i1
    %17 = arith.maxsi %14, %c0 : index
    %18 = arith.cmpi slt, %17, %c10 : index
    %19 = arith.andi %16, %18 : i1
    %20 = arith.minsi %17, %c9 : index
    %21 = memref.load %arg0[%3, %0, %12, %20] : memref<2x3x10x10xf32>
    %22 = arith.select %19, %21, %cst : f32
    %23 = arith.mulf %in, %22 : f32
    %24 = arith.addf %out, %23 : f32
    linalg.yield %24 : f32
  }
  return
}

// -----

// A stride of 2: output column q reads every other input column, so V
// outputs do not read V consecutive elements: an implicit GEMM (packed B
// tiles of 32 columns), whose fill is folded too.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: linalg.fill
// CHECK: memref.alloc() {{.*}} : memref<{{[0-9]+}}x{{[0-9]+}}x32xf32>
// CHECK: vector.fma
func.func @strided(%arg0: memref<1x2x9x9xf32> {neo.name = "x"}, %arg1: memref<4x2x3x3xf32> {neo.name = "w"}, %arg2: memref<1x4x5x5xf32> {neo.name = "y"}) {
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %c-1 = arith.constant -1 : index
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %cst = arith.constant 0.000000e+00 : f32
  linalg.fill ins(%cst : f32) outs(%arg2 : memref<1x4x5x5xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<4x2x3x3xf32>) outs(%arg2 : memref<1x4x5x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = linalg.index 2 : index
    %1 = linalg.index 3 : index
    %2 = linalg.index 4 : index
    %3 = linalg.index 5 : index
    %4 = linalg.index 6 : index
    %5 = arith.muli %0, %c2 overflow<nsw> : index
    %6 = arith.addi %5, %3 : index
    %7 = arith.addi %6, %c-1 : index
    %8 = arith.cmpi sge, %7, %c0 : index
    %9 = arith.maxsi %7, %c0 : index
    %10 = arith.cmpi slt, %9, %c9 : index
    %11 = arith.andi %8, %10 : i1
    %12 = arith.minsi %9, %c8 : index
    %13 = arith.muli %1, %c2 overflow<nsw> : index
    %14 = arith.addi %13, %4 : index
    %15 = arith.addi %14, %c-1 : index
    %16 = arith.cmpi sge, %15, %c0 : index
    %17 = arith.andi %11, %16 : i1
    %18 = arith.maxsi %15, %c0 : index
    %19 = arith.cmpi slt, %18, %c9 : index
    %20 = arith.andi %17, %19 : i1
    %21 = arith.minsi %18, %c8 : index
    %22 = memref.load %arg0[%c0, %2, %12, %21] : memref<1x2x9x9xf32>
    %23 = arith.select %20, %22, %cst : f32
    %24 = arith.mulf %23, %in : f32
    %25 = arith.addf %out, %24 : f32
    linalg.yield %25 : f32
  }
  return
}
