"""Helpers for integration tests: run a .neo function with neo-run on numpy
inputs and return its outputs, so that tests can compare them with numpy or
PyTorch. Every run also passes --check (the reference interpreter), except in
the ASan suite (NEO_TEST_INTERPRETER=0 from lit.cfg.py), where the tests'
own numpy/PyTorch reference stands alone: the instrumented interpreter runs
about a million iteration points a second, so one 70 x 203 x 1100 GEMM took
17 s to check, and the suite checks memory accesses there, not numbers."""
import os
import re
import subprocess
import tempfile

import numpy as np

NEO_RUN = os.environ.get("NEO_RUN", "neo-run")
# Extra neo-run arguments of the suite (lit.cfg.py: -O0 in the ASan suite).
NEO_RUN_ARGS = os.environ.get("NEO_RUN_ARGS", "").split()
# neo-run's comparison with the reference interpreter, where the suite wants it.
CHECK_ARGS = [] if os.environ.get("NEO_TEST_INTERPRETER", "1") == "0" else ["--check"]


def output_names(source, function):
    m = re.search(r"def\s+%s\s*\(.*?\)\s*->\s*\(?([^{]*?)\)?\s*\{" % re.escape(function),
                  source, re.S)
    assert m, "cannot find the signature of %s" % function
    results = re.sub(r"\[[^\]]*\]", "", m.group(1))
    return [r.split(":")[0].strip() for r in results.split(",")]


def run(source, function, **inputs):
    """Runs `function` of the .neo `source` on the given numpy arrays (by
    parameter name) and returns its outputs as a list of numpy arrays."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "op.neo")
        with open(path, "w") as f:
            f.write(source)
        args = [NEO_RUN] + NEO_RUN_ARGS + CHECK_ARGS + [path, "--function", function,
                                                       "--output-dir", d, "--print-limit", "0"]
        for name, value in inputs.items():
            p = os.path.join(d, "in_%s.npy" % name)
            np.save(p, value)
            args += ["--input", "%s=%s" % (name, p)]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError("neo-run failed:\n%s%s" % (proc.stdout, proc.stderr))
        return [np.load(os.path.join(d, n + ".npy")) for n in output_names(source, function)]


def assert_close(got, want, rtol=1e-4, atol=1e-5, what=""):
    want = np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = np.max(np.abs(got.astype(np.float64) - want)) if want.size else 0.0
    assert got.shape == want.shape, "%s: shape %s != %s" % (what, got.shape, want.shape)
    assert np.allclose(got, want, rtol=rtol, atol=atol * scale), \
        "%s: max abs error %g (scale %g)" % (what, err, scale)
    print("%s: ok (max abs error %.3g)" % (what, err))


NEO_OPT = os.environ.get("NEO_OPT", "neo-opt")
NEO_TRANSLATE = os.environ.get("NEO_TRANSLATE", "neo-translate")
_TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}


def params(source, function):
    """The parameters of `function` as (name, dtype, shape) tuples."""
    m = re.search(r"def\s+%s\s*\((.*?)\)\s*->" % re.escape(function), source, re.S)
    assert m, "cannot find %s" % function
    out = []
    for name, ty, dims in re.findall(r"(\w+)\s*:\s*(\w+)\s*\[([^\]]*)\]", m.group(1)):
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        out.append((name, _TYPES[ty], shape))
    return out


def lowered(source, function, options, differentiate=True):
    """The LLVM dialect text of `function` (and, with `differentiate`, of
    its neo-autodiff functions) after neo-lower-to-cpu with `options`."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "op.neo")
        with open(path, "w") as f:
            f.write(source)
        mlir = subprocess.run([NEO_TRANSLATE, "--import-neo", path], check=True,
                              capture_output=True, text=True).stdout
        if differentiate:
            mlir = subprocess.run([NEO_OPT, "--neo-autodiff=function=%s" % function], input=mlir,
                                  check=True, capture_output=True, text=True).stdout
        return subprocess.run([NEO_OPT, "--neo-lower-to-cpu=" + options], input=mlir,
                              check=True, capture_output=True, text=True).stdout


def grad(source, function, inputs, output_adjoints):
    """Differentiates `function` with neo-autodiff and runs f_grad on the
    inputs and output adjoints (lists of numpy arrays, in order). Returns the
    gradients of the float inputs, in order. Also checks the compiled
    gradient against the reference interpreter."""
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "op.neo")
        with open(src, "w") as f:
            f.write(source)
        mlir = os.path.join(d, "op.mlir")
        imported = subprocess.run([NEO_TRANSLATE, "--import-neo", src], check=True,
                                  capture_output=True, text=True).stdout
        proc = subprocess.run([NEO_OPT, "--neo-autodiff=function=%s" % function, "-o", mlir],
                              input=imported, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError("neo-autodiff failed:\n" + proc.stderr)
        args = [NEO_RUN] + NEO_RUN_ARGS + CHECK_ARGS + [mlir, "--function", function + "_grad",
                                                       "--output-dir", d, "--print-limit", "0"]
        for i, value in enumerate(list(inputs) + list(output_adjoints)):
            p = os.path.join(d, "in%d.npy" % i)
            np.save(p, value)
            args += ["--input", "%d=%s" % (i, p)]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError("neo-run failed:\n%s%s" % (proc.stdout, proc.stderr))
        names = [p[0] for p in params(source, function)]
        return [np.load(os.path.join(d, "d%s.npy" % n)) for n in names]


def check_with_torch(what, source, function, inputs, ref, adjoint, rtol=1e-3, atol=1e-4):
    """The outputs and the gradients of `function` on `inputs` (a dict of
    numpy arrays, in parameter order) against `ref` (a function of torch
    tensors) and torch autograd, for the output adjoint `adjoint(shape)`."""
    import torch
    tensors = [torch.from_numpy(v).requires_grad_(True) for v in inputs.values()]
    want = ref(*tensors)
    got = run(source, function, **inputs)[0]
    assert_close(got, want.detach().numpy(), what=what + " forward")
    dy = adjoint(want.shape)
    want.backward(torch.from_numpy(dy))
    grads = grad(source, function, list(inputs.values()), [dy])
    for name, g, t in zip(inputs, grads, tensors):
        assert_close(g, t.grad.numpy(), rtol=rtol, atol=atol, what="%s d%s" % (what, name))
    print("%s: ok" % what)
