# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAILED
# The CPU GEMM generator's packing paths (GemmCodegen.cpp) against numpy in
# float64, and the compiled code against the reference interpreter
# (neo-run --check):
# - A * B^T (B with k innermost: a data gradient's W^T) packs B by 8x8
#   transposes, with depths (45, 203) that leave a remainder under 8 and a
#   last column block that ends inside N;
# - A packed once before the column blocks (N = 600 and 1100 are more than
#   one block of 512), also with M not a multiple of the 6-row tile;
# - A^T * B and A * B for comparison, with the same shapes;
# - one block of rows (M = 20) and a B of 2.3 MiB (600 x 1024): A * B reads
#   B in place in the micro-kernel (no B panel), with a partial depth block
#   and the 4-row edge tile;
# - M = 48, a multiple of the row tile (8 on AVX-512, 6 on AVX2): A^T * B
#   packs A's panels by vector loads along m (a weight gradient's X^T), with
#   no edge panel.
# Threads 1 and 2 (the packed A is shared by the parallel column blocks).
import numpy as np
from neotest import assert_close, run
import neotest

rng = np.random.default_rng(5)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


CASES = [(13, 45, 600), (70, 203, 1100), (6, 8, 16), (20, 600, 1024), (48, 300, 40)]
SUITE_ARGS = list(neotest.NEO_RUN_ARGS)  # -O0 in the ASan suite
for threads in (1, 2):
    neotest.NEO_RUN_ARGS = SUITE_ARGS + [
        "--pipeline-options", "threads=%d llvm-vectorize-limit=0" % threads]
    for m, k, n in CASES:
        a, bt, at, b = rand(m, k), rand(n, k), rand(k, m), rand(k, n)
        src = f"""def nt(a: f32[{m}, {k}], bt: f32[{n}, {k}]) -> y {{
  y[i, j] = sum(p) a[i, p] * bt[j, p]
}}
def tn(at: f32[{k}, {m}], b: f32[{k}, {n}]) -> y {{
  y[i, j] = sum(p) at[p, i] * b[p, j]
}}
def nn(a: f32[{m}, {k}], b: f32[{k}, {n}]) -> y {{
  y[i, j] = sum(p) a[i, p] * b[p, j]
}}"""
        f64 = lambda x: x.astype(np.float64)
        for fn, inputs, want in [
                ("nt", {"a": a, "bt": bt}, f64(a) @ f64(bt).T),
                ("tn", {"at": at, "b": b}, f64(at).T @ f64(b)),
                ("nn", {"a": a, "b": b}, f64(a) @ f64(b))]:
            what = "%s %dx%dx%d threads=%d" % (fn, m, k, n, threads)
            assert_close(run(src, fn, **inputs)[0], want, rtol=1e-4, atol=1e-4, what=what)
# CHECK-COUNT-30: threads={{[12]}}: ok (max abs error
