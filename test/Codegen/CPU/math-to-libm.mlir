// RUN: neo-opt %s -split-input-file -neo-math-to-libm | FileCheck %s

// log1p, expm1 and erf on f32 and f64 become libm calls; vectors are unrolled
// into one call per lane; everything else is left to convert-math-to-llvm.
// CHECK-LABEL: func.func @scalars
// CHECK-SAME: (%[[X:.+]]: f32, %[[Y:.+]]: f64)
// CHECK: %[[A:.+]] = call @log1pf(%[[X]]) : (f32) -> f32
// CHECK: %[[B:.+]] = call @expm1(%[[Y]]) : (f64) -> f64
// CHECK: %[[C:.+]] = call @erff(%[[X]]) : (f32) -> f32
// CHECK: %[[D:.+]] = math.sin %[[X]] : f32
// CHECK: %[[E:.+]] = math.exp %[[Y]] : f64
// CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @scalars(%x: f32, %y: f64) -> (f32, f64, f32, f32, f64) {
  %a = math.log1p %x : f32
  %b = math.expm1 %y : f64
  %c = math.erf %x : f32
  %d = math.sin %x : f32
  %e = math.exp %y : f64
  return %a, %b, %c, %d, %e : f32, f64, f32, f32, f64
}

// -----

// CHECK-LABEL: func.func @vector
// CHECK-COUNT-4: call @erf({{.*}}) : (f64) -> f64
// CHECK-NOT: call
// CHECK: vector.insert %{{.*}} [3] : f64 into vector<4xf64>
// CHECK: math.sqrt %{{.*}} : vector<4xf64>
func.func @vector(%x: vector<4xf64>) -> (vector<4xf64>, vector<4xf64>) {
  %a = math.erf %x : vector<4xf64>
  %b = math.sqrt %x : vector<4xf64>
  return %a, %b : vector<4xf64>, vector<4xf64>
}

// -----

// Types libm has no function for stay.
// CHECK-LABEL: func.func @half
// CHECK: math.log1p %{{.*}} : f16
// CHECK-NOT: call
func.func @half(%x: f16) -> f16 {
  %a = math.log1p %x : f16
  return %a : f16
}
