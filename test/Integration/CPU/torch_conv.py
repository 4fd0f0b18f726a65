# RUN: %python %s | FileCheck %s
# Convolutions and pooling compiled by Neo against PyTorch (Debian's python3-torch).
import numpy as np
import torch
import torch.nn.functional as F
from neotest import run, assert_close

rng = np.random.default_rng(0)
def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)

# CHECK: conv2d stride 2 pad 2 dilation 2: ok
x, w = rand(2, 3, 9, 9), rand(8, 3, 3, 3)
src = """def f(x: f32[2, 3, 9, 9], w: f32[8, 3, 3, 3]) -> (y: f32[2, 8, 5, 5]) {
  y[n, k, p, q] = sum(c, r, s) x[n, c, 2*p + 2*r - 2, 2*q + 2*s - 2] * w[k, c, r, s]
}"""
ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=2, dilation=2)
assert_close(run(src, "f", x=x, w=w)[0], ref.numpy(), what="conv2d stride 2 pad 2 dilation 2")

# CHECK: depthwise conv: ok
x, w = rand(2, 6, 7, 7), rand(6, 1, 3, 3)
src = """def f(x: f32[2, 6, 7, 7], w: f32[6, 1, 3, 3]) -> y {
  y[n, c, p < 7, q < 7] = sum(r, s) x[n, c, p + r - 1, q + s - 1] * w[c, 0, r, s]
}"""
ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1, groups=6)
assert_close(run(src, "f", x=x, w=w)[0], ref.numpy(), what="depthwise conv")

# CHECK: grouped conv: ok
x, w = rand(1, 4, 5, 5), rand(4, 2, 3, 3)
src = """def f(x: f32[1, 4, 5, 5], w: f32[4, 2, 3, 3]) -> y {
  y[n, k, p < 5, q < 5] = sum(c, r, s) x[n, (k // 2) * 2 + c, p + r - 1, q + s - 1] * w[k, c, r, s]
}"""
ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1, groups=2)
assert_close(run(src, "f", x=x, w=w)[0], ref.numpy(), what="grouped conv")

# CHECK: transposed conv: ok
x, w = rand(1, 3, 4, 4), rand(3, 2, 3, 3)
src = """def f(x: f32[1, 3, 4, 4], w: f32[3, 2, 3, 3]) -> y {
  y[n, k, h < 8, v < 8] = sum(c, r, s)
      select((h + 1 - r) % 2 == 0 and (v + 1 - s) % 2 == 0,
             x[n, c, (h + 1 - r) // 2, (v + 1 - s) // 2] * w[c, k, r, s], 0)
}"""
ref = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=2, padding=1,
                         output_padding=1)
assert_close(run(src, "f", x=x, w=w)[0], ref.numpy(), what="transposed conv")

# CHECK: max pooling: ok
x = rand(2, 3, 8, 8)
src = """def f(x: f32[2, 3, 8, 8]) -> y {
  y[n, c, p < 4, q < 4] = max(r < 3, s < 3) x[n, c, 2*p + r - 1, 2*q + s - 1] pad -inf
}"""
ref = F.max_pool2d(torch.from_numpy(x), 3, stride=2, padding=1)
assert_close(run(src, "f", x=x)[0], ref.numpy(), what="max pooling")

# CHECK: average pooling: ok
src = """def f(x: f32[2, 3, 8, 8]) -> y {
  y[n, c, p < 4, q < 4] = sum(r < 2, s < 2) x[n, c, 2*p + r, 2*q + s] / 4
}"""
ref = F.avg_pool2d(torch.from_numpy(x), 2)
assert_close(run(src, "f", x=x)[0], ref.numpy(), what="average pooling")

# CHECK: pixel shuffle: ok
x = rand(1, 8, 4, 4)
src = """def f(x: f32[1, 8, 4, 4]) -> y {
  y[n, c < 2, h < 8, w < 8] = x[n, c * 4 + (h % 2) * 2 + w % 2, h // 2, w // 2]
}"""
ref = F.pixel_shuffle(torch.from_numpy(x), 2)
assert_close(run(src, "f", x=x)[0], ref.numpy(), what="pixel shuffle")

# CHECK: im2col: ok
x = rand(1, 2, 4, 4)
src = """def f(x: f32[1, 2, 4, 4]) -> col {
  col[n, k < 18, l < 16] = x[n, k // 9, l // 4 + (k % 9) // 3 - 1, l % 4 + k % 3 - 1]
}"""
ref = F.unfold(torch.from_numpy(x), 3, padding=1)
assert_close(run(src, "f", x=x)[0], ref.numpy(), what="im2col")
