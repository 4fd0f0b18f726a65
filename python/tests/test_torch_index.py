"""neo.torch with index tensors: embeddings (int64 token ids, as PyTorch
makes them) and CSR aggregation (int32 row pointers and columns) as autograd
ops and modules. Results and gradients are checked against PyTorch's own
ops (F.embedding, torch.sparse.mm), gradients also by finite differences in
float64 (torch.autograd.gradcheck); bad index values are NeoErrors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import neo  # noqa: E402
import neo.torch as nt  # noqa: E402

EMBED = """def embed(E: f64[V, D], tok: i64[B], w: f64[D]) -> y {
  y[b, d] = E[tok[b], d] * w[d]
}"""

SPMM = """def spmm(rowptr: i32[R], col: i32[Z], val: f64[Z], X: f64[N, F]) -> (Y: f64[N, F]) {
  Y[i, f] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]
}"""


def test_embedding_matches_pytorch():
    torch.manual_seed(0)
    op = nt.op(EMBED, overlap=False)
    e = torch.randn(11, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    tok = torch.tensor([3, 0, 10, 3, 3, 7], dtype=torch.int64)  # repeated ids
    y = op(e, tok, w)
    ref = torch.nn.functional.embedding(tok, e) * w
    assert torch.allclose(y, ref, rtol=1e-12, atol=0)
    g = torch.randn_like(y)
    got = torch.autograd.grad(y, (e, w), g)
    want = torch.autograd.grad(ref, (e, w), g)
    for a, b in zip(got, want):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)
    assert torch.autograd.gradcheck(lambda e, w: op(e, tok, w), (e, w))


def test_embedding_module_trains_like_nn_embedding():
    torch.manual_seed(1)
    m = nt.Module(EMBED, parameters=["E", "w"], sizes={"V": 20, "D": 4},
                  init={"E": torch.nn.init.normal_, "w": torch.nn.init.ones_}, overlap=False)
    ref_e = torch.nn.Parameter(m.E.detach().clone())
    ref_w = torch.nn.Parameter(m.w.detach().clone())
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD([ref_e, ref_w], lr=0.1)
    target = torch.randn(8, 4, dtype=torch.float64)
    for step in range(5):
        tok = torch.randint(0, 20, (8,), dtype=torch.int64)
        loss = ((m(tok) - target) ** 2).sum()
        ref = ((torch.nn.functional.embedding(tok, ref_e) * ref_w - target) ** 2).sum()
        assert abs(loss.item() - ref.item()) <= 1e-10 * abs(ref.item())
        for o, l in ((opt, loss), (ref_opt, ref)):
            o.zero_grad()
            l.backward()
            o.step()
    assert torch.allclose(m.E, ref_e, rtol=1e-10, atol=1e-12)


def test_csr_aggregation_matches_torch_sparse():
    torch.manual_seed(2)
    rowptr = torch.tensor([0, 2, 2, 5, 7], dtype=torch.int32)
    col = torch.tensor([1, 3, 0, 2, 3, 3, 1], dtype=torch.int32)
    val = torch.randn(7, dtype=torch.float64, requires_grad=True)
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    op = nt.op(SPMM, overlap=False)
    y = op(rowptr, col, val, x)
    rows = torch.repeat_interleave(torch.arange(4), torch.diff(rowptr.long()))
    a = torch.sparse_coo_tensor(torch.stack([rows, col.long()]), val, (4, 4))
    ref = torch.sparse.mm(a, x)
    assert torch.allclose(y, ref, rtol=1e-12, atol=1e-14)
    g = torch.randn_like(y)
    dval, dx = torch.autograd.grad(y, (val, x), g)
    ref_dx, = torch.autograd.grad(ref, (x,), g)
    assert torch.allclose(dx, ref_dx, rtol=1e-12, atol=1e-14)
    ref_dval = (g[rows] * x.detach()[col.long()]).sum(1)  # the SDDMM: dY[i] . X[col[e]]
    assert torch.allclose(dval, ref_dval, rtol=1e-12, atol=1e-14)
    assert torch.autograd.gradcheck(lambda v, x: op(rowptr, col, v, x), (val, x))


def test_bad_index_values_are_errors():
    op = nt.op(EMBED, overlap=False)
    e = torch.randn(11, 5, dtype=torch.float64, requires_grad=True)
    w = torch.ones(5, dtype=torch.float64)
    with pytest.raises(neo.NeoError, match=r"index out of range in 'embed_fwd'.*'E', dim size "
                                           r"11\) is 11 at iteration point \(d0=1\)"):
        op(e, torch.tensor([0, 11], dtype=torch.int64), w)
    with pytest.raises(neo.NeoError, match=r"'tok' of 'embed' is an index tensor: index tensors "
                                           r"are inputs, not parameters"):
        nt.Module(EMBED, parameters=["tok"], overlap=False)


def test_index_dtype_is_checked():
    op = nt.op(EMBED, overlap=False)
    e = torch.randn(11, 5, dtype=torch.float64)
    with pytest.raises(neo.NeoError, match="tok"):
        op(e, torch.tensor([0, 1], dtype=torch.int32), torch.ones(5, dtype=torch.float64))


@pytest.mark.skipif(not hasattr(torch.library, "custom_op"),
                    reason="torch.compile of Neo ops needs torch.library.custom_op (2.4+)")
def test_embedding_under_torch_compile():
    torch.manual_seed(3)
    op = nt.op(EMBED, overlap=False)
    e = torch.randn(11, 5, dtype=torch.float64, requires_grad=True)
    w = torch.randn(5, dtype=torch.float64, requires_grad=True)
    tok = torch.tensor([3, 0, 10, 3], dtype=torch.int64)

    def f(e, tok, w):
        return (op(e, tok, w) ** 2).sum()

    compiled = torch.compile(f, fullgraph=True)
    loss = compiled(e, tok, w)
    ref = ((torch.nn.functional.embedding(tok, e) * w) ** 2).sum()
    assert torch.allclose(loss, ref, rtol=1e-12)
    got = torch.autograd.grad(loss, (e, w))
    want = torch.autograd.grad(ref, (e, w))
    for a, b in zip(got, want):
        assert torch.allclose(a, b, rtol=1e-12, atol=1e-14)
