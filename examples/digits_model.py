"""The digits model of examples/train_digits.py, written with neo's DSL:
an MLP with layer normalization and a learnable-slope swish activation
(a(n) = n * sigmoid(beta * n), beta learned per unit), softmax cross-entropy
against the integer class labels (`logits[i, t[i]]`, a read through index
values: no one-hot matrix), and Adam written as neo functions. Also its
PyTorch twin, for comparison."""
import numpy as np

from neo import dsl

HIDDEN = 128


def model_source(batch, features=64, hidden=HIDDEN, classes=10):
    f = dsl.Function("digits")
    x = f.input("x", (batch, features))
    t = f.input("t", (batch,), dtype="i32")  # the class of each row
    w1 = f.input("w1", (features, hidden))
    b1 = f.input("b1", (hidden,))
    g = f.input("g", (hidden,))
    beta = f.input("beta", (hidden,))
    w2 = f.input("w2", (hidden, classes))
    b2 = f.input("b2", (classes,))
    i, j, k, c = dsl.vars("i j k c")
    z = f.compute("z", [i, j], dsl.sum(k, x[i, k] * w1[k, j]) + b1[j])
    mu = f.compute("mu", [i], dsl.sum(j, z[i, j]) / hidden)
    var = f.compute("var", [i], dsl.sum(j, (z[i, j] - mu[i]) * (z[i, j] - mu[i])) / hidden)
    n = f.compute("n", [i, j], (z[i, j] - mu[i]) / dsl.sqrt(var[i] + 1e-5) * g[j])
    a = f.compute("a", [i, j], n[i, j] * dsl.sigmoid(beta[j] * n[i, j]))
    logits = f.compute("logits", [i, c], dsl.sum(j, a[i, j] * w2[j, c]) + b2[c])
    m = f.compute("m", [i], dsl.max(c, logits[i, c]))
    lse = f.compute("lse", [i], m[i] + dsl.log(dsl.sum(c, dsl.exp(logits[i, c] - m[i]))))
    f.compute("loss", [], dsl.sum(i, (lse[i] - logits[i, t[i]]) / batch))
    f.output(dsl.Tensor("loss", ()), logits)
    return f.source()


def adam_source(shape, name, beta1=0.9, beta2=0.999, eps=1e-8):
    """w, g, m, v, step (= lr / (1 - beta1^t)), bc2 (= sqrt(1 - beta2^t)) ->
    w', m', v', exactly as torch.optim.Adam computes them."""
    f = dsl.Function(name)
    w = f.input("w", shape)
    g = f.input("g", shape)
    m = f.input("m", shape)
    v = f.input("v", shape)
    step = f.input("step", ())
    bc2 = f.input("bc2", ())
    idx = dsl.vars(" ".join("i%d" % d for d in range(len(shape))))
    idx = idx if isinstance(idx, list) else [idx]
    m2 = f.compute("m2", idx, beta1 * m[tuple(idx)] + (1 - beta1) * g[tuple(idx)])
    v2 = f.compute("v2", idx, beta2 * v[tuple(idx)] + (1 - beta2) * g[tuple(idx)] * g[tuple(idx)])
    w2 = f.compute("w2", idx, w[tuple(idx)] - step[()] * m2[tuple(idx)] /
                   (dsl.sqrt(v2[tuple(idx)]) / bc2[()] + eps))
    f.output(w2, m2, v2)
    return f.source()


def init_params(seed=0, features=64, hidden=HIDDEN, classes=10):
    rng = np.random.default_rng(seed)
    f32 = np.float32
    return {
        "w1": (rng.standard_normal((features, hidden)) / np.sqrt(features)).astype(f32),
        "b1": np.zeros(hidden, f32),
        "g": np.ones(hidden, f32),
        "beta": np.ones(hidden, f32),
        "w2": (rng.standard_normal((hidden, classes)) / np.sqrt(hidden)).astype(f32),
        "b2": np.zeros(classes, f32),
    }


PARAMS = ["w1", "b1", "g", "beta", "w2", "b2"]


def torch_model(params):
    import torch

    p = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}

    def loss_fn(x, t):
        z = x @ p["w1"] + p["b1"]
        mu = z.mean(1, keepdim=True)
        var = ((z - mu) ** 2).mean(1, keepdim=True)
        n = (z - mu) / torch.sqrt(var + 1e-5) * p["g"]
        a = n * torch.sigmoid(p["beta"] * n)
        logits = a @ p["w2"] + p["b2"]
        return torch.nn.functional.cross_entropy(logits, t.long()), logits
    return p, loss_fn


def load_digits(seed=0):
    """scikit-learn's bundled digits (no download), split 1437 / 360."""
    from sklearn.datasets import load_digits as sk_digits
    data = sk_digits()
    x = (data.data / 16.0).astype(np.float32)
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(x))
    x, y = x[order], y[order]
    return x[:1437], y[:1437], x[1437:], y[1437:]


def labels(y):
    """The class labels as the model's `t: i32[batch]`."""
    return np.ascontiguousarray(y, dtype=np.int32)
