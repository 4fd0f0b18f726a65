// Numeric options are checked before anything runs (max-seconds=nan reached
// GLPK, which aborted the process), and function= must name a function
// (it was a silent no-op).
// RUN: not neo-opt %s --neo-eqsat-fuse="max-seconds=nan" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not neo-opt %s --neo-eqsat-fuse="max-seconds=inf" 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not neo-opt %s --neo-eqsat-fuse="max-seconds=-1" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not neo-opt %s --neo-eqsat-fuse="ilp-max-seconds=nan" 2>&1 | FileCheck %s --check-prefix=ILP
// RUN: not neo-opt %s --neo-eqsat-fuse="bandwidth=nan" 2>&1 | FileCheck %s --check-prefix=BW
// RUN: not neo-opt %s --neo-eqsat-fuse="peak=-5" 2>&1 | FileCheck %s --check-prefix=PEAK
// RUN: not neo-opt %s --neo-eqsat-fuse="launch=inf" 2>&1 | FileCheck %s --check-prefix=LAUNCH
// RUN: not neo-opt %s --neo-eqsat-fuse="activation-weight=-inf" 2>&1 | FileCheck %s --check-prefix=ACT
// RUN: not neo-opt %s --neo-eqsat-fuse="function=nope" 2>&1 | FileCheck %s --check-prefix=FUNC
// NAN: error: neo-eqsat-fuse: max-seconds must be a finite number of seconds >= 0, got nan
// INF: error: neo-eqsat-fuse: max-seconds must be a finite number of seconds >= 0, got inf
// NEG: error: neo-eqsat-fuse: max-seconds must be a finite number of seconds >= 0, got -1
// ILP: error: neo-eqsat-fuse: ilp-max-seconds must be a finite number of seconds >= 0, got nan
// BW: error: neo-eqsat-fuse: bandwidth must be finite and >= 0 (0: the target's default), got nan
// PEAK: error: neo-eqsat-fuse: peak must be finite and >= 0 (0: the target's default), got -5
// LAUNCH: error: neo-eqsat-fuse: launch must be finite (negative: the target's default), got inf
// ACT: error: neo-eqsat-fuse: activation-weight must be finite and >= 0, got -inf
// FUNC: error: neo-eqsat-fuse: no function named 'nope'

// The valid extremes run: no time at all keeps the graph as it is.
// RUN: neo-opt %s --neo-eqsat-fuse="max-seconds=0 launch=-1" | FileCheck %s --check-prefix=ZERO
// ZERO: func.func @f
func.func @f(%x: tensor<16xf32>) -> tensor<16xf32> {
  %a = neo.compute ins(%x : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    neo.yield %r : f32
  }
  %b = neo.compute ins(%a : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.tanh %v : f32
    neo.yield %r : f32
  }
  return %b : tensor<16xf32>
}
