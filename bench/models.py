"""The benchmark set: each entry is a .neo function at benchmark size, the
arguments to differentiate, and an independent PyTorch implementation (the
JAX ones are in models_jax.py, keyed by the function's name).

PyTorch is imported on first use, so that the orchestrator (bench/run.py,
Debian's python) can read the .neo sources without importing any PyTorch;
the peers (bench/peer.py, in the venv of scripts/bench-env.sh) call the
references."""
import importlib


class _Lazy:
    def __init__(self, name):
        self._name, self._module = name, None

    def __getattr__(self, attr):
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)


torch = _Lazy("torch")
F = _Lazy("torch.nn.functional")


def sig(x):
    return torch.sigmoid(x)


def lstm(H, B, I):
    src = f"""def lstm(x: f32[{B}, {I}], h: f32[{B}, {H}], c: f32[{B}, {H}], W: f32[{I}, {4*H}],
          U: f32[{H}, {4*H}], b: f32[{4*H}]) -> (h2, c2) {{
  g[n, j] = sum(k) x[n, k] * W[k, j] + sum(k) h[n, k] * U[k, j] + b[j]
  c2[n, j < {H}] = sigmoid(g[n, {H} + j]) * c[n, j] + sigmoid(g[n, j]) * tanh(g[n, {2*H} + j])
  h2[n, j < {H}] = sigmoid(g[n, {3*H} + j]) * tanh(c2[n, j])
}}"""

    def ref(x, h, c, W, U, b):
        g = x @ W + h @ U + b
        gi, gf, gu, go = g.split(H, 1)
        c2 = sig(gf) * c + sig(gi) * torch.tanh(gu)
        return sig(go) * torch.tanh(c2), c2
    return src, "lstm", ref


def mi_lstm(H, B, I):
    src = f"""def mi_lstm(x: f32[{B}, {I}], h: f32[{B}, {H}], c: f32[{B}, {H}], W: f32[{I}, {4*H}],
             U: f32[{H}, {4*H}], alpha: f32[{4*H}], b1: f32[{4*H}], b2: f32[{4*H}],
             b: f32[{4*H}]) -> (h2, c2) {{
  wx[n, j] = sum(k) x[n, k] * W[k, j]
  uh[n, j] = sum(k) h[n, k] * U[k, j]
  g[n, j] = alpha[j] * wx[n, j] * uh[n, j] + b1[j] * wx[n, j] + b2[j] * uh[n, j] + b[j]
  c2[n, j < {H}] = sigmoid(g[n, {H} + j]) * c[n, j] + sigmoid(g[n, j]) * tanh(g[n, {2*H} + j])
  h2[n, j < {H}] = sigmoid(g[n, {3*H} + j]) * tanh(c2[n, j])
}}"""

    def ref(x, h, c, W, U, alpha, b1, b2, b):
        wx, uh = x @ W, h @ U
        g = alpha * wx * uh + b1 * wx + b2 * uh + b
        gi, gf, gu, go = g.split(H, 1)
        c2 = sig(gf) * c + sig(gi) * torch.tanh(gu)
        return sig(go) * torch.tanh(c2), c2
    return src, "mi_lstm", ref


def sub_lstm(H, B, I):
    src = f"""def sub_lstm(x: f32[{B}, {I}], h: f32[{B}, {H}], c: f32[{B}, {H}], W: f32[{I}, {4*H}],
              U: f32[{H}, {4*H}], b: f32[{4*H}]) -> (h2, c2) {{
  g[n, j] = sigmoid(sum(k) x[n, k] * W[k, j] + sum(k) h[n, k] * U[k, j] + b[j])
  c2[n, j < {H}] = g[n, {H} + j] * c[n, j] + g[n, {3*H} + j] - g[n, j]
  h2[n, j < {H}] = sigmoid(c2[n, j]) - g[n, {2*H} + j]
}}"""

    def ref(x, h, c, W, U, b):
        g = sig(x @ W + h @ U + b)
        gi, gf, go, gz = g.split(H, 1)
        c2 = gf * c + gz - gi
        return sig(c2) - go, c2
    return src, "sub_lstm", ref


def scrnn(H, B, I, S):
    src = f"""def scrnn(x: f32[{B}, {I}], s: f32[{B}, {S}], h: f32[{B}, {H}], Bm: f32[{I}, {S}],
           P: f32[{S}, {H}], A: f32[{I}, {H}], R: f32[{H}, {H}]) -> (h2, s2) {{
  s2[n, j] = 0.05 * sum(k) x[n, k] * Bm[k, j] + 0.95 * s[n, j]
  h2[n, j] = sigmoid(sum(k) s2[n, k] * P[k, j] + sum(k) x[n, k] * A[k, j] + sum(k) h[n, k] * R[k, j])
}}"""

    def ref(x, s, h, Bm, P, A, R):
        s2 = 0.05 * (x @ Bm) + 0.95 * s
        return sig(s2 @ P + x @ A + h @ R), s2
    return src, "scrnn", ref


def conv2d(N, C, K, HW):
    src = f"""def conv(x: f32[{N}, {C}, {HW}, {HW}], w: f32[{K}, {C}, 3, 3]) -> y {{
  y[n, k, p < {HW}, q < {HW}] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}}"""
    return src, "conv", lambda x, w: F.conv2d(x, w, padding=1)


def conv2d_bf16(N, C, K, HW):
    """conv2d with bf16 tensors (f32 accumulation, the output rounded to
    bf16); PyTorch's reference takes bf16 tensors (cuDNN's bf16 kernels)."""
    src = f"""def conv(x: bf16[{N}, {C}, {HW}, {HW}], w: bf16[{K}, {C}, 3, 3]) -> (y: bf16[{N}, {K}, {HW}, {HW}]) {{
  y[n, k, p, q] = bf16(sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s])
}}"""
    return src, "conv", lambda x, w: F.conv2d(x, w, padding=1)


def depthwise(N, C, HW):
    src = f"""def dw(x: f32[{N}, {C}, {HW}, {HW}], w: f32[{C}, 3, 3]) -> y {{
  y[n, c, p < {HW}, q < {HW}] = sum(r, s) x[n, c, p + r - 1, q + s - 1] * w[c, r, s]
}}"""
    return src, "dw", lambda x, w: F.conv2d(x, w[:, None], padding=1, groups=C)


def layernorm(R, D):
    src = f"""def layernorm(x: f32[{R}, {D}], g: f32[{D}], b: f32[{D}]) -> y {{
  mu[i] = sum(j) x[i, j] / {D}
  var[i] = sum(j) (x[i, j] - mu[i]) * (x[i, j] - mu[i]) / {D}
  y[i, j] = (x[i, j] - mu[i]) / sqrt(var[i] + 1e-5) * g[j] + b[j]
}}"""
    return src, "layernorm", lambda x, g, b: F.layer_norm(x, (D,), g, b, 1e-5)


def softmax(R, D):
    src = f"""def softmax(x: f32[{R}, {D}]) -> y {{
  m[i] = max(j) x[i, j]
  z[i] = sum(j) exp(x[i, j] - m[i])
  y[i, j] = exp(x[i, j] - m[i]) / z[i]
}}"""
    return src, "softmax", lambda x: F.softmax(x, 1)


def mlp(B, sizes):
    d0, d1, d2, d3 = sizes
    src = f"""def mlp(x: f32[{B}, {d0}], t: f32[{B}, {d3}], w1: f32[{d0}, {d1}], b1: f32[{d1}],
         w2: f32[{d1}, {d2}], b2: f32[{d2}], w3: f32[{d2}, {d3}], b3: f32[{d3}]) -> loss {{
  h1[i, j] = relu(sum(k) x[i, k] * w1[k, j] + b1[j])
  h2[i, j] = relu(sum(k) h1[i, k] * w2[k, j] + b2[j])
  logits[i, c] = sum(k) h2[i, k] * w3[k, c] + b3[c]
  m[i] = max(c) logits[i, c]
  lse[i] = m[i] + log(sum(c) exp(logits[i, c] - m[i]))
  loss = sum(i) (lse[i] - sum(c) t[i, c] * logits[i, c]) / {B}
}}"""

    def ref(x, t, w1, b1, w2, b2, w3, b3):
        logits = torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3
        return (torch.logsumexp(logits, 1) - (t * logits).sum(1)).mean()
    return src, "mlp", ref


def capsule(N, C, K, HW):
    src = f"""def capsule(I: f32[{N}, {C}, {HW + 2}, {HW + 2}, 4, 4], W: f32[{K}, {C}, 3, 3, 4, 4]) -> O {{
  O[n, k, p < {HW}, q < {HW}, i, j] = sum(c, r, s, m) I[n, c, p + r, q + s, i, m] * W[k, c, r, s, m, j]
}}"""

    def ref(I, W):
        u = I.unfold(2, 3, 1).unfold(3, 3, 1)
        return torch.einsum("ncpqimrs,kcrsmj->nkpqij", u, W)
    return src, "capsule", ref


def shift_conv(N, C, K, HW):
    src = f"""def shift(x: f32[{N}, {C}, {HW}, {HW}], w: f32[{K}, {C}]) -> y {{
  shifted[n, c, h < {HW}, v < {HW}] = x[n, c, h + c % 3 - 1, v + (c // 3) % 3 - 1]
  y[n, k, h, v] = sum(c) shifted[n, c, h, v] * w[k, c]
}}"""

    def ref(x, w):
        p = F.pad(x, (1, 1, 1, 1))
        parts = []
        for c in range(C):
            dh, dv = c % 3 - 1, (c // 3) % 3 - 1
            parts.append(p[:, c, 1 + dh:1 + dh + HW, 1 + dv:1 + dv + HW])
        return torch.einsum("nchw,kc->nkhw", torch.stack(parts, 1), w)
    return src, "shift", ref


# (name, group, builder) for forward+backward benchmarks.
TRAINING = [
    ("conv2d 3x3 N8 C=K=64 56x56", "conv", lambda: conv2d(8, 64, 64, 56)),
    ("depthwise 3x3 N8 C64 56x56", "conv", lambda: depthwise(8, 64, 56)),
    ("LSTM cell B64 H1024", "cell", lambda: lstm(1024, 64, 1024)),
    ("layernorm 64x1024", "norm", lambda: layernorm(64, 1024)),
    ("softmax 64x1024", "norm", lambda: softmax(64, 1024)),
    ("MLP 784-512-512-10 step B64", "cell", lambda: mlp(64, (784, 512, 512, 10))),
    ("MI-LSTM B64 H1024", "cell", lambda: mi_lstm(1024, 64, 1024)),
    ("subLSTM B64 H1024", "cell", lambda: sub_lstm(1024, 64, 1024)),
    ("SCRNN B64 H1024 S64", "cell", lambda: scrnn(1024, 64, 1024, 64)),
    ("capsule conv N4 C8 K8 12x12", "cell", lambda: capsule(4, 8, 8, 12)),
    ("shift conv N8 C64 K64 28x28", "cell", lambda: shift_conv(8, 64, 64, 28)),
    ("attention L1024 D64", "norm", lambda: attention(1024, 64)),
]


def attention(L, D, causal=False, dtype="f32", heads=0):
    """softmax(q k^T / sqrt(D)) v over L positions, with causal=True keys
    after the query masked (to -1e30 by index, which the fused GPU kernel
    reads as a mask: it skips the key tiles after a block's rows); PyTorch's
    reference is its fused scaled_dot_product_attention (what a user would
    call), is_causal=causal. With dtype="bf16", q, k, v and o are bf16 (the
    scores, statistics and sums f32, o rounded once; on the GPU the fused
    kernel runs on tensor cores) and PyTorch's reference takes bf16 tensors
    (its flash kernel).
    With heads > 0, that many independent heads (a leading dim: batch x
    heads of a multi-head layer)."""
    h, hc = ("h, ", f"{heads}, ") if heads else ("", "")
    scores = f"s[{h}i, j]"
    if causal:
        scores = f"t[{h}i, j]"
    out = "o" if dtype == "f32" else f"(o: {dtype}[{hc}{L}, {D}])"
    # A 16-bit o is the f32 sum rounded once (the kernel stores it so).
    rounded = (lambda x: x) if dtype == "f32" else (lambda x: f"{dtype}({x})")
    src = f"""def attn(q: {dtype}[{hc}{L}, {D}], k: {dtype}[{hc}{L}, {D}], v: {dtype}[{hc}{L}, {D}]) -> {out} {{
  s[{h}i, j] = sum(d) q[{h}i, d] * k[{h}j, d] * {1.0 / D ** 0.5!r}
""" + (f"  t[{h}i, j] = select(j <= i, s[{h}i, j], -1e30)\n" if causal else "") + f"""  m[{h}i] = max(j) {scores}
  z[{h}i] = sum(j) exp({scores} - m[{h}i])
  o[{h}i, e] = {rounded(f"sum(j) exp({scores} - m[{h}i]) / z[{h}i] * v[{h}j, e]")}
}}"""

    def ref(q, k, v):
        return F.scaled_dot_product_attention(q[None], k[None], v[None], is_causal=causal)[0]
    return src, "attn", ref


def attention_decode(heads, Lq, Lk, D, dtype="bf16"):
    """Decoding: softmax(q k^T / sqrt(D)) v for `Lq` query rows of each of
    `heads` heads against `Lk` keys (few blocks of rows: Neo's fused kernel
    splits the key tiles over blocks, as flash-decoding). PyTorch's
    reference is scaled_dot_product_attention on the same bf16 tensors."""
    out = "o" if dtype == "f32" else f"(o: {dtype}[{heads}, {Lq}, {D}])"
    rounded = (lambda x: x) if dtype == "f32" else (lambda x: f"{dtype}({x})")
    src = f"""def attn(q: {dtype}[{heads}, {Lq}, {D}], k: {dtype}[{heads}, {Lk}, {D}], v: {dtype}[{heads}, {Lk}, {D}]) -> {out} {{
  s[h, i, j] = sum(d) q[h, i, d] * k[h, j, d] * {1.0 / D ** 0.5!r}
  m[h, i] = max(j) s[h, i, j]
  z[h, i] = sum(j) exp(s[h, i, j] - m[h, i])
  o[h, i, e] = {rounded("sum(j) exp(s[h, i, j] - m[h, i]) / z[h, i] * v[h, j, e]")}
}}"""

    def ref(q, k, v):
        return F.scaled_dot_product_attention(q[None], k[None], v[None])[0]
    return src, "attn", ref


# Training graphs that the GPU benchmark adds to TRAINING (scripts/gpu).
GPU_TRAINING = [
    ("conv2d 3x3 N8 C=K=64 56x56 bf16", "conv", lambda: conv2d_bf16(8, 64, 64, 56)),
    ("attention L1024 D64 bf16", "norm", lambda: attention(1024, 64, dtype="bf16")),
]

# Forward-only graphs that the GPU benchmark times against PyTorch's
# inference (no autograd): softmax attention runs as one fused kernel
# (online softmax, the L x L scores never written) against PyTorch's fused
# scaled_dot_product_attention (causal: is_causal=True; Neo's blocks skip
# the key tiles after their rows).
GPU_FORWARD = [
    ("attention forward L1024 D64", "norm", lambda: attention(1024, 64)),
    ("attention forward L4096 D64", "norm", lambda: attention(4096, 64)),
    ("causal attention forward L4096 D64", "norm", lambda: attention(4096, 64, causal=True)),
    ("attention forward L4096 D64 bf16", "norm", lambda: attention(4096, 64, dtype="bf16")),
    ("causal attention forward L4096 D64 bf16", "norm",
     lambda: attention(4096, 64, causal=True, dtype="bf16")),
    # A multi-head layer (batch 4 x 16 heads) in bf16: every SM busy, the
    # setting FlashAttention's own benchmarks use.
    ("attention forward 64 heads L1024 D64 bf16", "norm",
     lambda: attention(1024, 64, dtype="bf16", heads=64)),
    ("causal attention forward 64 heads L1024 D64 bf16", "norm",
     lambda: attention(1024, 64, causal=True, dtype="bf16", heads=64)),
    # Decoding: 16 query rows of 16 heads against 8192 keys (16 blocks of a
    # warp: the key tiles split in 32 parts over blocks).
    ("attention decode 16 heads Q16 L8192 D64 bf16", "norm",
     lambda: attention_decode(16, 16, 8192, 64)),
]

# (M, N, K)
SGEMM = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
         (64, 4096, 1024)]
