// The names of the derived functions are checked before anything is made:
// an empty name made '@<<INVALID EMPTY SYMBOL>>' and exited 0, and a name
// taken by a function later in the module went unnoticed (two symbols of one
// name; neo.grad in Python then ran the user's f_fwdbwd as f's gradient).
// RUN: not neo-opt %s --neo-autodiff="function=f grad-name=" 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=" 2>&1 | FileCheck %s --check-prefix=EMPTYC
// RUN: not neo-opt %s --neo-autodiff="function=f" 2>&1 | FileCheck %s --check-prefix=TAKEN
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both grad-name=f_grad_taken" 2>&1 | FileCheck %s --check-prefix=TAKENG
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both grad-name={f}" 2>&1 | FileCheck %s --check-prefix=SELF
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=same grad-name=same" 2>&1 | FileCheck %s --check-prefix=SAME
// With split=true the forward and backward halves' names are checked too.
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both split=true fwd-name=" 2>&1 | FileCheck %s --check-prefix=EMPTYF
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both split=true fwd-name=h bwd-name=h" 2>&1 | FileCheck %s --check-prefix=SAMEFB
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both split=true bwd-name=f_grad_taken" 2>&1 | FileCheck %s --check-prefix=TAKENB
// RUN: not neo-opt %s --neo-autodiff="function=f combined-name=both split=true fwd-name=both" 2>&1 | FileCheck %s --check-prefix=SAMEF
// EMPTYF: error: neo-autodiff: fwd-name '' gives an empty function name
// SAMEFB: error: neo-autodiff: bwd-name and fwd-name both give 'h': the backward function and the forward function need different names
// TAKENB: error: neo-autodiff: cannot name the backward function of 'f' 'f_grad_taken': a symbol of that name already exists (set bwd-name to another name)
// SAMEF: error: neo-autodiff: fwd-name and combined-name both give 'both': the forward function and the combined function need different names
// EMPTY: error: neo-autodiff: grad-name '' gives an empty function name
// EMPTYC: error: neo-autodiff: combined-name '' gives an empty function name
// TAKEN: error: neo-autodiff: cannot name the combined function of 'f' 'f_fwdbwd': a symbol of that name already exists (set combined-name to another name)
// TAKEN: note: the existing symbol
// TAKENG: error: neo-autodiff: cannot name the gradient of 'f' 'f_grad_taken': a symbol of that name already exists (set grad-name to another name)
// SELF: error: neo-autodiff: cannot name the gradient of 'f' 'f': a symbol of that name already exists
// SAME: error: neo-autodiff: grad-name and combined-name both give 'same': the gradient and the combined function need different names

// Free names work, and nothing is left behind by the failures above.
// RUN: neo-opt %s --neo-autodiff="function=f combined-name=f_both" | FileCheck %s
// CHECK-LABEL: func.func @f(
// CHECK-LABEL: func.func @f_both(
// CHECK-LABEL: func.func @f_grad(
// CHECK-LABEL: func.func @f_fwdbwd(
// CHECK-SAME: -> tensor<4xf32>
// CHECK-LABEL: func.func @f_grad_taken(
// CHECK-NOT: func.func
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%a: f32):
    %m = arith.mulf %a, %a : f32
    neo.yield %m : f32
  }
  return %0 : tensor<4xf32>
}
// A user's function that happens to have the default name.
func.func @f_fwdbwd(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @f_grad_taken(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
