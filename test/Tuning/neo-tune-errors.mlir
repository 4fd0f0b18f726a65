// neo-tune's errors, and what it does with a damaged records file.
//
// RUN: not neo-tune %s --pipeline-options "bogus=1" 2>&1 | FileCheck %s --check-prefix=OPTS
// OPTS: error: invalid --pipeline-options 'bogus=1'
// RUN: not neo-tune %s --list --function nothing 2>&1 | FileCheck %s --check-prefix=FUNC
// FUNC: error: no function named 'nothing'
// RUN: neo-tune %s --list --function fixed | FileCheck %s --check-prefix=FIXED
// FIXED: 0 tunable op signatures
// RUN: neo-tune %s --list --function mm | FileCheck %s --check-prefix=LIST
// LIST: 1 tunable op signature
// LIST-NEXT: gemm f32 batch=1 m=20 n=24 k=8 layout=mk,kn,mn  (@mm, 1x, 7.68e-06 GFLOP)

// A corrupt records file is kept aside and replaced by a good one.
// RUN: rm -rf %t && mkdir -p %t && echo '{"format": ' > %t/r.json
// RUN: neo-tune %s --function mm --time-budget 2 --trials 2 --target-threads 1 --records %t/r.json --quiet 2>&1 | FileCheck %s --check-prefix=CORRUPT
// CORRUPT: warning: {{.*}}r.json: not a valid JSON file
// CORRUPT: warning: {{.*}}r.json: its old content is kept in '{{.*}}r.json.bak'
// CORRUPT: recorded in
// RUN: FileCheck %s --check-prefix=BAK < %t/r.json.bak
// BAK: {"format":
// RUN: FileCheck %s --check-prefix=GOOD < %t/r.json
// GOOD: "format": "neo-tuning-records"
// GOOD: "key": "gemm f32 batch=1 m=20 n=24 k=8 layout=mk,kn,mn"

// A records file that cannot be written is an error.
// RUN: not neo-tune %s --function mm --time-budget 2 --trials 1 --target-threads 1 --records %t/no/such/dir/r.json --quiet 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// UNWRITABLE: error: cannot open '{{.*}}r.json.lock'

func.func @mm(%a: tensor<20x8xf32>, %b: tensor<8x24xf32>) -> tensor<20x24xf32> {
  %c = neo.compute ins(%a, %b : tensor<20x8xf32>, tensor<8x24xf32>) space [20, 24] sum [8]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<20x24xf32> {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<20x24xf32>
}

// An op with a schedule of its own is not tuned.
func.func @fixed(%a: tensor<20x8xf32>, %b: tensor<8x24xf32>) -> tensor<20x24xf32> {
  %c = neo.compute ins(%a, %b : tensor<20x8xf32>, tensor<8x24xf32>) space [20, 24] sum [8]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<20x24xf32> attributes {neo.schedule = #neo.cpu_gemm<mr = 4, nr = 16, mc = 8, nc = 16, kc = 8, threads = 1>} {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %y : f32
    neo.yield %m : f32
  }
  return %c : tensor<20x24xf32>
}
