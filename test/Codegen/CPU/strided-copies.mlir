// neo-lower-strided-copies: a memref.copy from or to a strided memref (it
// would call the memrefCopy runtime function, which the JIT does not link)
// becomes linalg.copy; a contiguous one stays a memref.copy (a memcpy).
// RUN: neo-opt %s --neo-lower-strided-copies | FileCheck %s
// CHECK-LABEL: func.func @copies(
// CHECK: linalg.copy ins(%{{.*}} : memref<4x8xf32, strided<[32, 1], offset: 8>>) outs(%{{.*}} : memref<4x8xf32>)
// CHECK: memref.copy %arg1, %arg2 : memref<4x8xf32> to memref<4x8xf32>
// CHECK-NOT: memref.copy
func.func @copies(%a: memref<4x32xf32>, %b: memref<4x8xf32>, %c: memref<4x8xf32>) {
  %s = memref.subview %a[0, 8] [4, 8] [1, 1] : memref<4x32xf32> to memref<4x8xf32, strided<[32, 1], offset: 8>>
  memref.copy %s, %b : memref<4x8xf32, strided<[32, 1], offset: 8>> to memref<4x8xf32>
  memref.copy %b, %c : memref<4x8xf32> to memref<4x8xf32>
  return
}
