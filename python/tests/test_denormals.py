"""Denormal floats in compiled CPU code: flushed to zero by default
(neo-lower-to-cpu{denormals=flush}, MXCSR's FTZ and DAZ bits set around each
entry function, worker threads included), kept with denormals=ieee, and the
caller's floating-point environment unchanged either way."""
import numpy as np
import pytest

import neo

N = 4096  # large enough that threads=2 splits the loop over both threads
SRC = f"def f(x: f32[{N}], s: f32[{N}]) -> y {{ y[i] = x[i] * s[i] }}"
TINY = np.float32(1e-40)  # a denormal f32 (the smallest normal is 1.18e-38)


def _inputs():
    x = np.full(N, 1e-20, np.float32)  # x * s = 1e-40: a denormal result
    s = np.full(N, 1e-20, np.float32)
    x[1::2] = TINY  # a denormal operand: TINY * 1 = TINY under IEEE
    s[1::2] = 1.0
    x[::97] = 3.0  # normal values stay exact
    s[::97] = 0.5
    return x, s


def _caller_keeps_denormals():
    # numpy's own arithmetic runs under this thread's MXCSR.
    a = np.array([1e-20], np.float32)
    return bool((a * a)[0] != 0) and bool((np.array([TINY]) * np.float32(1))[0] == TINY)


@pytest.mark.parametrize("threads", [1, 2])
def test_flushed_by_default(threads):
    assert _caller_keeps_denormals()
    x, s = _inputs()
    y = neo.Module.from_source(SRC).compile(options="threads=%d" % threads)(x, s)
    want = x.astype(np.float64) * s
    normal = np.abs(want) >= np.finfo(np.float32).tiny
    np.testing.assert_array_equal(y[normal], want[normal].astype(np.float32))
    # Every denormal product and every product of a denormal operand is 0,
    # on whichever thread computed it.
    assert (~normal).sum() > N // 2
    np.testing.assert_array_equal(y[~normal], 0)
    assert _caller_keeps_denormals()


@pytest.mark.parametrize("threads", [1, 2])
def test_ieee_keeps_denormals(threads):
    x, s = _inputs()
    y = neo.Module.from_source(SRC).compile(options="threads=%d denormals=ieee" % threads)(x, s)
    np.testing.assert_array_equal(y, x * s)  # numpy's IEEE products, denormals included
    assert y[1] == TINY and 0 < y[2] < np.finfo(np.float32).tiny
    assert _caller_keeps_denormals()


def test_bad_mode_is_an_error():
    with pytest.raises(neo.NeoError, match="denormals"):
        neo.Module.from_source(SRC).compile(options="denormals=fast")
