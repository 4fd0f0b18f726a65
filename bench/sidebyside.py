"""What bench/spmm.py, bench/gcn.py and bench/dlrm.py share: their common
command-line options, the median process of each system, and the report."""


def add_run_options(parser, rounds):
    """--rounds (timed runs per process), --threads, --repeats, --out."""
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeats", type=int, default=3,
                        help="processes per system, alternated; the median is reported")
    parser.add_argument("--out", default="")


def median_process(runs):
    """The run of the median process (by its time), with every process's
    time as all_ms."""
    rs = sorted(runs, key=lambda r: r["ms"])
    return dict(rs[len(rs) // 2], all_ms=[r["ms"] for r in rs])


def write_report(lines, out):
    """Prints the report and writes it to `out` (if given)."""
    text = "\n".join(lines) + "\n"
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def run_processes(systems, args, command):
    """Runs every system in its own process, `args.repeats` times per thread
    count of `args.threads`, alternating them: `command(system, threads)` is
    the argument list after `taskset -c CPUS`; the process is told the count
    through OMP/OpenBLAS/MKL variables and prints one JSON line (ms, cores,
    err, compile_s). A failed process ends the run. Returns the results by
    (threads, system)."""
    import json
    import os
    import subprocess
    import sys
    runs = {}
    for rep in range(args.repeats):
        for threads in (int(t) for t in args.threads.split(",")):
            for system in systems:
                env = dict(os.environ, OMP_NUM_THREADS=str(threads),
                           OPENBLAS_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
                cmd = ["taskset", "-c", ",".join(str(c) for c in range(threads))] + \
                    command(system, threads)
                out = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    sys.exit("%s failed" % system)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                runs.setdefault((threads, system), []).append(r)
                print("round %d %-16s %d thread(s): %8.2f ms  cores %.2f  compile %.2f s%s" % (
                    rep, system, threads, r["ms"], r["cores"], r["compile_s"],
                    "  err %.1e" % r["err"] if r["err"] >= 0 else ""), flush=True)
    return runs


GNN_SIZES = (("nodes", 100000), ("edges", 1000000), ("features", 64), ("hidden", 64),
             ("classes", 16))


def gnn_main(doc, script, systems, one, heading, model_text, checked_against):
    """main() of the GNN training-step benchmarks (bench/gcn.py, bench/gat.py):
    their options, one process per system and thread count (`one(system,
    threads, args)` with --one; Neo's systems on Debian's python3, the
    others on the bench venv's), and the report: `heading`, the machine and
    `model_text % (nodes, nnz, features, hidden, classes)`, the command,
    how it was measured and the table with each system's time against the
    first system's."""
    import argparse
    import os
    import sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import spmm
    p = argparse.ArgumentParser(description=doc.split("\n")[0])
    for name, default in GNN_SIZES:
        p.add_argument("--" + name, type=int, default=default)
    add_run_options(p, rounds=5)
    p.add_argument("--systems", default=",".join(systems))
    p.add_argument("--one", nargs=2, metavar=("SYSTEM", "THREADS"))
    args = p.parse_args()
    if args.one:
        return one(args.one[0], int(args.one[1]), args)
    venv = spmm.VENV_PY if os.path.exists(spmm.VENV_PY) else sys.executable
    systems = args.systems.split(",")
    keys = [name for name, _ in GNN_SIZES] + ["rounds"]

    def command(system, threads):
        py = "/usr/bin/python3" if system.startswith("neo") else venv
        cmd = [py, os.path.abspath(script), "--one", system, str(threads)]
        for k in keys:
            cmd += ["--" + k, str(getattr(args, k))]
        return cmd
    runs = run_processes(systems, args, command)
    model, isa = spmm.cpu_model()
    base = systems[0]
    lines = [heading, "",
             "Machine: %s, %s, %d cores. " % (model, isa, os.cpu_count()) + model_text % (
                 args.nodes, runs[next(iter(runs))][0]["nnz"], args.features, args.hidden,
                 args.classes), "",
             "Command: `/usr/bin/python3 bench/%s %s --rounds %d --repeats %d --out %s`" % (
                 os.path.basename(script), " ".join("--%s %d" % (k, getattr(args, k))
                                                    for k, _ in GNN_SIZES),
                 args.rounds, args.repeats, args.out), "",
             "Each system ran in %d processes, alternated with the others; a process times "
             "the median of %d steps after one warm-up step (which compiles), and the table "
             "gives the median process (all of them in the last column). The loss and the "
             "gradients of every system are checked against %s (max error relative to the "
             "largest value of each). Cores: CPU time / wall time of the timed steps. Neo's "
             "first step runs its index checks; the timed ones, with the same graph, skip "
             "them (the runtime remembers the index inputs whose checks passed). "
             "neo-eqsat: `eqsat=true` (neo-eqsat-fuse first). Compile: Neo's import, "
             "autodiff and CPU pipeline; JAX's and torch.compile's first call."
             % (args.repeats, args.rounds, checked_against), "",
             "| threads | system | ms | this / %s | cores | max rel. error | compile s | "
             "all ms |" % base, "|---|---|---|---|---|---|---|---|"]
    for threads in sorted({t for t, _ in runs}):
        med = {system: median_process(runs[(threads, system)]) for system in systems}
        for system in systems:
            r = med[system]
            lines.append("| %d | %s | %.1f | %.2f | %.2f | %.1e | %.2f | %s |" % (
                threads, system, r["ms"], r["ms"] / med[base]["ms"], r["cores"], r["err"],
                r["compile_s"], ", ".join("%.1f" % x for x in r["all_ms"])))
    write_report(lines, args.out)


def torch_training_step(torch, loss_fn, params, compiled, res):
    """A PyTorch training step of the GNN benchmarks: the gradients of
    `params` cleared, `loss_fn()` and its backward, under torch.compile when
    `compiled`; compiled (or warmed up) by a first call. Returns (run, got,
    compile_s): run() stores the loss and the gradients in res["out"],
    got() gives them as numpy arrays."""
    import time

    def step():
        for w in params:
            w.grad = None
        loss = loss_fn()
        loss.backward()
        return loss
    if compiled:
        step = torch.compile(step)
    t0 = time.perf_counter()
    step()
    compile_s = time.perf_counter() - t0

    def run():
        res["out"] = [step().detach()] + [w.grad for w in params]
    return run, lambda: [t.numpy() for t in res["out"]], compile_s


def report_step(run, got, ref, rounds, compile_s, nnz):
    """Runs `run` once, compares got() with `ref` (max error relative to
    each reference tensor's largest value), times it and prints the process's
    JSON line."""
    import json

    import numpy as np
    import spmm
    run()
    err = max(float(np.abs(np.asarray(g, np.float64) - r).max() / max(1e-30, np.abs(r).max()))
              for g, r in zip(got(), ref))
    ms, cores = spmm.time_it(run, rounds)
    print(json.dumps({"ms": ms, "cores": cores, "err": err, "compile_s": compile_s,
                      "nnz": int(nnz), "loss": float(np.asarray(got()[0]))}))
