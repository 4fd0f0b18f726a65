"""Writes a .neo program whose expression is long or deep (deep-nesting.test).

    gen_deep.py KIND N > out.neo
"""
import sys

kind, n = sys.argv[1], int(sys.argv[2])
body = {
    # Flat chains: one wide node each, however long.
    "sum": lambda: " + ".join("x[i] * %d.0" % k for k in range(n)),
    "product": lambda: "x[i]" + " * 1.0001 / 1.0001" * n,
    "mixed": lambda: "x[i]" + "".join(" %s x[i]" % "+-*/"[k % 4] for k in range(n)),
    "index-sum": lambda: "x[(" + " + ".join("i" for _ in range(n)) + ") % 4]",
    "and": lambda: "select(" + " and ".join("x[i] > -%d" % (k + 2) for k in range(n)) +
                   ", x[i], 0)",
    # Nesting: bounded by --max-expression-depth.
    "parens": lambda: "(" * n + "x[i]" + ")" * n,
    "neg": lambda: "-" * n + "x[i]",
    "not": lambda: "select(" + "not " * n + "x[i] > 0, x[i], 0)",
    "calls": lambda: "relu(" * n + "x[i]" + ")" * n,
    "sums": lambda: "sum(k < 2) " * n + "x[i]",
    "indices": lambda: "x[" * n + "i" + "]" * n,
    # Every kind of nesting in turn, at the given depth.
    "all": lambda: "".join(("(", "-", "exp(", "sum(k%d < 2) " % k, "x[i] + -(")[k % 5]
                           for k in range(n)) + "x[i]" +
                   "".join((")", "", ")", "", ")")[k % 5] for k in reversed(range(n))),
}[kind]()
print("def f(x: f32[4]) -> y {\n  y[i < 4] = %s\n}" % body)
