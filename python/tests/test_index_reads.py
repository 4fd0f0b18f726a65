"""Index tensors (i32/i64) and reads through their values: embeddings,
integer labels, CSR sparse-dense products, masked pooling. Every forward
result is checked against numpy, compiled and interpreted; every gradient
against a numpy reference (repeated indices accumulate), torch autograd in
float64, and float64 finite differences; bad index data is a NeoError naming
the read and the value, with the outputs left untouched."""
import numpy as np
import pytest

import neo

SRC = """
def embed(E: f64[20, 8], tok: i32[12], w: f64[8]) -> y {
  y[n, d] = E[tok[n], d] * w[d]
}
def xent(X: f64[6, 5], label: i64[6]) -> loss {
  lse[n] = log(sum(c) exp(X[n, c]))
  loss = sum(n) (lse[n] - X[n, label[n]]) / 6
}
def spmm(rowptr: i32[7], col: i32[15], val: f64[15], X: f64[9, 4]) -> Y {
  Y[i < 6, f] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]
}
def pool(x: f64[3, 5, 2], len: i32[3]) -> y {
  y[b, d] = sum(t) select(t < len[b], x[b, t, d], 0)
}
def shifted(E: f64[20, 8], tok: i32[12]) -> y {
  y[n, d] = E[tok[n] + 1, d] pad -1 + tok[n] * 0.5
}
def bag(E: f64[20, 8], idx: i32[10], offsets: i32[5]) -> y {
  y[b < 4, d] = sum(j in offsets[b] .. offsets[b + 1]) E[idx[j], d]
}
"""

RNG = np.random.default_rng(7)
E = RNG.standard_normal((20, 8))
W = RNG.standard_normal(8)
# Repeated tokens: their gradients must accumulate.
TOK = np.array([3, 0, 19, 3, 3, 7, 11, 0, 19, 5, 3, 2], np.int32)
X = RNG.standard_normal((6, 5))
LABEL = np.array([4, 0, 2, 2, 1, 3], np.int64)
# A CSR matrix 6x9 with an empty row and a repeated column.
ROWPTR = np.array([0, 3, 3, 6, 10, 12, 15], np.int32)
COL = np.array([0, 4, 8, 1, 1, 2, 3, 5, 7, 8, 0, 6, 2, 4, 8], np.int32)
VAL = RNG.standard_normal(15)
XS = RNG.standard_normal((9, 4))
XP = RNG.standard_normal((3, 5, 2))
LEN = np.array([5, 0, 3], np.int32)
# EmbeddingBag (sum mode): bags of 4, 0, 5 and 1 ids, with repeats.
IDX = np.array([1, 5, 5, 19, 0, 3, 3, 3, 7, 2], np.int32)
OFFSETS = np.array([0, 4, 4, 9, 10], np.int32)


def csr_dense():
    a = np.zeros((6, 9))
    for i in range(6):
        for e in range(ROWPTR[i], ROWPTR[i + 1]):
            a[i, COL[e]] += VAL[e]
    return a


def reference(name):
    if name == "embed":
        return (E[TOK] * W,)
    if name == "xent":
        lse = np.log(np.exp(X).sum(1))
        return (np.array((lse - X[np.arange(6), LABEL]).sum() / 6),)
    if name == "spmm":
        return (csr_dense() @ XS,)
    if name == "pool":
        mask = np.arange(5)[None, :, None] < LEN[:, None, None]
        return ((XP * mask).sum(1),)
    if name == "bag":
        return (np.stack([E[IDX[OFFSETS[b]:OFFSETS[b + 1]]].sum(0) for b in range(4)]),)
    if name == "shifted":
        idx = TOK + 1
        rows = np.where((idx >= 0)[:, None] & (idx < 20)[:, None], E[np.clip(idx, 0, 19)], -1.0)
        return (rows + TOK[:, None] * 0.5,)


INPUTS = {"embed": (E, TOK, W), "xent": (X, LABEL), "spmm": (ROWPTR, COL, VAL, XS),
          "pool": (XP, LEN), "shifted": (E, TOK), "bag": (E, IDX, OFFSETS)}


@pytest.fixture(scope="module")
def module():
    return neo.Module.from_source(SRC, name="index.neo")


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_forward_matches_numpy(module, name):
    f = module.compile(name)
    ref = reference(name)
    got = f(*INPUTS[name])
    got = got if isinstance(got, tuple) else (got,)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    interp = module.interpret(name, *INPUTS[name])
    interp = interp if isinstance(interp, tuple) else (interp,)
    for g, r in zip(interp, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def numpy_grads(name, dy):
    """The vector-Jacobian product, written independently of Neo."""
    if name == "embed":
        dE = np.zeros_like(E)
        np.add.at(dE, TOK, dy * W)          # repeated tokens accumulate
        return [dE, (dy * E[TOK]).sum(0)]
    if name == "xent":
        p = np.exp(X) / np.exp(X).sum(1, keepdims=True)
        p[np.arange(6), LABEL] -= 1
        return [p * dy / 6]
    if name == "spmm":
        dval = np.array([dy[i] @ XS[COL[e]] for i in range(6)
                         for e in range(ROWPTR[i], ROWPTR[i + 1])])
        return [dval, csr_dense().T @ dy]
    if name == "pool":
        mask = np.arange(5)[None, :, None] < LEN[:, None, None]
        return [np.broadcast_to(dy[:, None, :], XP.shape) * mask]
    if name == "bag":
        dE = np.zeros_like(E)
        for b in range(4):
            np.add.at(dE, IDX[OFFSETS[b]:OFFSETS[b + 1]], dy[b])
        return [dE]
    if name == "shifted":
        dE = np.zeros_like(E)
        idx = TOK + 1
        ok = (idx >= 0) & (idx < 20)
        np.add.at(dE, idx[ok], dy[ok])
        return [dE]


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_gradients_match_numpy_and_finite_differences(module, name):
    ref = reference(name)
    dy = [np.random.default_rng(1).standard_normal(np.shape(r)) for r in ref]
    g = neo.grad(module, name)
    out = g(*INPUTS[name], *dy)
    grads = list(out[len(ref):])
    expected = numpy_grads(name, dy[0])
    assert len(grads) == len(expected)
    for a, b in zip(grads, expected):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    ok, report = module.gradcheck(name, probes=6)
    assert ok, report


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    m = neo.Module.from_source(SRC, name="index.neo")
    # Embedding: torch.nn.functional.embedding's backward (repeated ids).
    e = torch.tensor(E, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    y = torch.nn.functional.embedding(torch.tensor(TOK, dtype=torch.long), e) * w
    dy = np.random.default_rng(2).standard_normal(y.shape)
    y.backward(torch.tensor(dy))
    out = neo.grad(m, "embed")(E, TOK, W, dy)
    np.testing.assert_allclose(out[1], e.grad.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out[2], w.grad.numpy(), rtol=1e-12, atol=1e-12)
    # Cross-entropy against integer labels.
    x = torch.tensor(X, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(x, torch.tensor(LABEL))
    loss.backward()
    out = neo.grad(m, "xent")(X, LABEL, np.array(1.0))
    np.testing.assert_allclose(out[0], loss.item(), rtol=1e-12)
    np.testing.assert_allclose(out[1], x.grad.numpy(), rtol=1e-10, atol=1e-12)
    # SpMM: torch.sparse.mm of the COO form (duplicates summed), gradient
    # for the dense operand.
    rows = np.repeat(np.arange(6), np.diff(ROWPTR))
    a = torch.sparse_coo_tensor(torch.tensor(np.stack([rows, COL]), dtype=torch.long),
                                torch.tensor(VAL), size=(6, 9))
    xs = torch.tensor(XS, requires_grad=True)
    ys = torch.sparse.mm(a, xs)
    dy = np.random.default_rng(3).standard_normal((6, 4))
    ys.backward(torch.tensor(dy))
    out = neo.grad(m, "spmm")(ROWPTR, COL, VAL, XS, dy)
    np.testing.assert_allclose(out[0], ys.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out[2], xs.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_csr_gradient_skips_positions_outside_the_rows():
    """The gather-form dX inverts col within the rows (neo.invert_index with
    segments): positions before rowptr[0] or past rowptr[-1] are never read,
    whatever their column, in the gradient as in the forward."""
    m = neo.Module.from_source(SRC, name="index.neo")
    rowptr = ROWPTR.copy()
    rowptr[0], rowptr[-1] = 1, 14
    col = COL.copy()
    col[0], col[14] = -3, 99
    dy = np.random.default_rng(4).standard_normal((6, 4))
    a = np.zeros((6, 9))
    dval = np.zeros(15)
    for i in range(6):
        for e in range(rowptr[i], rowptr[i + 1]):
            a[i, col[e]] += VAL[e]
            dval[e] = dy[i] @ XS[col[e]]
    for combined in (False, True):
        out = neo.grad(m, "spmm", combined=combined)(rowptr, col, VAL, XS, dy)
        grads = out[1:] if combined else out
        np.testing.assert_allclose(grads[0], dval, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads[1], a.T @ dy, rtol=1e-12, atol=1e-12)
    # The reference interpreter computes the same gradient function.
    names = m._derived[("spmm", None)]
    interp = m.interpret(names[1], rowptr, col, VAL, XS, dy)
    np.testing.assert_allclose(interp[0], dval, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(interp[1], a.T @ dy, rtol=1e-12, atol=1e-12)


def test_embedding_gradient_with_one_token_everywhere():
    """Every position holding the same id: one bucket of the inverse holds
    them all, the others are empty (their rows of dE are 0)."""
    m = neo.Module.from_source(SRC, name="index.neo")
    tok = np.full(12, 7, np.int32)
    dy = np.random.default_rng(5).standard_normal((12, 8))
    out = neo.grad(m, "embed", combined=False)(E, tok, W, dy)
    expected = np.zeros_like(E)
    expected[7] = (dy * W).sum(0)
    np.testing.assert_allclose(out[0], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("interpret", [False, True])
def test_out_of_range_index_is_an_error(module, interpret):
    bad = TOK.copy()
    bad[4] = 20
    if interpret:
        with pytest.raises(neo.NeoError, match=r"index out of range: index #0 of read #0 is 20 "
                                               r"but the dim has size 20 at iteration point \(4, 0\)"):
            module.interpret("embed", E, bad, W)
        return
    f = module.compile("embed")
    out = np.full((12, 8), 7.0)
    with pytest.raises(neo.NeoError, match=r"index out of range in 'embed': index\.neo:3:3: "
                                           r"index #0 of read #0 \('E', dim size 20\) is 20 at "
                                           r"iteration point \(d0=4\); nothing was computed"):
        f(E, bad, W, out=[out])
    assert (out == 7.0).all()               # no partial output
    neg = TOK.copy()
    neg[0] = -1
    with pytest.raises(neo.NeoError, match=r"is -1 at iteration point \(d0=0\)"):
        f(E, neg, W)


def test_checks_skipped_only_for_unchanged_index_values(module):
    # The runtime skips the checks of a call whose index inputs equal, byte
    # for byte, those of the last call whose checks passed (a CSR over a
    # training loop). An index changed in place in the same array, or a new
    # array, is checked again; so is the array that failed once.
    f = module.compile("spmm")
    rowptr, col = ROWPTR.copy(), COL.copy()
    want = f(rowptr, col, VAL, XS)
    for _ in range(3):
        np.testing.assert_array_equal(f(rowptr, col, VAL, XS), want)
    out = np.full((6, 4), 7.0)
    col[3] = 9  # in place: X has 9 rows
    with pytest.raises(neo.NeoError, match=r"is 9 at iteration point"):
        f(rowptr, col, VAL, XS, out=[out])
    assert (out == 7.0).all()
    with pytest.raises(neo.NeoError, match=r"is 9 at iteration point"):
        f(rowptr, col, VAL, XS)
    col[3] = COL[3]
    np.testing.assert_array_equal(f(rowptr, col, VAL, XS), want)
    rowptr[2] = 20  # past the nonzeros
    with pytest.raises(neo.NeoError, match=r"is 20 at iteration point"):
        f(rowptr, col, VAL, XS)
    np.testing.assert_array_equal(f(ROWPTR.copy(), COL.copy(), VAL, XS), want)
    # Other float inputs do not matter to the checks.
    np.testing.assert_allclose(f(ROWPTR, COL, 2 * VAL, XS), 2 * want, rtol=1e-12)


def test_labels_and_csr_columns_are_checked(module):
    xent = module.compile("xent")
    with pytest.raises(neo.NeoError, match=r"index #1 of read #1 \('X', dim size 5\) is 5"):
        xent(X, np.array([4, 0, 2, 5, 1, 3], np.int64))
    # i64 values must fit in [-2^31, 2^31 - 1] (they index through int64 arithmetic).
    with pytest.raises(neo.NeoError, match=r"the value of index read #0 \('label', which must "
                                           r"lie in \[-2\^31, 2\^31 - 1\]\) is 1099511627776"):
        xent(X, np.array([0, 0, 2 ** 40, 0, 0, 0], np.int64))
    spmm = module.compile("spmm")
    col = COL.copy()
    col[7] = 9
    with pytest.raises(neo.NeoError, match=r"index #0 of read #1 \('X', dim size 9\) is 9 at "
                                           r"iteration point \(d0=3, d2=7\)"):
        spmm(ROWPTR, col, VAL, XS)
    # A column outside every row's range is never read: not an error.
    rowptr = ROWPTR.copy()
    rowptr[-1] = 14
    col = COL.copy()
    col[14] = 99
    got = spmm(rowptr, col, VAL, XS)
    np.testing.assert_allclose(got[:5], reference("spmm")[0][:5], rtol=1e-12)


def test_padded_reads_are_not_checked(module):
    tok = TOK.copy()
    tok[1] = 19                              # tok + 1 = 20: reads the pad value
    f = module.compile("shifted")
    y = f(E, tok)
    assert (y[1] == -1 + 19 * 0.5).all()


def test_signature_reports_index_dtypes(module):
    f = module.compile("embed")
    assert [(n, d) for n, d, _ in f.inputs] == [("E", np.float64), ("tok", np.int32),
                                                ("w", np.float64)]


def test_bad_row_pointers_are_errors(module):
    """A CSR range must satisfy 0 <= rowptr[i] <= rowptr[i + 1] <= nnz."""
    spmm = module.compile("spmm")
    decreasing = ROWPTR.copy()
    decreasing[2] = 1                        # row 1 would be [3, 1)
    with pytest.raises(neo.NeoError, match=r"the length \(upper - lower bound\) of the range "
                                           r"of d2 \(extent 15\) is -2 at iteration point "
                                           r"\(d0=1\)"):
        spmm(decreasing, COL, VAL, XS)
    with pytest.raises(neo.NeoError, match=r"the range of d2 is \[3, 1\) but it must lie in "
                                           r"\[0, 15\] with lower <= upper"):
        module.interpret("spmm", decreasing, COL, VAL, XS)
    past_end = ROWPTR.copy()
    past_end[-1] = 16
    with pytest.raises(neo.NeoError, match=r"the upper bound of the range of d2 \(extent 15\) "
                                           r"is 16 at iteration point \(d0=5\)"):
        spmm(past_end, COL, VAL, XS)
    negative = ROWPTR.copy()
    negative[0] = -1
    with pytest.raises(neo.NeoError, match=r"the lower bound of the range of d2 \(extent 15\) "
                                           r"is -1 at iteration point \(d0=0\)"):
        spmm(negative, COL, VAL, XS)


def test_lookup_of_a_computed_table_fused_and_checked():
    # neo-eqsat-fuse inlines the table into the checked lookup that reads it
    # (one kernel reading E through tok): the result is the table's row, and
    # an id out of range is still an error with nothing computed.
    m = neo.Module.from_source("""def table(E: f32[100, 16], tok: i32[8]) -> y {
  E2[v, d] = 2.0 * E[v, d] + 1.0
  y[n, d] = E2[tok[n], d]
}""", name="table.neo")
    f = m.compile("table")
    rng = np.random.default_rng(3)
    e = rng.standard_normal((100, 16)).astype(np.float32)
    tok = np.array([1, 2, 3, 99, 0, 5, 5, 7], np.int32)
    np.testing.assert_allclose(f(e, tok), 2 * e[tok] + 1, rtol=1e-6)
    for bad in (100, -1):
        tok[3] = bad
        with pytest.raises(neo.NeoError, match="is %d at iteration point" % bad):
            f(e, tok)
