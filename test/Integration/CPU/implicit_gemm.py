# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAILED
# Convolutions run as implicit GEMMs (CpuImplicitGemm.cpp): outputs and
# gradients against PyTorch autograd (Debian's python3-torch), the compiled
# gradients against the reference interpreter (neo-run --check), and against
# central finite differences in float64 (neo-run --gradcheck). The shapes
# exercise each way B is packed and C is written:
# - rows of 21 and 23 (wider than the 16-column packing vector, not a
#   multiple of it): vector loads inside a row, masked gathers for the
#   columns that cross a row or the padding, vector adds into C's rows, and
#   a last column block that ends inside N;
# - rows of 45 and 42 (at least NR = 32 columns wide on AVX-512; rows of
#   21 with AVX2's NR = 16, below): each block of NR columns lies in at most
#   two rows, packed as two masked vector loads (the padding masked off),
#   and C's rows written as two masked vectors;
# - weight gradients (columns (c, r, s), a lane dim of 3; depth (n, p, q)):
#   each column's depths along q read as masked vectors (two where 16
#   depths cross a row) and transposed 16 x 16 into the packed rows; a
#   weight gradient written as a forward op checks that path alone;
# - data gradients (B is dy under the forward point's domain constraint);
# - strided and dilated reads (no unit-stride rows: gathers);
# - a grouped convolution (k // 2 in an index: not a linear form), packed
#   element by element.
import os
import subprocess
import tempfile

import numpy as np
import neotest
import torch.nn.functional as F
from neotest import NEO_RUN, check_with_torch, lowered

rng = np.random.default_rng(11)

# The implicit GEMMs themselves: the direct convolutions that neo-tile
# prefers for unit-stride windows are tested in direct_conv.py.
IMPLICIT = "direct-convolutions=false"
neotest.NEO_RUN_ARGS = neotest.NEO_RUN_ARGS + ["--pipeline-options", IMPLICIT]


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(what, src, fn, inputs, ref):
    """The outputs and the gradients of `fn` against `ref` (torch) on `inputs`."""
    check_with_torch(what, src, fn, inputs, ref, lambda shape: rand(*shape), atol=1e-3)


def lowered_implicit(src, fn):
    """The LLVM dialect of `fn` and its gradient after neo-lower-to-cpu with
    AVX-512's schedules, whatever the host (the packing checked below depends
    on the register tile's width, not on the host), as implicit GEMMs."""
    return lowered(src, fn, "threads=1 cpu=x86-64-v4 " + IMPLICIT)


# CHECK: conv 3x3 pad 1, 21x21: ok
CONV = """def f(x: f32[2, 5, 21, 21], w: f32[6, 5, 3, 3]) -> y {
  y[n, k, p < 21, q < 21] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}"""
check("conv 3x3 pad 1, 21x21", CONV, "f", {"x": rand(2, 5, 21, 21), "w": rand(6, 5, 3, 3)},
      lambda x, w: F.conv2d(x, w, padding=1))
# With AVX-512's NR = 32, rows of 21 are shorter than a block of columns:
# the packing gathers (llvm.intr.masked.gather) in the forward and both
# gradients. (AVX2's NR = 16 takes two-row masked loads instead.)
# CHECK: gathers: True
print("gathers:", "llvm.intr.masked.gather" in lowered_implicit(CONV, "f"))

# CHECK: conv 3x3 pad 1, 6x45: ok
CONV45 = """def f(x: f32[2, 3, 6, 45], w: f32[4, 3, 3, 3]) -> y {
  y[n, k, p < 6, q < 45] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}"""
check("conv 3x3 pad 1, 6x45", CONV45, "f", {"x": rand(2, 3, 6, 45), "w": rand(4, 3, 3, 3)},
      lambda x, w: F.conv2d(x, w, padding=1))
# The forward and the data gradient pack B with masked vector loads.
# CHECK: masked loads: True
print("masked loads:", "llvm.intr.masked.load" in lowered_implicit(CONV45, "f"))

# CHECK: conv 3x3 unpadded, 5x44: ok
check("conv 3x3 unpadded, 5x44",
      """def f(x: f32[1, 2, 5, 44], w: f32[3, 2, 3, 3]) -> (y: f32[1, 3, 3, 42]) {
  y[n, k, p, q] = sum(c, r, s) x[n, c, p + r, q + s] * w[k, c, r, s]
}""", "f", {"x": rand(1, 2, 5, 44), "w": rand(3, 2, 3, 3)},
      lambda x, w: F.conv2d(x, w))

# The same with AVX2's schedules (NR = 16: rows of 21 take two-row blocks
# too), where the host runs AVX2.
# CHECK: avx2 conv 3x3 pad 1, 21x21: ok
# CHECK: avx2 conv 3x3 pad 1, 6x45: ok
if "avx2" in open("/proc/cpuinfo").read():
    neotest.NEO_RUN_ARGS = neotest.NEO_RUN_ARGS[:-2] + ["--pipeline-options",
                                                        "cpu=x86-64-v3 " + IMPLICIT]
    check("avx2 conv 3x3 pad 1, 21x21", CONV, "f", {"x": rand(2, 5, 21, 21), "w": rand(6, 5, 3, 3)},
          lambda x, w: F.conv2d(x, w, padding=1))
    check("avx2 conv 3x3 pad 1, 6x45", CONV45, "f", {"x": rand(2, 3, 6, 45), "w": rand(4, 3, 3, 3)},
          lambda x, w: F.conv2d(x, w, padding=1))
    neotest.NEO_RUN_ARGS = neotest.NEO_RUN_ARGS[:-2] + ["--pipeline-options", IMPLICIT]
else:
    print("avx2 conv 3x3 pad 1, 21x21: ok (skipped: no AVX2)")
    print("avx2 conv 3x3 pad 1, 6x45: ok (skipped: no AVX2)")

# The weight gradient as an op of its own: B (x) packed along q by masked
# vector loads and 16 x 16 transposes, no gathers; against torch's.
# CHECK: weight gradient 3x3 pad 1, 7x21: ok
# CHECK: weight gradient packing: gathers False, masked loads True
import torch
from torch.nn.grad import conv2d_weight
DW = """def f(dy: f32[2, 4, 7, 21], x: f32[2, 3, 7, 21]) -> dw {
  dw[k, c, r < 3, s < 3] = sum(n, p, q) dy[n, k, p, q] * x[n, c, p + r - 1, q + s - 1]
}"""
dy, xv = rand(2, 4, 7, 21), rand(2, 3, 7, 21)
got = neotest.run(DW, "f", dy=dy, x=xv)[0]
want = conv2d_weight(torch.from_numpy(xv).double(), (4, 3, 3, 3), torch.from_numpy(dy).double(),
                     padding=1).numpy()
neotest.assert_close(got, want, rtol=1e-4, atol=1e-5, what="weight gradient 3x3 pad 1, 7x21")
print("weight gradient 3x3 pad 1, 7x21: ok")
llvm = lowered(DW, "f", "threads=1 cpu=x86-64-v4 " + IMPLICIT, differentiate=False)
print("weight gradient packing: gathers %s, masked loads %s" % (
    "llvm.intr.masked.gather" in llvm, "llvm.intr.masked.load" in llvm))

# CHECK: conv 3x3 stride 2 pad 1, 23x23: ok
check("conv 3x3 stride 2 pad 1, 23x23",
      """def f(x: f32[2, 4, 23, 23], w: f32[3, 4, 3, 3]) -> y {
  y[n, k, p < 12, q < 12] = sum(c, r, s) x[n, c, 2*p + r - 1, 2*q + s - 1] * w[k, c, r, s]
}""", "f", {"x": rand(2, 4, 23, 23), "w": rand(3, 4, 3, 3)},
      lambda x, w: F.conv2d(x, w, stride=2, padding=1))

# CHECK: conv 3x3 dilation 2 pad 2, 19x20: ok
check("conv 3x3 dilation 2 pad 2, 19x20",
      """def f(x: f32[1, 3, 19, 20], w: f32[4, 3, 3, 3]) -> y {
  y[n, k, p < 19, q < 20] = sum(c, r, s) x[n, c, p + 2*r - 2, q + 2*s - 2] * w[k, c, r, s]
}""", "f", {"x": rand(1, 3, 19, 20), "w": rand(4, 3, 3, 3)},
      lambda x, w: F.conv2d(x, w, padding=2, dilation=2))

# CHECK: conv 1x3 unpadded, 18x20: ok
check("conv 1x3 unpadded, 18x20",
      """def f(x: f32[2, 3, 18, 20], w: f32[5, 3, 1, 3]) -> (y: f32[2, 5, 18, 18]) {
  y[n, k, p, q] = sum(c, r, s) x[n, c, p + r, q + s] * w[k, c, r, s]
}""", "f", {"x": rand(2, 3, 18, 20), "w": rand(5, 3, 1, 3)},
      lambda x, w: F.conv2d(x, w))

# CHECK: grouped conv 3x3 pad 1, 17x17: ok
check("grouped conv 3x3 pad 1, 17x17",
      """def f(x: f32[1, 4, 17, 17], w: f32[4, 2, 3, 3]) -> y {
  y[n, k, p < 17, q < 17] = sum(c, r, s) x[n, (k // 2) * 2 + c, p + r - 1, q + s - 1] * w[k, c, r, s]
}""", "f", {"x": rand(1, 4, 17, 17), "w": rand(4, 2, 3, 3)},
      lambda x, w: F.conv2d(x, w, padding=1, groups=2))

# Finite differences in float64 of the padded conv (small, for the
# interpreter's sake, but with rows wider than the packing vector).
# CHECK: gradcheck conv 3x3 pad 1, 18x17: ok
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "conv.neo")
    with open(path, "w") as f:
        f.write("""def f(x: f32[1, 2, 18, 17], w: f32[3, 2, 3, 3]) -> y {
  y[n, k, p < 18, q < 17] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}""")
    proc = subprocess.run([NEO_RUN, path, "--gradcheck", "--pipeline-options", IMPLICIT],
                          capture_output=True, text=True)
    print("gradcheck conv 3x3 pad 1, 18x17:",
          "ok" if proc.returncode == 0 else "FAILED\n" + proc.stdout + proc.stderr)
