#!/usr/bin/python3
"""neo-run against numpy on one matmul, side by side in one run.

    /usr/bin/python3 bench/matmul_vs_numpy.py [N] [--repeat R]

Prints the median time of each and their ratio; a starting point for the
benchmark harness, not a target."""
import argparse
import os
import re
import subprocess
import tempfile
import time

import numpy as np

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("n", type=int, nargs="?", default=512)
parser.add_argument("--repeat", type=int, default=20)
args = parser.parse_args()
n = args.n

with tempfile.TemporaryDirectory() as d:
    src = os.path.join(d, "mm.neo")
    with open(src, "w") as f:
        f.write("def mm(a: f32[%d, %d], b: f32[%d, %d]) -> c {\n"
                "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}\n" % (n, n, n, n))
    out = subprocess.run([os.path.join(root, "build", "bin", "neo-run"), src, "--repeat",
                          str(args.repeat), "--print-limit", "0"],
                         check=True, capture_output=True, text=True).stdout
    neo_ms = float(re.search(r"median time: ([0-9.]+) ms", out).group(1))

a = np.random.rand(n, n).astype(np.float32)
b = np.random.rand(n, n).astype(np.float32)
times = []
for _ in range(args.repeat + 1):
    t0 = time.perf_counter()
    a @ b
    times.append((time.perf_counter() - t0) * 1e3)
np_ms = sorted(times[1:])[len(times[1:]) // 2]
flops = 2.0 * n ** 3
print("matmul %dx%dx%d f32, median of %d runs" % (n, n, n, args.repeat))
print("  neo-run : %9.3f ms  %7.2f GFLOP/s" % (neo_ms, flops / neo_ms / 1e6))
print("  numpy   : %9.3f ms  %7.2f GFLOP/s" % (np_ms, flops / np_ms / 1e6))
print("  neo / numpy time ratio: %.2fx" % (neo_ms / np_ms))
