# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAILED
# Direct convolutions (CpuDirectConv.cpp, neo-tile direct-convolutions=true,
# the default): the operand read through the window is copied into
# zero-padded planes and read in place, the forward and data gradient as
# broadcast-times-row kernels, the weight gradient as dot products along the
# padded rows. Outputs and gradients against PyTorch autograd (Debian's
# python3-torch), the compiled gradients against the reference interpreter
# (neo-run --check), and finite differences in float64 (--gradcheck), on
# shapes that exercise:
# - row lengths that are not multiples of the vector or of the register
#   tile's columns (21, 19, 44), rows shorter than a vector (10, 4);
# - output channels that are not multiples of the tile's rows (6, 13);
# - symmetric, one-sided and no padding, 5x5 and 1x1 windows, dilation 2;
# - one and two threads, AVX-512's tile and AVX2's (where the host has it);
# - planes so narrow that the padding would waste more than a fifth of the
#   columns (3 wide), which stay implicit GEMMs.
import os
import subprocess
import tempfile

import numpy as np
import neotest
import torch.nn.functional as F
from neotest import NEO_RUN, check_with_torch, lowered

rng = np.random.default_rng(5)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(what, src, inputs, ref):
    check_with_torch(what, src, "f", inputs, ref, lambda shape: rand(*shape), atol=1e-3)


def conv_src(x, w, out, index):
    return """def f(x: f32[%s], w: f32[%s]) -> %s {
  %s = sum(c, r, s) x[n, c, %s] * w[k, c, r, s]
}""" % (", ".join(map(str, x)), ", ".join(map(str, w)), out[0], out[1], index)


CONV = conv_src((2, 5, 21, 21), (6, 5, 3, 3), ("y", "y[n, k, p < 21, q < 21]"),
                "p + r - 1, q + s - 1")
PAD1 = lambda x, w: F.conv2d(x, w, padding=1)


def shapes(prefix):
    # CHECK: {{^}}conv 3x3 pad 1, 21x21: ok
    check(prefix + "conv 3x3 pad 1, 21x21", CONV, {"x": rand(2, 5, 21, 21), "w": rand(6, 5, 3, 3)},
          PAD1)
    # CHECK: conv 5x5 pad 2, 17x19, 13 channels: ok
    check(prefix + "conv 5x5 pad 2, 17x19, 13 channels",
          conv_src((1, 3, 17, 19), (13, 3, 5, 5), ("y", "y[n, k, p < 17, q < 19]"),
                   "p + r - 2, q + s - 2"),
          {"x": rand(1, 3, 17, 19), "w": rand(13, 3, 5, 5)},
          lambda x, w: F.conv2d(x, w, padding=2))
    # CHECK: conv 3x3 padded top and left only, 12x14: ok
    check(prefix + "conv 3x3 padded top and left only, 12x14",
          conv_src((2, 2, 12, 14), (3, 2, 3, 3), ("y", "y[n, k, p < 12, q < 14]"),
                   "p + r - 2, q + s - 2"),
          {"x": rand(2, 2, 12, 14), "w": rand(3, 2, 3, 3)},
          lambda x, w: F.conv2d(F.pad(x, (2, 0, 2, 0)), w))
    # CHECK: conv 3x3 dilation 2 pad 2, 19x20: ok
    check(prefix + "conv 3x3 dilation 2 pad 2, 19x20",
          conv_src((1, 3, 19, 20), (4, 3, 3, 3), ("y", "y[n, k, p < 19, q < 20]"),
                   "p + 2*r - 2, q + 2*s - 2"),
          {"x": rand(1, 3, 19, 20), "w": rand(4, 3, 3, 3)},
          lambda x, w: F.conv2d(x, w, padding=2, dilation=2))
    # CHECK: conv 3x3 unpadded, 5x44: ok
    check(prefix + "conv 3x3 unpadded, 5x44",
          conv_src((1, 2, 5, 44), (3, 2, 3, 3), ("(y: f32[1, 3, 3, 42])", "y[n, k, p, q]"),
                   "p + r, q + s"),
          {"x": rand(1, 2, 5, 44), "w": rand(3, 2, 3, 3)}, lambda x, w: F.conv2d(x, w))
    # CHECK: conv 1x1, 10x10: ok
    check(prefix + "conv 1x1, 10x10",
          conv_src((3, 4, 10, 10), (7, 4, 1, 1), ("y", "y[n, k, p < 10, q < 10]"), "p + r, q + s"),
          {"x": rand(3, 4, 10, 10), "w": rand(7, 4, 1, 1)}, lambda x, w: F.conv2d(x, w))
    # CHECK: conv 3x3 pad 1, 4x4: ok
    check(prefix + "conv 3x3 pad 1, 4x4",
          conv_src((2, 3, 4, 4), (5, 3, 3, 3), ("y", "y[n, k, p < 4, q < 4]"),
                   "p + r - 1, q + s - 1"),
          {"x": rand(2, 3, 4, 4), "w": rand(5, 3, 3, 3)}, PAD1)
    # CHECK: conv 3x3 pad 1, 3x3 (implicit GEMM): ok
    check(prefix + "conv 3x3 pad 1, 3x3 (implicit GEMM)",
          conv_src((2, 3, 3, 3), (5, 3, 3, 3), ("y", "y[n, k, p < 3, q < 3]"),
                   "p + r - 1, q + s - 1"),
          {"x": rand(2, 3, 3, 3), "w": rand(5, 3, 3, 3)}, PAD1)


shapes("")
# CHECK: two threads: conv 3x3 pad 1, 21x21: ok
# CHECK: two threads: conv 3x3 pad 1, 3x3 (implicit GEMM): ok
base = list(neotest.NEO_RUN_ARGS)
neotest.NEO_RUN_ARGS = base + ["--pipeline-options", "threads=2"]
shapes("two threads: ")
# CHECK: avx2: conv 3x3 pad 1, 21x21: ok
if "avx2" in open("/proc/cpuinfo").read():
    neotest.NEO_RUN_ARGS = base + ["--pipeline-options", "threads=2 cpu=x86-64-v3"]
    shapes("avx2: ")
else:
    print("avx2: conv 3x3 pad 1, 21x21: ok (skipped: no AVX2)")
neotest.NEO_RUN_ARGS = base

# The three convolutions of the training step read no gathers and packs no
# B (the implicit GEMMs gather across the rows' ends); the weight gradient
# is a sum of vector lanes. The 3-wide planes keep the implicit GEMM.
# CHECK: direct: gathers False, reductions True
# CHECK: implicit: gathers True
# CHECK: 3 wide: gathers True
text = lowered(CONV, "f", "threads=1 cpu=x86-64-v4")
print("direct: gathers %s, reductions %s" % ("llvm.intr.masked.gather" in text,
                                             "llvm.intr.vector.reduce.fadd" in text))
text = lowered(CONV, "f", "threads=1 cpu=x86-64-v4 direct-convolutions=false")
print("implicit: gathers %s" % ("llvm.intr.masked.gather" in text))
text = lowered(conv_src((2, 3, 3, 3), (5, 3, 3, 3), ("y", "y[n, k, p < 3, q < 3]"),
                        "p + r - 1, q + s - 1"), "f", "threads=1 cpu=x86-64-v4")
print("3 wide: gathers %s" % ("llvm.intr.masked.gather" in text))

# A weight gradient whose dy is read one column to the right (zero past the
# row): its planes would not be dy's exact points (the padded column would
# hold the next row's first element), so it stays an implicit GEMM; against
# numpy.
# CHECK: shifted dy weight gradient: ok
SHIFTED = """def f(dy: f32[2, 4, 8, 8], x: f32[2, 3, 8, 8]) -> dw {
  dw[k, c, r < 3, s < 3] = sum(n, p, q < 8) dy[n, k, p, q + 1] * x[n, c, p + r - 1, q + s - 1]
}"""
dy, xv = rand(2, 4, 8, 8), rand(2, 3, 8, 8)
got = neotest.run(SHIFTED, "f", dy=dy, x=xv)[0]
dyp = np.pad(dy.astype(np.float64), ((0, 0), (0, 0), (0, 0), (0, 1)))
xp = np.pad(xv.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
want = np.zeros((4, 3, 3, 3))
for r in range(3):
    for s_ in range(3):
        want[:, :, r, s_] = np.einsum("nkpq,ncpq->kc", dyp[:, :, :, 1:9],
                                      xp[:, :, r:r + 8, s_:s_ + 8])
neotest.assert_close(got, want, rtol=1e-4, atol=1e-4, what="shifted dy weight gradient")
print("shifted dy weight gradient: ok")

# Finite differences in float64 of the direct convolution's gradient.
# CHECK: gradcheck conv 3x3 pad 1, 18x17: ok
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "conv.neo")
    with open(path, "w") as f:
        f.write(conv_src((1, 2, 18, 17), (3, 2, 3, 3), ("y", "y[n, k, p < 18, q < 17]"),
                         "p + r - 1, q + s - 1"))
    proc = subprocess.run([NEO_RUN, path, "--gradcheck"], capture_output=True, text=True)
    print("gradcheck conv 3x3 pad 1, 18x17:",
          "ok" if proc.returncode == 0 else "FAILED\n" + proc.stdout + proc.stderr)
