"""neo-hoist-invariants, neo-share-subexpressions and the split accumulators
of row reductions (on by default in neo-lower-to-cpu): softmax and layernorm
forward and backward, compiled with and without them, on one and two
threads, against float64 references (the analytic gradients), at row lengths
that take the split main loop, its single-vector remainder and the masked
tail."""
import numpy as np
import pytest

import neo


def softmax_source(R, D):
    return f"""def softmax(x: f32[{R}, {D}]) -> y {{
  m[i] = max(j) x[i, j]
  z[i] = sum(j) exp(x[i, j] - m[i])
  y[i, j] = exp(x[i, j] - m[i]) / z[i]
}}"""


def layernorm_source(R, D):
    return f"""def layernorm(x: f32[{R}, {D}], g: f32[{D}], b: f32[{D}]) -> y {{
  mu[i] = sum(j) x[i, j] / {D}
  var[i] = sum(j) (x[i, j] - mu[i]) * (x[i, j] - mu[i]) / {D}
  y[i, j] = (x[i, j] - mu[i]) / sqrt(var[i] + 1e-5) * g[j] + b[j]
}}"""


def softmax_ref(x, dy):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    y = e / e.sum(1, keepdims=True)
    return y, y * (dy - (dy * y).sum(1, keepdims=True))


def layernorm_ref(x, g, b, dy):
    x, g, b, dy = (a.astype(np.float64) for a in (x, g, b, dy))
    mu = x.mean(1, keepdims=True)
    rstd = 1 / np.sqrt(((x - mu) ** 2).mean(1, keepdims=True) + 1e-5)
    xh = (x - mu) * rstd
    dxh = dy * g
    dx = rstd * (dxh - dxh.mean(1, keepdims=True) - xh * (dxh * xh).mean(1, keepdims=True))
    return xh * g + b, dx, (dy * xh).sum(0), dy.sum(0)


def _close(got, want, what):
    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)
    assert err < 2e-5, "%s: relative error %g" % (what, err)


# Row lengths: 1024 (split main loop only), 1000 (split loop, remainder
# vectors and a masked tail), 40 (too short to split).
@pytest.mark.parametrize("D", [1024, 1000, 40])
@pytest.mark.parametrize("options", ["threads=1", "threads=2",
                                     "threads=1 hoist-invariants=false"])
def test_softmax(D, options):
    rng = np.random.default_rng(D)
    x = rng.standard_normal((16, D)).astype(np.float32) * 3
    dy = rng.standard_normal((16, D)).astype(np.float32)
    f = neo.grad(neo.Module.from_source(softmax_source(16, D)), "softmax", options=options)
    y, dx = f(x, dy)
    want_y, want_dx = softmax_ref(x, dy)
    _close(y, want_y, "y")
    _close(dx, want_dx, "dx")


@pytest.mark.parametrize("D", [1024, 1000, 40])
@pytest.mark.parametrize("options", ["threads=1", "threads=2",
                                     "threads=1 hoist-invariants=false"])
def test_layernorm(D, options):
    rng = np.random.default_rng(D + 1)
    x = (rng.standard_normal((16, D)) * 2 + 0.5).astype(np.float32)
    g, b = (rng.standard_normal(D).astype(np.float32) for _ in range(2))
    dy = rng.standard_normal((16, D)).astype(np.float32)
    f = neo.grad(neo.Module.from_source(layernorm_source(16, D)), "layernorm", options=options)
    got = f(x, g, b, dy)
    for name, a, w in zip(("y", "dx", "dg", "db"), got, layernorm_ref(x, g, b, dy)):
        _close(a, w, name)


def test_the_passes_change_the_kernels():
    """The default pipeline computes one exponential per element of softmax's
    forward and backward and no division per element; without the passes
    there are three of each kind."""
    text = {}
    for flag in ("true", "false"):
        m = neo.Module.from_source(softmax_source(16, 1024))
        neo.grad(m, "softmax")  # adds softmax_fwdbwd to the module
        m.run_pipeline("neo-lower-to-cpu{threads=1 stop-after=linalg hoist-invariants=%s}" % flag)
        text[flag] = str(m).split("func.func @softmax_fwdbwd")[1].split("func.func")[0]
    assert text["true"].count("math.exp") == 1
    # One division: 1 / z per row, in a generic over the rows.
    assert text["true"].count("arith.divf") == 1
    assert text["false"].count("math.exp") == 3
