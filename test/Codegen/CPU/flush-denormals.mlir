// RUN: neo-opt %s -split-input-file -neo-flush-denormals | FileCheck %s

// An entry function saves MXCSR, sets FTZ and DAZ (0x8040 = 32832) and
// restores the saved value before each of its returns.
// CHECK-LABEL: llvm.func @entry
// CHECK: %[[SAVED:.+]] = llvm.alloca %{{.+}} x i32
// CHECK: %[[SLOT:.+]] = llvm.alloca %{{.+}} x i32
// CHECK: llvm.call_intrinsic "llvm.x86.sse.stmxcsr"(%[[SAVED]])
// CHECK: %[[OLD:.+]] = llvm.load %[[SAVED]] : !llvm.ptr -> i32
// CHECK: %[[BITS:.+]] = llvm.mlir.constant(32832 : i32) : i32
// CHECK: %[[NEW:.+]] = llvm.or %[[OLD]], %[[BITS]]
// CHECK: llvm.store %[[NEW]], %[[SLOT]]
// CHECK: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[SLOT]])
// CHECK: llvm.cond_br
// CHECK: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[SAVED]])
// CHECK-NEXT: llvm.return
// CHECK: llvm.call_intrinsic "llvm.x86.sse.ldmxcsr"(%[[SAVED]])
// CHECK-NEXT: llvm.return
llvm.func @entry(%p: !llvm.ptr, %c: i1) {
  llvm.cond_br %c, ^a, ^b
^a:
  llvm.call @kernel(%p) : (!llvm.ptr) -> ()
  llvm.return
^b:
  llvm.return
}

// Internal functions (outlined kernels) run inside an entry and declarations
// have no body: both are left alone.
// CHECK-LABEL: llvm.func internal @kernel
// CHECK-NOT: mxcsr
// CHECK: llvm.return
llvm.func internal @kernel(%p: !llvm.ptr) {
  llvm.return
}

// CHECK-LABEL: llvm.func @declared
// CHECK-NOT: mxcsr
llvm.func @declared(!llvm.ptr)

// -----

// neo-lower-to-cpu runs the pass by default; denormals=ieee leaves it out.
// RUN: neo-opt %S/Inputs/flush-denormals-scale.mlir --neo-lower-to-cpu="threads=1" | FileCheck %s --check-prefix=FLUSH
// RUN: neo-opt %S/Inputs/flush-denormals-scale.mlir --neo-lower-to-cpu="threads=1 denormals=ieee" | FileCheck %s --check-prefix=IEEE
// RUN: not neo-opt %S/Inputs/flush-denormals-scale.mlir --neo-lower-to-cpu="denormals=fast" 2>&1 | FileCheck %s --check-prefix=BAD
// FLUSH: llvm.func @scale
// FLUSH: llvm.x86.sse.ldmxcsr
// IEEE: llvm.func @scale
// IEEE-NOT: mxcsr
// BAD: Cannot find option named 'fast'
