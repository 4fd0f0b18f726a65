#!/usr/bin/env python3
"""Runs Neo's GPU bundle set on a GPU machine (no LLVM needed): correctness
checks against the CPU-made reference outputs, then the benchmarks against
PyTorch (cuBLAS/cuDNN), with every benchmark output checked against PyTorch.

    python3 scripts/gpu/bench.py BUNDLES --runner PATH --out DIR [--reps N]

Writes DIR/gpu_results.json and DIR/gpu_results.md. Exit status 1 when any
check fails."""
import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))


def run(args, timeout=300):
    t0 = time.time()
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return proc.returncode, proc.stdout + proc.stderr, time.time() - t0


def runner_json(runner, bundle, extra, timeout=300):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    try:
        rc, log, _ = run([runner, bundle, "--json", path] + extra, timeout)
        report = json.load(open(path)) if os.path.exists(path) and os.path.getsize(path) else {}
    except subprocess.TimeoutExpired:
        rc, log, report = 124, "timed out", {}
    finally:
        if os.path.exists(path):
            os.remove(path)
    return rc, log, report


def median_ms(fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def rel_error(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return float("inf")
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    return float(np.max(np.abs(got - want))) / scale if want.size else 0.0


def correctness(args, index, results):
    names = sorted(k for k, v in index.items() if v["kind"] == "check")
    for name in names:
        entry = index[name]
        bundle = os.path.join(args.bundles, "check", name)
        extra = ["--check"]
        if "rtol" in entry:
            extra += ["--rtol", str(entry["rtol"]), "--atol", str(entry["atol"])]
        rc, log, report = runner_json(args.runner, bundle, extra)
        ok = rc == 0
        results["check"].append(dict(name=name, ok=ok, log=None if ok else log[-2000:]))
        print("check %-32s %s" % (name, "ok" if ok else "FAILED\n" + log[-1500:]), flush=True)
    if args.sanitize:
        for name in args.sanitize.split(","):
            bundle = os.path.join(args.bundles, "check", name)
            if not os.path.isdir(bundle):
                continue
            entry = index.get(name, {})
            tolerance = (["--rtol", str(entry["rtol"]), "--atol", str(entry["atol"])]
                         if "rtol" in entry else [])
            # API errors are the runner's own probes (cuFuncGetParamInfo past
            # the last parameter), reported and handled: not memory errors.
            rc, log, _ = run(["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "3",
                              "--report-api-errors", "no",
                              args.runner, bundle, "--check"] + tolerance, timeout=300)
            ok = rc == 0
            results["sanitize"].append(dict(name=name, ok=ok, log=None if ok else log[-2000:]))
            print("memcheck %-29s %s" % (name, "ok" if ok else "FAILED (rc %d)\n%s" % (rc, log[-1500:])),
                  flush=True)


def save_inputs(arrays, workdir):
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(workdir, "in%d.npy" % i)
        np.save(p, a)
        paths.append(p)
    return paths


def bench_gemm(args, name, entry, workdir):
    m, n, k, dtype = entry["m"], entry["n"], entry["k"], entry["dtype"]
    rng = np.random.default_rng(0)
    np_type = np.float16 if dtype == "f16" else np.float32
    # "nt": b stored n by k (A·Bᵀ); PyTorch multiplies by its transposed view.
    nt = entry.get("layout") == "nt"
    a = rng.uniform(-1, 1, (m, k)).astype(np_type)
    b = rng.uniform(-1, 1, (n, k) if nt else (k, n)).astype(np_type)
    if dtype == "bf16":
        # bf16 values as float32 (for the reference) and as their bits, the
        # '<u2' .npy the runner reads as bf16.
        a, b = (torch.from_numpy(x).bfloat16().float().numpy() for x in (a, b))
        paths = save_inputs([(x.view(np.uint32) >> 16).astype(np.uint16) for x in (a, b)],
                            workdir)
    else:
        paths = save_inputs([a, b], workdir)
    outdir = os.path.join(workdir, "out")
    rc, log, report = runner_json(args.runner, os.path.join(args.bundles, "bench", name),
                                  ["--input", "0=" + paths[0], "--input", "1=" + paths[1],
                                   "--repeat", str(args.reps), "--output-dir", outdir])
    if rc != 0:
        return dict(name=name, ok=False, log=log[-2000:])
    neo_ms = report.get("median_ms")
    c = np.load(os.path.join(outdir, os.listdir(outdir)[0]))
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    if nt:
        tb = tb.t()
    want = (ta.double() @ tb.double()).cpu().numpy()
    if dtype == "bf16":
        ta, tb = ta.bfloat16(), tb.bfloat16()
    err = rel_error(c, want)
    tol = {"f32": 1e-4, "tf32": 1e-2, "f16": 1e-2, "bf16": 1e-2}[dtype]
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    torch_ms = median_ms(lambda: ta @ tb, args.reps)
    torch.backends.cuda.matmul.allow_tf32 = False
    flops = 2.0 * m * n * k
    return dict(name=name, kind="gemm", ok=err <= tol, error=err, neo_ms=neo_ms,
                torch_ms=torch_ms, ratio=torch_ms / neo_ms, neo_tflops=flops / neo_ms / 1e9,
                torch_tflops=flops / torch_ms / 1e9, dtype=dtype,
                options=entry.get("options", ""), shape=(m, n, k),
                record_key=entry.get("record_key"), schedule=entry.get("schedule"),
                chip=entry.get("chip", "sm_90"))


def bench_train(args, name, entry, workdir):
    import models
    build = {label: b for label, _, b in
             models.TRAINING + models.GPU_TRAINING + models.GPU_FORWARD}[
        entry.get("model_label", entry["label"])]
    _, _, ref = build()
    # TF32 in PyTorch (cuDNN convolutions and cuBLAS) exactly when Neo's
    # bundle uses it: exact f32 against exact f32, tf32 against tf32.
    tf32 = bool(entry.get("tf32"))
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        return bench_train_with(args, name, entry, workdir, ref, tf32)
    finally:
        torch.backends.cudnn.allow_tf32 = True  # PyTorch's defaults
        torch.backends.cuda.matmul.allow_tf32 = False


def bench_train_with(args, name, entry, workdir, ref, tf32):
    manifest = json.load(open(os.path.join(args.bundles, "bench", name, "manifest.json")))
    inputs = [b for b in manifest["buffers"] if b["role"] == "input"]
    outputs = [b for b in manifest["buffers"] if b["role"] == "output"]
    rng = np.random.default_rng(0)
    shapes = [tuple(s) for s in entry["shapes"]]
    if len(inputs) < len(shapes):
        return dict(name=name, ok=False, log="input count mismatch: %d parameters, %d inputs" %
                    (len(shapes), len(inputs)))
    # bf16 buffers (the manifest's dtype): values rounded to bf16, which
    # PyTorch gets as bf16 tensors and the runner as their bits ('<u2').
    bf16 = [b.get("dtype") == "bf16" for b in inputs]
    half = any(bf16)

    def rounded(a, is_bf16):
        return torch.from_numpy(a).bfloat16().float().numpy() if is_bf16 else a

    def tensor(a, is_bf16, **kw):
        return torch.tensor(a, device="cuda", dtype=torch.bfloat16 if is_bf16 else torch.float32,
                            **kw)
    xs = [rounded(rng.uniform(-1, 1, s).astype(np.float32), b) for s, b in zip(shapes, bf16)]
    txs = [tensor(x, b, requires_grad=True) for x, b in zip(xs, bf16)]
    ys = ref(*txs)
    ys = ys if isinstance(ys, tuple) else (ys,)
    step = entry["function"] == "step"
    # A forward-only graph (inference) has no adjoints; a training step
    # seeds its scalar loss with 1; other functions get random adjoints.
    forward = bool(entry.get("forward"))
    dy_bf16 = bf16[len(xs):] + [False] * len(ys)
    dys = ([] if forward else [np.ones(tuple(y.shape), np.float32) for y in ys] if step else
           [rounded(rng.uniform(-1, 1, tuple(y.shape)).astype(np.float32), b)
            for y, b in zip(ys, dy_bf16)])
    arrays = xs + dys
    if len(arrays) != len(inputs):
        return dict(name=name, ok=False, log="input count mismatch: %d vs %d" %
                    (len(arrays), len(inputs)))
    paths = save_inputs([(a.view(np.uint32) >> 16).astype(np.uint16) if b else a
                         for a, b in zip(arrays, bf16)], workdir)
    outdir = os.path.join(workdir, "out_" + name)
    extra = []
    for i, p in enumerate(paths):
        extra += ["--input", "%d=%s" % (i, p)]
    rc, log, report = runner_json(args.runner, os.path.join(args.bundles, "bench", name),
                                  extra + ["--repeat", str(args.reps), "--output-dir", outdir])
    if rc != 0:
        return dict(name=name, ok=False, log=log[-2000:])
    got = [np.load(os.path.join(outdir, o["name"] + ".npy")) for o in outputs]
    # The same step in PyTorch.
    tdys = [tensor(d, b) for d, b in zip(dys, dy_bf16)]
    if forward:
        want = [y.detach().float().cpu().numpy() for y in ys]
    elif step:
        loss = ys[0]
        grads = torch.autograd.grad(loss, txs[2:])
        want = [(x - 0.01 * g).detach().cpu().numpy() for x, g in zip(txs[2:], grads)]
    else:
        grads = torch.autograd.grad(ys, txs, tdys, allow_unused=True)
        want = [y.detach().float().cpu().numpy() for y in ys]
        want += [(g if g is not None else torch.zeros_like(x)).float().cpu().numpy()
                 for x, g in zip(txs, grads)]
    errors = [rel_error(g, w) for g, w in zip(got, want)]
    # bf16: both sides round their outputs to bf16 (8 bits of mantissa).
    tol = 3e-2 if half else 1e-2 if tf32 else 2e-3
    ok = len(got) == len(want) and all(e <= tol for e in errors)
    opt = torch.optim.SGD(txs[2:], lr=0.01) if step else None

    def step_of(model):
        if forward:
            def infer():
                with torch.no_grad():
                    model(*txs)
            return infer

        def run():
            for x in txs:
                x.grad = None
            o = model(*txs)
            o = o if isinstance(o, tuple) else (o,)
            if step:
                o[0].backward()
                opt.step()
            else:
                torch.autograd.backward(o, tdys)
        return run
    torch_step = step_of(ref)
    torch_ms = median_ms(torch_step, args.reps)
    neo_ms = report.get("median_ms")
    result = dict(name=name, kind="train", label=entry["label"], group=entry["group"], ok=ok,
                  errors=errors, neo_ms=neo_ms, torch_ms=torch_ms, ratio=torch_ms / neo_ms)
    if args.torch_compile:
        # The same step with the model under torch.compile (inductor), once
        # per model: the fused (eqsat) bundle of a model is compared with the
        # same time; tf32 variants with a compile under TF32.
        ms = compiled_ms(args, (entry.get("model_label", entry["label"]), tf32),
                         lambda: step_of(torch.compile(ref)), 1)
        if isinstance(ms, float):
            result["compile_ms"] = ms
            result["compile_ratio"] = ms / neo_ms
        else:
            result["compile_error"] = ms
    if args.graphs and entry["group"] == "cell":
        # Small cells are launch-bound: the same step replayed from a CUDA
        # graph (one host launch per step), against torch.compile's own
        # graph replays (mode="reduce-overhead"), under the same budget.
        # Its outputs (after the replays) must match PyTorch's as well.
        graph_dir = outdir + "_graph"
        rc, log, graph = runner_json(args.runner, os.path.join(args.bundles, "bench", name),
                                     extra + ["--repeat", str(args.reps), "--graph",
                                              "--output-dir", graph_dir])
        if rc == 0 and graph.get("median_ms"):
            replayed = [np.load(os.path.join(graph_dir, o["name"] + ".npy")) for o in outputs]
            graph_errors = [rel_error(g, w) for g, w in zip(replayed, want)]
            if len(replayed) == len(want) and all(e <= tol for e in graph_errors):
                result["graph_ms"] = graph["median_ms"]
            else:
                result["graph_error"] = "outputs after the replays differ from PyTorch's " \
                    "(relative errors %s)" % ", ".join("%.2g" % e for e in graph_errors)
        else:
            result["graph_error"] = log[-300:] or "neo-cuda-runner --graph exited with %d" % rc
        if args.torch_compile:
            # Three untimed steps: it records its graphs, then replays them.
            ms = compiled_ms(args, (entry.get("model_label", entry["label"]), tf32,
                                    "reduce-overhead"),
                             lambda: step_of(torch.compile(ref, mode="reduce-overhead")), 3)
            if isinstance(ms, float):
                result["graph_compile_ms"] = ms
            else:
                result["graph_compile_error"] = ms
    return result


def compiled_ms(args, key, make_step, warmups):
    """The median time of the step `make_step()` builds (torch.compile'd; the
    first `warmups` calls compile and are not timed), once per `key`, or why
    there is none: models past the compile budget (seconds since the run
    started) are not compiled, so that the device check stays well under its
    ten minutes."""
    if key not in COMPILED_MS and time.monotonic() - START > args.compile_budget:
        COMPILED_MS[key] = "not compiled: past --compile-budget %g s" % args.compile_budget
    if key not in COMPILED_MS:
        try:
            step = make_step()
            for _ in range(warmups):
                step()
            COMPILED_MS[key] = median_ms(step, args.reps)
        except Exception as e:  # noqa: BLE001 - report, keep the other numbers
            COMPILED_MS[key] = repr(e)[:500]
    return COMPILED_MS[key]


# torch.compile's median step time per (model, tf32) and, for its CUDA-graph
# mode, (model, tf32, "reduce-overhead") (or why there is none).
COMPILED_MS = {}
# When the run started (the compile budget's origin).
START = time.monotonic()


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def render(results, heading="#"):
    """The markdown of a results dict (also used by bench/run.py for
    docs/benchmarks.md)."""
    lines = ["%s Neo on the GPU: %s" % (heading, results["device"]), "",
             "Date: %s. Driver %s, PyTorch %s (cuBLAS/cuDNN). Command: `%s`." % (
                 results["date"], results["driver"], results.get("torch", torch.__version__),
                 results["command"]), "",
             "SMs: %s on the device; the bundles' kernels planned for %s%s." % (
                 results.get("sm_count", "?"), results.get("bundle_sm_count", "?"),
                 "" if results.get("sm_count") == results.get("bundle_sm_count") else
                 " (remake them with make_bundles.py --sm-count %s for its speed; the "
                 "results stay correct)" % results.get("sm_count", "?")), "",
             "Correctness: %d of %d bundles match the CPU reference outputs%s." % (
                 sum(c["ok"] for c in results["check"]), len(results["check"]),
                 "; compute-sanitizer memcheck clean on %d of %d" % (
                     sum(c["ok"] for c in results["sanitize"]), len(results["sanitize"]))
                 if results["sanitize"] else ""), ""]
    failed = [c["name"] for c in results["check"] if not c["ok"]]
    if failed:
        lines += ["Failed checks: " + ", ".join(failed), ""]
    lines += ["| benchmark | neo ms | PyTorch ms | PyTorch/neo | torch.compile ms | "
              "compile/neo | check |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results["bench"]:
        if "neo_ms" not in r or r.get("neo_ms") is None:
            lines.append("| %s | - | - | - | - | - | FAILED |" % r["name"])
            continue
        label = r.get("label", r["name"])
        if r.get("kind") == "gemm":
            label += " (%.1f vs %.1f TFLOP/s)" % (r["neo_tflops"], r["torch_tflops"])
        lines.append("| %s | %.4f | %.4f | %.2fx | %s | %s | %s |" % (
            label, r["neo_ms"], r["torch_ms"], r["ratio"],
            "%.4f" % r["compile_ms"] if "compile_ms" in r else "-",
            "%.2fx" % r["compile_ratio"] if "compile_ratio" in r else "-",
            "ok" if r["ok"] else "MISMATCH"))
    untimed = sorted({"%s (%s)" % (r.get("label", r["name"]), r["compile_error"])
                      for r in results["bench"] if r.get("compile_error")})
    if untimed:
        lines += ["", "torch.compile not timed: " + "; ".join(untimed)]
    # CUDA graphs: one host launch per step on both sides.
    graphed = [r for r in results["bench"] if r.get("graph_ms")]
    if graphed:
        lines += ["", "CUDA graphs (each step replayed with one host launch; torch.compile with "
                  "mode=\"reduce-overhead\" replays its own):", "",
                  "| benchmark | neo ms | neo graph ms | reduce-overhead ms | "
                  "reduce-overhead/neo graph |", "| --- | --- | --- | --- | --- |"]
        for r in graphed:
            g = r.get("graph_compile_ms")
            lines.append("| %s | %.4f | %.4f | %s | %s |" % (
                r.get("label", r["name"]), r["neo_ms"], r["graph_ms"],
                "%.4f" % g if g else "-", "%.2fx" % (g / r["graph_ms"]) if g else "-"))
    failed_graphs = sorted({"%s (%s)" % (r.get("label", r["name"]), r[k].strip()[-200:])
                            for r in results["bench"]
                            for k in ("graph_error", "graph_compile_error") if r.get(k)})
    if failed_graphs:
        lines += ["", "CUDA graphs not timed: " + "; ".join(failed_graphs)]
    # The schedule search: the fastest bundle of each GEMM shape and type.
    best = {}
    for r in results["bench"]:
        if r.get("kind") == "gemm" and r.get("ok") and r.get("neo_ms"):
            key = (tuple(r.get("shape", ())), r["dtype"])
            if key not in best or r["neo_ms"] < best[key]["neo_ms"]:
                best[key] = r
    if best:
        lines += ["", "Fastest schedule per GEMM (the search over the bundles' schedules):", "",
                  "| GEMM | type | schedule (neo-lower-to-ptx options) | neo TFLOP/s | "
                  "cuBLAS TFLOP/s | ratio |", "| --- | --- | --- | --- | --- | --- |"]
        for (shape, dtype), r in sorted(best.items()):
            lines.append("| %s | %s | `%s` | %.1f | %.1f | %.2f |" % (
                "x".join(map(str, shape)), dtype, r.get("options") or "default",
                r["neo_tflops"], r["torch_tflops"], r["ratio"]))
    for variant, want in (("default", False), ("eqsat", True)):
        rows = [r for r in results["bench"] if r.get("kind") == "train" and
                r.get("group") == "cell" and r.get("ratio") and
                r.get("label", "").endswith("(eqsat)") == want]
        if rows:
            lines += ["", "Geomean over the novel cells and the MLP step (%s): %.2fx PyTorch eager, "
                      "%.2fx torch.compile" % (variant, geomean([r["ratio"] for r in rows]),
                                               geomean([r.get("compile_ratio") for r in rows]))]
        graphs = [r["graph_compile_ms"] / r["graph_ms"] for r in rows
                  if r.get("graph_ms") and r.get("graph_compile_ms")]
        if graphs:
            lines += ["", "Geomean with CUDA graphs on both sides (%s): %.2fx torch.compile "
                      "(mode=\"reduce-overhead\")" % (variant, geomean(graphs))]
    return lines


def tuning_records(results, chip):
    """The fastest schedule of each GEMM key as tuning records
    (docs/schedules.md): neo-lower-to-ptx{tuning-records=FILE} then compiles
    those GEMMs with them. A schedule compiled for chip X (a bundle's
    `chip`, else `chip`) serves the targets it runs on: an sm_90 schedule
    cuda-sm_90 and cuda-sm_90a, an sm_90a one (wgmma) cuda-sm_90a only; each
    target gets its fastest."""
    best = {}
    for r in results["bench"]:
        if r.get("kind") == "gemm" and r.get("ok") and r.get("neo_ms") and r.get("record_key"):
            own = r.get("chip") or chip
            targets = [own] + ([own + "a"] if not own.endswith("a") else [])
            for target in targets:
                slot = (r["record_key"], target)
                if slot not in best or r["neo_ms"] < best[slot]["neo_ms"]:
                    best[slot] = r
    records = [dict(key=key, target="cuda-" + target, schedule=r["schedule"],
                    time_ms=r["neo_ms"], gflops=r["neo_tflops"] * 1e3,
                    verified="against PyTorch on " + results["device"])
               for (key, target), r in sorted(best.items())]
    return dict(format="neo-tuning-records", version=1, records=records)


def write_report(args, results):
    os.makedirs(args.out, exist_ok=True)
    results["torch"] = torch.__version__
    with open(os.path.join(args.out, "gpu_results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "gpu_tuning_records.json"), "w") as f:
        json.dump(tuning_records(results, args.chip), f, indent=1)
    lines = render(results)
    with open(os.path.join(args.out, "gpu_results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bundles")
    parser.add_argument("--runner", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--skip-check", action="store_true")
    parser.add_argument("--skip-bench", action="store_true")
    parser.add_argument("--chip", default="sm_90", help="the bundles' chip (the records' target)")
    parser.add_argument("--no-torch-compile", dest="torch_compile", action="store_false",
                        help="time the training steps against PyTorch eager only")
    parser.add_argument("--no-graphs", dest="graphs", action="store_false",
                        help="do not time the cells' CUDA-graph replays (neo-cuda-runner "
                        "--graph) nor torch.compile(mode=\"reduce-overhead\")")
    parser.add_argument("--compile-budget", type=float, default=240.0,
                        help="seconds since the start after which no further model is "
                        "compiled with torch.compile (its rows say so)")
    parser.add_argument("--sanitize", default="gemm_odd,gemm_tf32,gemm_f16_tc,softmax_fwdbwd,"
                        "conv2d_fwdbwd,layernorm_fwdbwd,gemm_batched")
    args = parser.parse_args()
    index = json.load(open(os.path.join(args.bundles, "index.json")))
    driver = "unknown"
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    results = dict(device=torch.cuda.get_device_name(0), driver=driver,
                   date=datetime.date.today().isoformat(), command=" ".join(sys.argv),
                   check=[], sanitize=[], bench=[])
    # The splits and warps of the kernels were planned for make_bundles.py's
    # --sm-count; another count gives correct results at another speed.
    results["sm_count"] = torch.cuda.get_device_properties(0).multi_processor_count
    planned = sorted({v.get("sm_count", 132) for v in index.values()})
    results["bundle_sm_count"] = planned[0] if len(planned) == 1 else planned
    if planned != [results["sm_count"]]:
        print("warning: the bundles were planned for %s SMs; this GPU has %d (make_bundles.py "
              "--sm-count %d plans for it)" % ("/".join(map(str, planned)), results["sm_count"],
                                                results["sm_count"]), flush=True)
    if not args.skip_check:
        correctness(args, index, results)
    if not args.skip_bench:
        with tempfile.TemporaryDirectory() as work:
            for name in sorted(k for k, v in index.items() if v["kind"] in ("gemm", "train")):
                entry = index[name]
                try:
                    r = (bench_gemm if entry["kind"] == "gemm" else bench_train)(args, name, entry, work)
                except Exception as e:  # noqa: BLE001 - keep going, report the failure
                    r = dict(name=name, ok=False, log=repr(e))
                results["bench"].append(r)
                print("bench %-36s %s" % (name, json.dumps({k: v for k, v in r.items() if k != "log"})
                                          if r.get("neo_ms") else "FAILED " + r.get("log", "")[-1500:]),
                      flush=True)
    write_report(args, results)
    bad = [c for c in results["check"] + results["sanitize"] + results["bench"] if not c["ok"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
