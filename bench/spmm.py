"""Sparse-dense products at GNN sizes: Neo's CSR aggregation
(`sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]`) against
scipy.sparse (CSR @ dense), torch.sparse.mm (CSR) and a gather + index_add_
in PyTorch, one and two threads, side by side: the forward product, or with
--backward the forward and both gradients (dX = A^T dY, the transposed-CSR
product, and dval[e] = dY[row(e)] . X[col[e]], SDDMM-shaped) through each
system's autograd (Neo: neo.grad's fwdbwd function; scipy: A.T @ dY and a
gathered row-wise dot, by hand).

    /usr/bin/python3 bench/spmm.py [--nodes 100000] [--edges 1000000]
        [--features 64] [--rounds 5] [--backward] [--out docs/sparse-benchmarks.md]

Each system runs in its own process (this script re-invokes itself with
--one), pinned to its threads with taskset and told the count
(OMP_NUM_THREADS, torch.set_num_threads, Neo's threads=); the cores used
(CPU time / wall time) are reported to check that the count took effect.
PyTorch comes from the bench venv (scripts/bench-env.sh) when it exists.
Every system's result is compared with scipy's before it is timed. The graph
has power-law (Zipf) degrees and uniform random columns.
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

import sidebyside

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_PY = os.path.expanduser("~/.cache/neo/bench-venv/bin/python")

SOURCE = """def spmm(rowptr: i32[R], col: i32[E], val: f32[E], X: f32[N, F]) -> (Y: f32[N, F]) {
  Y[i, f] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]
}"""


def graph(nodes, edges, features, seed=0):
    rng = np.random.default_rng(seed)
    deg = np.minimum(rng.zipf(1.8, nodes), nodes).astype(np.float64)
    deg = np.maximum(1, np.round(deg * edges / deg.sum())).astype(np.int64)
    rowptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
    nnz = int(rowptr[-1])
    col = rng.integers(0, nodes, nnz).astype(np.int32)
    val = rng.standard_normal(nnz).astype(np.float32)
    x = rng.standard_normal((nodes, features)).astype(np.float32)
    return rowptr, col, val, x


def time_it(fn, rounds):
    fn()
    times = []
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    cores = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return statistics.median(times) * 1e3, cores


def one(system, threads, args):
    rowptr, col, val, x = graph(args.nodes, args.edges, args.features)
    nodes = len(rowptr) - 1
    import scipy.sparse as sp
    a_ref = sp.csr_matrix((val, col, rowptr), shape=(nodes, nodes))
    rows_np = np.repeat(np.arange(nodes), np.diff(rowptr))
    dy = np.random.default_rng(1).standard_normal(x.shape).astype(np.float32)
    refs = [a_ref @ x]
    if args.backward:
        refs += [(dy[rows_np] * x[col]).sum(1), a_ref.T @ dy]
    compile_s = 0.0
    if system == "neo":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import neo
        t0 = time.perf_counter()
        m = neo.Module.from_source(SOURCE, sizes={"R": nodes + 1, "E": len(col), "N": nodes,
                                                  "F": x.shape[1]})
        if args.backward:
            f = neo.grad(m, "spmm", wrt=[2, 3], options="threads=%d" % threads)
            outs = [np.empty_like(r) for r in refs]
            run = lambda: f(rowptr, col, val, x, dy, out=outs)  # noqa: E731
        else:
            f = m.compile("spmm", options="threads=%d" % threads)
            outs = [np.empty_like(refs[0])]
            run = lambda: f(rowptr, col, val, x, out=outs)  # noqa: E731
        compile_s = time.perf_counter() - t0
        got = lambda: outs  # noqa: E731
    elif system == "scipy":
        a = sp.csr_matrix((val, col, rowptr), shape=(nodes, nodes))
        res = {}

        def run():
            res["y"] = [a @ x]
            if args.backward:
                res["y"] += [(dy[rows_np] * x[col]).sum(1), a.T @ dy]
        got = lambda: res["y"]  # noqa: E731
    else:
        import torch
        torch.set_num_threads(threads)
        xt = torch.from_numpy(x).requires_grad_(args.backward)
        vt = torch.from_numpy(val).requires_grad_(args.backward)
        dyt = torch.from_numpy(dy)
        ct = torch.from_numpy(col.astype(np.int64))
        rows = torch.from_numpy(rows_np)
        res = {}
        if system == "torch-csr":
            if args.backward:  # autograd of torch.sparse.mm goes through COO
                idx = torch.stack([rows, ct])
                matrix = lambda: torch.sparse_coo_tensor(idx, vt, (nodes, nodes))  # noqa: E731
            else:
                a = torch.sparse_csr_tensor(torch.from_numpy(rowptr.astype(np.int64)), ct, vt,
                                            size=(nodes, nodes))
                matrix = lambda: a  # noqa: E731
            product = lambda: torch.sparse.mm(matrix(), xt)  # noqa: E731
        else:  # gather the rows, scale them, index_add into the output
            product = lambda: torch.zeros(nodes, x.shape[1]).index_add(  # noqa: E731
                0, rows, xt[ct] * vt[:, None])

        def run():
            xt.grad = vt.grad = None
            y = product()
            res["y"] = [y]
            if args.backward:
                y.backward(dyt)
                g = vt.grad
                res["y"] += [g.to_dense() if g.is_sparse else g, xt.grad]
        got = lambda: [t.detach().numpy() for t in res["y"]]  # noqa: E731
    run()
    err = max(float(np.abs(g - r).max() / max(1.0, np.abs(r).max()))
              for g, r in zip(got(), refs))
    ms, cores = time_it(run, args.rounds)
    print(json.dumps({"ms": ms, "cores": cores, "err": err, "compile_s": compile_s,
                      "nnz": int(len(col))}))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        info = f.read()
    model = next((l.split(":", 1)[1].strip() for l in info.splitlines()
                  if l.startswith("model name")), platform.processor())
    flags = next((l.split(":", 1)[1].split() for l in info.splitlines()
                  if l.startswith("flags")), [])
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return model, isa


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--nodes", type=int, default=100000)
    p.add_argument("--edges", type=int, default=1000000)
    p.add_argument("--features", type=int, default=64)
    sidebyside.add_run_options(p, rounds=5)
    p.add_argument("--backward", action="store_true",
                   help="time the forward and both gradients (dval, dX)")
    p.add_argument("--one", nargs=2, metavar=("SYSTEM", "THREADS"))
    args = p.parse_args()
    if args.one:
        return one(args.one[0], int(args.one[1]), args)
    torch_py = VENV_PY if os.path.exists(VENV_PY) else sys.executable
    runs = {}
    for rep, threads, system in [(r, int(t), s) for r in range(args.repeats)
                                 for t in args.threads.split(",")
                                 for s in ["neo", "scipy", "torch-csr", "torch-index_add"]]:
        cpus = ",".join(str(c) for c in range(threads))
        if True:
            py = torch_py if system.startswith("torch") else "/usr/bin/python3"
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads))
            cmd = ["taskset", "-c", cpus, py, os.path.abspath(__file__), "--one", system,
                   str(threads), "--nodes", str(args.nodes), "--edges", str(args.edges),
                   "--features", str(args.features), "--rounds", str(args.rounds)]
            if args.backward:
                cmd.append("--backward")
            out = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if out.returncode != 0:
                # A peer that cannot run this size (torch.sparse.mm's gradient
                # of the values allocates a dense nodes x nodes matrix) is a
                # row of the table, not the end of the run; Neo must run.
                print(out.stderr, file=sys.stderr)
                if system == "neo":
                    sys.exit("%s failed" % system)
                last = [ln for ln in out.stderr.strip().splitlines() if ln.strip()]
                runs.setdefault((threads, system), []).append(
                    {"failed": last[-1][:160] if last else "exit %d" % out.returncode})
                continue
            r = json.loads(out.stdout.strip().splitlines()[-1])
            runs.setdefault((threads, system), []).append(r)
            print("round %d %-16s %d thread(s): %8.2f ms  cores %.2f  err %.1e" %
                  (rep, system, threads, r["ms"], r["cores"], r["err"]), flush=True)
    rows, failed = [], []
    for (threads, system), rs in runs.items():
        if any("failed" in r for r in rs):
            failed.append((threads, system, rs[0].get("failed", "")))
            continue
        r = sidebyside.median_process(rs)
        r.update(system=system, threads=threads)
        rows.append(r)
    model, isa = cpu_model()
    what = "forward and both gradients" if args.backward else "forward"
    lines = ["# Sparse-dense products (SpMM), %s" % what, "",
             "Machine: %s, %s, %d cores. Graph: %d nodes, %d nonzeros (Zipf degrees), "
             "%d features, f32." % (model, isa, os.cpu_count(), args.nodes, rows[0]["nnz"],
                                    args.features), "",
             "Command: `/usr/bin/python3 bench/spmm.py --nodes %d --edges %d --features %d "
             "--rounds %d --repeats %d%s --out %s`" % (
                 args.nodes, args.edges, args.features, args.rounds, args.repeats,
                 " --backward" if args.backward else "", args.out), "",
             "Each system ran in %d processes, alternated with the others; a process "
             "times the median of %d runs, and the table gives the median process (all "
             "of them in the last column). Every result is checked against scipy's first "
             "(max error relative to the largest value). Cores: CPU time / wall time of "
             "the timed runs. Neo's time includes its run-time index check." %
             (args.repeats, args.rounds), "",
             "| threads | system | ms | best peer / this | cores | max rel. error | all ms |",
             "|---|---|---|---|---|---|---|"]
    for threads in sorted({r["threads"] for r in rows}):
        group = [r for r in rows if r["threads"] == threads]
        best = min(r["ms"] for r in group if r["system"] != "neo")
        for r in group:
            lines.append("| %d | %s | %.2f | %.2f | %.2f | %.1e | %s |" %
                         (threads, r["system"], r["ms"], best / r["ms"], r["cores"], r["err"],
                          ", ".join("%.1f" % x for x in r["all_ms"])))
        for t, system, why in failed:
            if t == threads:
                lines.append("| %d | %s | failed: %s | | | | |" % (threads, system,
                                                                 why.replace("|", "/")))
    neo_compile = [r["compile_s"] for r in rows if r["system"] == "neo"]
    lines += ["", "Neo's compile time (import, check functions, CPU pipeline, LLVM): %s s." %
              ", ".join("%.2f" % c for c in neo_compile), ""]
    sidebyside.write_report(lines, args.out)


if __name__ == "__main__":
    main()
