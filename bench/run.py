#!/usr/bin/python3
"""Neo's benchmark harness: neo against PyTorch 2.x (eager and torch.compile),
JAX (jit of value_and_grad), oneDNN and OpenBLAS, side by side in one run, on
1 and 2 threads, every system in its own process.

    ./neo.sh bench [--quick] [--reps N] [--rounds R] [--systems neo,eager,...]
                   [--threads 1,2] [--only SUBSTRING] [--out docs/benchmarks.md]

This orchestrator runs under Debian's /usr/bin/python3 (numpy, matplotlib)
and imports neither PyTorch nor JAX. The peers run in the venv of
scripts/bench-env.sh (PyTorch and JAX from PyPI): bench/peer.py, one process
per system and thread count; oneDNN and OpenBLAS run in bench/baselines.cpp,
one process per measurement; neo runs in neo-run (NEO_BIN, default
build/bin). Each process gets OMP/MKL/OPENBLAS_NUM_THREADS, XLA_FLAGS, its
own thread setting and a CPU affinity of N cores, and reports process CPU
time / wall time over its timed loop ("cores used"), so a library that
ignores its thread setting shows.

Before timing, every system's outputs (for training: outputs and every
gradient, or the weights after an SGD step) are compared with PyTorch eager
in float32 (sgemm: with numpy in float64); a mismatch fails the row in the
report and the exit status. Times are medians over rounds that alternate
between the systems. Neo's compile time (cold cache) is reported per row.
Writes the markdown, its JSON and a PNG of the ratios."""
import argparse
import json
import math
import os
import platform
import re
import resource
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import models  # noqa: E402

ROOT = os.path.dirname(HERE)
BIN = os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin"))
PEERS = ("eager", "compile", "jax")


def sh(args, env=None, input=None):
    proc = subprocess.run(args, capture_output=True, text=True, env=env, input=input)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (os.path.basename(args[0]),
                                                          proc.returncode, proc.stdout[-3000:],
                                                          proc.stderr[-3000:]))
    return proc.stdout


def cpus_for(threads):
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[:threads]


def thread_env(threads, cache=None):
    """The environment of every measured process: the thread count in every
    library's variable, no OpenBLAS core-type overrides (they slow a current
    OpenBLAS down), XLA on N threads, inductor's cache under `cache`."""
    env = dict(os.environ)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "PYTHONPATH", "PYTHONHOME",
                "GOMP_CPU_AFFINITY", "KMP_AFFINITY"):
        env.pop(var, None)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                "NEO_NUM_THREADS"):
        env[var] = str(threads)
    # One thread: XLA's Eigen pool off. More: the affinity sizes XLA's pool.
    env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
                        if threads == 1 else "")
    env["JAX_PLATFORMS"] = "cpu"
    env["CUDA_VISIBLE_DEVICES"] = ""
    if cache:
        env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(cache, "inductor")
        env["TRITON_CACHE_DIR"] = os.path.join(cache, "triton")
    return env


def pinned(threads):
    cpus = cpus_for(threads)
    return lambda: os.sched_setaffinity(0, cpus)


class Unavailable(Exception):
    """A system that cannot run here (not installed, failed to start)."""


# ---------------------------------------------------------------- neo

def import_neo(source):
    return sh([os.path.join(BIN, "neo-translate"), "--import-neo", "-"], input=source)


def autodiff(mlir, function, wrt=None):
    """neo-autodiff of `function`, w.r.t. the arguments `wrt` (default: all)."""
    opts = "function=%s" % function
    if wrt:
        opts += " wrt=%s" % ",".join(str(i) for i in wrt)
    return sh([os.path.join(BIN, "neo-opt"), "--neo-autodiff=%s" % opts], input=mlir)


def mlir_arg_shapes(mlir, function):
    """The argument shapes of func.func @function in MLIR text."""
    m = re.search(r"func\.func @%s\((.*?)\) ->" % re.escape(function), mlir)
    if not m:
        raise ValueError("no func.func @%s" % function)
    shapes = []
    for t in re.findall(r"%\w+: tensor<([^>]*)>", m.group(1)):
        dims = t.split("x")[:-1]
        shapes.append(tuple(int(d) for d in dims))
    return shapes


def timed_child(args, env, preexec):
    """(stdout, cpu seconds, wall seconds) of one child process."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, preexec_fn=preexec)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (exit %d):\n%s%s" % (os.path.basename(args[0]),
                                                          proc.returncode, proc.stdout[-3000:],
                                                          proc.stderr[-3000:]))
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    return proc.stdout, cpu, wall


# Extra neo-lower-to-cpu options (--neo-options), after threads=.
NEO_OPTIONS = []


class Neo:
    """neo-run, one process per measurement. Its cores used is what neo-run
    prints for its timed runs (the process's CPU time over their wall time)."""

    def __init__(self, mlir, function, threads, work, tag):
        self.function, self.threads = function, threads
        self.path = os.path.join(work, "%s.mlir" % tag)
        with open(self.path, "w") as f:
            f.write(mlir)
        self.cache = os.path.join(work, "neo-cache-%s-t%d" % (tag, threads))
        shutil.rmtree(self.cache, ignore_errors=True)
        self.env, self.preexec = thread_env(threads), pinned(threads)
        self.inputs = []

    def run(self, extra):
        args = [os.path.join(BIN, "neo-run"), self.path, "--function", self.function,
                "--print-limit", "0", "--cache-dir", self.cache,
                # Compiled for the threads it runs on.
                "--pipeline-options", " ".join(["threads=%d" % self.threads] + NEO_OPTIONS)]
        args += self.inputs + extra
        return timed_child(args, self.env, self.preexec)

    def setup(self, input_paths, out_dir):
        self.inputs = ["--input=%d=%s" % (i, p) for i, p in enumerate(input_paths)]
        out, _, _ = self.run(["--output-dir", out_dir])  # cold cache: the compile time
        parsed = harness.parse_neo_run(out)
        self.compile_ms = parsed["compile_ms"]
        self.compile_cached = parsed["from_cache"]
        est = harness.parse_neo_run(self.run(["--repeat", "3"])[0])["median_ms"]
        self.est_ms = est
        return [os.path.join(out_dir, n + ".npy") for n in parsed["outputs"]], est

    def time(self, reps):
        # At least 0.3 s of timed calls, so that the median and the cores
        # used are not those of a few calls.
        reps = max(reps, int(min(20000, math.ceil(300.0 / max(self.est_ms, 1e-3)))))
        self.last_reps = reps
        out, _, _ = self.run(["--repeat", str(reps)])
        parsed = harness.parse_neo_run(out)
        return parsed["median_ms"], parsed["cores"]


# ---------------------------------------------------------------- baselines

class Baseline:
    """oneDNN or OpenBLAS through bench/baselines.cpp, one process per run."""

    def __init__(self, exe, lib, threads):
        self.exe, self.lib = exe, lib
        self.env, self.preexec = thread_env(threads), pinned(threads)

    def setup(self, m, n, k, a_raw, b_raw, c_raw):
        self.mnk = [str(m), str(n), str(k)]
        out, _, _ = timed_child([self.exe, "sgemm", self.lib] + self.mnk +
                                ["3", a_raw, b_raw, c_raw], self.env, self.preexec)
        return harness.parse_kv(out)["ms"]

    def time(self, reps):
        out, _, _ = timed_child([self.exe, "sgemm", self.lib] + self.mnk + [str(reps)],
                                self.env, self.preexec)
        kv = harness.parse_kv(out)
        return kv["ms"], kv["cores"]


def build_baselines(work):
    exe = os.path.join(work, "baselines")
    sh(["g++", "-O3", "-march=native", "-fopenmp", os.path.join(HERE, "baselines.cpp"),
        "-o", exe, "-ldnnl", "-lopenblas"])
    return exe


# ---------------------------------------------------------------- peers

class Peer:
    """bench/peer.py in the venv: one process per system and thread count."""

    def __init__(self, python, system, threads, work, cache):
        self.system = system
        self.log_path = os.path.join(work, "peer-%s-t%d.log" % (system, threads))
        self.log = open(self.log_path, "w")
        try:
            self.proc = subprocess.Popen(
                [python, os.path.join(HERE, "peer.py"), "--system", system, "--threads",
                 str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                text=True, env=thread_env(threads, cache), preexec_fn=pinned(threads),
                cwd=work)
        except OSError as e:
            raise Unavailable("cannot start %s: %s" % (python, e))
        try:
            hello = self.recv(300)
        except RuntimeError as e:
            raise Unavailable(str(e))
        if not hello.get("ok"):
            raise Unavailable(hello.get("error", "failed to start"))
        self.versions, self.affinity = hello["versions"], hello["affinity"]

    def tail(self):
        self.log.flush()
        try:
            return open(self.log_path).read()[-1500:]
        except OSError:
            return ""

    def recv(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            raise RuntimeError("%s: no answer in %d s" % (self.system, timeout))
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("%s exited (%s):\n%s" % (self.system, self.proc.poll(),
                                                        self.tail()))
        return json.loads(line)

    def call(self, timeout=1800, **cmd):
        if self.proc.poll() is not None:
            raise RuntimeError("%s is not running:\n%s" % (self.system, self.tail()))
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        r = self.recv(timeout)
        if not r.get("ok"):
            raise RuntimeError(r.get("error", "?") + "\n" + r.get("trace", ""))
        return r

    def setup(self, **cmd):
        r = self.call(**cmd)
        self.first_ms = r.get("first_ms")
        est = self.call(op="time", reps=3)["ms"]
        return r["outputs"], est

    def time(self, reps):
        r = self.call(op="time", reps=reps)
        return r["ms"], r["cores"]

    def close(self):
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(30)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()
        self.log.close()


def venv_python(args):
    """The venv's python, or (None, reason)."""
    py = args.python or os.environ.get("NEO_BENCH_PYTHON")
    if not py:
        venv = os.environ.get("NEO_BENCH_VENV",
                              os.path.join(os.path.expanduser("~"), ".cache", "neo", "bench-venv"))
        py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        return None, "no venv python at %s (run scripts/bench-env.sh)" % py
    return py, None


# ---------------------------------------------------------------- measuring

def reps_for(est_ms, args):
    est_ms = max(est_ms or 1e-3, 1e-3)
    return int(min(20000, max(args.reps, math.ceil(args.min_round_s * 1e3 / est_ms))))


def measure(row, runners, args):
    """Alternate rounds between the systems of `runners` ({name: (runner,
    est_ms)}), filling row["systems"][name] with the median of the round
    medians and the mean cores used."""
    samples = {s: ([], []) for s in runners}
    for _ in range(args.rounds):
        for s, (runner, est) in runners.items():
            try:
                ms, cores = runner.time(reps_for(est, args))
            except Exception as e:  # noqa: BLE001
                row["systems"][s].update(status="failed", reason=str(e).splitlines()[0][:300])
                print("  %s FAILED while timing: %s" % (s, e), file=sys.stderr, flush=True)
                continue
            samples[s][0].append(ms)
            if cores is not None:
                samples[s][1].append(cores)
    for s, (times, cores) in samples.items():
        cell = row["systems"][s]
        if cell.get("status") == "failed" or not times:
            continue
        runner, est = runners[s]
        cell.update(ms=statistics.median(times), rounds_ms=times,
                    reps=getattr(runner, "last_reps", reps_for(est, args)),
                    cores=sum(cores) / len(cores) if cores else None)


def load(path):
    import numpy as np
    return np.load(path)


def verify(row, s, got_paths, want, tol, loader=load):
    """Compares a system's outputs with the reference; marks the cell."""
    cell = row["systems"][s]
    try:
        gots = [loader(p) for p in got_paths]
    except Exception as e:  # noqa: BLE001
        cell.update(status="failed", reason="cannot read outputs: %s" % e)
        return False
    if want is None:
        cell.update(status="ok", error=None, reason="unchecked: no reference")
        return True
    err, ok = harness.check_outputs(gots, want, tol)
    cell.update(error=err)
    if not ok:
        cell.update(status="mismatch", reason="max error %.3g > %.1g (%d outputs vs %d)" % (
            err, tol, len(gots), len(want)))
        print("  %s MISMATCH: %s" % (s, cell["reason"]), file=sys.stderr, flush=True)
        return False
    cell.update(status="ok")
    return True


def start_peers(systems, python, why, threads, work, cache, meta):
    peers = {}
    for s in PEERS:
        if s not in systems:
            continue
        if python is None:
            meta["na"][s] = why
            continue
        try:
            peers[s] = Peer(python, s, threads, work, cache)
            v = peers[s].versions
            meta["versions"][s] = (
                "PyTorch %s (%s), numpy %s, python %s" % (v.get("torch"), v.get("torch_blas", ""),
                                                          v.get("numpy"), v.get("python"))
                if s != "jax" else
                "JAX %s, jaxlib %s, numpy %s, python %s" % (v.get("jax"), v.get("jaxlib"),
                                                            v.get("numpy"), v.get("python")))
            print("started %s (t=%d, cpus %s, %s)" % (s, threads, peers[s].affinity,
                                                      meta["versions"][s]), flush=True)
        except Unavailable as e:
            meta["na"][s] = str(e).strip().splitlines()[-1][:300]
            print("%s n/a: %s" % (s, meta["na"][s]), file=sys.stderr, flush=True)
    return peers


def run_sgemm(m, n, k, threads, systems, peers, baselines, work, args):
    import numpy as np
    tag = "mm%dx%dx%d" % (m, n, k)
    d = os.path.join(work, "%s-t%d" % (tag, threads))
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    paths = [os.path.join(d, "a.npy"), os.path.join(d, "b.npy")]
    np.save(paths[0], a)
    np.save(paths[1], b)
    a.tofile(os.path.join(d, "a.f32"))
    b.tofile(os.path.join(d, "b.f32"))
    want = [a.astype(np.float64) @ b.astype(np.float64)]
    row = dict(case="%dx%dx%d" % (m, n, k), m=m, n=n, k=k, threads=threads,
               systems={s: {"status": "n/a"} for s in harness.SGEMM_SYSTEMS if s in systems})
    runners = {}
    for s in row["systems"]:
        cell = row["systems"][s]
        out = os.path.join(d, s)
        os.makedirs(out, exist_ok=True)
        try:
            if s == "neo":
                src = ("def mm(a: f32[%d, %d], b: f32[%d, %d]) -> c {\n"
                       "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n" % (m, k, k, n))
                r = Neo(import_neo(src), "mm", threads, work, tag)
                outs, est = r.setup(paths, out)
                cell.update(compile_ms=r.compile_ms, compile_cached=r.compile_cached)
                loader = load
            elif s in ("onednn", "openblas"):
                if baselines is None:
                    cell["reason"] = args.na.get(s, "n/a")
                    continue
                r = Baseline(baselines, "dnnl" if s == "onednn" else "openblas", threads)
                c_raw = os.path.join(out, "c.f32")
                est = r.setup(m, n, k, os.path.join(d, "a.f32"), os.path.join(d, "b.f32"), c_raw)
                outs = [c_raw]
                loader = lambda p: np.fromfile(p, np.float32).reshape(m, n)  # noqa: E731
            else:
                if s not in peers:
                    cell["reason"] = args.na.get(s, "n/a")
                    continue
                r = peers[s]
                outs, est = r.setup(op="sgemm", a=paths[0], b=paths[1], out=out)
                loader = load
        except Exception as e:  # noqa: BLE001
            cell.update(status="failed", reason=str(e).strip().splitlines()[0][:300])
            print("  %s FAILED: %s" % (s, e), file=sys.stderr, flush=True)
            continue
        if verify(row, s, outs, want, args.sgemm_tol, loader):
            runners[s] = (r, est)
    measure(row, runners, args)
    return row


def run_training(label, group, build, threads, systems, peers, work, args):
    import numpy as np
    src, fn, _ = build()
    tag = re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_").lower()
    d = os.path.join(work, "%s-t%d" % (tag, threads))
    os.makedirs(d, exist_ok=True)
    step = fn == "mlp"
    n_params = len(param_shapes(src, fn))
    # A training step differentiates the weights only (arguments 2..), as
    # every peer's step does: not the batch x and its targets t.
    mlir = autodiff(import_neo(src), fn, list(range(2, n_params)) if step else None)
    function = fn + "_fwdbwd"
    all_shapes = mlir_arg_shapes(mlir, function)
    if step:
        mlir = mlp_step(mlir, n_params)
        function = "step"
    rng = np.random.default_rng(0)
    xs = [rng.uniform(-1, 1, s).astype(np.float32) for s in all_shapes[:n_params]]
    # Output adjoints: random, except a training step's loss, seeded with 1.
    dys = ([np.ones(s, np.float32) for s in all_shapes[n_params:]] if step else
           [rng.uniform(-1, 1, s).astype(np.float32) for s in all_shapes[n_params:]])
    x_paths, dy_paths = [], []
    for i, x in enumerate(xs):
        x_paths.append(os.path.join(d, "x%d.npy" % i))
        np.save(x_paths[-1], x)
    for i, y in enumerate(dys):
        dy_paths.append(os.path.join(d, "dy%d.npy" % i))
        np.save(dy_paths[-1], y)
    row = dict(case=label, group=group, threads=threads,
               systems={s: {"status": "n/a"} for s in harness.TRAIN_SYSTEMS if s in systems})
    if fn in ("layernorm", "softmax"):
        # Compulsory traffic: forward reads x and writes y; backward reads x
        # and dy and writes dx.
        row["bytes"] = 5 * 4 * xs[0].size
    runners, want = {}, None
    # The reference first: PyTorch eager.
    order = sorted(row["systems"], key=lambda s: s != "eager")
    for s in order:
        cell = row["systems"][s]
        out = os.path.join(d, s)
        os.makedirs(out, exist_ok=True)
        try:
            if s == "neo":
                r = Neo(mlir, function, threads, work, tag)
                outs, est = r.setup(x_paths + dy_paths, out)
                cell.update(compile_ms=r.compile_ms, compile_cached=r.compile_cached)
            else:
                if s not in peers:
                    cell["reason"] = args.na.get(s, "n/a")
                    continue
                r = peers[s]
                outs, est = r.setup(op="train", label=label, inputs=x_paths, dys=dy_paths,
                                    step=step, out=out)
                cell["first_call_ms"] = r.first_ms
        except Exception as e:  # noqa: BLE001
            cell.update(status="failed", reason=str(e).strip().splitlines()[0][:300])
            print("  %s FAILED: %s" % (s, e), file=sys.stderr, flush=True)
            continue
        if s == "eager":
            want = [load(p) for p in outs]
            cell.update(status="ok", error=0.0)
            runners[s] = (r, est)
            continue
        if verify(row, s, outs, want, args.tol):
            runners[s] = (r, est)
    measure(row, runners, args)
    return row


def fmt_row(kind, r):
    parts = []
    for s, c in r["systems"].items():
        if c.get("status") == "ok" and c.get("ms"):
            parts.append("%s %.3f ms (%s cores)" % (s, c["ms"], harness._f(c.get("cores"))))
        else:
            parts.append("%s %s" % (s, c.get("status")))
    extra = ""
    if r["systems"].get("neo", {}).get("compile_ms"):
        extra = " [neo compile %.0f ms]" % r["systems"]["neo"]["compile_ms"]
    return "%s %-30s t=%d  %s%s" % (kind, r["case"], r["threads"], ", ".join(parts), extra)


def param_shapes(source, function):
    m = re.search(r"def\s+%s\s*\((.*?)\)\s*->" % function, source, re.S)
    return [tuple(int(d) for d in dims.split(",") if d.strip())
            for _, dims in re.findall(r"(\w+)\s*:\s*f32\s*\[([^\]]*)\]", m.group(1))]


def mlp_step(mlir, n_params):
    """Appends @step: forward, backward and an SGD update of the weights.
    @mlp_fwdbwd returns the loss, then the gradients of arguments 2.. (the
    weights; autodiff ran with wrt=2,..)."""
    sig = re.search(r"func.func @mlp_fwdbwd\((.*?)\) -> \((.*?)\)", mlir)
    args = re.findall(r"%arg(\d+): (tensor<[^>]*>)", sig.group(1))
    results = re.findall(r"tensor<[^>]*>", sig.group(2))
    lines = ["func.func @step(" + ", ".join("%%a%s: %s" % (i, t) for i, t in args) + ") -> (" +
             ", ".join(t for _, t in args[2:n_params]) + ") {"]
    lines.append("  %%r:%d = func.call @mlp_fwdbwd(%s) : (%s) -> (%s)" % (
        len(results), ", ".join("%%a%s" % i for i, _ in args), ", ".join(t for _, t in args),
        ", ".join(results)))
    outs = []
    for k in range(2, n_params):
        t = args[k][1]
        rank = t.count("x")
        dims = ", ".join("d%d" % i for i in range(rank))
        amap = "affine_map<(%s) -> (%s)>" % (dims, dims)
        shape = t[len("tensor<"):t.rindex("x")].split("x") if rank else []
        lines.append("  %%u%d = neo.compute ins(%%a%d, %%r#%d : %s, %s) space [%s] maps [%s, %s] -> %s {"
                     % (k, k, k - 1, t, t, ", ".join(shape), amap, amap, t))
        lines.append("  ^bb0(%w: f32, %g: f32):\n    %lr = arith.constant 0.01 : f32\n"
                     "    %s = arith.mulf %lr, %g : f32\n    %v = arith.subf %w, %s : f32\n"
                     "    neo.yield %v : f32\n  }")
        outs.append("%%u%d" % k)
    lines.append("  return %s : %s\n}" % (", ".join(outs), ", ".join(t for _, t in args[2:n_params])))
    return mlir.rstrip().rstrip("}") + "\n" + "\n".join("  " + l for l in lines) + "\n}\n"



def machine_meta(args, thread_counts, systems):
    try:
        cpu, isa = harness.cpu_info(open("/proc/cpuinfo").read())
    except OSError:
        cpu, isa = "unknown CPU", "unknown ISA"
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        rev = "?"
    return dict(cpu=cpu, isa=isa, cores=os.cpu_count(), platform=platform.platform(),
                date=time.strftime("%Y-%m-%d"), threads=thread_counts, reps=args.reps,
                rounds=args.rounds, min_round_s=args.min_round_s, systems=systems,
                reference="PyTorch eager (sgemm: numpy in float64), tolerance %.0e "
                          "(sgemm %.0e) of the largest magnitude" % (args.tol, args.sgemm_tol),
                command="/usr/bin/python3 bench/run.py " + " ".join(sys.argv[1:]),
                versions={"neo": "neo %s (%s)%s" % (
                    rev, BIN, ", options " + " ".join(NEO_OPTIONS) if NEO_OPTIONS else "")},
                na={})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=20, help="least timed calls per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds alternating the systems")
    parser.add_argument("--min-round-s", type=float, default=0.25,
                        help="more reps for fast cases: at least this long per round")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 thread, 2 sgemm sizes, 4 training cases, few reps")
    parser.add_argument("--systems", default=",".join(harness.ALL_SYSTEMS),
                        help="comma-separated subset of " + ",".join(harness.ALL_SYSTEMS))
    parser.add_argument("--threads", default=None, help="thread counts (default 1,2)")
    parser.add_argument("--only", default="", help="cases whose name contains this")
    parser.add_argument("--python", default=None,
                        help="the venv's python (default: NEO_BENCH_PYTHON, or the venv of "
                             "scripts/bench-env.sh)")
    parser.add_argument("--tol", type=float, default=1e-3)
    parser.add_argument("--sgemm-tol", type=float, default=1e-4)
    parser.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "neo",
                                                        "bench"),
                        help="torch.compile's cache")
    parser.add_argument("--neo-options", default="",
                        help="more neo-lower-to-cpu options for neo (e.g. 'gemm-kc=512'), "
                             "for A/B runs; they are named in the report")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    NEO_OPTIONS[:] = args.neo_options.split()
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in systems if s not in harness.ALL_SYSTEMS]
    if unknown:
        parser.error("unknown systems %s (known: %s)" % (unknown, ",".join(harness.ALL_SYSTEMS)))
    if args.quick:
        args.reps = min(args.reps, 5)
        args.rounds = min(args.rounds, 2)
        args.min_round_s = min(args.min_round_s, 0.05)
    thread_counts = ([int(t) for t in args.threads.split(",")] if args.threads else
                     [1] if args.quick else [1, 2])
    sgemms = models.SGEMM[:2] if args.quick else models.SGEMM
    cases = models.TRAINING
    if args.quick:
        keep = ("LSTM cell", "layernorm", "softmax", "MLP")
        cases = [c for c in cases if c[0].startswith(keep)]
    if args.only:
        sgemms = [s for s in sgemms if args.only in "%dx%dx%d" % s or args.only == "sgemm"]
        cases = [c for c in cases if args.only in c[0]]

    missing = [t for t in ("neo-run", "neo-opt", "neo-translate")
               if not os.path.exists(os.path.join(BIN, t))]
    if missing:
        parser.error("%s not in %s (build them, or set NEO_BIN)" % (", ".join(missing), BIN))
    meta = machine_meta(args, thread_counts, systems)
    args.na = meta["na"]
    results = {"meta": meta, "sgemm": [], "training": [], "triad": {}}
    python, why = venv_python(args)
    os.makedirs(args.cache, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="neo-bench-") as work:
        baselines = None
        if "onednn" in systems or "openblas" in systems:
            try:
                baselines = build_baselines(work)
                v = sh([baselines, "version"])
                for line in v.splitlines():
                    lib, _, rest = line.partition(" ")
                    meta["versions"][lib] = rest
            except Exception as e:  # noqa: BLE001
                for s in ("onednn", "openblas"):
                    meta["na"][s] = "bench/baselines.cpp did not build: %s" % (
                        str(e).strip().splitlines()[-1][:200])
        for t in thread_counts:
            if baselines:
                out, _, _ = timed_child([baselines, "triad", "20000000", "10"], thread_env(t),
                                        pinned(t))
                results["triad"][str(t)] = harness.parse_kv(out)["triad"]
            peers = start_peers(systems, python, why, t, work, args.cache, meta)
            try:
                for (m, n, k) in sgemms:
                    row = run_sgemm(m, n, k, t, systems, peers, baselines, work, args)
                    results["sgemm"].append(row)
                    print(fmt_row("sgemm", row), flush=True)
                for label, group, build in cases:
                    row = run_training(label, group, build, t, systems, peers, work, args)
                    results["training"].append(row)
                    print(fmt_row("train", row), flush=True)
            finally:
                for p in peers.values():
                    p.close()
    # Rows grouped by case, thread counts side by side.
    for kind in ("sgemm", "training"):
        order = {}
        for r in results[kind]:
            order.setdefault(r["case"], len(order))
        results[kind].sort(key=lambda r: (order[r["case"]], r["threads"]))
    write_report(results, args.out)
    bad = harness.failures(results)
    if bad:
        print("\n%d FAILURES:\n  %s" % (len(bad), "\n  ".join(bad)), file=sys.stderr)
        return 1
    return 0


def write_report(results, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    lines = harness.render(results)
    # The workloads with pages of their own (SpMM, SDDMM, GCN, GAT, DLRM,
    # neo.torch): a summary with links (bench/summarize.py).
    sys.path.insert(0, HERE)
    import summarize  # noqa: E402
    lines += summarize.section(os.path.join(ROOT, "docs"))
    # The GPU results (scripts/gpu/check.sh on a GPU machine; see docs/gpu.md).
    gpu_json = os.path.join(ROOT, "docs", "gpu-results.json")
    if os.path.exists(gpu_json):
        sys.path.insert(0, os.path.join(ROOT, "scripts", "gpu"))
        import bench as gpu_bench  # noqa: E402
        gpu = json.load(open(gpu_json))
        lines += ["## GPU: NVIDIA H200", "",
                  "Made on a GPU machine by `scripts/gpu/check.sh gpu-bundles` from bundles that "
                  "`scripts/gpu/make_bundles.py gpu-bundles` compiled here (docs/gpu.md); copied "
                  "into docs/gpu-results.json.", ""]
        lines += gpu_bench.render(gpu, heading="###") + [""]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        pts = harness.plot_points(results)
        fig, ax = plt.subplots(figsize=(10, max(3, 0.22 * len(pts) + 1)))
        values = [v for _, v in pts]
        ax.barh(range(len(values)), values,
                color=["tab:green" if v >= 1 else "tab:red" for v in values])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(values)))
        ax.set_yticklabels([label for label, _ in pts], fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("speed-up of neo over the best peer (best peer time / neo time)")
        fig.tight_layout()
        png = os.path.splitext(out)[0] + ".png"
        fig.savefig(png, dpi=120)
        lines.append("![ratios](%s)" % os.path.basename(png))
    except ImportError:
        lines.append("(matplotlib is missing: no plot)")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % out)


if __name__ == "__main__":
    sys.exit(main())
