"""Sparse-dense products at GNN sizes: Neo's CSR aggregation
(`sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]`) against
scipy.sparse (CSR @ dense), torch.sparse.mm (CSR), a gather + index_add_ in
PyTorch, torch.compile of that, and JAX (jit of a gather + segment_sum), one
and two threads, side by side: the forward product, or with --backward the
forward and both gradients (dX = A^T dY, the transposed-CSR product, and
dval[e] = dY[row(e)] . X[col[e]], SDDMM-shaped) through each system's
autograd (Neo: neo.grad's fwdbwd function; scipy: A.T @ dY and a gathered
row-wise dot, by hand; JAX: jit of value_and_grad's vjp). With --sddmm, the
sampled dense-dense product at the same nonzeros instead,
`S[e] = sum(f) A[row[e], f] * B[col[e], f]` (attention scores on a graph's
edges), against numpy's gathered row-wise dot, PyTorch's, torch.compile's
and JAX's.

    /usr/bin/python3 bench/spmm.py [--nodes 100000] [--edges 1000000]
        [--features 64] [--rounds 5] [--backward | --sddmm]
        [--out docs/sparse-benchmarks.md]

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
SDDMM = """def sddmm(row: i32[E], col: i32[E], A: f32[N, F], B: f32[N, F]) -> (S: f32[E]) {
  S[e] = sum(f) A[row[e], f] * B[col[e], f]
}"""
SYSTEMS = ["neo", "scipy", "torch-csr", "torch-index_add", "torch.compile", "jax"]
SDDMM_SYSTEMS = ["neo", "numpy", "torch", "torch.compile", "jax"]


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


def one_sddmm(system, threads, args):
    rowptr, col, _, a = graph(args.nodes, args.edges, args.features)
    nodes = len(rowptr) - 1
    rows = np.repeat(np.arange(nodes), np.diff(rowptr)).astype(np.int32)
    b = np.random.default_rng(2).standard_normal(a.shape).astype(np.float32)
    ref = np.einsum("ef,ef->e", a[rows].astype(np.float64), b[col].astype(np.float64))
    compile_s = 0.0
    res = {}
    if system == "neo":
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import neo
        t0 = time.perf_counter()
        m = neo.Module.from_source(SDDMM, sizes={"E": len(col), "N": nodes, "F": a.shape[1]})
        f = m.compile("sddmm", options="threads=%d" % threads)
        out = np.empty(len(col), np.float32)
        compile_s = time.perf_counter() - t0
        run = lambda: f(rows, col, a, b, out=[out])  # noqa: E731
        got = lambda: out  # noqa: E731
    elif system == "numpy":
        def run():
            res["s"] = np.einsum("ef,ef->e", a[rows], b[col])
        got = lambda: res["s"]  # noqa: E731
    elif system == "jax":
        jax, jnp = import_jax(threads)
        rj, cj, aj, bj = (jnp.asarray(t) for t in (rows, col, a, b))
        t0 = time.perf_counter()
        fn = jax.jit(lambda r, c, x, y: (x[r] * y[c]).sum(1))
        jax.block_until_ready(fn(rj, cj, aj, bj))
        compile_s = time.perf_counter() - t0

        def run():
            res["s"] = jax.block_until_ready(fn(rj, cj, aj, bj))
        got = lambda: np.asarray(res["s"])  # noqa: E731
    else:
        import torch
        torch.set_num_threads(threads)
        rt, ct = torch.from_numpy(rows.astype(np.int64)), torch.from_numpy(col.astype(np.int64))
        at, bt = torch.from_numpy(a), torch.from_numpy(b)
        fn = lambda: (at[rt] * bt[ct]).sum(1)  # noqa: E731
        if system == "torch.compile":
            fn = torch.compile(fn)
        t0 = time.perf_counter()
        fn()
        compile_s = time.perf_counter() - t0

        def run():
            res["s"] = fn()
        got = lambda: res["s"].numpy()  # noqa: E731
    run()
    err = float(np.abs(got() - ref).max() / max(1.0, np.abs(ref).max()))
    ms, cores = time_it(run, args.rounds)
    print(json.dumps({"ms": ms, "cores": cores, "err": err, "compile_s": compile_s,
                      "nnz": int(len(col))}))


def import_jax(threads):
    """JAX on `threads` threads (XLA's intra-op flag; set before the import)."""
    os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d"
                               % ("true" if threads > 1 else "false", threads))
    import jax
    import jax.numpy as jnp
    return jax, jnp


def one(system, threads, args):
    if args.sddmm:
        return one_sddmm(system, threads, args)
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
    elif system == "jax":
        jax, jnp = import_jax(threads)
        res = {}
        rj, cj, vj, xj, dyj = (jnp.asarray(t) for t in (rows_np, col, val, x, dy))

        def product(v, t):
            return jax.ops.segment_sum(t[cj] * v[:, None], rj, num_segments=nodes,
                                       indices_are_sorted=True)
        t0 = time.perf_counter()
        if args.backward:
            def fwd_bwd(v, t):
                y, vjp = jax.vjp(product, v, t)
                dv, dt = vjp(dyj)
                return y, dv, dt
            fn = jax.jit(fwd_bwd)
        else:
            fn = jax.jit(product)
        jax.block_until_ready(fn(vj, xj))
        compile_s = time.perf_counter() - t0

        def run():
            out = jax.block_until_ready(fn(vj, xj))
            res["y"] = list(out) if args.backward else [out]
        got = lambda: [np.asarray(t) for t in res["y"]]  # noqa: E731
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

        def step():
            xt.grad = vt.grad = None
            y = product()
            if args.backward:
                y.backward(dyt)
            return y
        if system == "torch.compile":  # (of the index_add form: inductor has no sparse)
            step = torch.compile(step)
            t0 = time.perf_counter()
            step()
            compile_s = time.perf_counter() - t0

        def run():
            y = step()
            res["y"] = [y]
            if args.backward:
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
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--backward", action="store_true",
                      help="time the forward and both gradients (dval, dX)")
    mode.add_argument("--sddmm", action="store_true",
                      help="time the sampled dense-dense product S[e] = A[row[e]] . B[col[e]]")
    p.add_argument("--one", nargs=2, metavar=("SYSTEM", "THREADS"))
    args = p.parse_args()
    if args.one:
        return one(args.one[0], int(args.one[1]), args)
    torch_py = VENV_PY if os.path.exists(VENV_PY) else sys.executable
    runs = {}
    for rep, threads, system in [(r, int(t), s) for r in range(args.repeats)
                                 for t in args.threads.split(",")
                                 for s in (SDDMM_SYSTEMS if args.sddmm else SYSTEMS)]:
        cpus = ",".join(str(c) for c in range(threads))
        if True:
            py = torch_py if system.startswith("torch") or system == "jax" else "/usr/bin/python3"
            env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                       MKL_NUM_THREADS=str(threads))
            cmd = ["taskset", "-c", cpus, py, os.path.abspath(__file__), "--one", system,
                   str(threads), "--nodes", str(args.nodes), "--edges", str(args.edges),
                   "--features", str(args.features), "--rounds", str(args.rounds)]
            if args.backward:
                cmd.append("--backward")
            if args.sddmm:
                cmd.append("--sddmm")
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
    title = ("# Sampled dense-dense product (SDDMM)" if args.sddmm else
             "# Sparse-dense products (SpMM), %s" % what)
    reference = "numpy's" if args.sddmm else "scipy's"
    lines = [title, "",
             "Machine: %s, %s, %d cores. Graph: %d nodes, %d nonzeros (Zipf degrees), "
             "%d features, f32." % (model, isa, os.cpu_count(), args.nodes, rows[0]["nnz"],
                                    args.features), "",
             "Command: `/usr/bin/python3 bench/spmm.py --nodes %d --edges %d --features %d "
             "--rounds %d --repeats %d%s --out %s`" % (
                 args.nodes, args.edges, args.features, args.rounds, args.repeats,
                 " --backward" if args.backward else " --sddmm" if args.sddmm else "",
                 args.out), "",
             ("Each system ran in %d processes, alternated with the others; a process "
              "times the median of %d runs, and the table gives the median process (all "
              "of them in the last column). Every result is checked against %s first "
              "(max error relative to the largest value). Cores: CPU time / wall time of "
              "the timed runs. Neo's first call runs its index checks; the timed ones, with "
              "the same index tensors, skip them (the runtime remembers the index inputs "
              "whose checks passed), as the steps of a training loop do. torch.compile "
              "and JAX were compiled by a call before the timing (compile s)." %
              (args.repeats, args.rounds, reference)), "",
             "| threads | system | ms | best peer / this | cores | max rel. error | compile s | "
             "all ms |",
             "|---|---|---|---|---|---|---|---|"]
    for threads in sorted({r["threads"] for r in rows}):
        group = [r for r in rows if r["threads"] == threads]
        best = min(r["ms"] for r in group if r["system"] != "neo")
        for r in group:
            lines.append("| %d | %s | %.2f | %.2f | %.2f | %.1e | %s | %s |" %
                         (threads, r["system"], r["ms"], best / r["ms"], r["cores"], r["err"],
                          "%.2f" % r["compile_s"] if r.get("compile_s") else "",
                          ", ".join("%.1f" % x for x in r["all_ms"])))
        for t, system, why in failed:
            if t == threads:
                lines.append("| %d | %s | failed: %s | | | | | |" % (threads, system,
                                                                 why.replace("|", "/")))
    neo_compile = [r["compile_s"] for r in rows if r["system"] == "neo"]
    lines += ["", "Neo's compile time (import, check functions, CPU pipeline, LLVM): %s s." %
              ", ".join("%.2f" % c for c in neo_compile), ""]
    sidebyside.write_report(lines, args.out)


if __name__ == "__main__":
    main()
