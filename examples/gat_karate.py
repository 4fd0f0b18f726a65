#!/usr/bin/python3
"""A two-layer graph attention network (GAT, Velickovic et al., one head per
layer) on Zachary's karate club (the graph networkx ships), written as one
.neo function over the graph's CSR adjacency. Each layer's edge softmax is
three row ops over a node's CSR row range: the largest score
(`max(e in rowptr[i] .. rowptr[i + 1])`), the sum of the exponentials and the
normalized aggregation of the neighbours' rows, read through the column
indices. neo-autodiff derives the gradient in gather form (the transposed
aggregation runs over the transposed CSR that neo.invert_index builds in
compiled code); plain SGD trains it. With --eqsat the CPU pipeline runs
neo-eqsat-fuse first, which puts each layer's softmax chain into one
row-blocked kernel. With --compare-torch, the same model in PyTorch
(scatter_reduce, index_add, cross_entropy) trains from the same initial
weights, and the losses are compared step by step.

    /usr/bin/python3 examples/gat_karate.py [--steps N] [--eqsat] [--compare-torch]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import neo  # noqa: E402
from gcn_karate import report  # noqa: E402 (the run printed and checked as for the GCN)

HIDDEN, CLASSES = 8, 2

# One GAT layer of the source: XW = H W; its attention scores s (source) and
# t (neighbour); score(i, e) = leaky_relu(s[i] + t[col[e]], 0.2).
LAYER = """
  XW{k}[i, h] = sum(k) {inp}[i, k] * W{k}[k, h]
  s{k}[i] = sum(h) XW{k}[i, h] * as{k}[h]
  t{k}[i] = sum(h) XW{k}[i, h] * ad{k}[h]
  M{k}[i < {n}] = max(e in rowptr[i] .. rowptr[i + 1]) max(s{k}[i] + t{k}[col[e]], 0.2 * (s{k}[i] + t{k}[col[e]]))
  D{k}[i < {n}] = sum(e in rowptr[i] .. rowptr[i + 1]) exp(max(s{k}[i] + t{k}[col[e]], 0.2 * (s{k}[i] + t{k}[col[e]])) - M{k}[i])
  A{k}[i < {n}, h] = sum(e in rowptr[i] .. rowptr[i + 1]) exp(max(s{k}[i] + t{k}[col[e]], 0.2 * (s{k}[i] + t{k}[col[e]])) - M{k}[i]) / D{k}[i] * XW{k}[col[e], h]
"""

PARAMS = ("rowptr: i32[R], col: i32[E], X: {t}[N, F], W1: {t}[F, {h}], as1: {t}[{h}], "
          "ad1: {t}[{h}], W2: {t}[{h}, {c}], as2: {t}[{c}], ad2: {t}[{c}]")


def source(n, ntrain, dtype="f64"):
    params = PARAMS.format(t=dtype, h=HIDDEN, c=CLASSES)
    body = (LAYER.format(k=1, inp="X", n=n) + "  H[i, h] = relu(A1[i, h])\n"
            + LAYER.format(k=2, inp="H", n=n))
    return ("def gat(%s, label: i32[N], train: %s[N]) -> loss {\n%s"
            "  m[i] = max(c) A2[i, c]\n"
            "  lse[i] = m[i] + log(sum(c) exp(A2[i, c] - m[i]))\n"
            "  loss = sum(i) train[i] * (lse[i] - A2[i, label[i]]) / %d\n}\n"
            "def logits(%s) -> A2 {\n%s}\n" % (params, dtype, body, ntrain, params, body))


def karate():
    """The graph with self-loops as CSR (every node attends to itself and its
    neighbours), one-hot features, the two clubs as labels, and a training
    mask of every other member."""
    import networkx as nx
    g = nx.karate_club_graph()
    n = g.number_of_nodes()
    a = np.eye(n, dtype=bool)
    for u, v in g.edges():
        a[u, v] = a[v, u] = True
    rowptr = np.concatenate([[0], np.cumsum(a.sum(1))]).astype(np.int32)
    col = np.nonzero(a)[1].astype(np.int32)
    label = np.array([0 if g.nodes[i]["club"] == "Mr. Hi" else 1 for i in range(n)], np.int32)
    train = (np.arange(n) % 2 == 0).astype(np.float64)
    return rowptr, col, np.eye(n), label, train


def init(f, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)

    def glorot(*shape):
        fan = shape[0] + (shape[1] if len(shape) > 1 else 1)
        return (rng.uniform(-1, 1, shape) * np.sqrt(6.0 / fan)).astype(dtype)
    return [glorot(f, HIDDEN), glorot(HIDDEN), glorot(HIDDEN),
            glorot(HIDDEN, CLASSES), glorot(CLASSES), glorot(CLASSES)]


class NeoGAT:
    def __init__(self, graph, options=""):
        rowptr, col, x, label, train = graph
        self.graph = (rowptr, col, x)
        self.label, self.train = label, train
        n = len(label)
        src = source(n, int(train.sum()))
        sizes = {"R": n + 1, "E": len(col), "N": n, "F": x.shape[1]}
        m = neo.Module.from_source(src, name="gat.neo", sizes=sizes)
        # The gradient with respect to the six weights (arguments 3-8).
        self.step_fn = neo.grad(m, "gat", wrt=[3, 4, 5, 6, 7, 8], options=options)
        self.logits_fn = neo.Module.from_source(src, name="gat.neo", sizes=sizes).compile(
            "logits", options=options)

    def loss_and_grads(self, ws):
        out = self.step_fn(*self.graph, *ws, self.label, self.train, 1.0)
        return float(out[0]), out[1:]

    def accuracy(self, ws, mask):
        pred = self.logits_fn(*self.graph, *ws).argmax(1)
        return float((pred == self.label)[mask].mean())


def train_neo(graph, steps, lr, options=""):
    model = NeoGAT(graph, options)
    ws = init(graph[2].shape[1])
    losses = []
    for _ in range(steps):
        loss, grads = model.loss_and_grads(ws)
        losses.append(loss)
        ws = [w - lr * g for w, g in zip(ws, grads)]
    return losses, model, ws


def torch_layer(torch, h, rows, col, w, a_s, a_d):
    """One GAT layer in PyTorch: the edge softmax by scatter_reduce (amax) and
    index_add over the edges' rows."""
    n = h.shape[0]
    hw = h @ w
    sc = torch.nn.functional.leaky_relu((hw @ a_s)[rows] + (hw @ a_d)[col], 0.2)
    m = torch.full((n,), -float("inf"), dtype=h.dtype).scatter_reduce(
        0, rows, sc, "amax", include_self=True)
    ex = torch.exp(sc - m[rows])
    d = torch.zeros(n, dtype=h.dtype).index_add(0, rows, ex)
    return torch.zeros(n, hw.shape[1], dtype=h.dtype).index_add(
        0, rows, (ex / d[rows])[:, None] * hw[col])


def train_torch(graph, steps, lr):
    import torch
    rowptr, col, x, label, train = graph
    rows = torch.tensor(np.repeat(np.arange(len(label)), np.diff(rowptr)))
    colt = torch.tensor(col, dtype=torch.long)
    ws = [torch.tensor(w, requires_grad=True) for w in init(x.shape[1])]
    xt, lt = torch.tensor(x), torch.tensor(label, dtype=torch.long)
    mask = torch.tensor(train.astype(bool))
    losses = []
    for _ in range(steps):
        h = torch.relu(torch_layer(torch, xt, rows, colt, *ws[:3]))
        z = torch_layer(torch, h, rows, colt, *ws[3:])
        loss = torch.nn.functional.cross_entropy(z[mask], lt[mask])
        losses.append(loss.item())
        for w in ws:
            w.grad = None
        loss.backward()
        with torch.no_grad():
            for w in ws:
                w -= lr * w.grad
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--eqsat", action="store_true")
    parser.add_argument("--compare-torch", action="store_true")
    args = parser.parse_args()
    graph = karate()
    losses, model, ws = train_neo(graph, args.steps, args.lr, "eqsat=true" if args.eqsat else "")
    train = graph[4].astype(bool)
    report(losses, args.steps, model.accuracy(ws, train), model.accuracy(ws, ~train),
           train_torch(graph, args.steps, args.lr) if args.compare_torch else None)


if __name__ == "__main__":
    main()
