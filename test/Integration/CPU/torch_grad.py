# RUN: %python %s %neo_src/test/Operators %neo_src/test/Networks | FileCheck %s
# CHECK-NOT: FAILED
# CHECK: all gradients match PyTorch autograd
#
# The gradient of every operator of test/Operators and of every network of
# test/Networks, derived by neo-autodiff and compiled (and itself checked
# against the interpreter by neo-run --check), against PyTorch autograd of an
# independent PyTorch implementation, on the same random inputs and output
# adjoints.
import glob
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from neotest import grad, params

torch.set_default_dtype(torch.float32)
sig = torch.sigmoid


def lstm_gates(g, c, order):
    H = c.shape[1]
    gi, gf, go, gu = (g[:, k * H:(k + 1) * H] for k in order)
    c2 = sig(gf) * c + sig(gi) * torch.tanh(gu)
    return sig(go) * torch.tanh(c2), c2


def shift(x):
    n, C, H, W = x.shape
    out = torch.zeros_like(x)
    p = F.pad(x, (1, 1, 1, 1))
    for c in range(C):
        dh, dw = c % 3 - 1, (c // 3) % 3 - 1
        out[:, c] = p[:, c, 1 + dh:1 + dh + H, 1 + dw:1 + dw + W]
    return out


def laplacian(x):
    p = F.pad(x, (1, 1, 1, 1))
    return p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:] - 4 * x


def attention(x, Wq, Wk, Wv, Wo):
    q, k, v = x @ Wq, x @ Wk, x @ Wv
    return F.softmax(q @ k.T * 0.25, 1) @ v @ Wo


def cross_entropy(x, t):
    return (torch.logsumexp(x, 1) - (t * x).sum(1)).mean()


def mlp(x, t, w1, b1, w2, b2):
    logits = torch.relu(x @ w1 + b1) @ w2 + b2
    return cross_entropy(logits, t), logits


def mi_lstm(x, h, c, W, U, alpha, b1, b2, b):
    wx, uh = x @ W, h @ U
    return lstm_gates(alpha * wx * uh + b1 * wx + b2 * uh + b, c, (0, 1, 2, 3))


def sub_lstm(x, h, c, W, U, b):
    g = sig(x @ W + h @ U + b)
    H = c.shape[1]
    c2 = g[:, H:2 * H] * c + g[:, 3 * H:] - g[:, :H]
    return sig(c2) - g[:, 2 * H:3 * H], c2


def scrnn(x, s, h, B, P, A, R):
    s2 = 0.05 * (x @ B) + 0.95 * s
    return sig(s2 @ P + x @ A + h @ R), s2


def capsule(I, W):
    u = I.unfold(2, 3, 1).unfold(3, 3, 1)  # n c p q i m r s
    return torch.einsum("ncpqimrs,kcrsmj->nkpqij", u, W)


def cnn(x, t, w, b, wf, bf):
    c = torch.relu(F.conv2d(x, w, padding=1) + b[None, :, None, None])
    logits = F.max_pool2d(c, 2).reshape(x.shape[0], -1) @ wf + bf
    return cross_entropy(logits, t)


def rnn(x, h0, W, U, b, V):
    h = h0
    for step in range(x.shape[0]):
        h = torch.tanh(x[step] @ W + h @ U + b)
    return ((h @ V) ** 2).sum() / 2


def attention_block(x, Wq, Wk, Wv, Wo, g):
    y = x + attention(x, Wq, Wk, Wv, Wo)
    return (F.layer_norm(y, (y.shape[1],), eps=1e-5) * g).sum()


def position_encoding(x):
    p = torch.arange(x.shape[0], dtype=x.dtype)[:, None]
    j = torch.arange(x.shape[1])
    angle = p * torch.exp((j - j % 2).to(x.dtype) * (-math.log(10000.0) / x.shape[1]))
    return x + torch.where(j % 2 == 0, torch.sin(angle), torch.cos(angle))


REFERENCES = {
    "matmul": lambda A, B: A @ B,
    "batch_matmul": lambda A, B: torch.bmm(A, B),
    "linear_relu": lambda x, w, b: torch.relu(x @ w + b),
    "broadcast": lambda a, b: a[:, None] + b[None, :],
    "permute": lambda x: x.permute(0, 2, 3, 1),
    "conv2d": lambda I, W: F.conv2d(I, W, stride=2, padding=2, dilation=2),
    "depthwise_conv": lambda x, w: F.conv2d(x, w[:, None], padding=1, groups=6),
    "grouped_conv": lambda x, w: F.conv2d(x, w, padding=1, groups=2),
    "transposed_conv": lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1,
                                                       output_padding=1),
    "maxpool": lambda x: F.max_pool2d(x, 3, 2, 1),
    "avgpool": lambda x: F.avg_pool2d(x, 2),
    "softmax": lambda x: F.softmax(x, 1),
    "logsumexp": lambda x: torch.logsumexp(x, 1),
    "layernorm": lambda x, g, b: F.layer_norm(x, (32,), g, b, 1e-5),
    "batchnorm_stats": lambda x: (x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False)),
    "cross_entropy": cross_entropy,
    "lstm_cell": lambda x, h, c, W, U, b: lstm_gates(x @ W + h @ U + b, c, (0, 1, 2, 3)),
    "attention": attention,
    "pixel_shuffle": lambda x: F.pixel_shuffle(x, 2),
    "im2col": lambda x: F.unfold(x, 3, padding=1),
    "flip": lambda x: x.flip(1),
    "reflect_pad": lambda x: F.pad(x[None], (1, 1), mode="reflect")[0],
    "einsum3": lambda A, B, C: torch.einsum("ij,jk,kl->il", A, B, C),
    "shift_conv": lambda x, w: torch.einsum("nchw,kc->nkhw", shift(x), w),
    "stencil": laplacian,
    "capsule_conv": capsule,
    "causal_mask": lambda x: torch.cumsum(x, 1),
    "gelu": lambda x: 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3))),
    "gelu_exact": lambda x: F.gelu(x),
    "position_encoding": position_encoding,
    "mish": lambda x: x * torch.tanh(F.softplus(x)),
    "gem_pool": lambda x: x.clamp(min=1e-6).pow(3).mean((2, 3)).pow(1 / 3),
    "upsample": lambda x: x.repeat_interleave(2, 0).repeat_interleave(2, 1),
    "mi_lstm": mi_lstm,
    "sub_lstm": sub_lstm,
    "scrnn": scrnn,
    "mlp": mlp,
    "identity_eye": lambda x: (x - torch.eye(4), 0.5 * torch.arange(4.0)),
    # Networks.
    "small_cnn": cnn,
    "unrolled_rnn": rnn,
    "attention_block": attention_block,
    "mlp_network": mlp,
}

rng = np.random.default_rng(42)
failures = 0
files = sorted(glob.glob(os.path.join(sys.argv[1], "*.neo")) +
               glob.glob(os.path.join(sys.argv[2], "*.neo")))
for path in files:
    name = os.path.splitext(os.path.basename(path))[0]
    source = open(path).read()
    function = __import__("re").search(r"def\s+(\w+)", source).group(1)
    ps = params(source, function)
    inputs = [rng.uniform(-1, 1, shape).astype(dtype) for _, dtype, shape in ps]
    tensors = [torch.tensor(v, requires_grad=True) for v in inputs]
    outs = REFERENCES[name](*tensors)
    outs = outs if isinstance(outs, tuple) else (outs,)
    dys = [rng.uniform(-1, 1, tuple(o.shape)).astype(np.float32) for o in outs]
    ref = torch.autograd.grad([o for o in outs if o.requires_grad],
                              tensors,
                              [torch.tensor(d) for o, d in zip(outs, dys) if o.requires_grad],
                              allow_unused=True)
    got = grad(source, function, inputs, dys)
    for (pname, _, _), g, r in zip(ps, got, ref):
        want = np.zeros_like(g) if r is None else r.numpy()
        scale = max(1.0, float(np.max(np.abs(want))))
        err = float(np.max(np.abs(g - want)))
        ok = g.shape == want.shape and err <= 1e-4 * scale
        failures += not ok
        print("%-16s d%-6s max abs error %.2e (scale %.2g) %s" %
              (name, pname, err, scale, "ok" if ok else "FAILED"))
if failures:
    print("%d gradients differ from PyTorch" % failures)
    sys.exit(1)
print("all gradients match PyTorch autograd")
