"""Mixed-precision training (docs/language.md "Element types"): bf16 and f16
tensors compute in f32, a statement stores its result as its root cast says
(`bf16(e)`), reductions accumulate in f32, and the gradients of 16-bit
tensors sum in f32 and round once. Every result is checked against a float64
numpy reference that rounds at the same storage points, and against the
same model in f32 within bf16's bound; f16 gradients need loss scaling,
shown both ways."""
import numpy as np
import pytest

import neo

MLP = """
def mlp(x: {t}[{b}, {k}], w: {t}[{k}, {n}], bias: f32[{n}]) -> y {{
  h[i, j] = {t}(sum(k) x[i, k] * w[k, j])
  y[i, j] = {t}(tanh(h[i, j] + bias[j]))
}}
"""

EPS = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}


def rnd(x, t):
    """Rounds float64 `x` to `t` (nearest even), as float64."""
    if t == "bf16":
        return neo.from_bf16_bits(neo.to_bf16_bits(x)).astype(np.float64)
    if t == "f16":
        return np.asarray(x, np.float64).astype(np.float16).astype(np.float64)
    return np.asarray(x, np.float64)


def reference(x, w, bias, dy, t):
    """Forward and backward in float64, rounded where Neo stores 16 bits."""
    h = rnd(x @ w, t)
    pre = h + bias
    y = rnd(np.tanh(pre), t)
    dpre = dy * (1 - np.tanh(pre) ** 2)
    dh = rnd(dpre, t)  # the adjoint of a bf16 tensor is bf16
    return y, rnd(dh @ w.T, t), rnd(x.T @ dh, t), dpre.sum(0)


def inputs(t, b, k, n, seed=0, dy_scale=1.0):
    rng = np.random.default_rng(seed)
    x = rnd(rng.uniform(-1, 1, (b, k)), t)
    w = rnd(rng.uniform(-1, 1, (k, n)) / np.sqrt(k), t)
    bias = rng.uniform(-0.5, 0.5, n).astype(np.float32).astype(np.float64)
    dy = rnd(rng.uniform(-1, 1, (b, n)) * dy_scale, t)
    return x, w, bias, dy


def fwdbwd(t, b, k, n, **kw):
    m = neo.Module.from_source(MLP.format(t=t, b=b, k=k, n=n))
    return neo.grad(m, "mlp", **kw)


def within(got, want, eps, scale=None):
    got = np.asarray(got, np.float64)
    scale = scale if scale is not None else max(1.0, float(np.max(np.abs(want))))
    err = float(np.max(np.abs(got - want)))
    assert err <= eps * scale, "error %g > %g" % (err, eps * scale)
    return err


@pytest.mark.parametrize("t", ["bf16", "f16"])
def test_mlp_step_matches_the_rounded_reference(t):
    b, k, n = 64, 96, 80
    x, w, bias, dy = inputs(t, b, k, n)
    f = fwdbwd(t, b, k, n)
    args = [x, w, bias, dy] if t == "bf16" else [x.astype(np.float16), w.astype(np.float16),
                                                 bias, dy.astype(np.float16)]
    y, dx, dw, db = f(*args)
    ry, rdx, rdw, rdb = reference(x, w, bias, dy, t)
    # One storage rounding of difference at most (f32 vs float64 sums can
    # round the other way).
    for got, want in ((y, ry), (dx, rdx), (dw, rdw)):
        within(got, want, 2 * EPS[t])
    within(db, rdb, 1e-5)


def test_bf16_against_f32_model():
    """The bf16 step against the same model in f32: within bf16's bound."""
    b, k, n = 32, 64, 48
    x, w, bias, dy = inputs("bf16", b, k, n, seed=3)
    lo = fwdbwd("bf16", b, k, n)(x, w, bias, dy)
    hi = fwdbwd("f32", b, k, n)(x.astype(np.float32), w.astype(np.float32),
                                bias.astype(np.float32), dy.astype(np.float32))
    for got, want in zip(lo, hi):
        within(got, np.asarray(want, np.float64), 8 * EPS["bf16"])


def test_gradients_accumulate_in_f32():
    """dw sums 4096 products per element: accumulated in bf16 it would be
    off by many ulps (a bf16 ulp at 64 is 0.5); in f32 it rounds once."""
    b, k, n = 4096, 16, 16
    x, w, bias, dy = inputs("bf16", b, k, n, seed=5)
    x = np.abs(x)  # same-sign terms: the sum grows, and 16-bit sums lose more
    dy = np.abs(dy)
    _, _, dw, _ = fwdbwd("bf16", b, k, n)(x, w, bias, dy)
    _, _, rdw, _ = reference(x, w, bias, dy, "bf16")
    err = np.abs(np.asarray(dw, np.float64) - rdw)
    assert np.all(err <= 2 * EPS["bf16"] * np.abs(rdw) + 1e-6), float(np.max(err / np.abs(rdw)))


def test_f16_needs_loss_scaling():
    """Small f16 gradients underflow (f16 holds nothing below 6e-8): a seed
    of 1e-8 rounds to 0 and every gradient is 0. Scaling the seed by 2^16
    before it is rounded to f16 keeps it, and dividing the gradients by the
    scale in f32 recovers the f32 model's within f16's bound."""
    b, k, n = 32, 64, 48
    x, w, bias, _ = inputs("f16", b, k, n, seed=7)
    dy = np.random.default_rng(8).uniform(-1, 1, (b, n)) * 1e-8
    f = fwdbwd("f16", b, k, n)
    f32 = fwdbwd("f32", b, k, n)
    h = lambda a: a.astype(np.float16)
    want = f32(x.astype(np.float32), w.astype(np.float32), bias.astype(np.float32),
               dy.astype(np.float32))
    _, dx, dw, db = f(h(x), h(w), bias, h(dy))
    assert not np.any(dx) and not np.any(dw) and not np.any(db), "expected f16 underflow"
    scale = 2.0 ** 16
    _, dx, dw, db = f(h(x), h(w), bias, h(dy * scale))
    for got, ref in ((dx, want[1]), (dw, want[2]), (db, want[3])):
        got = np.asarray(got, np.float64) / scale
        within(got, np.asarray(ref, np.float64), 8 * EPS["f16"],
               scale=float(np.max(np.abs(ref))))


def test_casts_and_mixed_reads():
    """bf16(e) inside an expression rounds; f32 and bf16 reads mix in f32;
    an elementwise statement of bf16 reads stays bf16; f64 mixes with
    nothing."""
    src = """
def f(a: bf16[8], c: f32[8]) -> (r, s, u) {
  r[i] = a[i] * c[i] + bf16(c[i] / 3)
  s[i] = a[i] * a[i]
  u[i] = f32(a[i] + 1)
}
"""
    m = neo.Module.from_source(src)
    f = m.compile()
    rng = np.random.default_rng(1)
    a = rnd(rng.uniform(-2, 2, 8), "bf16")
    c = rng.uniform(-2, 2, 8).astype(np.float32).astype(np.float64)
    r, s, u = f(a, c)
    assert [o[1] for o in f.outputs] == [np.dtype(np.float32), np.dtype(np.uint16),
                                         np.dtype(np.float32)]
    within(r, a * c + rnd(c / 3, "bf16"), 1e-6)
    np.testing.assert_array_equal(s, rnd(a * a, "bf16"))
    np.testing.assert_array_equal(u, a + 1)
    with pytest.raises(neo.NeoError, match="f64 mixes with no other type"):
        neo.Module.from_source("def g(a: f64[4], b: f32[4]) -> y {\n  y[i] = a[i] + b[i]\n}")
    with pytest.raises(neo.NeoError, match="declared as f32 but stored as bf16"):
        neo.Module.from_source("def g(a: f32[4]) -> y: f32[4] {\n  y[i] = bf16(a[i])\n}")


def test_bf16_bits_round_to_nearest_even():
    x = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, -0.0, np.inf, np.nan], np.float32)
    got = neo.from_bf16_bits(neo.to_bf16_bits(x))
    np.testing.assert_array_equal(got[:5], [1.0, 1.0, 1 + 2 ** -6, -0.0, np.inf])
    assert np.isnan(got[5])
