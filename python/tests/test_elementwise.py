"""The elementwise functions sin, cos, erf, log1p, expm1, softplus, pow and
float(): compiled CPU code and the reference interpreter against numpy, and
the gradients neo-autodiff derives (compiled) against the analytic
derivative, PyTorch autograd and central finite differences in float64."""
import math

import numpy as np
import pytest
import torch

import neo

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sigmoid(x):
    return np.exp(-np.logaddexp(0, -x))


# name: (.neo expression of its argument @, numpy function, its derivative, torch
# function, range of a). The ranges keep pow's fractional exponents on
# positive bases and cover large |x| for softplus.
CASES = {
    "sin": ("sin(@)", np.sin, np.cos, torch.sin, (-20, 20)),
    "cos": ("cos(@)", np.cos, lambda x: -np.sin(x), torch.cos, (-20, 20)),
    "erf": ("erf(@)", _erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), torch.erf, (-4, 4)),
    "log1p": ("log1p(@)", np.log1p, lambda x: 1 / (1 + x), torch.log1p, (-0.9, 10)),
    "expm1": ("expm1(@)", np.expm1, np.exp, torch.expm1, (-10, 10)),
    "softplus": ("softplus(@)", lambda x: np.logaddexp(0, x), _sigmoid,
                 lambda x: torch.logaddexp(x, torch.zeros_like(x)), (-100, 100)),
    "pow_2": ("pow(@, 2)", lambda x: x ** 2, lambda x: 2 * x, lambda x: x ** 2, (-3, 3)),
    "pow_3": ("pow(@, 3)", lambda x: x ** 3, lambda x: 3 * x ** 2, lambda x: x ** 3, (-3, 3)),
    "pow_7": ("pow(@, 7)", lambda x: x ** 7, lambda x: 7 * x ** 6, lambda x: x ** 7, (-2, 2)),
    "pow_0": ("pow(@, 0)", lambda x: np.ones_like(x), np.zeros_like, lambda x: x ** 0, (-3, 3)),
    "pow_-1": ("pow(@, -1)", lambda x: 1 / x, lambda x: -1 / x ** 2, lambda x: x ** -1,
               (0.25, 4)),
    "pow_-2": ("pow(@, -2)", lambda x: x ** -2.0, lambda x: -2 * x ** -3.0,
               lambda x: x ** -2, (0.25, 4)),
    "pow_0.5": ("pow(@, 0.5)", np.sqrt, lambda x: 0.5 / np.sqrt(x), torch.sqrt, (0.01, 9)),
    "pow_-0.5": ("pow(@, -0.5)", lambda x: x ** -0.5, lambda x: -0.5 * x ** -1.5,
                 lambda x: x ** -0.5, (0.01, 9)),
    "pow_2.5": ("pow(@, 2.5)", lambda x: x ** 2.5, lambda x: 2.5 * x ** 1.5,
                lambda x: x ** 2.5, (0, 4)),
    "pow_-1.5": ("pow(@, -1.5)", lambda x: x ** -1.5, lambda x: -1.5 * x ** -2.5,
                 lambda x: x ** -1.5, (0.1, 4)),
    # An integer exponent past the expanded ones: math.powf, negative bases.
    "pow_20": ("pow(@, 20)", lambda x: x ** 20, lambda x: 20 * x ** 19, lambda x: x ** 20,
               (-1.2, 1.2)),
    "gelu_exact": ("0.5 * @ * (1 + erf(@ * 0.7071067811865476))",
                   lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))),
                   lambda x: 0.5 * (1 + _erf(x / np.sqrt(2))) +
                   x * np.exp(-x * x / 2) / np.sqrt(2 * np.pi),
                   torch.nn.functional.gelu, (-5, 5)),
}
# A shape with a vector tail (67 is not a multiple of any vector width).
SHAPE = (4, 67)
DTYPES = {"f32": np.float32, "f64": np.float64}
# Compiled f32 code uses polynomial approximations (vectorized) and f32
# arithmetic; f64 code libm and f64 arithmetic. Errors relative to
# max(1, |reference|).
TOLERANCE = {"f32": 4e-6, "f64": 1e-13}


def source(expr, dtype, name="f"):
    body = expr.replace("@", "x[i, j]")
    return "def %s(x: %s[%d, %d]) -> y {\n  y[i, j] = %s\n}\n" % (
        name, dtype, SHAPE[0], SHAPE[1], body)


def inputs(lo, hi, dtype, seed=0):
    x = np.random.default_rng(seed).uniform(lo, hi, SHAPE)
    # Exact points: 0 (where the range has it) and the range's ends.
    flat = x.reshape(-1)
    flat[:2] = (lo, hi)
    if lo < 0 < hi:
        flat[2] = 0
    return x.astype(dtype)


def rel_err(got, want):
    want = np.asarray(want, np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.maximum(1, np.abs(want))))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASES)
def test_forward_against_numpy(name, dtype):
    expr, fn, _, _, (lo, hi) = CASES[name]
    m = neo.Module.from_source(source(expr, dtype))
    x = inputs(lo, hi, DTYPES[dtype])
    want = fn(x.astype(np.float64))
    compiled = m.compile("f")(x)
    assert compiled.dtype == DTYPES[dtype]
    assert np.all(np.isfinite(compiled))
    assert rel_err(compiled, want) <= TOLERANCE[dtype], (name, dtype, rel_err(compiled, want))
    interpreted = m.interpret("f", x)
    # The interpreter computes in float64 and rounds once.
    assert rel_err(interpreted, want) <= (1.2e-7 if dtype == "f32" else 1e-14), name


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASES)
def test_gradient(name, dtype):
    expr, fn, deriv, tfn, (lo, hi) = CASES[name]
    m = neo.Module.from_source(source(expr, dtype))
    x = inputs(lo, hi, DTYPES[dtype], seed=1)
    dy = np.random.default_rng(2).uniform(-1, 1, SHAPE).astype(DTYPES[dtype])
    dx = neo.grad(m, "f", combined=False)(x, dy)
    assert dx.dtype == DTYPES[dtype] and np.all(np.isfinite(dx))
    x64 = x.astype(np.float64)
    analytic = dy * deriv(x64)
    xt = torch.tensor(x64, requires_grad=True)
    (autograd,) = torch.autograd.grad(tfn(xt), xt, torch.tensor(dy.astype(np.float64)))
    tol = 2e-5 if dtype == "f32" else 1e-12
    assert rel_err(dx, analytic) <= tol, (name, dtype, rel_err(dx, analytic))
    assert rel_err(dx, autograd.numpy()) <= tol, (name, dtype)
    if dtype == "f64":
        # Central differences of the float64 interpreter, every element at
        # once (each y[i, j] depends on x[i, j] only). At the range's ends
        # and 0, x +- h may leave the domain or cross a kink: skip them.
        h = 1e-6 * np.maximum(1, np.abs(x64))
        fd = dy * (m.interpret("f", x64 + h) - m.interpret("f", x64 - h)) / (2 * h)
        err = np.abs(dx - fd) / np.maximum(1, np.abs(fd))
        assert float(np.max(err.reshape(-1)[3:])) <= 1e-6, (name, float(np.max(err)))


@pytest.mark.parametrize("name", CASES)
def test_gradcheck(name):
    # neo's own check (finite differences of the interpreter in float64 on
    # inputs in [-1, 1]), with x mapped affinely onto the case's range, cut
    # to [-4, 4]: its relative tolerance does not suit gradients of e^-90
    # (softplus) or FD steps on e^9 (expm1); test_gradient covers the whole
    # range.
    expr, _, _, _, (lo, hi) = CASES[name]
    lo, hi = max(lo, -4), min(hi, 4)
    lo, hi = lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo)
    arg = "(%r * x[i, j] + %r)" % ((hi - lo) / 2, (hi + lo) / 2)
    src = "def f(x: f64[%d, %d]) -> y {\n  y[i, j] = %s\n}\n" % (
        SHAPE[0], SHAPE[1], expr.replace("@", arg))
    ok, report = neo.Module.from_source(src).gradcheck("f", seed=3, probes=16)
    assert ok, report


@pytest.mark.parametrize("options", ["", "schedule=false"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_log1p_expm1_are_accurate_near_zero(dtype, options):
    # Vectorized f32 code (polynomials) and scalar or f64 code (libm calls,
    # neo-math-to-libm: not log(1 + x) and exp(x) - 1).
    src = """def f(x: %s[8]) -> (a, b, c, d) {
  a[i] = log1p(x[i])
  b[i] = expm1(x[i])
  c[i] = log(1 + x[i])
  d[i] = exp(x[i]) - 1
}""" % dtype
    small = [1e-8, -1e-8, 3e-7, -2e-6, 1e-5, 1e-4, -1e-3, 0.1]
    if dtype == "f64":
        small[:2] = [1e-17, -3e-18]
    x = np.array(small, DTYPES[dtype])
    a, b, c, d = neo.Module.from_source(src).compile(options=options)(x)
    x64 = x.astype(np.float64)
    for got, want in ((a, np.log1p(x64)), (b, np.expm1(x64))):
        assert float(np.max(np.abs(got - want) / np.abs(want))) < TOLERANCE[dtype] / 4
    # The naive forms lose the small values entirely (a sanity check of the test).
    assert float(np.max(np.abs(c - np.log1p(x64)) / np.abs(x64))) > 0.5
    assert float(np.max(np.abs(d - np.expm1(x64)) / np.abs(x64))) > 0.5


def test_softplus_saturates_without_overflow():
    src = "def f(x: f32[8]) -> y {\n  y[i] = softplus(x[i])\n}\n"
    m = neo.Module.from_source(src)
    x = np.array([-1e4, -500, -90, -1, 0, 1, 90, 1e4], np.float32)
    y = m.compile()(x)
    np.testing.assert_allclose(y, np.logaddexp(0, x.astype(np.float64)), rtol=1e-6, atol=1e-30)
    dx = neo.grad(m, "f", combined=False)(x, np.ones(8, np.float32))
    assert np.all(np.isfinite(dx))
    np.testing.assert_allclose(dx, _sigmoid(x.astype(np.float64)), rtol=1e-6, atol=1e-30)
    assert dx[4] == 0.5  # both branches agree at 0


def test_float_of_index_expressions():
    src = """def f(x: f64[6, 4]) -> (a, b) {
  a[i, j] = x[i, j] * float(i) + float(2 * j + 1)
  b[i < 6, j < 4] = float(i // 2 - 3 * j) + float(7)
}"""
    x = np.random.default_rng(0).uniform(-1, 1, (6, 4))
    m = neo.Module.from_source(src)
    i, j = np.meshgrid(np.arange(6), np.arange(4), indexing="ij")
    for a, b in (m.compile()(x), m.interpret("f", x)):
        np.testing.assert_allclose(a, x * i + 2 * j + 1, rtol=1e-15)
        np.testing.assert_array_equal(b, i // 2 - 3 * j + 7)
    # float() has no gradient of its own: dx = dy * i.
    dx = neo.grad(m, "f", combined=False)(x, np.ones((6, 4)), np.ones((6, 4)))
    np.testing.assert_array_equal(dx, i.astype(np.float64))


def test_position_encoding_against_numpy():
    src = """def pe(x: f32[32, 8]) -> y {
  y[p, j] = x[p, j] + select(j % 2 == 0,
                             sin(float(p) * exp(float(j - j % 2) * -1.1512925465)),
                             cos(float(p) * exp(float(j - j % 2) * -1.1512925465)))
}"""
    p, j = np.meshgrid(np.arange(32.0), np.arange(8), indexing="ij")
    angle = p / 10000.0 ** ((j - j % 2) / 8.0)
    want = np.where(j % 2 == 0, np.sin(angle), np.cos(angle))
    x = np.zeros((32, 8), np.float32)
    m = neo.Module.from_source(src)
    np.testing.assert_allclose(m.compile()(x), want, atol=2e-6)
    np.testing.assert_allclose(m.interpret("pe", x), want, atol=1e-7)


def test_dsl_spells_the_new_functions():
    from neo import dsl
    i, j = dsl.vars("i j")
    f = dsl.Function("f")
    x = f.input("x", [4, 3])
    y = f.compute("y", [i, j], dsl.pow(dsl.softplus(x[i, j]), -1.5) + dsl.sin(x[i, j]) *
                  dsl.to_float(2 * i + 1) + dsl.erf(dsl.log1p(dsl.expm1(dsl.cos(x[i, j])))))
    f.output(y)
    text = f.source()
    assert "pow(softplus(x[i, j]), -1.5)" in text and "float(2 * i + 1)" in text
    xv = np.random.default_rng(0).uniform(-1, 1, (4, 3)).astype(np.float32)
    y = neo.Module.from_source(text).compile()(xv)
    x64 = xv.astype(np.float64)
    ii = np.arange(4)[:, None]
    want = np.logaddexp(0, x64) ** -1.5 + np.sin(x64) * (2 * ii + 1) + _erf(np.cos(x64))
    np.testing.assert_allclose(y, want, rtol=2e-6, atol=2e-6)
    with pytest.raises(TypeError):
        dsl.to_float(x[i, j])
    with pytest.raises(TypeError):
        dsl.pow(x[i, j], x[i, j])
