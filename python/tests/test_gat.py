"""Graph attention (GAT) over CSR rows: the edge softmax as three row ops
(max, sum of exp, normalized aggregation) through index reads. The karate
club example (examples/gat_karate.py) trains like the same model in PyTorch
step by step, with the default CPU pipeline and with neo-eqsat-fuse (which
runs each softmax chain as one row-blocked kernel); a random power-law graph
in float32 (empty rows, repeated columns, one row with a third of the edges)
checks the forward and the six gradients against PyTorch autograd, on one
and two threads."""
import os
import sys

import numpy as np
import pytest

import neo

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples"))
import gat_karate as gk  # noqa: E402

torch = pytest.importorskip("torch")
under_asan = pytest.mark.skipif("libclang_rt.asan" in os.environ.get("LD_PRELOAD", ""),
                                reason="slow under ASan; covered by the Release suite")


@under_asan
@pytest.mark.parametrize("options", ["", "eqsat=true"])
def test_gat_trains_like_pytorch(options):
    pytest.importorskip("networkx")
    graph = gk.karate()
    losses, model, ws = gk.train_neo(graph, 150, 0.2, options)
    ref = gk.train_torch(graph, 150, 0.2)
    np.testing.assert_allclose(losses, ref, rtol=1e-9)
    assert losses[-1] < 0.5 * losses[0]
    assert model.accuracy(ws, ~graph[4].astype(bool)) >= 0.9


def random_graph(n, nnz, seed):
    rng = np.random.default_rng(seed)
    deg = np.bincount(rng.zipf(1.8, nnz * 2) % n, minlength=n)[:n].astype(np.int64)
    deg = np.maximum(deg * nnz // max(1, deg.sum()), 0)
    deg[n // 2] += nnz // 3
    deg[0] = 0  # an empty row
    rowptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int32)
    col = rng.integers(0, n, rowptr[-1]).astype(np.int32)
    return rowptr, col


@pytest.mark.parametrize("options", ["threads=1", "threads=2 eqsat=true"])
def test_gat_float32_against_pytorch(options):
    n, f = 300, 24
    rowptr, col = random_graph(n, 2000, 5)
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, f)).astype(np.float32)
    ws = [w.astype(np.float32) for w in gk.init(f, seed=3, dtype=np.float32)]
    label = rng.integers(0, gk.CLASSES, n).astype(np.int32)
    train = np.ones(n, np.float32)
    sizes = {"R": n + 1, "E": len(col), "N": n, "F": f}
    m = neo.Module.from_source(gk.source(n, n, "f32"), name="gat.neo", sizes=sizes)
    out = neo.grad(m, "gat", wrt=[3, 4, 5, 6, 7, 8], options=options)(
        rowptr, col, x, *ws, label, train, np.float32(1.0))
    logits = m.compile("logits", options=options)(rowptr, col, x, *ws)

    rows = torch.tensor(np.repeat(np.arange(n), np.diff(rowptr)))
    colt = torch.tensor(col, dtype=torch.long)
    wt = [torch.tensor(w.astype(np.float64), requires_grad=True) for w in ws]
    xt = torch.tensor(x.astype(np.float64))
    h = torch.relu(gk.torch_layer(torch, xt, rows, colt, *wt[:3]))
    z = gk.torch_layer(torch, h, rows, colt, *wt[3:])
    loss = torch.nn.functional.cross_entropy(z, torch.tensor(label, dtype=torch.long))
    loss.backward()
    np.testing.assert_allclose(logits, z.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[0], loss.item(), rtol=1e-5)
    for got, w in zip(out[1:], wt):
        ref = w.grad.numpy()
        np.testing.assert_allclose(got, ref, rtol=2e-3, atol=2e-4 * np.abs(ref).max())
