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
