"""Tests of the benchmark harness's pure parts with fake data: no PyTorch,
JAX, venv or neo build needed (Debian's python3, numpy, pytest).

    /usr/bin/python3 -m pytest -q bench/test_harness.py"""
import os
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import run  # noqa: E402

NEO_RUN_OUT = """compiled 'lstm_fwdbwd' for the CPU in 4912.3 ms
h2: f32[64, 1024] = [, ...]  (min -0.9, max 0.9, mean 0.01)
c2: f32[64, 1024] = [, ...]  (min -2, max 2, mean 0)
dx: f32[64, 1024] = [, ...]  (min -1, max 1, mean 0)
median time: 12.5000 ms over 20 runs (min 12.1000 ms, cores used 1.98)
"""

CPUINFO = """processor	: 0
model name	: AMD EPYC 7B13
flags		: fpu sse2 avx fma avx2 bmi2
processor	: 1
"""


def test_parse_neo_run():
    p = harness.parse_neo_run(NEO_RUN_OUT)
    assert p == dict(compile_ms=4912.3, from_cache=False, median_ms=12.5, cores=1.98,
                     outputs=["h2", "c2", "dx"])
    cached = harness.parse_neo_run("compiled 'mm' for the CPU in 3.0 ms (from the cache)\n"
                                   "c: f32[] = 1\n")
    assert cached["from_cache"] and cached["median_ms"] is None and cached["outputs"] == ["c"]
    assert cached["cores"] is None
    with pytest.raises(ValueError):
        harness.parse_neo_run("error: something\n")


def test_parse_kv_and_cpu_info():
    assert harness.parse_kv("ms 4.329\ncores 0.999\nonednn 2.6.3 x\n") == {"ms": 4.329,
                                                                          "cores": 0.999}
    assert harness.cpu_info(CPUINFO) == ("AMD EPYC 7B13", "AVX2 + FMA")
    model, isa = harness.cpu_info("model name : Xeon\nflags : avx2 avx512f avx512bw fma\n")
    assert isa == "AVX-512 (avx512f, avx512bw) + FMA"
    assert harness.cpu_info("") == ("unknown CPU", "unknown ISA")


def test_errors():
    want = np.array([[1.0, -4.0], [2.0, 0.5]])
    assert harness.max_error(want, want) == 0.0
    assert harness.max_error(want + 0.004, want) == pytest.approx(1e-3)
    assert harness.max_error(want[:1], want) == float("inf")
    assert harness.max_error(np.array([np.nan, 1.0]), np.array([1.0, 1.0])) == float("inf")
    err, ok = harness.check_outputs([want, want], [want, want + 1.0], 1e-3)
    assert not ok and err == pytest.approx(1 / 3)  # 1 / max|want + 1|
    assert harness.check_outputs([want], [want, want], 1e-3) == (float("inf"), False)


def cell(ms, cores=1.0, status="ok", **kw):
    return dict(status=status, ms=ms, cores=cores, error=1e-6, **kw)


def fake_results():
    train = [
        dict(case="LSTM", group="cell", threads=1, systems=dict(
            neo=cell(10.0, compile_ms=4000.0), eager=cell(20.0), compile=cell(15.0),
            jax=cell(5.0))),
        dict(case="MLP", group="cell", threads=1, systems=dict(
            neo=cell(2.0, compile_ms=6000.0), eager=cell(8.0), compile=cell(8.0),
            jax=dict(status="n/a", reason="no venv"))),
        dict(case="softmax", group="norm", threads=1, bytes=5 * 4 * 64 * 1024, systems=dict(
            neo=cell(1.0), eager=cell(1.0), compile=cell(None, status="mismatch",
                                                         reason="max error 0.5 > 1e-3"),
            jax=cell(1.0))),
    ]
    sgemm = [dict(case="256x256x256", m=256, n=256, k=256, threads=1, systems=dict(
        neo=cell(1.0, compile_ms=200.0), onednn=cell(0.5, cores=1.01), openblas=cell(0.4),
        eager=cell(0.45), jax=dict(status="failed", reason="boom")))]
    meta = dict(cpu="AMD EPYC 7B13", isa="AVX2 + FMA", cores=2, platform="Linux",
                date="2026-12-01", threads=[1], reps=20, rounds=3, min_round_s=0.25,
                reference="PyTorch eager", command="/usr/bin/python3 bench/run.py --quick",
                versions=dict(neo="neo abc", eager="PyTorch 2.15.0", compile="PyTorch 2.15.0",
                              onednn="2.6.3", openblas="0.3.21"),
                na=dict(jax="no venv python"))
    return dict(meta=meta, sgemm=sgemm, training=train, triad={"1": 14.5})


def test_ratios_and_geomeans():
    r = fake_results()
    lstm, mlp, soft = r["training"]
    assert harness.ratio(lstm, "eager") == 2.0
    assert harness.ratio(mlp, "jax") is None
    assert harness.best_peer(lstm, ["eager", "compile", "jax"]) == ("jax", 5.0)
    assert harness.best_ratio(mlp, ["eager", "compile", "jax"]) == 4.0
    assert harness.ratio(soft, "compile") is None  # a mismatch has no ratio
    g = harness.geomeans(r, 1, ["eager", "compile", "jax"])
    assert g["eager"] == pytest.approx(8 ** 0.5)          # sqrt(2 * 4)
    assert g["compile"] == pytest.approx((1.5 * 4) ** 0.5)
    assert g["jax"] == pytest.approx(0.5)                 # only the LSTM ran
    assert g["best"] == pytest.approx((0.5 * 4) ** 0.5)
    assert g["n"] == 2
    assert harness.geomean([]) is None


def test_failures_and_report():
    r = fake_results()
    bad = harness.failures(r)
    assert len(bad) == 2
    assert any("softmax" in b and "compile: mismatch" in b for b in bad)
    assert any("jax: failed boom" in b for b in bad)
    text = "\n".join(harness.render(r))
    assert "AMD EPYC 7B13, AVX2 + FMA, 2 cores" in text
    assert "JAX jit: n/a (no venv python)" in text
    assert "PyTorch eager: PyTorch 2.15.0" in text
    assert "/usr/bin/python3 bench/run.py --quick" in text
    # sgemm GFLOP/s: 2*256^3 / 1 ms = 33.6; best peer OpenBLAS at 0.4 ms.
    assert "| 256x256x256 | 1 | 33.6 | 67.1 | 83.9 | 74.6 | failed | 0.40 (OpenBLAS) |" in text
    assert "1.00 / 1.01 / 1.00 / 1.00 / -" in text
    assert "| LSTM | 1 | 10.000 | 4.00 | 20.000 | 15.000 | 5.000 | 2.00 | 1.50 | 0.50 |" in text
    assert "**MISMATCH**" in text and "| mismatch |" in text
    assert "**compile mismatch**" in text
    assert "| 1 | **2.83x** | **2.45x** | **0.50x** | **1.41x** | 2 |" in text
    assert "## Failures" in text
    assert "1.3 GB/s (9% of triad)" in text  # 1.31 MB in 1 ms, triad 14.5 GB/s
    assert ("LSTM t1", 0.5) in harness.plot_points(r)


def test_verify_marks_mismatch():
    want = [np.ones((2, 2))]
    row = dict(systems=dict(a={"status": "n/a"}, b={"status": "n/a"}))
    assert run.verify(row, "a", ["x"], want, 1e-3, loader=lambda p: np.ones((2, 2)))
    assert row["systems"]["a"]["status"] == "ok"
    assert not run.verify(row, "b", ["x"], want, 1e-3, loader=lambda p: np.zeros((2, 2)))
    assert row["systems"]["b"]["status"] == "mismatch"
    assert "max error 1" in row["systems"]["b"]["reason"]


def test_mlir_shapes_and_thread_env(monkeypatch):
    mlir = ('  func.func @f_fwdbwd(%arg0: tensor<4x8xf32> {neo.name = "x"}, %arg1: tensor<f32>, '
            '%arg2: tensor<6xf32>) -> (tensor<4x6xf32>) {\n')
    assert run.mlir_arg_shapes(mlir, "f_fwdbwd") == [(4, 8), (), (6,)]
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell")
    monkeypatch.setenv("OPENBLAS_L2_SIZE", "1000")
    env = run.thread_env(2, "/tmp/c")
    assert "OPENBLAS_CORETYPE" not in env and "OPENBLAS_L2_SIZE" not in env
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "2"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/tmp/c/inductor"
    assert "intra_op_parallelism_threads=1" in run.thread_env(1)["XLA_FLAGS"]


def test_models_need_no_torch():
    # The orchestrator reads the .neo sources without importing PyTorch.
    import subprocess
    code = ("import sys; sys.path.insert(0, %r); import models\n"
            "for label, group, build in models.TRAINING:\n"
            "    src, fn, ref = build(); assert 'def %%s(' %% fn in src and callable(ref)\n"
            "assert 'torch' not in sys.modules, 'models imported torch'\n" % HERE)
    subprocess.run([sys.executable, "-c", code], check=True)
