// RUN: rm -rf %t && mkdir -p %t/taken.json
// RUN: neo-opt %s --neo-eqsat-fuse=report=%t/ok.json > /dev/null
// RUN: %python -c "import json; r = json.load(open('%t/ok.json')); assert r, r"
// RUN: not neo-opt %s --neo-eqsat-fuse=report=%t/taken.json 2>&1 | FileCheck %s
// RUN: ls -A %t | FileCheck %s --check-prefix=FILES
// The JSON report is written atomically (docs/errors.md): when it cannot be
// written (here a directory is in the way) the pass fails with the reason and
// leaves no partial or temporary file.

// CHECK: error: neo-eqsat-fuse: cannot write the report {{.*}}taken.json{{.*}}: Is a directory
// FILES: ok.json
// FILES-NEXT: taken.json
// FILES-NOT: {{.}}

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = neo.compute ins(%a : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    %e = math.exp %x : f32
    neo.yield %e : f32
  }
  %1 = neo.compute ins(%0 : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%x: f32):
    %m = arith.mulf %x, %x : f32
    neo.yield %m : f32
  }
  return %1 : tensor<4xf32>
}
