"""The Python API: modules, compilation, errors, gradients, the DSL."""
import numpy as np
import pytest

import neo
from neo import dsl

LINEAR = """def linear(x: f32[4, 3], w: f32[3, 2], b: f32[2]) -> (y, s) {
  y[i, j] = sum(k) x[i, k] * w[k, j] + b[j]
  s = sum(i, j) y[i, j] * y[i, j]
}"""


def rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(dtype)


def test_compile_and_run_matches_numpy():
    m = neo.Module.from_source(LINEAR)
    assert m.functions == ["linear"]
    f = m.compile()
    assert [n for n, _, _ in f.inputs] == ["x", "w", "b"]
    x, w, b = rand(4, 3), rand(3, 2, seed=1), rand(2, seed=2)
    y, s = f(x, w, b)
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s, ((x @ w + b) ** 2).sum(), rtol=1e-5)


def test_inputs_are_converted_and_checked():
    f = neo.Module.from_source(LINEAR).compile()
    x = rand(4, 3).astype(np.float64)            # converted to f32
    xt = np.asfortranarray(rand(4, 3))           # made contiguous
    w, b = rand(3, 2), rand(2)
    np.testing.assert_allclose(f(x, w, b)[0], f(xt, w, b)[0] * 0 + f(x, w, b)[0])
    with pytest.raises(neo.NeoError, match=r"input #1 \('w'\) of 'linear' has shape"):
        f(x, rand(2, 3), b)
    with pytest.raises(neo.NeoError, match="takes 3 inputs but 2 were given"):
        f(x, w)


def test_import_errors_carry_locations():
    with pytest.raises(neo.NeoError, match=r"bad\.neo:2:10: error: unknown tensor 'q'"):
        neo.Module.from_source("def f(x: f32[2]) -> y {\n  y[i] = q[i]\n}", name="bad.neo")
    with pytest.raises(neo.NeoError, match="invalid pass pipeline"):
        neo.Module.from_source(LINEAR).run_pipeline("no-such-pass")


def test_grad_matches_finite_differences_and_numpy():
    m = neo.Module.from_source(LINEAR)
    g = neo.grad(m, "linear")
    x, w, b = rand(4, 3), rand(3, 2, seed=1), rand(2, seed=2)
    dy, ds = np.zeros((4, 2), np.float32), np.float32(1.0)
    y, s, dx, dw, db = g(x, w, b, dy, ds)
    # ds/dy = 2y
    yv = x @ w + b
    np.testing.assert_allclose(dx, 2 * yv @ w.T, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dw, 2 * x.T @ yv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, 2 * yv.sum(0), rtol=1e-4, atol=1e-5)
    ok, report = neo.Module.from_source(LINEAR).gradcheck("linear", probes=3)
    assert ok, report
    assert "dw: 4 probes" in report


def test_interpreter():
    m = neo.Module.from_source(LINEAR)
    x, w, b = rand(4, 3), rand(3, 2, seed=1), rand(2, seed=2)
    y, s = m.interpret("linear", x, w, b)
    np.testing.assert_allclose(y, x @ w + b, rtol=1e-6)


def test_dsl_builds_neo_programs():
    f = dsl.Function("pool")
    x = f.input("x", (1, 2, 8, 8))
    n, c, p, q, r, s = dsl.vars("n c p q r s", [None, None, 4, 4, 3, 3])
    y = f.compute("y", [n, c, p, q], dsl.max([r, s], x.padded(float("-inf"))[n, c, 2 * p + r - 1,
                                                                            2 * q + s - 1]))
    f.output(y)
    assert "pad -inf" in f.source()
    out = f.module().compile()(rand(1, 2, 8, 8))
    import torch
    ref = torch.nn.functional.max_pool2d(torch.tensor(rand(1, 2, 8, 8)), 3, 2, 1).numpy()
    np.testing.assert_allclose(out, ref)
    with pytest.raises(TypeError):
        bool(p < 3)
    with pytest.raises(ValueError, match="defined twice"):
        f.input("x", (2,))


def test_select_and_conditions():
    f = dsl.Function("tri")
    x = f.input("x", (4, 4))
    i, j = dsl.vars("i j")
    f.output(f.compute("y", [i, j], dsl.select(j <= i, x[i, j], 0.0)))
    a = rand(4, 4)
    np.testing.assert_allclose(f.module().compile()(a), np.tril(a))


def test_tuning_records_from_the_environment(tmp_path, monkeypatch):
    """The package (not the native library) maps NEO_TUNING_RECORDS to the
    pipeline option; explicit options win; a corrupt file is ignored."""
    monkeypatch.delenv("NEO_TUNING_RECORDS", raising=False)
    assert neo._with_environment_records("threads=1") == "threads=1"
    path = tmp_path / "records.json"
    path.write_text('{"format": ')
    monkeypatch.setenv("NEO_TUNING_RECORDS", str(path))
    assert neo._with_environment_records("threads=1") == "threads=1 tuning-records=%s" % path
    assert neo._with_environment_records("") == "tuning-records=%s" % path
    assert neo._with_environment_records("tuning-records=x.json") == "tuning-records=x.json"
    src = "def f(a: f32[3, 4]) -> y {\n  y[i, j] = a[i, j] * 2\n}"
    fn = neo.Module.from_source(src).compile(options="threads=1", opt_level=0)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(fn(a), 2 * a)
    monkeypatch.setenv("NEO_TUNING_RECORDS", str(tmp_path / "a b.json"))
    with pytest.raises(neo.NeoError, match="NEO_TUNING_RECORDS"):
        neo.Module.from_source(src).compile()


def test_context_finalized_before_its_modules():
    # A garbage cycle finalizes its objects in any order: a context's
    # __del__ may run before its modules' (neoModuleDestroy then crashed in
    # ~Operation). The native context now goes after the last of them.
    import gc
    import neo
    ctx = neo.Context()
    m = neo.Module.from_source("def f(x: f32[4]) -> y {\n  y[i] = 2 * x[i]\n}", context=ctx)
    f = m.compile()
    ctx.__del__()  # what the collector may do first
    assert ctx._handle  # kept: a module and an executable are alive
    np.testing.assert_allclose(f(np.ones(4, np.float32)), 2 * np.ones(4))
    cycle = [m, f, ctx]
    cycle.append(cycle)
    del m, f, cycle
    gc.collect()
    assert ctx._handle is None and ctx._children == 0


def test_compile_only_the_named_functions():
    src = """def f(x: f32[4]) -> y {
  y[i] = x[i] * 2
}
def g(x: f32[4]) -> y {
  y[i] = x[i] + 1
}
def h(x: f32[4]) -> y {
  y[i] = exp(x[i])
}"""
    m = neo.Module.from_source(src)
    x = np.arange(4, dtype=np.float32)
    # One function (and what it calls): the others are not in the executable.
    f = m.compile("f", options="threads=1")
    np.testing.assert_allclose(f(x), 2 * x)
    with pytest.raises(neo.NeoError):
        neo.Function(f._exe, "g", module=m)(x)
    # Several, from one executable.
    h = m.compile(functions=["h", "g"], options="threads=1")
    np.testing.assert_allclose(h(x), np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(neo.Function(h._exe, "g", module=m)(x), x + 1)
    with pytest.raises(neo.NeoError, match="no public function named 'nope'"):
        m.compile(functions=["f", "nope"])
    # No name: the whole module, as before.
    every = m.compile()
    np.testing.assert_allclose(neo.Function(every._exe, "h", module=m)(x), np.exp(x), rtol=1e-5)
    # A gradient compiles f_fwdbwd alone.
    fb = neo.grad(m, "h")
    y, dx = fb(x, np.ones(4, np.float32))
    np.testing.assert_allclose(dx, np.exp(x), rtol=1e-5)


def test_run_pointers_takes_one_pointer_per_argument():
    # neo.torch's zero-copy path: one data pointer per input, then per
    # output; a wrong count is an error, not a run on stale pointers.
    m = neo.Module.from_source("def f(x: f32[4]) -> y {\n  y[i] = x[i] * 2\n}")
    f = m.compile("f", options="threads=1")
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    f._run_pointers([x.ctypes.data, y.ctypes.data])
    np.testing.assert_allclose(y, 2 * x)
    with pytest.raises(neo.NeoError, match="takes 2 data pointers"):
        f._run_pointers([x.ctypes.data])
    with pytest.raises(neo.NeoError, match="takes 2 data pointers"):
        f._run_pointers([x.ctypes.data, y.ctypes.data, y.ctypes.data])
