"""The layer both neo.torch test files use, its PyTorch reference, and the
tolerance check (test_torch.py, test_torch_compile.py)."""
import torch

# {t}: the element type; {n}: the batch dim (a size or a size parameter).
LAYER_TEMPLATE = """
def layer(x: {t}[{n}, 16], w: {t}[16, 32], b: {t}[32]) -> y {{
  h[i, j] = sum(k) x[i, k] * w[k, j] + b[j]
  a[i, j] = tanh(h[i, j])
  y[i, j] = a[i, j] * a[i, j] + relu(h[i, j])
}}"""


def layer_source(t, n=8):
    return LAYER_TEMPLATE.format(t=t, n=n)


def layer_ref(x, w, b):
    h = x @ w + b
    a = torch.tanh(h)
    return a * a + torch.relu(h)


def close(a, b, tol):
    return (a - b).abs().max().item() <= tol * (1 + b.abs().max().item())
