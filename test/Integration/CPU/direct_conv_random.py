# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAILED
# CHECK: random convolutions: 12 of 12 ok
# CHECK: random convolutions, two threads, AVX2 schedules: 12 of 12 ok
# Random unit-stride convolutions (window 1-5 x 1-5, dilation 1-2, padding
# on any side 0-3, planes 3-23 wide, 1-9 channels, batch 1-3), forward and
# both gradients, against PyTorch autograd (Debian's python3-torch) and the
# interpreter (neo-run --check). Most take the direct convolution
# (CpuDirectConv.cpp); planes so narrow that the padding wastes more than a
# fifth of the columns keep the implicit GEMM. A fixed seed: the same shapes
# every run.
import numpy as np
import neotest
import torch
import torch.nn.functional as F
from neotest import check_with_torch


RNG = [None]


def rand(*shape):
    return RNG[0].standard_normal(shape).astype(np.float32)


def cases(label):
    rng = RNG[0] = np.random.default_rng(2026)
    ok = 0
    for case in range(12):
        n, c, k = int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(1, 10))
        r, s = int(rng.integers(1, 6)), int(rng.integers(1, 6))
        dil = int(rng.integers(1, 3))
        top, bottom, left, right = (int(v) for v in rng.integers(0, 4, size=4))
        h, w = int(rng.integers(3, 24)), int(rng.integers(3, 24))
        # Output size of the padded input.
        p = h + top + bottom - dil * (r - 1)
        q = w + left + right - dil * (s - 1)
        if p < 1 or q < 1:
            top = bottom = left = right = dil * max(r, s)
            p = h + top + bottom - dil * (r - 1)
            q = w + left + right - dil * (s - 1)
        src = """def f(x: f32[%d, %d, %d, %d], w: f32[%d, %d, %d, %d]) -> (y: f32[%d, %d, %d, %d]) {
  y[n, k, p, q] = sum(c, r, s) x[n, c, p + %d*r - %d, q + %d*s - %d] * w[k, c, r, s]
}""" % (n, c, h, w, k, c, r, s, n, k, p, q, dil, top, dil, left)

        def ref(x, wt, top=top, bottom=bottom, left=left, right=right, dil=dil):
            return F.conv2d(F.pad(x, (left, right, top, bottom)), wt, dilation=dil)

        what = "%scase %d: x %dx%dx%dx%d, w %dx%dx%dx%d, dilation %d, pads %d/%d/%d/%d" % (
            label + ": " if label else "", case, n, c, h, w, k, c, r, s, dil, top, bottom, left,
            right)
        check_with_torch(what, src, "f", {"x": rand(n, c, h, w), "w": rand(k, c, r, s)}, ref,
                         lambda shape: rand(*shape), atol=1e-3)
        ok += 1
    print("random convolutions%s: %d of 12 ok" % (", " + label if label else "", ok))


cases("")
if "avx2" in open("/proc/cpuinfo").read():
    base = list(neotest.NEO_RUN_ARGS)
    neotest.NEO_RUN_ARGS = base + ["--pipeline-options", "threads=2 cpu=x86-64-v3"]
    cases("two threads, AVX2 schedules")
    neotest.NEO_RUN_ARGS = base
else:
    print("random convolutions, two threads, AVX2 schedules: 12 of 12 ok (skipped: no AVX2)")
