"""A two-layer GCN training step at GNN scale (forward, loss against integer
labels, gradients of both weight matrices) in Neo against PyTorch eager
(torch.sparse.mm, and a gather + index_add formulation), torch.compile (of
the index_add formulation: inductor does not compile sparse tensors) and JAX
(jit of value_and_grad, gather + segment_sum), one and two threads, side by
side.

    /usr/bin/python3 bench/gcn.py [--nodes 100000] [--edges 1000000]
        [--features 64] [--hidden 64] [--classes 16] [--rounds 5]
        [--repeats 3] [--out docs/gcn-benchmarks.md]

Each system runs in its own process (this script re-invokes itself with
--one), pinned to its threads with taskset and told the count
(OMP_NUM_THREADS, torch.set_num_threads, XLA's intra-op flag, Neo's
threads=); the cores used (CPU time / wall time) are reported to check that
the count took effect. PyTorch and JAX come from the bench venv
(scripts/bench-env.sh). Every system's loss and gradients are compared with a
float64 numpy reference first. The graph is bench/spmm.py's (power-law
degrees), with the symmetric normalization of Kipf & Welling as values.
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import sidebyside  # noqa: E402
import spmm  # noqa: E402

SOURCE = """
def gcn(rowptr: i32[R], col: i32[E], val: f32[E], X: f32[N, F], W1: f32[F, H],
        W2: f32[H, C], label: i32[N]) -> loss {{
  XW[i, h] = sum(k) X[i, k] * W1[k, h]
  A1[i < {n}, h] = relu(sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * XW[col[e], h])
  HW[i, c] = sum(h) A1[i, h] * W2[h, c]
  Z[i < {n}, c] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * HW[col[e], c]
  m[i] = max(c) Z[i, c]
  lse[i] = m[i] + log(sum(c) exp(Z[i, c] - m[i]))
  loss = sum(i) (lse[i] - Z[i, label[i]]) / {n}
}}
"""

SYSTEMS = ["neo", "neo-eqsat", "torch-sparse", "torch-index_add", "torch.compile", "jax"]


def problem(args):
    rowptr, col, _, x = spmm.graph(args.nodes, args.edges, args.features)
    n = len(rowptr) - 1
    deg = np.diff(rowptr).astype(np.float64)
    rows = np.repeat(np.arange(n), np.diff(rowptr))
    # D^-1/2 A D^-1/2 by the row degrees of both ends (col's rows have degree >= 1).
    val = (1.0 / np.sqrt(deg[rows] * deg[col])).astype(np.float32)
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((args.features, args.hidden)) / np.sqrt(args.features))
    w2 = (rng.standard_normal((args.hidden, args.classes)) / np.sqrt(args.hidden))
    label = rng.integers(0, args.classes, n).astype(np.int32)
    return rowptr, col, val, x, w1.astype(np.float32), w2.astype(np.float32), label, rows


def reference(p):
    """Loss and gradients in float64, by hand (independent of every system)."""
    import scipy.sparse as sp
    rowptr, col, val, x, w1, w2, label, _ = p
    n = len(rowptr) - 1
    a = sp.csr_matrix((val.astype(np.float64), col, rowptr), shape=(n, n))
    x, w1, w2 = x.astype(np.float64), w1.astype(np.float64), w2.astype(np.float64)
    pre = a @ (x @ w1)
    h = np.maximum(pre, 0)
    z = a @ (h @ w2)
    zmax = z.max(1, keepdims=True)
    ez = np.exp(z - zmax)
    lse = zmax[:, 0] + np.log(ez.sum(1))
    loss = (lse - z[np.arange(n), label]).sum() / n
    dz = ez / ez.sum(1, keepdims=True)
    dz[np.arange(n), label] -= 1
    dz /= n
    dhw = a.T @ dz
    dw2 = h.T @ dhw
    dpre = (dhw @ w2.T) * (pre > 0)
    dw1 = x.T @ (a.T @ dpre)
    return [np.array(loss), dw1, dw2]


def one(system, threads, args):
    p = problem(args)
    rowptr, col, val, x, w1, w2, label, rows = p
    n = len(rowptr) - 1
    compile_s = 0.0
    res = {}
    if system in ("neo", "neo-eqsat"):
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import neo
        t0 = time.perf_counter()
        m = neo.Module.from_source(SOURCE.format(n=n), name="gcn.neo", sizes={
            "R": n + 1, "E": len(col), "N": n, "F": args.features, "H": args.hidden,
            "C": args.classes})
        f = neo.grad(m, "gcn", wrt=[4, 5], options="threads=%d%s" % (
            threads, " eqsat=true" if system == "neo-eqsat" else ""))
        compile_s = time.perf_counter() - t0
        one_ = np.array(1.0, np.float32)

        def run():
            res["out"] = f(rowptr, col, val, x, w1, w2, label, one_)
        got = lambda: res["out"]  # noqa: E731
    elif system == "jax":
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d"
                                   % ("true" if threads > 1 else "false", threads))
        import jax
        import jax.numpy as jnp
        r, c, v, xj, lj = (jnp.asarray(t) for t in (rows, col, val, x, label))

        def loss_fn(w1, w2):
            def agg(t):
                return jax.ops.segment_sum(t[c] * v[:, None], r, num_segments=n,
                                           indices_are_sorted=True)
            h = jax.nn.relu(agg(xj @ w1))
            z = agg(h @ w2)
            lse = jax.nn.logsumexp(z, axis=1)
            return (lse - z[jnp.arange(n), lj]).sum() / n
        t0 = time.perf_counter()
        step = jax.jit(jax.value_and_grad(loss_fn, argnums=(0, 1)))
        w1j, w2j = jnp.asarray(w1), jnp.asarray(w2)
        jax.block_until_ready(step(w1j, w2j))
        compile_s = time.perf_counter() - t0

        def run():
            res["out"] = jax.block_until_ready(step(w1j, w2j))
        got = lambda: [np.asarray(res["out"][0]), *map(np.asarray, res["out"][1])]  # noqa: E731
    else:
        import torch
        torch.set_num_threads(threads)
        xt, lt = torch.from_numpy(x), torch.from_numpy(label.astype(np.int64))
        w1t = torch.from_numpy(w1.copy()).requires_grad_()
        w2t = torch.from_numpy(w2.copy()).requires_grad_()
        ct, rt, vt = (torch.from_numpy(t) for t in (col.astype(np.int64), rows, val))
        if system == "torch-sparse":
            a = torch.sparse_coo_tensor(torch.stack([rt, ct]), vt, (n, n)).coalesce()
            agg = lambda t: torch.sparse.mm(a, t)  # noqa: E731
        else:
            agg = lambda t: torch.zeros(n, t.shape[1]).index_add(  # noqa: E731
                0, rt, t[ct] * vt[:, None])

        def loss_fn(w1, w2):
            h = torch.relu(agg(xt @ w1))
            z = agg(h @ w2)
            return torch.nn.functional.cross_entropy(z, lt)

        run, got, compile_s = sidebyside.torch_training_step(
            torch, lambda: loss_fn(w1t, w2t), [w1t, w2t], system == "torch.compile", res)
    sidebyside.report_step(run, got, reference(p), args.rounds, compile_s, len(col))


def main():
    sidebyside.gnn_main(
        __doc__, __file__, SYSTEMS, one, "# GCN training step",
        "Two-layer GCN (Kipf & Welling), %d nodes, %d nonzeros (Zipf degrees), %d -> %d -> %d "
        "features, f32, cross-entropy against integer labels; a step is the forward, the loss "
        "and the gradients of both weight matrices.", "a float64 numpy reference")


if __name__ == "__main__":
    main()
