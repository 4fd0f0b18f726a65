// RUN: neo-opt %s --neo-eqsat-fuse="max-nodes=6 report=%t.json" -o %t.discard
// RUN: FileCheck %s < %t.json
// RUN: neo-opt %s --neo-eqsat-fuse="max-iterations=1 report=%t2.json" -o %t.discard
// RUN: FileCheck %s --check-prefix=ITER < %t2.json
// RUN: not neo-opt %s --neo-eqsat-fuse="rules=bogus" 2>&1 | FileCheck %s --check-prefix=RULE
// RUN: not neo-opt %s --neo-eqsat-fuse="extractor=magic" 2>&1 | FileCheck %s --check-prefix=EXTRACT
// A long elementwise chain: every pair of neighbours can fuse, so the graph
// grows past tiny limits, which saturation respects and reports.
// CHECK: "stop_reason": "node limit"
// ITER: "stop_reason": "iteration limit"
// RULE: error: neo-eqsat-fuse: unknown rule 'bogus'
// EXTRACT: error: neo-eqsat-fuse: extractor must be greedy, dag or ilp, got 'magic'
func.func @long(%x: tensor<16xf32>) -> tensor<16xf32> {
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
  %c = neo.compute ins(%b : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.exp %v : f32
    neo.yield %r : f32
  }
  %d = neo.compute ins(%c : tensor<16xf32>) space [16] maps [affine_map<(i) -> (i)>] -> tensor<16xf32> {
  ^bb0(%v: f32):
    %r = math.tanh %v : f32
    neo.yield %r : f32
  }
  return %d : tensor<16xf32>
}
