// b-in-place is off where the checks assume it: its default (auto) is on for
// Zen 4 and later hosts, where the large A * B below would keep its op.
// RUN: neo-opt %s --neo-share-gemms="b-in-place=off" | FileCheck %s
// RUN: neo-opt %s --neo-share-gemms="min-uses=1 b-in-place=off" | FileCheck %s --check-prefix=ALL
// RUN: neo-opt %s --neo-share-gemms="min-uses=0" | FileCheck %s --check-prefix=NONE
// RUN: neo-opt %s --neo-share-gemms="b-in-place=on" | FileCheck %s --check-prefix=INPLACE
// RUN: neo-opt %s --neo-share-gemms="b-in-place=off" --neo-tile="b-in-place=off" | FileCheck %s --check-prefix=TILED
// RUN: not neo-opt %s --neo-share-gemms="min-uses=-1" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not neo-opt %s --neo-share-gemms="b-in-place=maybe" 2>&1 | FileCheck %s --check-prefix=BADB
// Scheduled GEMMs of one variant (element type, operand layouts, schedule)
// call one private routine on memrefs of dynamic sizes and strides, rebuilt
// from each operand's base buffer, offset, sizes and outer strides (where
// every call passes the same constant, the routine uses the constant); a
// variant with fewer than min-uses GEMMs keeps its op. The two A * B of
// different sizes share a routine; so does the 3-D x[b, i, p] * w[p, j],
// whose m role (b, i) is collapsed at the call; A * B^T is alone. An op
// marked neo.serial runs on one thread: its variant has threads = 1. Ops
// inside an scf.forall keep their code (a call would keep the OpenMP
// lowering's alloca scope, which must stay one block, around the loops).

// CHECK-LABEL: func.func @gemms(
// CHECK-SAME: %[[A:[^:]+]]: memref<13x45xf32>, %[[B:[^:]+]]: memref<45x600xf32>, %[[C:[^:]+]]: memref<13x600xf32>
// CHECK: %[[BA:.+]], %[[OA:.+]], %[[SA:.+]]:2, %[[TA:.+]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK: %[[BB:.+]], %[[OB:.+]], %[[SB:.+]]:2, %[[TB:.+]]:2 = memref.extract_strided_metadata %[[B]]
// CHECK: %[[BC:.+]], %[[OC:.+]], %[[SC:.+]]:2, %[[TC:.+]]:2 = memref.extract_strided_metadata %[[C]]
// CHECK: call @[[NN:__neo_gemm_f32_mk_kn_mn_6x16_mc96_nc512_kc256_t2]](%[[BA]], %[[OA]], %[[SA]]#0, %[[SA]]#1, %[[TA]]#0, %[[BB]], %[[OB]], %[[SB]]#0, %[[SB]]#1, %[[TB]]#0, %[[BC]], %[[OC]], %[[SC]]#0, %[[SC]]#1, %[[TC]]#0)
// CHECK: call @[[NN]](
// CHECK: memref.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : memref<3x10x45xf32> into memref<30x45xf32>
// CHECK: call @[[NN]](
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}}, %{{.+}} : memref<13x45xf32>, memref<70x45xf32>)
// CHECK: scf.forall
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: call @[[SERIAL:__neo_gemm_f32_mk_kn_mn_6x16_mc96_nc512_kc256_t1]](
// CHECK: call @[[SERIAL]](
// CHECK: func.func private @[[NN]](%[[AB:[^:]+]]: memref<f32>, %[[AO:[^:]+]]: index, %[[AM:[^:]+]]: index, %[[AK:[^:]+]]: index, %[[AS:[^:]+]]: index,
// CHECK-SAME: attributes {llvm.linkage = #llvm.linkage<internal>, passthrough = ["noinline"]}
// CHECK: %[[AV:.+]] = memref.reinterpret_cast %[[AB]] to offset: [0], sizes: [%[[AM]], %[[AK]]], strides: [%[[AS]], 1] : memref<f32> to memref<?x?xf32, strided<[?, 1]>>
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #{{.+}}, #{{.+}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[AV]], %{{.+}} : memref<?x?xf32, strided<[?, 1]>>, memref<?x?xf32, strided<[?, 1]>>) outs(%{{.+}} : memref<?x?xf32, strided<[?, 1]>>)
// CHECK-SAME: neo.schedule = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 2>
// CHECK: arith.mulf
// CHECK: arith.addf
// The two serial GEMMs agree on every size, stride and offset: the
// routine's views are static (neo-tile's code for static sizes); the
// arguments stay, unused.
// CHECK: func.func private @[[SERIAL]](%[[SA0:[^:]+]]: memref<f32>,
// CHECK: memref.reinterpret_cast %[[SA0]] to offset: [0], sizes: [8, 16], strides: [16, 1] : memref<f32> to memref<8x16xf32, strided<[16, 1]>>
// CHECK: threads = 1>

// Every GEMM outside the forall shares with min-uses=1 (A * B^T gets a
// routine of its own).
// ALL-COUNT-9: call @__neo_gemm_
// ALL-COUNT-3: func.func private @__neo_gemm_
// NONE-NOT: __neo_gemm_

// With B read in place (a B of 2.3 MiB, one row block), the large A * B keeps
// its op; the other two A * B still share.
// INPLACE-LABEL: func.func @in_place(
// INPLACE: linalg.matmul
// INPLACE-SAME: memref<20x600xf32>, memref<600x1024xf32>
// INPLACE: call @__neo_gemm_f32_mk_kn_mn_6x16_mc96_nc512_kc256_t2(
// INPLACE: call @__neo_gemm_f32_mk_kn_mn_6x16_mc96_nc512_kc256_t2(

// neo-tile generates each routine once, from its run-time sizes.
// TILED-LABEL: func.func private @__neo_gemm_f32_mk_kn_mn_6x16_mc96_nc512_kc256_t2(
// TILED: memref.dim
// TILED: scf.parallel
// TILED: memref.alloc() {alignment = 64 : i64} : memref<32x256x16xf32>
// TILED: memref.alloc() {alignment = 64 : i64} : memref<16x256x6xf32>

// BAD: neo-share-gemms: min-uses must be >= 0, got -1
// BADB: neo-share-gemms: b-in-place must be auto, on or off, not 'maybe'

#nn = #neo.cpu_gemm<mr = 6, nr = 16, mc = 96, nc = 512, kc = 256, threads = 2>
func.func @gemms(%a: memref<13x45xf32>, %b: memref<45x600xf32>, %c: memref<13x600xf32>,
                 %a2: memref<70x203xf32>, %b2: memref<203x1100xf32>, %c2: memref<70x1100xf32>,
                 %x: memref<3x10x45xf32>, %w: memref<45x40xf32>, %y: memref<3x10x40xf32>,
                 %bt: memref<70x45xf32>, %ct: memref<13x70xf32>,
                 %s: memref<4x8x16xf32>, %t: memref<4x16x32xf32>, %u: memref<4x8x32xf32>) {
  linalg.matmul {neo.schedule = #nn} ins(%a, %b : memref<13x45xf32>, memref<45x600xf32>) outs(%c : memref<13x600xf32>)
  linalg.matmul {neo.schedule = #nn} ins(%a2, %b2 : memref<70x203xf32>, memref<203x1100xf32>) outs(%c2 : memref<70x1100xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, i, j, p) -> (b, i, p)>, affine_map<(b, i, j, p) -> (p, j)>, affine_map<(b, i, j, p) -> (b, i, j)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<3x10x45xf32>, memref<45x40xf32>) outs(%y : memref<3x10x40xf32>) attrs = {neo.schedule = #nn} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, j, p) -> (i, p)>, affine_map<(i, j, p) -> (j, p)>, affine_map<(i, j, p) -> (i, j)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<13x45xf32>, memref<70x45xf32>) outs(%ct : memref<13x70xf32>) attrs = {neo.schedule = #nn} {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  scf.forall (%i) in (4) {
    %si = memref.subview %s[%i, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1], offset: ?>>
    %ti = memref.subview %t[%i, 0, 0] [1, 16, 32] [1, 1, 1] : memref<4x16x32xf32> to memref<16x32xf32, strided<[32, 1], offset: ?>>
    %ui = memref.subview %u[%i, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1], offset: ?>>
    linalg.matmul {neo.schedule = #nn} ins(%si, %ti : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x32xf32, strided<[32, 1], offset: ?>>) outs(%ui : memref<8x32xf32, strided<[32, 1], offset: ?>>)
    linalg.matmul {neo.schedule = #nn} ins(%si, %ti : memref<8x16xf32, strided<[16, 1], offset: ?>>, memref<16x32xf32, strided<[32, 1], offset: ?>>) outs(%ui : memref<8x32xf32, strided<[32, 1], offset: ?>>)
  }
  %s0 = memref.subview %s[0, 0, 0] [1, 8, 16] [1, 1, 1] : memref<4x8x16xf32> to memref<8x16xf32, strided<[16, 1]>>
  %t0 = memref.subview %t[0, 0, 0] [1, 16, 32] [1, 1, 1] : memref<4x16x32xf32> to memref<16x32xf32, strided<[32, 1]>>
  %u0 = memref.subview %u[0, 0, 0] [1, 8, 32] [1, 1, 1] : memref<4x8x32xf32> to memref<8x32xf32, strided<[32, 1]>>
  linalg.matmul {neo.schedule = #nn, neo.serial} ins(%s0, %t0 : memref<8x16xf32, strided<[16, 1]>>, memref<16x32xf32, strided<[32, 1]>>) outs(%u0 : memref<8x32xf32, strided<[32, 1]>>)
  linalg.matmul {neo.schedule = #nn, neo.serial} ins(%s0, %t0 : memref<8x16xf32, strided<[16, 1]>>, memref<16x32xf32, strided<[32, 1]>>) outs(%u0 : memref<8x32xf32, strided<[32, 1]>>)
  return
}

func.func @in_place(%a: memref<20x600xf32>, %b: memref<600x1024xf32>, %c: memref<20x1024xf32>,
                    %a2: memref<13x45xf32>, %b2: memref<45x600xf32>, %c2: memref<13x600xf32>) {
  linalg.matmul {neo.schedule = #nn} ins(%a, %b : memref<20x600xf32>, memref<600x1024xf32>) outs(%c : memref<20x1024xf32>)
  linalg.matmul {neo.schedule = #nn} ins(%a2, %b2 : memref<13x45xf32>, memref<45x600xf32>) outs(%c2 : memref<13x600xf32>)
  linalg.matmul {neo.schedule = #nn} ins(%a2, %b2 : memref<13x45xf32>, memref<45x600xf32>) outs(%c2 : memref<13x600xf32>)
  return
}
