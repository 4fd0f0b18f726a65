"""neo.torch with PyTorch 2.4 and later: Neo functions are torch.library
custom ops with fake implementations, so torch.compile (inductor,
fullgraph=True) traces models that use them without graph breaks. Runs with
the benchmark venv's PyTorch (test/Python/torch2.test); skipped elsewhere."""
import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.library, "custom_op"):
    pytest.skip("torch.library.custom_op needs PyTorch 2.4 or later", allow_module_level=True)
import neo  # noqa: E402
import neo.torch as nt  # noqa: E402

from torch_layer import close, layer_ref, layer_source  # noqa: E402


def test_registered_as_custom_op_with_gradcheck():
    op = nt.op(layer_source("f64", "N"))
    assert op.custom_op is not None and op.custom_op.name().startswith("neo::layer_")
    torch.manual_seed(0)
    x, w, b = (torch.randn(*s, dtype=torch.float64, requires_grad=True)
               for s in ((4, 16), (16, 32), (32,)))
    assert torch.autograd.gradcheck(op, (x, w, b))
    # torch.library's own checks of the registration (schema, fake
    # implementation against the real one, autograd registration).
    for wrt in ([], [1, 2]):  # the op's own pair, and the one for w and b alone
        torch.library.opcheck(op.custom_op, ([x.detach(), w.detach(), b.detach()], wrt),
                              test_utils=("test_schema", "test_faketensor",
                                          "test_autograd_registration"))


def test_torch_compile_fullgraph_matches_eager():
    torch.manual_seed(1)
    op = nt.op(layer_source("f32", "N"))
    w = torch.nn.Parameter(torch.randn(16, 32) * 0.3)
    b = torch.nn.Parameter(torch.randn(32) * 0.1)
    head = torch.nn.Linear(32, 4)

    def loss(x, t):
        return torch.nn.functional.cross_entropy(head(op(x, w, b)), t)

    compiled = torch.compile(loss, fullgraph=True)  # a graph break is an error
    for n in (8, 5, 8):  # a second batch size recompiles (Neo and inductor)
        x, t = torch.randn(n, 16), torch.randint(0, 4, (n,))
        eager = loss(x, t)
        ge = torch.autograd.grad(eager, (w, b, head.weight))
        comp = compiled(x, t)
        gc = torch.autograd.grad(comp, (w, b, head.weight))
        assert abs(eager.item() - comp.item()) < 1e-5
        for a, c in zip(ge, gc):
            assert close(c, a, 1e-5)
        ref = torch.nn.functional.cross_entropy(head(layer_ref(x, w, b)), t)
        assert abs(ref.item() - comp.item()) < 1e-5


def test_compiled_module_trains():
    torch.manual_seed(2)
    cell = nt.Module(layer_source("f32", "N"), parameters=["w", "b"],
                     init={"w": lambda t: torch.nn.init.normal_(t, 0, 0.2)})
    model = torch.nn.Sequential(cell, torch.nn.Linear(32, 4))
    compiled = torch.compile(model, fullgraph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.2)
    g = torch.Generator().manual_seed(3)
    target = torch.randn(16, 4, generator=g)
    losses = []
    for _ in range(15):
        x = torch.randn(32, 16, generator=g)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(compiled(x), (x @ target).argmax(1))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_errors_in_eager_and_under_compile():
    op = nt.op(layer_source("f32", "N"))
    w, b = torch.randn(16, 32), torch.randn(32)
    with pytest.raises(neo.NeoError, match="has shape"):
        op(torch.randn(4, 15), w, b)
    f = torch.compile(lambda x: op(x, w, b), fullgraph=True)
    with pytest.raises(Exception, match="has dtype torch.float64 but the signature says "
                                        "torch.float32"):
        f(torch.randn(4, 16, dtype=torch.float64))


def test_dynamic_batch_under_torch_compile_compiles_once():
    # dynamic="N": the custom op's fake implementation keeps N symbolic, so
    # after torch.compile's usual second trace (the batch dim marked
    # dynamic) one graph serves every batch size, and Neo compiles once (for
    # the first batch, 8 rows; the others run in chunks of 8, the last one
    # padded). Results and gradients equal eager PyTorch's.
    torch.manual_seed(4)
    op = nt.op(layer_source("f32", "N"), dynamic="N", overlap=False)
    w = torch.nn.Parameter(torch.randn(16, 32) * 0.3)
    b = torch.nn.Parameter(torch.randn(32) * 0.1)
    head = torch.nn.Linear(32, 4)

    def loss(x, t):
        return torch.nn.functional.cross_entropy(head(op(x, w, b)), t)

    import torch._dynamo as dynamo
    dynamo.reset()
    frames = []
    compiled = torch.compile(loss, fullgraph=True, backend=_counting_inductor(frames))
    for n in (8, 5, 21, 13, 8, 3):
        x, t = torch.randn(n, 16, requires_grad=True), torch.randint(0, 4, (n,))
        comp = compiled(x, t)
        gc = torch.autograd.grad(comp, (x, w, b, head.weight))
        ref = torch.nn.functional.cross_entropy(head(layer_ref(x, w, b)), t)
        gr = torch.autograd.grad(ref, (x, w, b, head.weight))
        assert abs(ref.item() - comp.item()) < 1e-5, n
        for a, c in zip(gr, gc):
            assert a.shape == c.shape and close(c, a, 1e-5), n
    sizes = [dict(k)["N"] for k in op._instances] + [dict(k[0])["N"] for k in op._variants]
    assert set(sizes) == {8}, sizes
    assert len(frames) <= 2, frames  # the static trace, then the dynamic one


def _counting_inductor(frames):
    def backend(gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx
        frames.append([tuple(t.shape) for t in example_inputs if hasattr(t, "shape")])
        return compile_fx(gm, example_inputs)
    return backend


def test_dynamic_batch_float64_gradcheck_of_the_custom_op():
    # The custom op itself with a dynamic size: forward in chunks (11 = 8 +
    # 3 padded), its registered autograd formula against finite differences,
    # and torch.library's checks of the fake implementation.
    op = nt.op(layer_source("f64", "N"), dynamic={"N": 8}, overlap=False)
    torch.manual_seed(5)
    x, w, b = (torch.randn(*s, dtype=torch.float64, requires_grad=True)
               for s in ((11, 16), (16, 32), (32,)))
    assert torch.autograd.gradcheck(lambda *a: op.custom_op(list(a), [])[0], (x, w, b))
    torch.library.opcheck(op.custom_op, ([x.detach(), w.detach(), b.detach()], []),
                          test_utils=("test_schema", "test_faketensor",
                                      "test_autograd_registration"))


def test_dynamic_batch_custom_op_with_a_transposed_weight():
    # A non-contiguous weight (a transposed view) through the dynamic custom
    # op's chunks: results and gradients equal PyTorch's.
    op = nt.op(layer_source("f64", "N"), dynamic={"N": 4}, overlap=False)
    torch.manual_seed(6)
    x = torch.randn(10, 16, dtype=torch.float64, requires_grad=True)
    wt = torch.randn(32, 16, dtype=torch.float64, requires_grad=True)
    b = torch.randn(32, dtype=torch.float64, requires_grad=True)
    y = op.custom_op([x, wt.t(), b], [])[0]
    assert close(y, layer_ref(x, wt.t(), b), 1e-12)
    g = torch.randn_like(y)
    got = torch.autograd.grad(y, (x, wt, b), g)
    want = torch.autograd.grad(layer_ref(x, wt.t(), b), (x, wt, b), g)
    for a, r in zip(got, want):
        assert close(a, r, 1e-10)

