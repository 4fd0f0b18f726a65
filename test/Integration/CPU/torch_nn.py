# RUN: %python %s | FileCheck %s
# Normalizations, losses, recurrent cells and attention against PyTorch and numpy.
import numpy as np
import torch
import torch.nn.functional as F
from neotest import run, assert_close

rng = np.random.default_rng(1)
def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)
t = torch.from_numpy

# CHECK: softmax: ok
x = rand(4, 10)
src = """def f(x: f32[4, 10]) -> y {
  y[i, j] = exp(x[i, j] - max(k) x[i, k]) / sum(k) exp(x[i, k] - max(l) x[i, l])
}"""
assert_close(run(src, "f", x=x)[0], F.softmax(t(x), 1).numpy(), what="softmax")

# CHECK: logsumexp: ok
src = """def f(x: f32[4, 10]) -> y {
  m[i] = max(j) x[i, j]
  y[i] = m[i] + log(sum(j) exp(x[i, j] - m[i]))
}"""
assert_close(run(src, "f", x=x)[0], torch.logsumexp(t(x), 1).numpy(), what="logsumexp")

# CHECK: layernorm: ok
x, g, b = rand(8, 32), rand(32), rand(32)
src = """def f(x: f32[8, 32], g: f32[32], b: f32[32]) -> y {
  mu[i] = sum(j) x[i, j] / 32
  var[i] = sum(j) (x[i, j] - mu[i]) * (x[i, j] - mu[i]) / 32
  y[i, j] = (x[i, j] - mu[i]) / sqrt(var[i] + 1e-5) * g[j] + b[j]
}"""
ref = F.layer_norm(t(x), (32,), t(g), t(b), eps=1e-5)
assert_close(run(src, "f", x=x, g=g, b=b)[0], ref.numpy(), what="layernorm")

# CHECK: batchnorm statistics: ok
x = rand(4, 3, 5, 5)
src = """def f(x: f32[4, 3, 5, 5]) -> (mean, var) {
  mean[c] = sum(n, h, w) x[n, c, h, w] / 100
  var[c] = sum(n, h, w) (x[n, c, h, w] - mean[c]) * (x[n, c, h, w] - mean[c]) / 100
}"""
mean, var = run(src, "f", x=x)
assert_close(np.concatenate([mean, var]),
             np.concatenate([x.mean((0, 2, 3)), x.var((0, 2, 3))]), what="batchnorm statistics")

# CHECK: cross-entropy: ok
x = rand(8, 5)
labels = rng.integers(0, 5, 8)
onehot = np.eye(5, dtype=np.float32)[labels]
src = """def f(x: f32[8, 5], t: f32[8, 5]) -> loss {
  m[i] = max(c) x[i, c]
  lse[i] = m[i] + log(sum(c) exp(x[i, c] - m[i]))
  loss = sum(i) (lse[i] - sum(c) t[i, c] * x[i, c]) / 8
}"""
ref = F.cross_entropy(t(x), torch.from_numpy(labels))
assert_close(run(src, "f", x=x, t=onehot)[0], ref.numpy(), what="cross-entropy")

# CHECK: lstm cell: ok
x, h, c = rand(4, 8), rand(4, 8), rand(4, 8)
W, U, b = rand(8, 32), rand(8, 32), rand(32)
src = """def f(x: f32[4, 8], h: f32[4, 8], c: f32[4, 8], W: f32[8, 32], U: f32[8, 32], b: f32[32]) -> (h2, c2) {
  g[n, j] = sum(k) x[n, k] * W[k, j] + sum(k) h[n, k] * U[k, j] + b[j]
  c2[n, j < 8] = sigmoid(g[n, 8 + j]) * c[n, j] + sigmoid(g[n, j]) * tanh(g[n, 16 + j])
  h2[n, j < 8] = sigmoid(g[n, 24 + j]) * tanh(c2[n, j])
}"""
# PyTorch orders the gates input, forget, cell, output.
cell = torch.nn.LSTMCell(8, 8)
with torch.no_grad():
    cell.weight_ih.copy_(t(W.T.copy())); cell.weight_hh.copy_(t(U.T.copy()))
    cell.bias_ih.copy_(t(b)); cell.bias_hh.zero_()
    h_ref, c_ref = cell(t(x), (t(h), t(c)))
h2, c2 = run(src, "f", x=x, h=h, c=c, W=W, U=U, b=b)
assert_close(np.concatenate([h2, c2]), np.concatenate([h_ref.numpy(), c_ref.numpy()]),
             what="lstm cell")

# CHECK: attention: ok
x = rand(8, 16)
Wq, Wk, Wv, Wo = rand(16, 16), rand(16, 16), rand(16, 16), rand(16, 16)
src = """def f(x: f32[8, 16], Wq: f32[16, 16], Wk: f32[16, 16], Wv: f32[16, 16], Wo: f32[16, 16]) -> y {
  q[i, d] = sum(e) x[i, e] * Wq[e, d]
  k[i, d] = sum(e) x[i, e] * Wk[e, d]
  v[i, d] = sum(e) x[i, e] * Wv[e, d]
  s[i, j] = sum(d) q[i, d] * k[j, d] * 0.25
  m[i] = max(j) s[i, j]
  z[i] = sum(j) exp(s[i, j] - m[i])
  o[i, d] = sum(j) exp(s[i, j] - m[i]) / z[i] * v[j, d]
  y[i, d] = sum(e) o[i, e] * Wo[e, d]
}"""
q, k, v = x @ Wq, x @ Wk, x @ Wv
p = F.softmax(t(q @ k.T * 0.25), 1).numpy()
assert_close(run(src, "f", x=x, Wq=Wq, Wk=Wk, Wv=Wv, Wo=Wo)[0], p @ v @ Wo, what="attention")

# CHECK: batched matmul and 3-way einsum: ok
A, B, C = rand(4, 16, 32), rand(4, 32, 8), rand(8, 5)
src = """def f(A: f32[4, 16, 32], B: f32[4, 32, 8], C: f32[8, 5]) -> (y, z) {
  y[b, i, j] = sum(k) A[b, i, k] * B[b, k, j]
  z[b, i, l] = sum(k, j) A[b, i, k] * B[b, k, j] * C[j, l]
}"""
y, z = run(src, "f", A=A, B=B, C=C)
assert_close(np.concatenate([y.ravel(), z.ravel()]),
             np.concatenate([(A @ B).ravel(), np.einsum("bik,bkj,jl->bil", A, B, C).ravel()]),
             what="batched matmul and 3-way einsum")
