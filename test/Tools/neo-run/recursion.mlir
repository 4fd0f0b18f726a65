// A recursive func.call ran until it overflowed the stack (SIGSEGV at run
// time); a cycle of calls is now an error before compilation, at the call
// that closes it, in neo-run, the engine and the C API alike.
// RUN: not neo-run %s 2>&1 | FileCheck %s
// CHECK: recursion.mlir:[[@LINE+9]]:8: recursive call: 'self' -> 'self' is a cycle of calls; Neo cannot compile recursive functions
// RUN: sed 's/@self(%x)/@other(%x)/' %s > %t.mutual.mlir
// RUN: not neo-run %t.mutual.mlir --function=top 2>&1 | FileCheck %s --check-prefix=MUTUAL
// MUTUAL: recursive call: 'other' -> 'back' -> 'other' is a cycle of calls
func.func @top(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @self(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @self(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @back(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @back(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @other(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
