#!/usr/bin/python3
"""The gated_mix operator of docs/tutorial.md from Python: compile it, check
it against numpy, differentiate it and check the gradients against PyTorch's
autograd, train its parameters, and write the same operator with neo.dsl.

    /usr/bin/python3 docs/examples/gated_mix.py
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))  # this repository's neo package
import neo  # noqa: E402
from neo import dsl  # noqa: E402


def gated_mix_numpy(x, a, w):
    xp = np.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)))  # a zero channel at both ends
    g = 1 / (1 + np.exp(-(a[0] * xp[:, 0:32] + a[1] * xp[:, 1:33] + a[2] * xp[:, 2:34])))
    return np.einsum("kc,nchw->nkhw", w, x * g)


def gated_mix_torch_grads(x, a, w, dy):
    import torch
    tx, ta, tw = (torch.tensor(v, dtype=torch.float64, requires_grad=True) for v in (x, a, w))
    xp = torch.nn.functional.pad(tx, (0, 0, 0, 0, 1, 1))
    g = torch.sigmoid(ta[0] * xp[:, 0:32] + ta[1] * xp[:, 1:33] + ta[2] * xp[:, 2:34])
    torch.einsum("kc,nchw->nkhw", tw, tx * g).backward(torch.tensor(dy, dtype=torch.float64))
    return tx.grad.numpy(), ta.grad.numpy(), tw.grad.numpy()


def main():
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (8, 32, 8, 8)).astype(np.float32)
    a = rng.uniform(-1, 1, 3).astype(np.float32)
    w = rng.uniform(-1, 1, (64, 32)).astype(np.float32)

    # 1. Import the .neo file, compile it for the CPU, run it on numpy arrays.
    module = neo.Module.from_file(os.path.join(HERE, "gated_mix.neo"))
    forward = module.compile("gated_mix")
    print(forward)
    y = forward(x, a, w)
    print("forward: max |neo - numpy| = %.2g" % np.abs(y - gated_mix_numpy(x, a, w)).max())

    # 2. Differentiate (neo-autodiff): gated_mix_fwdbwd(x, a, w, dy) -> (y, dx, da, dw).
    fwdbwd = neo.grad(module, "gated_mix")
    print(fwdbwd)
    ok, _ = module.gradcheck("gated_mix", seed=1)
    print("gradcheck:", "ok" if ok else "FAILED")
    dy = rng.uniform(-1, 1, y.shape).astype(np.float32)
    _, dx, da, dw = fwdbwd(x, a, w, dy)
    for name, mine, ref in zip(("dx", "da", "dw"), (dx, da, dw), gated_mix_torch_grads(x, a, w, dy)):
        print("%s: max |neo - torch| / max |torch| = %.2g"
              % (name, np.abs(mine - ref).max() / np.abs(ref).max()))

    # 3. Train: fit a and w to a teacher with gradient descent on the mean
    #    squared error (whose gradient, dy, numpy computes).
    a_teacher = np.array([0.5, 2.0, -1.0], np.float32)
    w_teacher = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    a_s = rng.uniform(-0.1, 0.1, 3).astype(np.float32)
    w_s = rng.uniform(-0.1, 0.1, (64, 32)).astype(np.float32)
    for step in range(1, 121):
        xb = rng.uniform(-1, 1, x.shape).astype(np.float32)
        target = forward(xb, a_teacher, w_teacher)
        y_s = forward(xb, a_s, w_s)
        _, _, da_s, dw_s = fwdbwd(xb, a_s, w_s, 2 * (y_s - target) / y_s.size)
        a_s -= 5 * da_s
        w_s -= 50 * dw_s
        if step in (1, 20, 40, 80, 120):
            print("step %3d: loss %.3g, a = [%s]" % (step, np.mean((y_s - target) ** 2),
                                                    ", ".join("%.3f" % v for v in a_s)))

    # 4. The same operator with neo.dsl, which writes .neo source.
    f = dsl.Function("gated_mix")
    X = f.input("x", (8, 32, 8, 8))
    A = f.input("a", (3,))
    W = f.input("w", (64, 32))
    n, c, h, v, d, k = dsl.vars("n c h v d k", [None, 32, None, None, 3, None])
    G = f.compute("g", [n, c, h, v], dsl.sigmoid(dsl.sum(d, A[d] * X[n, c + d - 1, h, v])))
    XG = f.compute("xg", [n, c, h, v], X[n, c, h, v] * G[n, c, h, v])
    Y = f.compute("y", [n, k, h, v], dsl.sum(c, W[k, c] * XG[n, c, h, v]), shape=(8, 64, 8, 8))
    f.output(Y)
    print(f.source(), end="")
    y_dsl = f.module().compile()(x, a, w)
    print("dsl: max |dsl - .neo| = %.2g" % np.abs(y_dsl - y).max())


if __name__ == "__main__":
    # Everything lives in main(), so that its functions and modules are freed
    # before the interpreter shuts down.
    main()
