"""Property-style checks of the Python API on inputs it must not get wrong:
random dtypes, shapes and strides of `out=`, read-only outputs, random
names, NUL bytes in the source, gradient names taken by user functions, and
DSL expressions far longer than any recursion limit."""
import inspect
import sys

import numpy as np
import pytest

import neo
from neo import dsl

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_compiled = {}


def affine(dtype, rows=5, cols=7):
    """y = 2 a + 1 and s = a * a of the given dtype, compiled once per dtype."""
    key = (dtype, rows, cols)
    if key not in _compiled:
        src = ("def affine(a: %s[%d, %d]) -> (y, s) {\n  y[i, j] = a[i, j] * 2 + 1\n"
               "  s[i, j] = a[i, j] * a[i, j]\n}" % (dtype, rows, cols))
        _compiled[key] = neo.Module.from_source(src).compile(opt_level=0)
    return _compiled[key]


def strided_like(rng, shape, dtype):
    """A writable array of `shape` with random strides: contiguous, Fortran
    order, a strided slice of a bigger array, or a transposed view."""
    kind = rng.integers(4)
    if kind == 0:
        return np.empty(shape, dtype), "contiguous"
    if kind == 1:
        return np.asfortranarray(np.empty(shape, dtype)), "fortran"
    if kind == 2:
        step = tuple(int(s) for s in rng.integers(2, 4, len(shape)))
        big = np.zeros(tuple(n * s for n, s in zip(shape, step)), dtype)
        return big[tuple(slice(None, None, s) for s in step)], "strided %s" % (step,)
    return np.empty(shape[::-1], dtype).T, "transposed"


@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_out_with_random_strides_gets_the_right_values(dtype):
    f = affine(dtype)
    rng = np.random.default_rng(list(DTYPES).index(dtype))
    for trial in range(25):
        a = rng.uniform(-2, 2, (5, 7)).astype(DTYPES[dtype])
        if trial % 3 == 1:
            a = np.asfortranarray(a)          # inputs with strides too
        (y, ky), (s, ks) = strided_like(rng, (5, 7), DTYPES[dtype]), \
            strided_like(rng, (5, 7), DTYPES[dtype])
        base_y = y.base if y.base is not None else y
        before = base_y.copy()
        got = f(a, out=[y, s])
        assert got[0] is y and got[1] is s
        rtol = 1e-2 if dtype == "f16" else 1e-6
        np.testing.assert_allclose(y, a * 2 + 1, rtol=rtol, err_msg=ky)
        np.testing.assert_allclose(s, a * a, rtol=rtol, atol=1e-3, err_msg=ks)
        if ky.startswith("strided"):
            # Nothing outside the view was written.
            mask = np.ones(base_y.shape, bool)
            mask[tuple(slice(None, None, st) for st in
                       (base_y.shape[0] // 5, base_y.shape[1] // 7))] = False
            np.testing.assert_array_equal(base_y[mask], before[mask])


def test_out_is_checked():
    f = affine("f32")
    a = np.ones((5, 7), np.float32)
    ro = np.zeros((5, 7), np.float32)
    ro.flags.writeable = False
    with pytest.raises(neo.NeoError, match=r"out\[0\] \(output 'y' of 'affine'\) is read-only"):
        f(a, out=[ro, np.empty((5, 7), np.float32)])
    assert not ro.any()
    with pytest.raises(neo.NeoError, match=r"out\[1\] .* has dtype float64 and shape \(5, 7\) "
                                           r"but float32 \(5, 7\) is expected"):
        f(a, out=[np.empty((5, 7), np.float32), np.empty((5, 7), np.float64)])
    with pytest.raises(neo.NeoError, match=r"has dtype float32 and shape \(7, 5\)"):
        f(a, out=[np.empty((7, 5), np.float32), np.empty((5, 7), np.float32)])
    with pytest.raises(neo.NeoError, match="has 2 outputs but out= gives 1 arrays"):
        f(a, out=np.empty((5, 7), np.float32))
    with pytest.raises(neo.NeoError, match="must be a numpy array, not list"):
        f(a, out=[[[0.0] * 7] * 5, np.empty((5, 7), np.float32)])


def test_out_may_alias_an_input():
    f = affine("f64")
    a = np.arange(35, dtype=np.float64).reshape(5, 7)
    want_y, want_s = a * 2 + 1, a * a
    s = np.empty_like(a)
    f(a, out=[a, s])                     # y written over its own input
    np.testing.assert_array_equal(a, want_y)
    np.testing.assert_array_equal(s, want_s)


def test_random_names_round_trip():
    rng = np.random.default_rng(7)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"
    for trial in range(5):
        names = set()
        while len(names) < 3:
            n = "".join(rng.choice(list(letters), rng.integers(1, 12)))
            n += str(trial)
            if n not in ("def", "and", "or", "not", "pad", "inf", "sum", "prod", "max", "min"):
                names.add(n)
        fn, a, y = sorted(names)
        m = neo.Module.from_source("def %s(%s: f32[3]) -> %s {\n  %s[i] = %s[i] + 1\n}"
                                   % (fn, a, y, y, a))
        assert m.functions == [fn]
        f = m.compile(opt_level=0)
        assert [n for n, _, _ in f.inputs] == [a] and [n for n, _, _ in f.outputs] == [y]
        np.testing.assert_array_equal(f(np.zeros(3, np.float32)), np.ones(3, np.float32))


def test_source_with_a_nul_byte_is_an_error():
    good = "def f(x: f32[2]) -> y {\n  y[i] = x[i]\n}\n"
    # Before: everything after the NUL was dropped and the prefix imported.
    for source in [good + "\0def g(x: f32[2]) -> y {\n  y[i] = x[i]\n}\n",
                   good.encode() + b"\0garbage", "\0" + good]:
        with pytest.raises(neo.NeoError, match=r"the source holds a NUL byte at offset \d+"):
            neo.Module.from_source(source, name="n.neo")
    assert neo.Module.from_source(good.encode(), name="b.neo").functions == ["f"]


def test_import_limits_are_options():
    deep = "def f(x: f32[2]) -> y {\n  y[i] = %sx[i]%s\n}" % ("(" * 300, ")" * 300)
    with pytest.raises(neo.NeoError, match="nested too deeply .more than 256 levels"):
        neo.Module.from_source(deep)
    assert neo.Module.from_source(deep, max_expression_depth=400).functions == ["f"]
    long = "def f(x: f32[2]) -> y5 {\n%s\n}" % "\n".join(
        "  y%d[i] = x[i] + %d" % (k, k) for k in range(6))
    with pytest.raises(neo.NeoError, match="has 6 statements, more than the limit of 5"):
        neo.Module.from_source(long, max_statements_per_function=5)
    with pytest.raises(ValueError, match="max_expression_depth must be a positive integer"):
        neo.Module.from_source(long, max_expression_depth=0)


def test_grad_is_never_a_user_function_of_the_same_name():
    src = """def f(x: f32[3]) -> y {
  y[i] = x[i] * x[i]
}
def f_fwdbwd(x: f32[3]) -> y {
  y[i] = x[i]
}"""
    m = neo.Module.from_source(src)
    g = neo.grad(m, "f")
    assert g.name != "f_fwdbwd" and g.name.startswith("f_fwdbwd")
    x = np.array([1, -2, 3], np.float32)
    dy = np.array([1, 1, 0.5], np.float32)
    y, dx = g(x, dy)
    np.testing.assert_allclose(y, x * x)
    np.testing.assert_allclose(dx, 2 * x * dy)
    # Asking again gives the same derived function, not the user's one.
    assert neo.grad(m, "f").name == g.name
    assert neo.grad(m, "f", combined=False).name.startswith("f_grad")
    with pytest.raises(neo.NeoError, match="no function named 'nope'"):
        neo.grad(m, "nope")


def test_grad_with_another_wrt_is_another_function():
    src = "def f(a: f32[2], b: f32[2]) -> y {\n  y[i] = a[i] * b[i]\n}"
    m = neo.Module.from_source(src)
    g_all = neo.grad(m, "f", combined=False)
    g_b = neo.grad(m, "f", wrt=[1], combined=False)
    assert g_all.name != g_b.name
    a, b, dy = (np.array([1, 2], np.float32), np.array([3, 4], np.float32),
                np.ones(2, np.float32))
    da, db = g_all(a, b, dy)
    np.testing.assert_allclose(da, b)
    np.testing.assert_allclose(g_b(a, b, dy), a)


def test_dsl_long_sums_build_print_and_run_without_recursion():
    n = 3000
    f = dsl.Function("long")
    x = f.input("x", (4,))
    i = dsl.vars("i")
    # Building and printing never recurse: run with almost no stack to spare.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 30)
    try:
        total = sum(x[i] * float(k % 7) for k in range(n))       # a 3,000-term sum
        prod = x[i]
        for _ in range(n):
            prod = prod * 1.0
        text = str(total - prod)
    finally:
        sys.setrecursionlimit(limit)
    assert text.count("(") < 10      # a flat chain, not 3,000 nested parentheses
    f.output(f.compute("y", [i], total - prod))
    fn = f.module().compile(opt_level=0)
    xv = np.array([1, 2, 3, 4], np.float32)
    want = xv * sum(float(k % 7) for k in range(n)) - xv
    np.testing.assert_allclose(fn(xv), want, rtol=1e-4)


def test_dsl_keeps_the_meaning_of_each_expression():
    # Flat printing parenthesizes where precedence needs it.
    f = dsl.Function("prec")
    x = f.input("x", (4,))
    i = dsl.vars("i")
    a, b, c = x[i], x[i] * 2, x[i] + 3
    exprs = [a - (b - c), (a - b) - c, a / (b * c), a * b / c, -(a + b), -a * b,
             a - -b, dsl.exp(a) * (b + c), 2 - (a - 1)]
    for k, e in enumerate(exprs):
        f.output(f.compute("y%d" % k, [i], e))
    fn = f.module().compile(opt_level=0)
    xv = np.array([0.5, 1, 2, 3], np.float32)
    A, B, C = xv, xv * 2, xv + 3
    want = [A - (B - C), (A - B) - C, A / (B * C), A * B / C, -(A + B), -A * B, A + B,
            np.exp(A) * (B + C), 2 - (A - 1)]
    for got, w in zip(fn(xv), want):
        np.testing.assert_allclose(got, w, rtol=1e-5)
    # Conditions too.
    g = dsl.Function("cond")
    x = g.input("x", (4,))
    i = dsl.vars("i")
    cond = ~((x[i] > 1) & (x[i] < 3)) | x[i].eq(0.5)
    g.output(g.compute("y", [i], dsl.select(cond, x[i], 0.0)))
    got = g.module().compile(opt_level=0)(xv)
    np.testing.assert_array_equal(got, np.where(~((xv > 1) & (xv < 3)) | (xv == 0.5), xv, 0))


def test_dsl_deep_nesting_is_an_error_not_a_crash():
    f = dsl.Function("deep")
    x = f.input("x", (4,))
    i = dsl.vars("i")
    e = x[i]
    for _ in range(2000):
        e = dsl.relu(e)
    f.output(f.compute("y", [i], e))
    with pytest.raises(neo.NeoError, match="nested too deeply"):
        f.module()
