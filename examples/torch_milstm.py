#!/usr/bin/python3
"""Train a novel recurrent cell written in .neo inside an ordinary PyTorch
model: a multiplicative-integration LSTM (MI-LSTM, Wu et al. 2016) as a
neo.torch.Module, reading scikit-learn's digits row by row (each 8x8 image
is a sequence of 8 rows of 8 pixels) and classifying the last hidden state
with a torch Linear layer, trained with torch.optim.Adam. The same model
written in plain PyTorch trains beside it from the same initial weights, so
the two loss curves can be compared.

    /usr/bin/python3 examples/torch_milstm.py [--epochs 8] [--plot milstm_loss.png]
        [--hidden 64] [--threads 1] [--compile] [--sequence]

--compile also runs both models under torch.compile (PyTorch 2.4 and later,
e.g. the benchmark venv's python: scripts/bench-env.sh). --sequence also
trains NeoMILSTMSeq, the model with the whole 8-row sequence in one Neo op
(sequence_source), from the same weights.
"""
import argparse
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import neo.torch  # noqa: E402

CELL = """
def mi_lstm(x: f32[N, I], h: f32[N, H], c: f32[N, H], W: f32[I, G], U: f32[H, G],
            alpha: f32[G], b1: f32[G], b2: f32[G], b: f32[G]) -> (h2, c2) {
  wx[n, j] = sum(k) x[n, k] * W[k, j]
  uh[n, j] = sum(k) h[n, k] * U[k, j]
  g[n, j] = alpha[j] * wx[n, j] * uh[n, j] + b1[j] * wx[n, j] + b2[j] * uh[n, j] + b[j]
  c2[n, j < %(H)d] = sigmoid(g[n, %(H)d + j]) * c[n, j] + sigmoid(g[n, j]) * tanh(g[n, %(H2)d + j])
  h2[n, j < %(H)d] = sigmoid(g[n, %(H3)d + j]) * tanh(c2[n, j])
}"""
PARAMS = ["W", "U", "alpha", "b1", "b2", "b"]


def init_params(inputs, hidden, seed=0):
    g = torch.Generator().manual_seed(seed)
    gates = 4 * hidden
    return {
        "W": torch.randn(inputs, gates, generator=g) / inputs ** 0.5,
        "U": torch.randn(hidden, gates, generator=g) / hidden ** 0.5,
        "alpha": torch.ones(gates), "b1": torch.full((gates,), 0.5),
        "b2": torch.full((gates,), 0.5), "b": torch.zeros(gates),
    }


class NeoMILSTM(torch.nn.Module):
    """The cell from .neo: weights are the Module's parameters."""

    def __init__(self, inputs, hidden, classes, **op_options):
        super().__init__()
        src = CELL % {"H": hidden, "H2": 2 * hidden, "H3": 3 * hidden}
        init = {k: (lambda t, v=v: t.copy_(v)) for k, v in init_params(inputs, hidden).items()}
        self.cell = neo.torch.Module(src, parameters=PARAMS, init=init,
                                     sizes={"I": inputs, "H": hidden, "G": 4 * hidden},
                                     **op_options)
        self.hidden = hidden
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, seq):  # seq: [N, T, I]
        n = seq.shape[0]
        h = seq.new_zeros(n, self.hidden)
        c = seq.new_zeros(n, self.hidden)
        for t in range(seq.shape[1]):
            h, c = self.cell(seq[:, t].contiguous(), h, c)
        return self.head(h)


def sequence_source(inputs, hidden, steps, dtype="f32"):
    """The MI-LSTM over a whole sequence as one .neo function: the cell
    unrolled over `steps` time steps of seq[N, T, I] from h = c = 0 (the
    first step without the terms of the zero state), returning the last
    hidden state. One op call (and one backward) a sequence instead of one
    a step: autograd's per-op work, the parameter gradients' accumulation
    over the steps and neo.torch's per-call glue happen once."""
    H, G = hidden, 4 * hidden
    lines = ["def mi_lstm_seq(x: %s[N, %d, %d], W: %s[%d, %d], U: %s[%d, %d], alpha: %s[%d], "
             "b1: %s[%d], b2: %s[%d], b: %s[%d]) -> h%d {"
             % (dtype, steps, inputs, dtype, inputs, G, dtype, H, G, dtype, G, dtype, G, dtype, G,
                dtype, G, steps - 1)]
    for t in range(steps):
        lines.append("  wx%d[n, j] = sum(k) x[n, %d, k] * W[k, j]" % (t, t))
        if t == 0:
            lines.append("  g0[n, j] = b1[j] * wx0[n, j] + b[j]")
            lines.append("  c0[n, j < %d] = sigmoid(g0[n, j]) * tanh(g0[n, %d + j])" % (H, 2 * H))
        else:
            p = t - 1
            lines.append("  uh%d[n, j] = sum(k) h%d[n, k] * U[k, j]" % (t, p))
            lines.append("  g%d[n, j] = alpha[j] * wx%d[n, j] * uh%d[n, j] + b1[j] * wx%d[n, j]"
                         " + b2[j] * uh%d[n, j] + b[j]" % (t, t, t, t, t))
            lines.append("  c%d[n, j < %d] = sigmoid(g%d[n, %d + j]) * c%d[n, j] + sigmoid(g%d[n, j])"
                         " * tanh(g%d[n, %d + j])" % (t, H, t, H, p, t, t, 2 * H))
        lines.append("  h%d[n, j < %d] = sigmoid(g%d[n, %d + j]) * tanh(c%d[n, j])"
                     % (t, H, t, 3 * H, t))
    lines.append("}")
    return "\n".join(lines)


class NeoMILSTMSeq(torch.nn.Module):
    """The same model with the whole sequence in one Neo op
    (sequence_source): for sequences of a fixed length `steps`."""

    def __init__(self, inputs, hidden, classes, steps, dtype="f32", **op_options):
        super().__init__()
        init = {k: (lambda t, v=v: t.copy_(v)) for k, v in init_params(inputs, hidden).items()}
        self.cell = neo.torch.Module(sequence_source(inputs, hidden, steps, dtype),
                                     parameters=PARAMS, init=init,
                                     sizes={"I": inputs, "H": hidden, "G": 4 * hidden},
                                     **op_options)
        self.head = torch.nn.Linear(hidden, classes)
        if dtype == "f64":
            self.head.double()

    def forward(self, seq):  # seq: [N, T, I]
        return self.head(self.cell(seq.contiguous()))


class TorchMILSTM(torch.nn.Module):
    """The same cell in plain PyTorch."""

    def __init__(self, inputs, hidden, classes):
        super().__init__()
        for k, v in init_params(inputs, hidden).items():
            self.register_parameter(k, torch.nn.Parameter(v))
        self.hidden = hidden
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, seq):
        n, H = seq.shape[0], self.hidden
        h = seq.new_zeros(n, H)
        c = seq.new_zeros(n, H)
        for t in range(seq.shape[1]):
            wx, uh = seq[:, t] @ self.W, h @ self.U
            g = self.alpha * wx * uh + self.b1 * wx + self.b2 * uh + self.b
            gi, gf, gu, go = g.split(H, 1)
            c = torch.sigmoid(gf) * c + torch.sigmoid(gi) * torch.tanh(gu)
            h = torch.sigmoid(go) * torch.tanh(c)
        return self.head(h)


def digits():
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32) / 16.0  # [1797, 8, 8]: 8 rows of 8
    y = torch.tensor(d.target)
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(x), generator=g)
    x, y = x[perm], y[perm]
    return (x[:1440], y[:1440]), (x[1440:], y[1440:])


def train(model, data, test, epochs, batch, lr=1e-2):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    (x, y), (xt, yt) = data, test
    losses, step_ms = [], []
    g = torch.Generator().manual_seed(1)
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        for s in range(0, len(x), batch):  # the last batch is smaller
            idx = perm[s:s + batch]
            t0 = time.perf_counter()
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            loss.backward()
            opt.step()
            step_ms.append(1e3 * (time.perf_counter() - t0))
            losses.append(loss.item())
    with torch.no_grad():
        accuracy = (model(xt).argmax(1) == yt).float().mean().item()
    return losses, step_ms, accuracy


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--plot", default="")
    p.add_argument("--compile", action="store_true")
    p.add_argument("--sequence", action="store_true")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    data, test = digits()
    torch.manual_seed(0)
    # dynamic="N": the batch size is compiled once (the first batch's); the
    # last, smaller batch of an epoch and the 357 test rows run in chunks of
    # it instead of compiling again (docs/pytorch.md, "A dynamic batch").
    # (Not for neo-seq: its unrolled op's tuned compile takes ~2 s, and the
    # step times below depend on when it arrives, not on the batch.)
    models = {"neo": NeoMILSTM(8, args.hidden, 10, options="threads=%d" % args.threads,
                               dynamic="N"),
              "pytorch": TorchMILSTM(8, args.hidden, 10)}
    models["pytorch"].head.load_state_dict(models["neo"].head.state_dict())
    if args.sequence:
        models["neo-seq"] = NeoMILSTMSeq(8, args.hidden, 10, 8,
                                         options="threads=%d" % args.threads)
        models["neo-seq"].head.load_state_dict(models["neo"].head.state_dict())
    if args.compile:
        models["neo+compile"] = torch.compile(models.pop("neo"))
        models["pytorch+compile"] = torch.compile(models["pytorch"])
    results = {}
    for name, model in models.items():
        results[name] = train(model, data, test, args.epochs, args.batch)
        losses, ms, acc = results[name]
        steady = sorted(ms[len(ms) // 2:])[len(ms) // 4]
        print("%-16s loss %.3f -> %.3f  test accuracy %.3f  step %.2f ms (median of the "
              "second half)" % (name, losses[0], sum(losses[-10:]) / 10, acc, steady))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 3.5))
        for name, (losses, _, acc) in results.items():
            ax.plot(losses, label="%s (test accuracy %.3f)" % (name, acc), linewidth=1)
        ax.set_xlabel("step (batch %d)" % args.batch)
        ax.set_ylabel("cross-entropy")
        ax.set_title("MI-LSTM on digits rows, H=%d" % args.hidden)
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print("wrote", args.plot)


if __name__ == "__main__":
    main()
