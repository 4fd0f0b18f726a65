# RUN: %python %s | FileCheck %s
# RUN: %if host-avx2 && !asan %{ %python %s x86-64-v3 | FileCheck %s %}
# RUN: %if host-avx512 && !asan %{ %python %s x86-64-v4 | FileCheck %s %}
# CHECK-NOT: FAILED
# GEMMs that share a routine (neo-share-gemms): every GEMM of a variant
# (element type, operand layouts, schedule) used at least twice calls one
# function on memrefs of dynamic sizes and strides, which neo-tile generates
# once with its sizes and blocks read at run time. Each output is checked
# against numpy in float64 (and the interpreter, neo-run --check), for:
# - A * B, A * B^T and A^T * B, each at two sizes: M not a multiple of the
#   6- or 8-row tile, N with a last column block that ends inside it (and
#   more than one block of 512), depths with a remainder under 8 (B^T's 8x8
#   transposing pack), and exact sizes;
# - x[b, i, p] * w[p, j]: the m role is two dims, collapsed at the call (it
#   then calls A * B's routine);
# - a batched product x[b, i, p] * w[b, p, j] at two sizes;
# - f64 (8-lane vectors) at two sizes;
# with threads 1 and 2, and with share-gemms=0 (each GEMM its own code) for
# comparison, for the host and for each x86 ISA level it can run (AVX2's 6x16
# tiles, AVX-512's 8x32), and with AVX-512's tiles and blocks given as
# explicit schedules on any host (the transposing A packs of 8-row panels).
# The IR is checked to hold one routine per variant.
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from neotest import NEO_OPT, NEO_TRANSLATE, assert_close, run
import neotest

rng = np.random.default_rng(11)


def rand(shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


SRC = """def gemms(a1: f32[13, 45], b1: f32[45, 600], a2: f32[70, 203], b2: f32[203, 1100],
          bt1: f32[70, 45], bt2: f32[48, 203], at1: f32[45, 13], at2: f32[203, 48],
          x1: f32[3, 10, 45], x2: f32[2, 7, 203], w1: f32[45, 40], w2: f32[203, 33],
          bx1: f32[4, 9, 20], bw1: f32[4, 20, 17], bx2: f32[2, 30, 64], bw2: f32[2, 64, 48],
          d1: f64[17, 31], e1: f64[31, 23], d2: f64[8, 64], e2: f64[64, 40])
    -> (nn1, nn2, nt1, nt2, tn1, tn2, col1, col2, bat1, bat2, f1, f2) {
  nn1[i, j] = sum(p) a1[i, p] * b1[p, j]
  nn2[i, j] = sum(p) a2[i, p] * b2[p, j]
  nt1[i, j] = sum(p) a1[i, p] * bt1[j, p]
  nt2[i, j] = sum(p) a2[i, p] * bt2[j, p]
  tn1[i, j] = sum(p) at1[p, i] * b1[p, j]
  tn2[i, j] = sum(p) at2[p, i] * b2[p, j]
  col1[b, i, j] = sum(p) x1[b, i, p] * w1[p, j]
  col2[b, i, j] = sum(p) x2[b, i, p] * w2[p, j]
  bat1[b, i, j] = sum(p) bx1[b, i, p] * bw1[b, p, j]
  bat2[b, i, j] = sum(p) bx2[b, i, p] * bw2[b, p, j]
  f1[i, j] = sum(p) d1[i, p] * e1[p, j]
  f2[i, j] = sum(p) d2[i, p] * e2[p, j]
}"""

shapes = {}
for name, ty, dims in neotest.params(SRC, "gemms"):
    shapes[name] = (dims, ty)
inputs = {name: rand(dims, ty) for name, (dims, ty) in shapes.items()}
f64 = {name: v.astype(np.float64) for name, v in inputs.items()}
want = [
    f64["a1"] @ f64["b1"], f64["a2"] @ f64["b2"],
    f64["a1"] @ f64["bt1"].T, f64["a2"] @ f64["bt2"].T,
    f64["at1"].T @ f64["b1"], f64["at2"].T @ f64["b2"],
    f64["x1"] @ f64["w1"], f64["x2"] @ f64["w2"],
    f64["bx1"] @ f64["bw1"], f64["bx2"] @ f64["bw2"],
    f64["d1"] @ f64["e1"], f64["d2"] @ f64["e2"],
]
names = ["nn1", "nn2", "nt1", "nt2", "tn1", "tn2", "col1", "col2", "bat1", "bat2", "f1", "f2"]

# One routine per variant: 5 of them, called 12 times (x[b, i, p] * w[p, j]
# collapses to the variant of A * B).
mlir = subprocess.run([NEO_TRANSLATE, "--import-neo", "-"], input=SRC, check=True,
                      capture_output=True, text=True).stdout
CPU = " cpu=" + sys.argv[1] if len(sys.argv) > 1 else ""
lowered = subprocess.run([NEO_OPT, "--neo-lower-to-cpu=threads=1 stop-after=schedule" + CPU],
                         input=mlir, check=True, capture_output=True, text=True).stdout
routines = [l for l in lowered.splitlines() if "func.func private @__neo_gemm_" in l]
calls = [l for l in lowered.splitlines() if "call @__neo_gemm_" in l]
print("routines %d, calls %d" % (len(routines), len(calls)))
# CHECK: routines 5, calls 12
unshared = subprocess.run([NEO_OPT, "--neo-lower-to-cpu=threads=1 stop-after=schedule share-gemms=0" +
                           CPU],
                          input=mlir, check=True, capture_output=True, text=True).stdout
print("share-gemms=0: routines %d" % unshared.count("@__neo_gemm_"))
# CHECK: share-gemms=0: routines 0

# AVX-512's tiles (8 x 32 for f32, 8 x 16 for f64, mc 128, kc 512: the
# transposing A packs of MR = 8) on any host, as explicit schedules on the
# GEMMs (the code is the host's; only the tiles change).
TILED = re.sub(
    r"(neo\.compute .*-> tensor<[^>]*(f32|f64)>) \{$",
    lambda m: m.group(1) + " attributes {neo.schedule = #neo.cpu_gemm<mr = 8, nr = %d, "
    "mc = 128, nc = 512, kc = 512, threads = 2>} {" % (32 if m.group(2) == "f32" else 16),
    mlir, flags=re.M)
assert TILED.count("mr = 8") == 12, TILED


def run_mlir(text, function, options):
    """Runs `function` of MLIR `text` with neo-run --check; its outputs."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.mlir")
        with open(path, "w") as f:
            f.write(text)
        args = [neotest.NEO_RUN] + SUITE_ARGS + neotest.CHECK_ARGS + [
            path, "--function", function, "--output-dir", d, "--print-limit", "0",
            "--pipeline-options", options]
        for name, value in inputs.items():
            np.save(os.path.join(d, "in_%s.npy" % name), value)
            args += ["--input", "%s=%s" % (name, os.path.join(d, "in_%s.npy" % name))]
        proc = subprocess.run(args, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return [np.load(os.path.join(d, n + ".npy")) for n in names]


SUITE_ARGS = list(neotest.NEO_RUN_ARGS)  # -O0 in the ASan suite
for options in ("threads=1", "threads=2", "threads=2 share-gemms=0"):
    neotest.NEO_RUN_ARGS = SUITE_ARGS + ["--pipeline-options",
                                         options + " llvm-vectorize-limit=0" + CPU]
    outs = run(SRC, "gemms", **inputs)
    for name, got, w in zip(names, outs, want):
        assert_close(got, w, rtol=1e-4, atol=1e-4, what="%s %s" % (name, options))
for options in ("threads=1", "threads=2"):
    outs = run_mlir(TILED, "gemms", options + " llvm-vectorize-limit=0" + CPU)
    for name, got, w in zip(names, outs, want):
        assert_close(got, w, rtol=1e-4, atol=1e-4, what="%s 8x32 tiles %s" % (name, options))
# CHECK-COUNT-60: : ok (max abs error
