"""device=: the CPU by default, a CUDA GPU with "cuda", the GPU when there is
one (else the CPU) with "auto"."""
import numpy as np
import pytest

import neo

LINEAR = """def linear(x: f32[4, 3], w: f32[3, 2]) -> y {
  y[i, j] = sum(k) x[i, k] * w[k, j]
}"""


def inputs():
    rng = np.random.default_rng(0)
    return (rng.uniform(-1, 1, (4, 3)).astype(np.float32),
            rng.uniform(-1, 1, (3, 2)).astype(np.float32))


def test_default_is_cpu():
    f = neo.Module.from_source(LINEAR).compile()
    assert f.device == "cpu"
    assert "on cpu" in repr(f)


def test_unknown_device_is_an_error():
    with pytest.raises(neo.NeoError, match="device must be 'cpu', 'cuda' or 'auto'"):
        neo.Module.from_source(LINEAR).compile(device="tpu")


def test_auto_runs_where_it_can():
    f = neo.Module.from_source(LINEAR).compile(device="auto")
    assert f.device == ("cuda" if neo.cuda_available() else "cpu")
    x, w = inputs()
    np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-4, atol=1e-5)
    assert f.time(x, w, repeat=3) >= 0


@pytest.mark.skipif(neo.cuda_available(), reason="a CUDA device is present")
def test_cuda_without_a_device_is_a_clear_error():
    with pytest.raises(neo.NeoError, match="cannot run on the GPU"):
        neo.Module.from_source(LINEAR).compile(device="cuda")


@pytest.mark.skipif(not neo.cuda_available(), reason="no CUDA device")
def test_cuda_matches_numpy():
    f = neo.Module.from_source(LINEAR).compile(device="cuda")
    assert f.device == "cuda"
    x, w = inputs()
    np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-4, atol=1e-5)
    assert f.time(x, w, repeat=3) > 0
