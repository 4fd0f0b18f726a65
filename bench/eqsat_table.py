#!/usr/bin/python3
"""neo-eqsat-fuse on the training graphs of the benchmark set: kernels and
bytes before and after, saturation, the costs the three extractors reach on
the same e-graphs, and the run time of the combined forward+backward function
before and after (neo-run, median of --reps runs in one process; --rounds
processes alternate before and after, and the table keeps the fastest
round's median of each: this VM's wall time swings between two speed states,
and alternating keeps the two sides comparable).

    /usr/bin/python3 bench/eqsat_table.py [--reps N] [--rounds R] [--threads T]"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin"))


def sh(args, input=None, env=None):
    p = subprocess.run(args, capture_output=True, text=True, input=input, env=env)
    if p.returncode:
        raise RuntimeError("%s failed:\n%s" % (args[0], p.stderr))
    return p.stdout


def time_ms(path, function, reps, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = sh([os.path.join(BIN, "neo-run"), path, "--function", function, "--repeat",
              str(reps), "--print-limit", "0"], env=env)
    return float(re.search(r"median time: ([0-9.]+) ms", out).group(1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="", help="graphs whose name contains this")
    args = parser.parse_args()
    print("| graph | kernels | bytes (MB) | e-nodes / stop | extraction cost greedy / dag / ilp "
          "(us, model) | time before / after (ms) |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for name, _, build in models.TRAINING:
            if args.only not in name:
                continue
            src, fn, _ = build()
            mlir = sh([os.path.join(BIN, "neo-opt"), "--neo-autodiff=function=%s" % fn],
                      input=sh([os.path.join(BIN, "neo-translate"), "--import-neo", "-"], input=src))
            before = os.path.join(d, "before.mlir")
            after = os.path.join(d, "after.mlir")
            report = os.path.join(d, "report.json")
            with open(before, "w") as f:
                f.write(mlir)
            function = fn + "_fwdbwd"
            sh([os.path.join(BIN, "neo-opt"), before,
                "--neo-eqsat-fuse=function=%s compare-extractors=true report=%s" % (function, report),
                "-o", after])
            r = json.load(open(report))[function]
            ex = r["extractors"]
            t0 = t1 = float("inf")
            for _ in range(args.rounds):
                t0 = min(t0, time_ms(before, function, args.reps, args.threads))
                t1 = min(t1, time_ms(after, function, args.reps, args.threads))
            print("| %s | %d -> %d | %.2f -> %.2f | %d / %s | %.1f / %.1f / %.1f%s | %.3f / %.3f |" % (
                name, r["kernels_before"], r["kernels_after"], r["bytes_before"] / 1e6,
                r["bytes_after"] / 1e6, r["nodes"], r["stop_reason"], ex["greedy"]["dag_cost"],
                ex["dag"]["dag_cost"], ex["ilp"]["dag_cost"],
                " (optimal)" if ex["ilp"]["optimal"] else "", t0, t1), flush=True)


if __name__ == "__main__":
    main()
