"""Compilation overlapped with training: the swap is thread-safe and the
swapped-in function computes the same thing."""
import threading

import numpy as np

import neo
from neo.overlap import HotFunction

SRC = """def mm(a: f32[64, 64], b: f32[64, 64]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
}"""


def test_hot_function_swaps_to_the_tuned_version():
    m = neo.Module.from_source(SRC)
    f = HotFunction(m, "mm")
    quick = f.current
    a = np.random.rand(64, 64).astype(np.float32)
    b = np.random.rand(64, 64).astype(np.float32)
    before = f(a, b)
    assert f.wait(timeout=120), f.error
    assert f.current is not quick
    np.testing.assert_allclose(f(a, b), before, rtol=1e-5)
    assert f.timeline["swapped"] >= f.timeline["quick_ready"]


def test_swap_under_concurrent_calls():
    m = neo.Module.from_source(SRC)
    f = HotFunction(m, "mm", background=False)
    other = neo.Module.from_source(SRC).compile("mm", options="schedule=false", opt_level=2)
    a = np.random.rand(64, 64).astype(np.float32)
    b = np.random.rand(64, 64).astype(np.float32)
    want = a @ b
    errors = []

    def worker():
        for _ in range(200):
            got = f(a, b)
            if not np.allclose(got, want, rtol=1e-4, atol=1e-4):
                errors.append("wrong result")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for k in range(50):
        f.swap(other if k % 2 else m.compile("mm"))
    for t in threads:
        t.join()
    assert not errors
