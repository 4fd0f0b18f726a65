// RUN: neo-opt %s | neo-opt | FileCheck %s
// RUN: neo-opt %s --cse | FileCheck %s --check-prefix=CSE
// RUN: neo-opt %s --convert-neo-to-linalg | FileCheck %s --check-prefix=LOOPS

// neo.invert_index round-trips, with and without segments.
// CHECK-LABEL: func.func @tokens
// CHECK: %{{.*}}, %{{.*}} = neo.invert_index of %arg0 : (tensor<8xi32>) -> (tensor<101xi32>, tensor<8xi32>)
func.func @tokens(%tok: tensor<8xi32>) -> (tensor<101xi32>, tensor<8xi32>) {
  %off, %pos = neo.invert_index of %tok : (tensor<8xi32>) -> (tensor<101xi32>, tensor<8xi32>)
  return %off, %pos : tensor<101xi32>, tensor<8xi32>
}

// CHECK-LABEL: func.func @csr
// CHECK: neo.invert_index of %arg0 segments %arg1 : (tensor<40xi64>, tensor<11xi32>) -> (tensor<11xi32>, tensor<40xi32>, tensor<40xi32>)
func.func @csr(%col: tensor<40xi64>, %rowptr: tensor<11xi32>)
    -> (tensor<11xi32>, tensor<40xi32>, tensor<40xi32>) {
  %off, %pos, %row = neo.invert_index of %col segments %rowptr
      : (tensor<40xi64>, tensor<11xi32>) -> (tensor<11xi32>, tensor<40xi32>, tensor<40xi32>)
  return %off, %pos, %row : tensor<11xi32>, tensor<40xi32>, tensor<40xi32>
}

// The identity within the rows: each position's row.
// CHECK-LABEL: func.func @rows
// CHECK: neo.invert_index segments %arg0 : (tensor<11xi32>) -> (tensor<41xi32>, tensor<40xi32>, tensor<40xi32>)
func.func @rows(%rowptr: tensor<11xi32>) -> tensor<40xi32> {
  %off, %pos, %row = neo.invert_index segments %rowptr
      : (tensor<11xi32>) -> (tensor<41xi32>, tensor<40xi32>, tensor<40xi32>)
  return %row : tensor<40xi32>
}

// A pure op: two inversions of one index tensor are one (the gradients of
// two reads through `col` share it).
// CSE-LABEL: func.func @shared
// CSE-COUNT-1: neo.invert_index
// CSE-NOT: neo.invert_index
func.func @shared(%col: tensor<40xi32>) -> (tensor<11xi32>, tensor<11xi32>) {
  %a, %p = neo.invert_index of %col : (tensor<40xi32>) -> (tensor<11xi32>, tensor<40xi32>)
  %b, %q = neo.invert_index of %col : (tensor<40xi32>) -> (tensor<11xi32>, tensor<40xi32>)
  return %a, %b : tensor<11xi32>, tensor<11xi32>
}

// Lowered to a counting sort on tensors: a counting pass over the rows'
// clamped ranges, the prefix sum, and the placing pass.
// LOOPS-LABEL: func.func @csr
// LOOPS: linalg.fill
// LOOPS: scf.for
// LOOPS: arith.maxsi
// LOOPS: scf.for
// LOOPS: scf.if
// LOOPS: tensor.insert
// LOOPS: scf.for
// LOOPS: tensor.insert
// LOOPS: scf.for
// LOOPS: scf.for
// LOOPS: scf.if
// LOOPS-COUNT-3: tensor.insert
// LOOPS-NOT: neo.invert_index
