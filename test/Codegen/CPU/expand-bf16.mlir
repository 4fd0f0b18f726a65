// RUN: neo-opt %s -split-input-file -neo-expand-bf16 | FileCheck %s
// RUN: neo-translate --import-neo %S/Inputs/bf16-store.neo | neo-opt --pass-pipeline='builtin.module(neo-lower-to-cpu)' | FileCheck %s --check-prefix=PIPE

// Truncations to bf16 and extensions from it, scalars and vectors, become
// integer arithmetic (round to nearest even, NaN kept quiet); f16 is left
// to LLVM (F16C on every x86 target Neo runs on).
// CHECK-LABEL: func.func @scalars
// CHECK-NOT: arith.truncf {{.*}} to bf16
// CHECK-NOT: arith.extf {{.*}} bf16
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return
func.func @scalars(%x: f32, %y: bf16) -> (bf16, f32, f16) {
  %a = arith.truncf %x : f32 to bf16
  %b = arith.extf %y : bf16 to f32
  %c = arith.truncf %x : f32 to f16
  return %a, %b, %c : bf16, f32, f16
}

// -----

// CHECK-LABEL: func.func @vectors
// CHECK-NOT: arith.truncf
// CHECK: arith.constant dense<32704> : vector<8xi16>
// CHECK: arith.cmpf une
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.select
// CHECK: arith.bitcast %{{.*}} : vector<8xi16> to vector<8xbf16>
// CHECK: return
func.func @vectors(%x: vector<8xf32>) -> vector<8xbf16> {
  %a = arith.truncf %x : vector<8xf32> to vector<8xbf16>
  return %a : vector<8xbf16>
}

// The CPU pipeline leaves no fptrunc to bf16 (a call of __truncsfbf2 on x86
// without AVX512-BF16) in the LLVM dialect.
// PIPE-LABEL: llvm.func @f
// PIPE-NOT: llvm.fptrunc
// PIPE: llvm.lshr {{.*}} : vector<{{[0-9]+}}xi32>
