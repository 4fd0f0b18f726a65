// Implicit-GEMM epilogues (neo-gpu-map): a padded convolution's bias and
// tanh run as the tensor-core kernel stores its sums (here in place on y,
// the convolution's output), but not when the consumer would write a buffer
// that the convolution still reads: x, which the implicit GEMM gathers in
// its body (not one of its inputs), while other blocks read it.
// RUN: neo-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(neo-gpu-select-schedules{target=cuda-sm_80 mma=tf32},neo-gpu-map))' | FileCheck %s

// CHECK-LABEL: func.func @in_place
// CHECK: math.tanh
// CHECK: neo.kernel = "gemm_implicit_mma_epilogue"
// CHECK-NOT: gpu.launch
// CHECK: return
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d1)>
  func.func @in_place(%arg0: memref<1x32x8x8xf32> {neo.name = "x"}, %arg1: memref<32x32x3x3xf32> {neo.name = "w"}, %arg2: memref<32xf32> {neo.name = "b"}, %arg3: memref<1x32x8x8xf32> {neo.name = "y"}) {
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c-1 = arith.constant -1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%arg3 : memref<1x32x8x8xf32>)
    linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<32x32x3x3xf32>) outs(%arg3 : memref<1x32x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = linalg.index 2 : index
      %1 = linalg.index 3 : index
      %2 = linalg.index 4 : index
      %3 = linalg.index 5 : index
      %4 = linalg.index 6 : index
      %5 = arith.addi %0, %3 : index
      %6 = arith.addi %5, %c-1 : index
      %7 = arith.cmpi sge, %6, %c0 : index
      %8 = arith.maxsi %6, %c0 : index
      %9 = arith.cmpi slt, %8, %c8 : index
      %10 = arith.andi %7, %9 : i1
      %11 = arith.minsi %8, %c7 : index
      %12 = arith.addi %1, %4 : index
      %13 = arith.addi %12, %c-1 : index
      %14 = arith.cmpi sge, %13, %c0 : index
      %15 = arith.andi %10, %14 : i1
      %16 = arith.maxsi %13, %c0 : index
      %17 = arith.cmpi slt, %16, %c8 : index
      %18 = arith.andi %15, %17 : i1
      %19 = arith.minsi %16, %c7 : index
      %20 = memref.load %arg0[%c0, %2, %11, %19] : memref<1x32x8x8xf32>
      %21 = arith.select %18, %20, %cst : f32
      %22 = arith.mulf %21, %in : f32
      %23 = arith.addf %out, %22 : f32
      linalg.yield %23 : f32
    }
    linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %arg2 : memref<1x32x8x8xf32>, memref<32xf32>) outs(%arg3 : memref<1x32x8x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      %1 = math.tanh %0 : f32
      linalg.yield %1 : f32
    }
    return
  }

// -----

// CHECK-LABEL: func.func @writes_gathered_input
// CHECK: neo.kernel = "gemm_implicit_mma"
// CHECK: gpu.launch
// CHECK: math.tanh
// CHECK: return
#map = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#map1 = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map3 = affine_map<(d0, d1, d2, d3) -> (d1)>
  func.func @writes_gathered_input(%arg0: memref<1x32x8x8xf32> {neo.name = "x"}, %arg1: memref<32x32x3x3xf32> {neo.name = "w"}, %arg2: memref<32xf32> {neo.name = "b"}, %arg3: memref<1x32x8x8xf32> {neo.name = "y"}) {
    %c7 = arith.constant 7 : index
    %c8 = arith.constant 8 : index
    %c-1 = arith.constant -1 : index
    %c0 = arith.constant 0 : index
    %cst = arith.constant 0.000000e+00 : f32
    linalg.fill ins(%cst : f32) outs(%arg3 : memref<1x32x8x8xf32>)
    linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg1 : memref<32x32x3x3xf32>) outs(%arg3 : memref<1x32x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = linalg.index 2 : index
      %1 = linalg.index 3 : index
      %2 = linalg.index 4 : index
      %3 = linalg.index 5 : index
      %4 = linalg.index 6 : index
      %5 = arith.addi %0, %3 : index
      %6 = arith.addi %5, %c-1 : index
      %7 = arith.cmpi sge, %6, %c0 : index
      %8 = arith.maxsi %6, %c0 : index
      %9 = arith.cmpi slt, %8, %c8 : index
      %10 = arith.andi %7, %9 : i1
      %11 = arith.minsi %8, %c7 : index
      %12 = arith.addi %1, %4 : index
      %13 = arith.addi %12, %c-1 : index
      %14 = arith.cmpi sge, %13, %c0 : index
      %15 = arith.andi %10, %14 : i1
      %16 = arith.maxsi %13, %c0 : index
      %17 = arith.cmpi slt, %16, %c8 : index
      %18 = arith.andi %15, %17 : i1
      %19 = arith.minsi %16, %c7 : index
      %20 = memref.load %arg0[%c0, %2, %11, %19] : memref<1x32x8x8xf32>
      %21 = arith.select %18, %20, %cst : f32
      %22 = arith.mulf %21, %in : f32
      %23 = arith.addf %out, %22 : f32
      linalg.yield %23 : f32
    }
    linalg.generic {indexing_maps = [#map2, #map3, #map2], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg3, %arg2 : memref<1x32x8x8xf32>, memref<32xf32>) outs(%arg0 : memref<1x32x8x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %0 = arith.addf %in, %in_0 : f32
      %1 = math.tanh %0 : f32
      linalg.yield %1 : f32
    }
    return
  }
