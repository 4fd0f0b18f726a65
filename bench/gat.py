"""A two-layer graph attention network (GAT, one head per layer) training
step at GNN scale: the forward (each layer's edge softmax over the nodes'
CSR row ranges), the loss against integer labels and the gradients of all
six weights, in Neo (the default CPU pipeline, and with neo-eqsat-fuse,
which runs each softmax chain as one row-blocked kernel) against PyTorch
eager (scatter_reduce amax + index_add over the edges), torch.compile of the
same step, and JAX (jit of value_and_grad, segment_max + segment_sum), one
and two threads, side by side.

    /usr/bin/python3 bench/gat.py [--nodes 100000] [--edges 1000000]
        [--features 64] [--hidden 64] [--classes 16] [--rounds 5]
        [--repeats 3] [--out docs/gat-benchmarks.md]

Each system runs in its own process (this script re-invokes itself with
--one), pinned to its threads with taskset and told the count; the cores
used (CPU time / wall time) are reported to check that the count took
effect. PyTorch and JAX come from the bench venv (scripts/bench-env.sh).
Every system's loss and gradients are compared first with the same step in
float64 PyTorch autograd (max error relative to the largest value of each).
The graph is bench/spmm.py's (power-law degrees).
"""
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import sidebyside  # noqa: E402
import spmm  # noqa: E402

SYSTEMS = ["neo", "neo-eqsat", "torch-index_add", "torch.compile", "jax"]


def source(n, h, c):
    """The GAT step in .neo: examples/gat_karate.py's layers; every node
    in training (its mask all ones: the mean cross-entropy)."""
    import gat_karate as gk
    gk.HIDDEN, gk.CLASSES = h, c
    return gk.source(n, n, "f32")


def problem(args):
    rowptr, col, _, x = spmm.graph(args.nodes, args.edges, args.features)
    n = len(rowptr) - 1
    rng = np.random.default_rng(3)
    shapes = [(args.features, args.hidden), (args.hidden,), (args.hidden,),
              (args.hidden, args.classes), (args.classes,), (args.classes,)]
    ws = [(rng.standard_normal(s) / np.sqrt(s[0])).astype(np.float32) for s in shapes]
    label = rng.integers(0, args.classes, n).astype(np.int32)
    rows = np.repeat(np.arange(n), np.diff(rowptr))
    return rowptr, col, x, ws, label, rows


def torch_step(torch, p, dtype):
    """The step in PyTorch: (loss fn of the weights, weights as leaves)."""
    import gat_karate as gk
    rowptr, col, x, ws, label, rows = p
    rt, ct = torch.from_numpy(rows), torch.from_numpy(col.astype(np.int64))
    xt, lt = torch.from_numpy(x).to(dtype), torch.from_numpy(label.astype(np.int64))
    wt = [torch.from_numpy(w.copy()).to(dtype).requires_grad_() for w in ws]

    def loss_fn():
        h = torch.relu(gk.torch_layer(torch, xt, rt, ct, *wt[:3]))
        z = gk.torch_layer(torch, h, rt, ct, *wt[3:])
        return torch.nn.functional.cross_entropy(z, lt)
    return loss_fn, wt


def reference(p):
    import torch
    loss_fn, wt = torch_step(torch, p, torch.float64)
    loss = loss_fn()
    loss.backward()
    return [loss.detach().numpy()] + [w.grad.numpy() for w in wt]


def one(system, threads, args):
    p = problem(args)
    rowptr, col, x, ws, label, rows = p
    n = len(rowptr) - 1
    compile_s = 0.0
    res = {}
    if system.startswith("neo"):
        sys.path.insert(0, os.path.join(ROOT, "python"))
        import neo
        t0 = time.perf_counter()
        m = neo.Module.from_source(source(n, args.hidden, args.classes), name="gat.neo", sizes={
            "R": n + 1, "E": len(col), "N": n, "F": args.features})
        f = neo.grad(m, "gat", wrt=[3, 4, 5, 6, 7, 8], options="threads=%d%s" % (
            threads, " eqsat=true" if system == "neo-eqsat" else ""))
        compile_s = time.perf_counter() - t0
        one_ = np.array(1.0, np.float32)
        train = np.ones(n, np.float32)

        def run():
            res["out"] = f(rowptr, col, x, *ws, label, train, one_)
        got = lambda: res["out"]  # noqa: E731
    elif system == "jax":
        os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=%s intra_op_parallelism_threads=%d"
                                   % ("true" if threads > 1 else "false", threads))
        import jax
        import jax.numpy as jnp
        r, c, xj, lj = (jnp.asarray(t) for t in (rows, col, x, label))

        def layer(h, w, a_s, a_d):
            hw = h @ w
            sc = jax.nn.leaky_relu((hw @ a_s)[r] + (hw @ a_d)[c], 0.2)
            m = jax.ops.segment_max(sc, r, num_segments=n, indices_are_sorted=True)
            ex = jnp.exp(sc - m[r])
            d = jax.ops.segment_sum(ex, r, num_segments=n, indices_are_sorted=True)
            return jax.ops.segment_sum((ex / d[r])[:, None] * hw[c], r, num_segments=n,
                                       indices_are_sorted=True)

        def loss_fn(*w):
            h = jax.nn.relu(layer(xj, *w[:3]))
            z = layer(h, *w[3:])
            lse = jax.nn.logsumexp(z, axis=1)
            return (lse - z[jnp.arange(n), lj]).mean()
        t0 = time.perf_counter()
        step = jax.jit(jax.value_and_grad(loss_fn, argnums=tuple(range(6))))
        wj = [jnp.asarray(w) for w in ws]
        jax.block_until_ready(step(*wj))
        compile_s = time.perf_counter() - t0

        def run():
            res["out"] = jax.block_until_ready(step(*wj))
        got = lambda: [np.asarray(res["out"][0]), *map(np.asarray, res["out"][1])]  # noqa: E731
    else:
        import torch
        torch.set_num_threads(threads)
        loss_fn, wt = torch_step(torch, p, torch.float32)
        run, got, compile_s = sidebyside.torch_training_step(
            torch, loss_fn, wt, system == "torch.compile", res)
    sidebyside.report_step(run, got, reference(p), args.rounds, compile_s, len(col))


def main():
    sidebyside.gnn_main(
        __doc__, __file__, SYSTEMS, one, "# GAT training step",
        "Two-layer graph attention network (one head per layer, LeakyReLU 0.2 scores, "
        "softmax over each node's CSR row), %d nodes, %d nonzeros (Zipf degrees), %d -> %d -> "
        "%d features, f32, cross-entropy against integer labels; a step is the forward, the "
        "loss and the gradients of the six weights.", "the step in float64 PyTorch autograd")


if __name__ == "__main__":
    main()
