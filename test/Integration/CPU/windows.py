# RUN: %python %s | FileCheck %s
# CHECK-NOT: FAILED
# Padded windows (depthwise convolutions, pooling) at sizes where the CPU
# pipeline splits them into an interior kernel and border kernels
# (convert-neo-to-linalg split-borders): outputs and gradients against
# PyTorch autograd (Debian's python3-torch), and gradients against central
# finite differences in float64 (neo-run --gradcheck). Widths that are not a
# multiple of the vector (13, 17, 19, 40) exercise the peeled tiles and the
# one-column borders.
import os
import subprocess
import tempfile

import numpy as np
import torch.nn.functional as F
from neotest import NEO_RUN, check_with_torch

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(what, src, fn, inputs, ref):
    """The outputs and the gradients of `fn` against `ref` (torch) on `inputs`."""
    check_with_torch(what, src, fn, inputs, ref, lambda shape: rand(*shape), atol=1e-4)


# CHECK: depthwise 3x3 pad 1, 17x13: ok
x, w = rand(2, 3, 17, 13), rand(3, 3, 3)
check("depthwise 3x3 pad 1, 17x13",
      """def f(x: f32[2, 3, 17, 13], w: f32[3, 3, 3]) -> y {
  y[n, c, p < 17, q < 13] = sum(r, s) x[n, c, p + r - 1, q + s - 1] * w[c, r, s]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv2d(x, w[:, None], padding=1, groups=3))

# CHECK: depthwise 5x5 pad 2, 12x40: ok
x, w = rand(1, 2, 12, 40), rand(2, 5, 5)
check("depthwise 5x5 pad 2, 12x40",
      """def f(x: f32[1, 2, 12, 40], w: f32[2, 5, 5]) -> y {
  y[n, c, p < 12, q < 40] = sum(r, s) x[n, c, p + r - 2, q + s - 2] * w[c, r, s]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv2d(x, w[:, None], padding=2, groups=2))

# CHECK: depthwise 3x3 stride 2 pad 1, 19x19: ok
x, w = rand(2, 2, 19, 19), rand(2, 3, 3)
check("depthwise 3x3 stride 2 pad 1, 19x19",
      """def f(x: f32[2, 2, 19, 19], w: f32[2, 3, 3]) -> y {
  y[n, c, p < 10, q < 10] = sum(r, s) x[n, c, 2*p + r - 1, 2*q + s - 1] * w[c, r, s]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv2d(x, w[:, None], stride=2, padding=1, groups=2))

# CHECK: depthwise 3x3 dilation 2 pad 2, 16x16: ok
x, w = rand(1, 3, 16, 16), rand(3, 3, 3)
check("depthwise 3x3 dilation 2 pad 2, 16x16",
      """def f(x: f32[1, 3, 16, 16], w: f32[3, 3, 3]) -> y {
  y[n, c, p < 16, q < 16] = sum(r, s) x[n, c, p + 2*r - 2, q + 2*s - 2] * w[c, r, s]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv2d(x, w[:, None], padding=2, dilation=2, groups=3))

# CHECK: temporal depthwise k5 pad 2, T 40: ok
x, w = rand(3, 4, 40), rand(4, 5)
check("temporal depthwise k5 pad 2, T 40",
      """def f(x: f32[3, 4, 40], w: f32[4, 5]) -> y {
  y[n, c, t < 40] = sum(k) x[n, c, t + k - 2] * w[c, k]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv1d(x, w[:, None], padding=2, groups=4))

# CHECK: max pooling 3x3 stride 1 pad 1, 16x18: ok
x = rand(2, 2, 16, 18)
check("max pooling 3x3 stride 1 pad 1, 16x18",
      """def f(x: f32[2, 2, 16, 18]) -> y {
  y[n, c, p < 16, q < 18] = max(r < 3, s < 3) x[n, c, p + r - 1, q + s - 1] pad -inf
}""", "f", {"x": x},
      lambda x: F.max_pool2d(x, 3, stride=1, padding=1))

# CHECK: sum pooling 3x3 pad 1 (count_include_pad), 20x20: ok
x = rand(1, 2, 20, 20)
check("sum pooling 3x3 pad 1 (count_include_pad), 20x20",
      """def f(x: f32[1, 2, 20, 20]) -> y {
  y[n, c, p < 20, q < 20] = sum(r < 3, s < 3) x[n, c, p + r - 1, q + s - 1] / 9
}""", "f", {"x": x},
      lambda x: F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=True))

# Convolutions with output channels run as implicit GEMMs; rows of at
# least a vector (16) pack B with vector loads (CpuImplicitGemm.cpp),
# borders and row ends element by element.
# CHECK: conv2d 3x3 pad 1, 18x37: ok
x, w = rand(2, 3, 18, 37), rand(5, 3, 3, 3)
check("conv2d 3x3 pad 1, 18x37",
      """def f(x: f32[2, 3, 18, 37], w: f32[5, 3, 3, 3]) -> y {
  y[n, k, p < 18, q < 37] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv2d(x, w, padding=1))

# CHECK: conv1d k5 pad 2, T 50: ok
x, w = rand(2, 4, 50), rand(6, 4, 5)
check("conv1d k5 pad 2, T 50",
      """def f(x: f32[2, 4, 50], w: f32[6, 4, 5]) -> y {
  y[n, k, t < 50] = sum(c, j) x[n, c, t + j - 2] * w[k, c, j]
}""", "f", {"x": x, "w": w},
      lambda x, w: F.conv1d(x, w, padding=2))

# The gradient in float64 against central finite differences, and the
# compiled gradient against the interpreter (neo-run --gradcheck).
# CHECK: gradcheck depthwise 10x11: ok
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "dw.neo")
    with open(path, "w") as f:
        f.write("""def f(x: f64[2, 2, 10, 11], w: f64[2, 3, 3]) -> y {
  y[n, c, p < 10, q < 11] = sum(r, s) x[n, c, p + r - 1, q + s - 1] * w[c, r, s]
}""")
    proc = subprocess.run([NEO_RUN, path, "--gradcheck"], capture_output=True, text=True)
    if proc.returncode != 0:
        print("FAILED gradcheck:\n" + proc.stdout + proc.stderr)
    else:
        print("gradcheck depthwise 10x11: ok")
