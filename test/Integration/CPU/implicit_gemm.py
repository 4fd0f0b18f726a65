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
# - weight gradients (columns (c, r, s), a lane dim of 3): gathers only;
# - data gradients (B is dy under the forward point's domain constraint);
# - strided and dilated reads (no unit-stride rows: gathers);
# - a grouped convolution (k // 2 in an index: not a linear form), packed
#   element by element.
import os
import subprocess
import tempfile

import numpy as np
import torch.nn.functional as F
from neotest import NEO_OPT, NEO_RUN, NEO_TRANSLATE, check_with_torch

rng = np.random.default_rng(11)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(what, src, fn, inputs, ref):
    """The outputs and the gradients of `fn` against `ref` (torch) on `inputs`."""
    check_with_torch(what, src, fn, inputs, ref, lambda shape: rand(*shape), atol=1e-3)


def lowered(src, fn):
    """The LLVM dialect of `fn` and its gradient after neo-lower-to-cpu."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "op.neo")
        with open(path, "w") as f:
            f.write(src)
        imported = subprocess.run([NEO_TRANSLATE, "--import-neo", path], check=True,
                                  capture_output=True, text=True).stdout
        diffed = subprocess.run([NEO_OPT, "--neo-autodiff=function=%s" % fn], input=imported,
                                check=True, capture_output=True, text=True).stdout
        return subprocess.run([NEO_OPT, "--neo-lower-to-cpu=threads=1"], input=diffed,
                              check=True, capture_output=True, text=True).stdout


# CHECK: conv 3x3 pad 1, 21x21: ok
CONV = """def f(x: f32[2, 5, 21, 21], w: f32[6, 5, 3, 3]) -> y {
  y[n, k, p < 21, q < 21] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}"""
check("conv 3x3 pad 1, 21x21", CONV, "f", {"x": rand(2, 5, 21, 21), "w": rand(6, 5, 3, 3)},
      lambda x, w: F.conv2d(x, w, padding=1))
# The packing gathers (llvm.intr.masked.gather) in the forward and both
# gradients.
# CHECK: gathers: True
print("gathers:", "llvm.intr.masked.gather" in lowered(CONV, "f"))

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
    proc = subprocess.run([NEO_RUN, path, "--gradcheck"], capture_output=True, text=True)
    print("gradcheck conv 3x3 pad 1, 18x17:",
          "ok" if proc.returncode == 0 else "FAILED\n" + proc.stdout + proc.stderr)
