#!/usr/bin/python3
"""Neo's benchmark harness: neo against PyTorch eager, oneDNN and OpenBLAS,
side by side in one run, on 1 and 2 threads.

    ./neo.sh bench [--reps N] [--quick] [--out docs/benchmarks.md]

Times are medians of N runs in the same process per system. Neo is timed by
neo-run (--repeat); forward+backward benchmarks run the combined function
f_fwdbwd that neo-autodiff derives. Writes the results, the machine and the
command to the output markdown, a PNG plot of the ratios next to it, and the
raw numbers as JSON."""
import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin"))


def sh(args, env=None, input=None):
    proc = subprocess.run(args, capture_output=True, text=True, env=env, input=input)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (args[0], proc.stdout, proc.stderr))
    return proc.stdout


def thread_env(threads):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    env["OPENBLAS_NUM_THREADS"] = str(threads)
    return env


def build_baselines(workdir):
    exe = os.path.join(workdir, "baselines")
    sh(["g++", "-O3", "-march=native", "-fopenmp", os.path.join(ROOT, "bench", "baselines.cpp"),
        "-o", exe, "-ldnnl", "-lopenblas"])
    return exe


def neo_time(source_mlir, function, threads, reps, workdir):
    path = os.path.join(workdir, "bench.mlir")
    with open(path, "w") as f:
        f.write(source_mlir)
    out = sh([os.path.join(BIN, "neo-run"), path, "--function", function, "--repeat",
              str(reps), "--print-limit", "0", "--cache-dir", os.path.join(workdir, "cache"),
              # Compiled for the threads it runs on.
              "--pipeline-options", "threads=%d" % threads],
             env=thread_env(threads))
    return float(re.search(r"median time: ([0-9.]+) ms", out).group(1))


def import_neo(source):
    return sh([os.path.join(BIN, "neo-translate"), "--import-neo", "-"], input=source)


def autodiff(mlir, function):
    return sh([os.path.join(BIN, "neo-opt"), "--neo-autodiff=function=%s" % function],
              input=mlir)


def torch_time(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]


def param_shapes(source, function):
    m = re.search(r"def\s+%s\s*\((.*?)\)\s*->" % function, source, re.S)
    return [tuple(int(d) for d in dims.split(",") if d.strip())
            for _, dims in re.findall(r"(\w+)\s*:\s*f32\s*\[([^\]]*)\]", m.group(1))]


def mlp_step(mlir, n_params):
    """Appends @step: forward, backward and an SGD update of the weights."""
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
                     % (k, k, 1 + k, t, t, ", ".join(shape), amap, amap, t))
        lines.append("  ^bb0(%w: f32, %g: f32):\n    %lr = arith.constant 0.01 : f32\n"
                     "    %s = arith.mulf %lr, %g : f32\n    %v = arith.subf %w, %s : f32\n"
                     "    neo.yield %v : f32\n  }")
        outs.append("%%u%d" % k)
    lines.append("  return %s : %s\n}" % (", ".join(outs), ", ".join(t for _, t in args[2:n_params])))
    return mlir.rstrip().rstrip("}") + "\n" + "\n".join("  " + l for l in lines) + "\n}\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="one thread count, fewer cases")
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    thread_counts = [1] if args.quick else [1, 2]
    results = {"sgemm": [], "training": [], "triad": {}}
    with tempfile.TemporaryDirectory() as work:
        baselines = build_baselines(work)
        for t in thread_counts:
            out = sh([baselines, "triad", "20000000", "10"], env=thread_env(t))
            results["triad"][t] = float(out.split()[1])
        sgemms = models.SGEMM[:3] if args.quick else models.SGEMM
        for (m, n, k) in sgemms:
            src = ("def mm(a: f32[%d, %d], b: f32[%d, %d]) -> c {\n"
                   "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n" % (m, k, k, n))
            mlir = import_neo(src)
            a, b = torch.rand(m, k), torch.rand(k, n)
            for t in thread_counts:
                torch.set_num_threads(t)
                neo = neo_time(mlir, "mm", t, args.reps, work)
                base = sh([baselines, "sgemm", str(m), str(n), str(k), str(args.reps)],
                          env=thread_env(t))
                dnnl = float(re.search(r"dnnl ([0-9.]+)", base).group(1))
                blas = float(re.search(r"openblas ([0-9.]+)", base).group(1))
                th = torch_time(lambda: a @ b, args.reps)
                row = dict(case="%dx%dx%d" % (m, n, k), threads=t, neo=neo, dnnl=dnnl,
                           openblas=blas, torch=th, gflops=2.0 * m * n * k / neo / 1e6)
                results["sgemm"].append(row)
                print("sgemm %-16s t=%d neo %.3f ms (%.1f GFLOP/s) dnnl %.3f openblas %.3f torch %.3f"
                      % (row["case"], t, neo, row["gflops"], dnnl, blas, th), flush=True)
        cases = models.TRAINING[:4] if args.quick else models.TRAINING
        for name, group, build in cases:
            src, fn, ref = build()
            shapes = param_shapes(src, fn)
            mlir = autodiff(import_neo(src), fn)
            function = fn + "_fwdbwd"
            if fn == "mlp":
                mlir = mlp_step(mlir, len(shapes))
                function = "step"
            rng = np.random.default_rng(0)
            inputs = [torch.tensor(rng.uniform(-1, 1, s).astype(np.float32), requires_grad=True)
                      for s in shapes]
            outs = ref(*inputs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            dys = [torch.rand_like(o) for o in outs]
            opt = torch.optim.SGD(inputs[2:], lr=0.01) if fn == "mlp" else None

            def torch_step():
                for x in inputs:
                    x.grad = None
                o = ref(*inputs)
                o = o if isinstance(o, tuple) else (o,)
                torch.autograd.backward(o, dys)
                if opt:
                    opt.step()
            for t in thread_counts:
                torch.set_num_threads(t)
                neo = neo_time(mlir, function, t, args.reps, work)
                th = torch_time(torch_step, args.reps)
                row = dict(case=name, group=group, threads=t, neo=neo, torch=th)
                if fn in ("layernorm", "softmax"):
                    n_el = shapes[0][0] * shapes[0][1]
                    # Compulsory traffic: forward reads x and writes y; backward
                    # reads x and dy and writes dx.
                    row["bytes"] = 5 * 4 * n_el
                    row["gbps"] = row["bytes"] / (neo * 1e6)
                results["training"].append(row)
                print("train %-30s t=%d neo %.3f ms torch %.3f ms (%.2fx)"
                      % (name, t, neo, th, th / neo), flush=True)
    write_report(results, args, thread_counts)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def write_report(results, args, thread_counts):
    out = args.out
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump(results, f, indent=1)
    cpu = "unknown CPU"
    try:
        cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read()).group(1)
    except (OSError, AttributeError):
        pass
    lines = ["# Benchmarks", "",
             "Generated by `./neo.sh bench` (`/usr/bin/python3 bench/run.py --reps %d%s`) on %s, "
             "%d cores, %s, PyTorch %s, on %s. Times are medians; ratios above 1 mean neo is faster."
             % (args.reps, " --quick" if args.quick else "", cpu, os.cpu_count(),
                platform.platform(), torch.__version__, time.strftime("%Y-%m-%d")), "",
             "STREAM triad: " + ", ".join("%.1f GB/s on %d thread%s" % (v, t, "s" if t > 1 else "")
                                          for t, v in sorted(results["triad"].items())), "",
             "## sgemm (f32, row-major, C = A B)", "",
             "| M x N x K | threads | neo ms | neo GFLOP/s | oneDNN ms | OpenBLAS ms | PyTorch ms | "
             "oneDNN / neo | OpenBLAS / neo | PyTorch / neo |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["sgemm"]:
        lines.append("| %s | %d | %.3f | %.1f | %.3f | %.3f | %.3f | %.2f | %.2f | %.2f |" % (
            r["case"], r["threads"], r["neo"], r["gflops"], r["dnnl"], r["openblas"], r["torch"],
            r["dnnl"] / r["neo"], r["openblas"] / r["neo"], r["torch"] / r["neo"]))
    lines += ["", "## Forward + backward (training) against PyTorch eager", "",
              "| benchmark | threads | neo ms | PyTorch ms | PyTorch / neo | bandwidth |",
              "|---|---|---|---|---|---|"]
    for r in results["training"]:
        bw = ""
        if "gbps" in r:
            bw = "%.1f GB/s (%.0f%% of triad)" % (r["gbps"], 100 * r["gbps"] / results["triad"][r["threads"]])
        lines.append("| %s | %d | %.3f | %.3f | %.2f | %s |" % (
            r["case"], r["threads"], r["neo"], r["torch"], r["torch"] / r["neo"], bw))
    lines += ["", "Where neo misses a target, [performance.md](performance.md) profiles where the "
              "time goes.", ""]
    for t in thread_counts:
        cells = [r["torch"] / r["neo"] for r in results["training"]
                 if r["threads"] == t and r["group"] == "cell"]
        lines.append("Geomean PyTorch / neo over the novel cells and the MLP step, %d thread%s: "
                     "**%.2fx**" % (t, "s" if t > 1 else "", geomean(cells)))
        lines.append("")
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
        fig, ax = plt.subplots(figsize=(10, 6))
        labels, values = [], []
        for r in results["sgemm"]:
            labels.append("sgemm %s t%d (vs oneDNN)" % (r["case"], r["threads"]))
            values.append(r["dnnl"] / r["neo"])
        for r in results["training"]:
            labels.append("%s t%d (vs PyTorch)" % (r["case"], r["threads"]))
            values.append(r["torch"] / r["neo"])
        ax.barh(range(len(values)), values, color=["tab:green" if v >= 1 else "tab:red" for v in values])
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_yticks(range(len(values)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.set_xscale("log")
        ax.set_xlabel("speed-up of neo (baseline time / neo time)")
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
    main()
