// max-seconds bounds the whole pass, not each phase of each function: when
// @long (400 ops, well over a millisecond to build and saturate) has used up
// the pass's 1 ms, @tiny, which saturates in a few steps on its own, gets no
// time and stops at once. Each phase used to get a fresh max-seconds, so a
// module of many functions could take functions x phases x max-seconds.
// RUN: %python %S/Inputs/long-chain.py 400 > %t.mlir
// RUN: neo-opt %t.mlir --neo-eqsat-fuse="max-seconds=0.001 max-nodes=100000 report=%t.json" -o %t.out.mlir
// RUN: %python -c "import json,sys; r=json.load(open(sys.argv[1])); print('long', r['long']['stop_reason']); print('tiny', r['tiny']['stop_reason'])" %t.json | FileCheck %s
// Alone, with 50 ms (1 ms is too little for an ASan build), @tiny
// saturates: the stop above is the time @long used.
// RUN: neo-opt %t.mlir --neo-eqsat-fuse="function=tiny max-seconds=0.05 report=%t2.json" -o %t.out2.mlir
// RUN: %python -c "import json,sys; r=json.load(open(sys.argv[1])); print('tiny', r['tiny']['stop_reason'])" %t2.json | FileCheck %s --check-prefix=ALONE
// The output still verifies and keeps every function.
// RUN: neo-opt %t.out.mlir | FileCheck %s --check-prefix=OUT
// CHECK: long time limit
// CHECK: tiny time limit
// ALONE: tiny saturated
// OUT-DAG: func.func @long
// OUT-DAG: func.func @tiny
