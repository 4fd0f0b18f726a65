#!/usr/bin/python3
"""A two-layer graph convolutional network (Kipf & Welling) on Zachary's
karate club (the graph networkx ships), written as one .neo function over the
graph's CSR adjacency: the aggregation `sum(e in rowptr[i] .. rowptr[i + 1])`
reads the neighbours' rows through the column indices, and the loss reads the
logits at the integer labels. neo-autodiff derives the gradient (the
transposed aggregation is a gather over the transposed CSR that
neo.invert_index builds in compiled code); plain SGD trains it. With --compare-torch, the same model in PyTorch (torch.sparse.mm,
cross_entropy) trains from the same initial weights, and the losses are
compared step by step.

    /usr/bin/python3 examples/gcn_karate.py [--steps N] [--compare-torch]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import neo  # noqa: E402

HIDDEN, CLASSES = 16, 2

SOURCE = """
def gcn(rowptr: i32[R], col: i32[E], val: f64[E], X: f64[N, N], W1: f64[N, {h}],
        W2: f64[{h}, {c}], label: i32[N], train: f64[N]) -> loss {{
  XW[i, h] = sum(k) X[i, k] * W1[k, h]
  H[i < {n}, h] = relu(sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * XW[col[e], h])
  HW[i, c] = sum(h) H[i, h] * W2[h, c]
  Z[i < {n}, c] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * HW[col[e], c]
  m[i] = max(c) Z[i, c]
  lse[i] = m[i] + log(sum(c) exp(Z[i, c] - m[i]))
  loss = sum(i) train[i] * (lse[i] - Z[i, label[i]]) / {ntrain}
}}
def logits(rowptr: i32[R], col: i32[E], val: f64[E], X: f64[N, N], W1: f64[N, {h}],
           W2: f64[{h}, {c}]) -> Z {{
  XW[i, h] = sum(k) X[i, k] * W1[k, h]
  H[i < {n}, h] = relu(sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * XW[col[e], h])
  HW[i, c] = sum(h) H[i, h] * W2[h, c]
  Z[i < {n}, c] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * HW[col[e], c]
}}
"""


def karate():
    """The graph with self-loops, symmetrically normalized (D^-1/2 (A+I)
    D^-1/2) as CSR, one-hot features, the two clubs as labels, and a
    training mask of every other member."""
    import networkx as nx
    g = nx.karate_club_graph()
    n = g.number_of_nodes()
    a = np.eye(n)
    for u, v in g.edges():
        a[u, v] = a[v, u] = 1.0
    d = a.sum(1)
    a = a / np.sqrt(d)[:, None] / np.sqrt(d)[None, :]
    rowptr = np.concatenate([[0], np.cumsum((a != 0).sum(1))]).astype(np.int32)
    col = np.nonzero(a)[1].astype(np.int32)
    val = a[a != 0]
    label = np.array([0 if g.nodes[i]["club"] == "Mr. Hi" else 1 for i in range(n)], np.int32)
    train = (np.arange(n) % 2 == 0).astype(np.float64)
    return rowptr, col, val, np.eye(n), label, train, a


def init(n, seed=0):
    rng = np.random.default_rng(seed)
    w1 = rng.uniform(-1, 1, (n, HIDDEN)) * np.sqrt(6.0 / (n + HIDDEN))
    w2 = rng.uniform(-1, 1, (HIDDEN, CLASSES)) * np.sqrt(6.0 / (HIDDEN + CLASSES))
    return w1, w2


class NeoGCN:
    def __init__(self, graph):
        rowptr, col, val, x, label, train, _ = graph
        self.graph = (rowptr, col, val, x)
        self.label, self.train = label, train
        n = len(label)
        src = SOURCE.format(h=HIDDEN, c=CLASSES, n=n, ntrain=int(train.sum()))
        sizes = {"R": n + 1, "E": len(col), "N": n}
        m = neo.Module.from_source(src, name="gcn.neo", sizes=sizes)
        # The gradient with respect to W1 and W2 (arguments 4 and 5).
        self.step_fn = neo.grad(m, "gcn", wrt=[4, 5])
        self.logits_fn = neo.Module.from_source(src, name="gcn.neo", sizes=sizes).compile("logits")

    def loss_and_grads(self, w1, w2):
        loss, dw1, dw2 = self.step_fn(*self.graph, w1, w2, self.label, self.train, 1.0)
        return float(loss), dw1, dw2

    def accuracy(self, w1, w2, mask):
        z = self.logits_fn(*self.graph, w1, w2)
        pred = z.argmax(1)
        return float((pred == self.label)[mask].mean())


def train_neo(graph, steps, lr):
    model = NeoGCN(graph)
    w1, w2 = init(len(graph[4]))
    losses = []
    for _ in range(steps):
        loss, dw1, dw2 = model.loss_and_grads(w1, w2)
        losses.append(loss)
        w1, w2 = w1 - lr * dw1, w2 - lr * dw2
    return losses, model, (w1, w2)


def train_torch(graph, steps, lr):
    import torch
    rowptr, col, val, x, label, train, _ = graph
    n = len(label)
    rows = np.repeat(np.arange(n), np.diff(rowptr))
    a = torch.sparse_coo_tensor(torch.tensor(np.stack([rows, col]), dtype=torch.long),
                                torch.tensor(val), size=(n, n))
    w1, w2 = (torch.tensor(w, requires_grad=True) for w in init(n))
    xt, lt = torch.tensor(x), torch.tensor(label, dtype=torch.long)
    mask = torch.tensor(train.astype(bool))
    losses = []
    for _ in range(steps):
        h = torch.relu(torch.sparse.mm(a, xt @ w1))
        z = torch.sparse.mm(a, h @ w2)
        loss = torch.nn.functional.cross_entropy(z[mask], lt[mask])
        losses.append(loss.item())
        w1.grad = w2.grad = None
        loss.backward()
        with torch.no_grad():
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
    return losses


def report(losses, steps, train_accuracy, heldout_accuracy, torch_losses=None):
    """Prints the run and, given PyTorch's losses, exits non-zero when a
    step's loss differs by more than 1e-4 (relative)."""
    print("neo: loss %.4f -> %.4f over %d steps; accuracy train %.3f, held-out %.3f"
          % (losses[0], losses[-1], steps, train_accuracy, heldout_accuracy))
    if torch_losses is not None:
        rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, torch_losses))
        print("pytorch: loss %.4f -> %.4f; largest relative difference per step %.2e"
              % (torch_losses[0], torch_losses[-1], rel))
        if rel > 1e-4:
            sys.exit("the losses differ from PyTorch's by more than 1e-4")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--compare-torch", action="store_true")
    args = parser.parse_args()
    graph = karate()
    losses, model, (w1, w2) = train_neo(graph, args.steps, args.lr)
    train = graph[5].astype(bool)
    report(losses, args.steps, model.accuracy(w1, w2, train), model.accuracy(w1, w2, ~train),
           train_torch(graph, args.steps, args.lr) if args.compare_torch else None)


if __name__ == "__main__":
    main()
