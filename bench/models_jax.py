"""JAX (jax.numpy) versions of the references in models.py, keyed by the
.neo function's name. Sizes come from the argument shapes, so one function
serves every size of a benchmark. Used by bench/peer.py in the venv of
scripts/bench-env.sh."""
import jax
import jax.numpy as jnp

sig = jax.nn.sigmoid


def _cell_gates(g, c, H):
    gi, gf, gu, go = (g[:, i * H:(i + 1) * H] for i in range(4))
    c2 = sig(gf) * c + sig(gi) * jnp.tanh(gu)
    return sig(go) * jnp.tanh(c2), c2


def lstm(x, h, c, W, U, b):
    return _cell_gates(x @ W + h @ U + b, c, h.shape[1])


def mi_lstm(x, h, c, W, U, alpha, b1, b2, b):
    wx, uh = x @ W, h @ U
    return _cell_gates(alpha * wx * uh + b1 * wx + b2 * uh + b, c, h.shape[1])


def sub_lstm(x, h, c, W, U, b):
    H = h.shape[1]
    g = sig(x @ W + h @ U + b)
    gi, gf, go, gz = (g[:, i * H:(i + 1) * H] for i in range(4))
    c2 = gf * c + gz - gi
    return sig(c2) - go, c2


def scrnn(x, s, h, Bm, P, A, R):
    s2 = 0.05 * (x @ Bm) + 0.95 * s
    return sig(s2 @ P + x @ A + h @ R), s2


def _conv(x, w, groups=1):
    return jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)),
                                        dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                        feature_group_count=groups)


def conv(x, w):
    return _conv(x, w)


def dw(x, w):
    return _conv(x, w[:, None], groups=x.shape[1])


def layernorm(x, g, b):
    mu = x.mean(1, keepdims=True)
    var = ((x - mu) ** 2).mean(1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g + b


def softmax(x):
    return jax.nn.softmax(x, axis=1)


def mlp(x, t, w1, b1, w2, b2, w3, b3):
    logits = jax.nn.relu(jax.nn.relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3
    return (jax.nn.logsumexp(logits, 1) - (t * logits).sum(1)).mean()


def capsule(I, W):
    HW = I.shape[2] - 2
    # u[n, c, p, q, i, m, r, s] = I[n, c, p + r, q + s, i, m]
    u = jnp.stack([jnp.stack([I[:, :, r:r + HW, s:s + HW] for s in range(3)], -1)
                   for r in range(3)], -2)
    return jnp.einsum("ncpqimrs,kcrsmj->nkpqij", u, W)


def shift(x, w):
    C, HW = x.shape[1], x.shape[2]
    p = jnp.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    parts = []
    for c in range(C):
        dh, dv = c % 3 - 1, (c // 3) % 3 - 1
        parts.append(p[:, c, 1 + dh:1 + dh + HW, 1 + dv:1 + dv + HW])
    return jnp.einsum("nchw,kc->nkhw", jnp.stack(parts, 1), w)


def attn(q, k, v):
    # What a JAX user calls: jax.nn.dot_product_attention ([batch, length,
    # heads, head dim]; scale 1 / sqrt(D) by default, as models.attention).
    return jax.nn.dot_product_attention(q[None, :, None], k[None, :, None],
                                        v[None, :, None])[0, :, 0]


REFS = dict(lstm=lstm, mi_lstm=mi_lstm, sub_lstm=sub_lstm, scrnn=scrnn, conv=conv, dw=dw,
            layernorm=layernorm, softmax=softmax, mlp=mlp, capsule=capsule, shift=shift,
            attn=attn)
