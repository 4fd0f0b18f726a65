#!/usr/bin/python3
"""neo-eqsat-fuse on one large training graph: a stack of --layers blocks
(layernorm, linear, tanh, residual) differentiated by neo-autodiff, whose
combined forward+backward function has 500+ neo ops. Prints the op count,
the pass's wall time (median of --reps runs, from --mlir-timing), the
saturation and extraction times from the report, and kernels before/after.

    /usr/bin/python3 bench/eqsat_scale.py [--layers 28] [--reps 5] [--extractor dag]"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin"))


def network(layers, rows=32, width=64):
    params = ", ".join("g%d: f32[%d], b%d: f32[%d], w%d: f32[%d, %d], c%d: f32[%d]" %
                       (l, width, l, width, l, width, width, l, width) for l in range(layers))
    lines = ["def stack(x0: f32[%d, %d], %s) -> loss {" % (rows, width, params)]
    for l in range(layers):
        x, y = "x%d" % l, "x%d" % (l + 1)
        lines += [
            "  mu%d[i] = sum(j) %s[i, j] / %d" % (l, x, width),
            "  var%d[i] = sum(j) (%s[i, j] - mu%d[i]) * (%s[i, j] - mu%d[i]) / %d" % (
                l, x, l, x, l, width),
            "  n%d[i, j] = (%s[i, j] - mu%d[i]) / sqrt(var%d[i] + 1e-5) * g%d[j] + b%d[j]" % (
                l, x, l, l, l, l),
            "  %s[i, j] = %s[i, j] + tanh(sum(k) n%d[i, k] * w%d[k, j] + c%d[j])" % (y, x, l, l, l),
        ]
    lines.append("  loss = sum(i, j) x%d[i, j] * x%d[i, j]" % (layers, layers))
    lines.append("}")
    return "\n".join(lines) + "\n"


def sh(args, input=None):
    p = subprocess.run(args, capture_output=True, text=True, input=input)
    if p.returncode:
        raise RuntimeError("%s failed:\n%s" % (args[0], p.stderr))
    return p


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--layers", type=int, default=28)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--extractor", default="dag", choices=["greedy", "dag", "ilp"])
    args = parser.parse_args()
    src = network(args.layers)
    mlir = sh([os.path.join(BIN, "neo-opt"), "--neo-autodiff=function=stack"],
              input=sh([os.path.join(BIN, "neo-translate"), "--import-neo", "-"], input=src).stdout
              ).stdout
    with tempfile.TemporaryDirectory() as d:
        before = os.path.join(d, "before.mlir")
        with open(before, "w") as f:
            f.write(mlir)
        report = os.path.join(d, "report.json")
        walls, runs = [], []
        for _ in range(args.reps):
            p = sh([os.path.join(BIN, "neo-opt"), before, "--mlir-timing",
                    "--neo-eqsat-fuse=function=stack_fwdbwd extractor=%s report=%s" % (
                        args.extractor, report), "-o", os.devnull])
            wall = re.search(r"([0-9.]+) \(\s*[0-9.]+%\)\s+NeoEqSatFuse", p.stderr)
            walls.append(float(wall.group(1)))
            runs.append(json.load(open(report))["stack_fwdbwd"])
        r = runs[-1]
        ops = r["kernels_before"]
        extract = statistics.median(x["extractors"][args.extractor]["seconds"] for x in runs)
        print("| layers | neo ops | extractor | e-nodes / stop | saturation (s) | extraction (s) | "
              "whole pass (s, median of %d) | kernels before / after |" % args.reps)
        print("|---|---|---|---|---|---|---|---|")
        print("| %d | %d | %s | %d / %s | %.3f | %.3f | %.3f | %d -> %d |" % (
            args.layers, ops, args.extractor, r["nodes"], r["stop_reason"],
            statistics.median(x["seconds"] for x in runs), extract, statistics.median(walls),
            r["kernels_before"], r["kernels_after"]))


if __name__ == "__main__":
    main()
