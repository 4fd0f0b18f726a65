#!/usr/bin/python3
"""FLOPs of the backward passes that neo-autodiff derives, against the
textbook backward (for a contraction with two operands, dX and dW each cost
what the forward costs, so the textbook backward is twice the forward).

    /usr/bin/python3 bench/autodiff_flops.py [--max-ratio 1.1]

FLOPs count the iterations that satisfy each op's domain times the float
operations of its body (plus one for the reduction), from neo-count-flops.
'visited' is the size of the iteration boxes, which the lowering walks."""
import argparse
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
bindir = os.environ.get("NEO_BIN", os.path.join(root, "build", "bin"))

CASES = [
    ("matmul 512x512x512", """def f(a: f32[512, 512], b: f32[512, 512]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
}"""),
    ("conv2d 3x3 s1 p1, N8 C=K=64 56x56", """def f(x: f32[8, 64, 56, 56], w: f32[64, 64, 3, 3]) -> y {
  y[n, k, p < 56, q < 56] = sum(c, r, s) x[n, c, p + r - 1, q + s - 1] * w[k, c, r, s]
}"""),
    ("conv2d 3x3 s2 p1, N8 C=K=64 56x56", """def f(x: f32[8, 64, 56, 56], w: f32[64, 64, 3, 3]) -> y {
  y[n, k, p < 28, q < 28] = sum(c, r, s) x[n, c, 2*p + r - 1, 2*q + s - 1] * w[k, c, r, s]
}"""),
    ("conv2d 3x3 s1 p2 dilation 2", """def f(x: f32[8, 64, 56, 56], w: f32[64, 64, 3, 3]) -> y {
  y[n, k, p < 56, q < 56] = sum(c, r, s) x[n, c, p + 2*r - 2, q + 2*s - 2] * w[k, c, r, s]
}"""),
    ("conv2d 7x7 s2 p3, N8 C3 K64 224x224", """def f(x: f32[8, 3, 224, 224], w: f32[64, 3, 7, 7]) -> y {
  y[n, k, p < 112, q < 112] = sum(c, r, s) x[n, c, 2*p + r - 3, 2*q + s - 3] * w[k, c, r, s]
}"""),
    ("depthwise 3x3 s1 p1, N8 C64 56x56", """def f(x: f32[8, 64, 56, 56], w: f32[64, 3, 3]) -> y {
  y[n, c, p < 56, q < 56] = sum(r, s) x[n, c, p + r - 1, q + s - 1] * w[c, r, s]
}"""),
    ("transposed conv 3x3 s2 p1 op1, C=K=32 28->56", """def f(x: f32[8, 32, 28, 28], w: f32[32, 32, 3, 3]) -> y {
  y[n, k, h < 56, v < 56] = sum(c, r, s)
      select((h + 1 - r) % 2 == 0 and (v + 1 - s) % 2 == 0,
             x[n, c, (h + 1 - r) // 2, (v + 1 - s) // 2] * w[c, k, r, s], 0)
}"""),
]


def counts(source):
    imported = subprocess.run([os.path.join(bindir, "neo-translate"), "--import-neo", "-"],
                              input=source, check=True, capture_output=True, text=True).stdout
    out = subprocess.run([os.path.join(bindir, "neo-opt"), "--neo-autodiff",
                          "--neo-count-flops=summary-only", "-o", "/dev/null"],
                         input=imported, check=True, capture_output=True, text=True).stdout
    result = {}
    for name, visited, valid, flops in re.findall(
            r"^(\w+): \d+ ops, visited (\d+), valid (\d+), flops (\d+)", out, re.M):
        result[name] = (float(visited), float(valid), float(flops))
    return result


parser = argparse.ArgumentParser()
parser.add_argument("--max-ratio", type=float, default=1.1)
args = parser.parse_args()
print("| operator | forward GFLOP | textbook backward GFLOP | neo backward GFLOP | ratio | "
      "backward visited / valid iterations |")
print("|---|---|---|---|---|---|")
worst = 0.0
for name, source in CASES:
    c = counts(source)
    fwd = c["f"][2]
    vis, val, bwd = c["f_grad"]
    ratio = bwd / (2 * fwd)
    worst = max(worst, ratio)
    print("| %s | %.3f | %.3f | %.3f | %.3f | %.2f |" %
          (name, fwd / 1e9, 2 * fwd / 1e9, bwd / 1e9, ratio, vis / val))
print("\nworst ratio %.3f (limit %.2f)" % (worst, args.max_ratio))
sys.exit(0 if worst <= args.max_ratio else 1)
