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
