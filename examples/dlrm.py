#!/usr/bin/python3
"""A DLRM-like click model trained with Neo: a bottom MLP over the dense
features, two EmbeddingBag tables (sum mode) over the sparse features (bags of
ids given as CSR offsets, `sum(j in off[b] .. off[b + 1]) E[idx[j], d]`), a top
MLP over their concatenation, and binary cross-entropy with logits, written
as one .neo function. neo-autodiff derives every gradient; those of the
tables are gathers over neo.invert_index's inverse of the ids within the bags
(repeated ids accumulate, no scatter). Plain SGD trains it on synthetic click
data (no public click log ships with a Debian or PyPI package). With
--compare-torch, the same model in PyTorch (nn.EmbeddingBag, nn.Linear,
binary_cross_entropy_with_logits) trains from the same weights on the same
batches, and the losses are compared step by step.

    /usr/bin/python3 examples/dlrm.py [--steps N] [--compare-torch]
"""
import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))

import neo  # noqa: E402

# Dense features, bottom/top widths, embedding dim; configure() sets the
# batch, the table sizes and the (fixed) number of ids per batch and table.
DENSE, HID, DIM = 13, 64, 16

TEMPLATE = """
def dlrm(x: f32[B, DENSE], idx0: i32[L0], off0: i32[B1], E0: f32[V0, DIM],
         idx1: i32[L1], off1: i32[B1], E1: f32[V1, DIM],
         Wb1: f32[DENSE, HID], bb1: f32[HID], Wb2: f32[HID, DIM], bb2: f32[DIM],
         Wt0: f32[DIM, HID], Wt1: f32[DIM, HID], Wt2: f32[DIM, HID], bt1: f32[HID],
         Wt3: f32[HID], bt2: f32[], y: f32[B]) -> loss {
  h1[b, k] = relu(sum(i) x[b, i] * Wb1[i, k] + bb1[k])
  h2[b, d] = relu(sum(k) h1[b, k] * Wb2[k, d] + bb2[d])
  s0[b < B, d] = sum(j in off0[b] .. off0[b + 1]) E0[idx0[j], d]
  s1[b < B, d] = sum(j in off1[b] .. off1[b + 1]) E1[idx1[j], d]
  t[b, k] = relu(sum(d) h2[b, d] * Wt0[d, k] + sum(d) s0[b, d] * Wt1[d, k]
                 + sum(d) s1[b, d] * Wt2[d, k] + bt1[k])
  z[b] = sum(k) t[b, k] * Wt3[k] + bt2
  loss = sum(b) (relu(z[b]) - z[b] * y[b] + log1p(exp(-abs(z[b])))) / NB
}
"""


def configure(batch=128, vocab=(1000, 500), ids=(512, 256)):
    """Sets the sizes (the example's by default; bench/dlrm.py's larger)."""
    global B, VOCAB, IDS, SOURCE, SHAPES
    B, VOCAB, IDS = batch, tuple(vocab), tuple(ids)
    SOURCE = TEMPLATE.replace("b < B,", "b < %d," % B).replace("/ NB", "/ %d" % B)
    SHAPES = {"E0": (VOCAB[0], DIM), "E1": (VOCAB[1], DIM), "Wb1": (DENSE, HID),
              "bb1": (HID,), "Wb2": (HID, DIM), "bb2": (DIM,), "Wt0": (DIM, HID),
              "Wt1": (DIM, HID), "Wt2": (DIM, HID), "bt1": (HID,), "Wt3": (HID,), "bt2": ()}

PARAMS = ["E0", "E1", "Wb1", "bb1", "Wb2", "bb2", "Wt0", "Wt1", "Wt2", "bt1", "Wt3", "bt2"]
configure()
# Argument positions of the parameters in dlrm's signature.
ARG = {"E0": 3, "E1": 6, "Wb1": 7, "bb1": 8, "Wb2": 9, "bb2": 10, "Wt0": 11, "Wt1": 12,
       "Wt2": 13, "bt1": 14, "Wt3": 15, "bt2": 16}


def init(seed=0):
    rng = np.random.default_rng(seed)
    p = {}
    for k, shape in SHAPES.items():
        fan_in = shape[0] if len(shape) == 2 and not k.startswith("E") else 1
        scale = 0.1 if k.startswith("E") or k.startswith("b") else np.sqrt(2.0 / fan_in)
        p[k] = (rng.standard_normal(shape) * scale).astype(np.float32)
    return p


def batches(steps, seed=1):
    """Synthetic clicks: Zipf-distributed ids in bags of varying size (some
    empty), dense features, and labels from a hidden logistic model of both,
    so that the model has something to learn."""
    rng = np.random.default_rng(seed)
    truth = [rng.standard_normal(v) for v in VOCAB]
    wx = rng.standard_normal(DENSE)
    for _ in range(steps):
        x = rng.standard_normal((B, DENSE)).astype(np.float32)
        bags = []
        score = x @ wx * 0.3
        for t in range(2):
            ids = (np.minimum(rng.zipf(1.3, IDS[t]), VOCAB[t]) - 1).astype(np.int32)
            cuts = np.sort(rng.integers(0, IDS[t] + 1, B - 1))
            off = np.concatenate([[0], cuts, [IDS[t]]]).astype(np.int32)
            score += np.array([truth[t][ids[off[b]:off[b + 1]]].sum() for b in range(B)])
            bags.append((ids, off))
        y = (rng.random(B) < 1 / (1 + np.exp(-score))).astype(np.float32)
        yield x, bags, y


class NeoDLRM:
    def __init__(self, options=""):
        sizes = {"B": B, "B1": B + 1, "DENSE": DENSE, "HID": HID, "DIM": DIM, "V0": VOCAB[0],
                 "V1": VOCAB[1], "L0": IDS[0], "L1": IDS[1]}
        m = neo.Module.from_source(SOURCE, name="dlrm.neo", sizes=sizes)
        self.step_fn = neo.grad(m, "dlrm", wrt=[ARG[k] for k in PARAMS], options=options)

    def loss_and_grads(self, p, x, bags, y):
        (i0, o0), (i1, o1) = bags
        out = self.step_fn(x, i0, o0, p["E0"], i1, o1, p["E1"],
                           *[p[k] for k in PARAMS[2:]], y, np.float32(1.0))
        return float(out[0]), dict(zip(PARAMS, out[1:]))


def train_neo(steps, lr, seed=0, options=""):
    model = NeoDLRM(options)
    p = init(seed)
    losses = []
    for x, bags, y in batches(steps):
        loss, grads = model.loss_and_grads(p, x, bags, y)
        losses.append(loss)
        p = {k: (p[k] - lr * grads[k]).astype(np.float32) for k in PARAMS}
    return losses, p


class TorchDLRM:
    """The same model in PyTorch, from the same weights."""

    def __init__(self, p):
        import torch
        self.torch = torch
        self.params = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}

    def loss(self, x, bags, y):
        torch, p = self.torch, self.params
        f = torch.nn.functional
        x = torch.from_numpy(x)
        h1 = torch.relu(x @ p["Wb1"] + p["bb1"])
        h2 = torch.relu(h1 @ p["Wb2"] + p["bb2"])
        sums = [f.embedding_bag(torch.from_numpy(ids.astype(np.int64)), p[e],
                                torch.from_numpy(off[:-1].astype(np.int64)), mode="sum")
                for (ids, off), e in zip(bags, ("E0", "E1"))]
        t = torch.relu(h2 @ p["Wt0"] + sums[0] @ p["Wt1"] + sums[1] @ p["Wt2"] + p["bt1"])
        z = t @ p["Wt3"] + p["bt2"]
        return f.binary_cross_entropy_with_logits(z, torch.from_numpy(y))


def train_torch(steps, lr, seed=0):
    model = TorchDLRM(init(seed))
    losses = []
    for x, bags, y in batches(steps):
        loss = model.loss(x, bags, y)
        losses.append(float(loss))
        for v in model.params.values():
            v.grad = None
        loss.backward()
        with model.torch.no_grad():
            for v in model.params.values():
                v -= lr * v.grad
    return losses


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--compare-torch", action="store_true")
    args = parser.parse_args()
    losses, _ = train_neo(args.steps, args.lr)
    k = max(1, args.steps // 10)
    print("neo: mean loss of the first %d steps %.4f, of the last %d %.4f"
          % (k, np.mean(losses[:k]), k, np.mean(losses[-k:])))
    if args.compare_torch:
        ref = train_torch(args.steps, args.lr)
        rel = max(abs(a - b) / max(abs(b), 1e-12) for a, b in zip(losses, ref))
        print("pytorch: the same from %.4f to %.4f; largest relative difference per step %.2e"
              % (np.mean(ref[:k]), np.mean(ref[-k:]), rel))
        if rel > 1e-4:
            sys.exit("the losses differ from PyTorch's by more than 1e-4")


if __name__ == "__main__":
    main()
