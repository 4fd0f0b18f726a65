"""neo.torch: Neo functions as PyTorch autograd ops. Every result is checked
against PyTorch's own ops, every gradient by finite differences in float64
(torch.autograd.gradcheck) and against PyTorch's autograd."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import neo  # noqa: E402
import neo.torch as nt  # noqa: E402

# The sanitizer suite (scripts/sanitize.sh) preloads the ASan runtime into
# this interpreter. There the tests that only repeat Python glue over many
# compilations or processes (every benchmark model, the two DDP runs) are
# skipped: they would add minutes to CI, and the Release suite runs them.
under_asan = pytest.mark.skipif("libclang_rt.asan" in __import__("os").environ.get(
    "LD_PRELOAD", ""), reason="slow under ASan; covered by the Release suite")

from torch_layer import close, layer_ref, layer_source  # noqa: E402


def randn(*shape, dtype=torch.float64, grad=True):
    return torch.randn(*shape, dtype=dtype).requires_grad_(grad)


def only(op):
    (inst,) = op._instances.values()
    return inst


def test_layer_gradcheck_and_reference():
    torch.manual_seed(0)
    op = nt.op(layer_source("f64"))
    x, w, b = randn(8, 16), randn(16, 32), randn(32)
    assert torch.autograd.gradcheck(op, (x, w, b))
    y, yr = op(x, w, b), layer_ref(x, w, b)
    assert close(y, yr, 1e-12)
    g = torch.randn_like(y)
    for a, r in zip(torch.autograd.grad(y, (x, w, b), g),
                    torch.autograd.grad(yr, (x, w, b), g)):
        assert close(a, r, 1e-12)


def test_float32_in_a_torch_model_trains_like_torch():
    # A two-layer model whose first layer is Neo's: the same losses as the
    # same model in PyTorch, step by step, with SGD.
    torch.manual_seed(1)
    op = nt.op(layer_source("f32"))
    w = torch.nn.Parameter(torch.randn(16, 32) * 0.2)
    b = torch.nn.Parameter(torch.zeros(32))
    head = torch.nn.Linear(32, 4)
    wr, br = torch.nn.Parameter(w.detach().clone()), torch.nn.Parameter(b.detach().clone())
    head_r = torch.nn.Linear(32, 4)
    head_r.load_state_dict(head.state_dict())
    opt = torch.optim.SGD([w, b, *head.parameters()], lr=0.1)
    opt_r = torch.optim.SGD([wr, br, *head_r.parameters()], lr=0.1)
    x, t = torch.randn(8, 16), torch.randint(0, 4, (8,))
    for _ in range(5):
        for o in (opt, opt_r):
            o.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(op(x, w, b)), t)
        loss_r = torch.nn.functional.cross_entropy(head_r(layer_ref(x, wr, br)), t)
        loss.backward()
        loss_r.backward()
        assert abs(loss.item() - loss_r.item()) < 1e-5
        assert close(w.grad, wr.grad, 1e-5) and close(b.grad, br.grad, 1e-5)
        opt.step()
        opt_r.step()


def test_softmax_cross_entropy_and_multiple_outputs():
    torch.manual_seed(2)
    src = """
def stats(x: f64[4, 10]) -> (p, lse) {
  m[i] = max(j) x[i, j]
  z[i] = sum(j) exp(x[i, j] - m[i])
  p[i, j] = exp(x[i, j] - m[i]) / z[i]
  lse[i] = m[i] + log(z[i])
}"""
    op = nt.op(src)
    x = randn(4, 10)
    assert torch.autograd.gradcheck(op, (x,))
    p, lse = op(x)
    assert close(p, torch.softmax(x, 1), 1e-12)
    assert close(lse, torch.logsumexp(x, 1), 1e-12)
    # Only one output used: the other's gradient is zero.
    (g,) = torch.autograd.grad(lse.sum(), x)
    assert close(g, torch.softmax(x, 1), 1e-12)


def test_convolution_against_conv2d():
    torch.manual_seed(3)
    src = """
def conv(I: f64[2, 3, 6, 6], W: f64[4, 3, 3, 3]) -> O {
  O[n, k, p < 6, q < 6] = sum(c, r, s) I[n, c, p + r - 1, q + s - 1] * W[k, c, r, s]
}"""
    op = nt.op(src)
    i, w = randn(2, 3, 6, 6), randn(4, 3, 3, 3)
    assert torch.autograd.gradcheck(op, (i, w))
    o, r = op(i, w), torch.nn.functional.conv2d(i, w, padding=1)
    assert close(o, r, 1e-12)
    g = torch.randn_like(o)
    for a, b in zip(torch.autograd.grad(o, (i, w), g), torch.autograd.grad(r, (i, w), g)):
        assert close(a, b, 1e-12)


def test_saved_values_bounded_by_max_saved_bytes():
    src = layer_source("f64")
    free, bounded = nt.op(src), nt.op(src, max_saved_bytes=0)
    assert only(free).num_saved == 1  # h (8x32 f64); tanh(h) is recomputed
    assert only(bounded).num_saved == 0
    torch.manual_seed(4)
    x, w, b = randn(8, 16), randn(16, 32), randn(32)
    y1, y2 = free(x, w, b), bounded(x, w, b)
    g = torch.randn_like(y1)
    for a, c in zip(torch.autograd.grad(y1, (x, w, b), g), torch.autograd.grad(y2, (x, w, b), g)):
        assert close(a, c, 1e-12)
    with pytest.raises(ValueError, match="max_saved_bytes"):
        nt.op(src, max_saved_bytes=-1)


def test_wrt_and_inputs_without_grad():
    torch.manual_seed(5)
    src = layer_source("f64")
    op = nt.op(src, wrt=[1])  # only w
    x, w, b = randn(8, 16), randn(16, 32), randn(32)
    y = op(x, w, b)
    gx, gw, gb = torch.autograd.grad(y.sum(), (x, w, b), allow_unused=True)
    assert gx is None and gb is None
    (rw,) = torch.autograd.grad(layer_ref(x, w, b).sum(), (w,))
    assert close(gw, rw, 1e-12)
    # Inputs that do not require grad get none; no graph at all is fine too.
    full = nt.op(src)
    x2 = randn(8, 16, grad=False)
    y = full(x2, w, b)
    (gw2,) = torch.autograd.grad(y.sum(), (w,))
    assert close(gw2, torch.autograd.grad(layer_ref(x2, w, b).sum(), (w,))[0], 1e-12)
    with torch.no_grad():
        assert not full(x2, w, b).requires_grad


def test_backward_computes_only_the_gradients_autograd_asks_for():
    torch.manual_seed(6)
    src = layer_source("f64")
    op = nt.op(src)  # x, w, b all differentiable
    x, w, b = randn(8, 16, grad=False), randn(16, 32), randn(32)
    # gradcheck differentiates w.r.t. w and b only: finite differences check
    # the variant's f_fwd/f_bwd pair themselves.
    assert torch.autograd.gradcheck(op, (x, w, b))
    gw, gb = torch.autograd.grad(op(x, w, b).sum(), (w, b))
    rw, rb = torch.autograd.grad(layer_ref(x, w, b).sum(), (w, b))
    assert close(gw, rw, 1e-12) and close(gb, rb, 1e-12)
    # That pair was differentiated w.r.t. (w, b): its f_bwd returns two
    # gradients, where the op's own returns three.
    assert list(op._variants) == [((), (1, 2))]
    (variant,) = op._variants.values()
    assert variant.grad_of == [1, 2] and only(op).grad_of == [0, 1, 2]
    # All inputs requiring grad, or none (no graph), run the op's own pair.
    x.requires_grad_(True)
    gx, gw2 = torch.autograd.grad(op(x, w, b).sum(), (x, w))
    assert close(gx, torch.autograd.grad(layer_ref(x, w, b).sum(), (x,))[0], 1e-12)
    assert close(gw2, rw, 1e-12) and len(op._variants) == 1
    with torch.no_grad():
        assert close(op(x, w, b), layer_ref(x, w, b), 1e-12)
    assert len(op._variants) == 1
    # Each set of inputs needing a gradient gets its pair once.
    for _ in range(2):
        (gx2,) = torch.autograd.grad(op(x, w.detach(), b.detach()).sum(), (x,))
        assert close(gx2, gx, 1e-12)
    assert sorted(k[1] for k in op._variants) == [(0,), (1, 2)]
    # skip_unneeded_grads=False: always the op's own pair.
    full = nt.op(src, skip_unneeded_grads=False)
    (gw3,) = torch.autograd.grad(full(x.detach(), w, b).sum(), (w,))
    assert close(gw3, rw, 1e-12) and not full._variants
    # With wrt: the variants are subsets of it.
    some = nt.op(src, wrt=[0, 1])
    (gw4,) = torch.autograd.grad(some(x.detach(), w, b).sum(), (w,))
    assert close(gw4, rw, 1e-12) and list(some._variants) == [((), (1,))]


def test_non_contiguous_inputs_and_zero_copy_outputs():
    torch.manual_seed(6)
    op = nt.op(layer_source("f64"))
    xt = randn(16, 8)
    x = xt.t()  # a transposed view
    assert not x.is_contiguous()
    w, b = randn(16, 32), randn(32)
    y = op(x, w, b)
    assert close(y, layer_ref(x, w, b), 1e-12)
    (g,) = torch.autograd.grad(y.sum(), (xt,))
    assert close(g, torch.autograd.grad(layer_ref(x, w, b).sum(), (xt,))[0], 1e-12)
    assert y.is_contiguous() and y.dtype == torch.float64


def test_bad_calls_are_clear_errors():
    op = nt.op(layer_source("f32"))
    x, w, b = torch.randn(8, 16), torch.randn(16, 32), torch.randn(32)
    with pytest.raises(neo.NeoError, match=r"takes 3 tensors \(x, w, b\) but 2 were given"):
        op(x, w)
    with pytest.raises(neo.NeoError, match=r"argument #0 \('x'\) of 'layer' has dtype "
                                           r"torch.float64 but the signature says torch.float32"):
        op(x.double(), w, b)
    with pytest.raises(neo.NeoError, match=r"argument #1 \('w'\) of 'layer' has shape "
                                           r"\(16, 31\) but the signature says \(16, 32\)"):
        op(x, w[:, :31], b)
    with pytest.raises(TypeError, match="must be a torch.Tensor, not ndarray"):
        op(x.numpy(), w, b)
    with pytest.raises(neo.NeoError, match="no function named 'nope'"):
        nt.op(layer_source("f32"), "nope")
    with pytest.raises(neo.NeoError, match="layer.neo|<python>.neo"):
        nt.op("def layer(x: f32[4]) -> y {\n  y[i] = x[i] +\n}")
    with pytest.raises(TypeError, match="neo.torch.op takes"):
        nt.op(42)


def test_double_backward_is_refused():
    op = nt.op(layer_source("f64"))
    x, w, b = randn(8, 16), randn(16, 32), randn(32)
    y = op(x, w, b)
    (g,) = torch.autograd.grad((y * y).sum(), (w,), create_graph=True)
    with pytest.raises(RuntimeError, match="once_differentiable|twice|no autograd formula"):
        g.sum().backward()


def test_module_parameters_state_dict_and_to():
    torch.manual_seed(7)
    m = nt.Module(layer_source("f32"), parameters=["w", "b"])
    assert [n for n, _ in m.named_parameters()] == ["w", "b"]
    assert m.w.shape == (16, 32) and m.b.shape == (32,)
    assert torch.count_nonzero(m.b) == 0 and m.w.abs().max() > 0
    x = torch.randn(8, 16)
    y = m(x)
    assert close(y, layer_ref(x, m.w, m.b), 1e-5)
    y.sum().backward()
    assert m.w.grad is not None and m.b.grad is not None
    m2 = nt.Module(layer_source("f32"), parameters=["w", "b"],
                   init={"w": torch.nn.init.ones_})
    assert torch.all(m2.w == 1)
    m2.load_state_dict(m.state_dict())
    assert torch.equal(m2(x), m(x).detach())
    m2.reset_parameters()
    assert torch.all(m2.w == 1)
    m.to("cpu")  # no change: fine
    with pytest.raises(neo.NeoError, match="parameter 'w' became torch.float64"):
        m.double()
    with pytest.raises(neo.NeoError, match=r"takes 1 tensors \(x\) but 2 were given"):
        m2(x, x)
    with pytest.raises(neo.NeoError, match="no input named 'v'"):
        nt.Module(layer_source("f32"), parameters=["v"])


def _bench_models():
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
    import models as m
    return {
        "conv2d": lambda: m.conv2d(2, 3, 4, 6), "depthwise": lambda: m.depthwise(2, 3, 6),
        "lstm": lambda: m.lstm(8, 4, 6), "mi_lstm": lambda: m.mi_lstm(8, 4, 6),
        "sub_lstm": lambda: m.sub_lstm(8, 4, 6), "scrnn": lambda: m.scrnn(8, 4, 6, 4),
        "layernorm": lambda: m.layernorm(4, 16), "softmax": lambda: m.softmax(4, 16),
        "mlp": lambda: m.mlp(4, (12, 8, 8, 3)), "capsule": lambda: m.capsule(2, 2, 2, 3),
        "shift": lambda: m.shift_conv(2, 9, 4, 5),
    }


@under_asan
@pytest.mark.parametrize("model", sorted(_bench_models()))
def test_benchmark_models_against_pytorch(model):
    # Every forward+backward benchmark, small, in float32: the outputs and
    # every input's gradient against PyTorch's ops and autograd.
    src, name, ref = _bench_models()[model]()
    op = nt.op(src, name)
    torch.manual_seed(8)
    args = [torch.randn(s, dtype=d).mul_(0.5).requires_grad_() for _, d, s in op.inputs]
    y, yr = op(*args), ref(*args)
    y = y if isinstance(y, tuple) else (y,)
    yr = yr if isinstance(yr, tuple) else (yr,)
    gs = [torch.randn_like(t) for t in yr]
    for a, r in zip(y, yr):
        assert close(a, r.reshape(a.shape), 1e-4), model
    ga = torch.autograd.grad(y, args, [g.reshape(a.shape) for g, a in zip(gs, y)])
    gr = torch.autograd.grad(yr, args, gs)
    for (n, _, _), a, r in zip(op.inputs, ga, gr):
        assert close(a, r, 1e-4), (model, n)


def test_backward_reading_an_output():
    # f_bwd takes the result y itself (no second copy saved).
    src = """
def sq(x: f64[4, 8]) -> (y, q) {
  y[i] = sum(j) x[i, j] * x[i, j]
  q[i] = y[i] * y[i]
}"""
    op = nt.op(src)
    assert ("output", 0) in only(op).bwd_args and only(op).num_saved == 0
    torch.manual_seed(9)
    x = randn(4, 8)
    assert torch.autograd.gradcheck(op, (x,))
    y, q = op(x)
    yr = (x * x).sum(1)
    assert close(y, yr, 1e-12) and close(q, yr * yr, 1e-12)


SIZED = """
def layer(x: f64[N, K], w: f64[K, H], b: f64[H]) -> y {
  h[i, j] = sum(k) x[i, k] * w[k, j] + b[j]
  a[i, j] = tanh(h[i, j])
  y[i, j] = a[i, j] * a[i, j] + relu(h[i, j])
}"""


def test_size_parameters_compile_once_per_shape():
    op = nt.op(SIZED)
    assert op.size_parameters == ["H", "K", "N"] and not op._instances
    torch.manual_seed(10)
    w, b = randn(16, 32), randn(32)
    for n in (8, 3, 8):
        x = randn(n, 16)
        assert torch.autograd.gradcheck(op, (x, w, b))
        y = op(x, w, b)
        assert y.shape == (n, 32) and close(y, layer_ref(x, w, b), 1e-12)
    # N=8 and N=3 (gradcheck's calls reuse them): two compilations.
    assert sorted(dict(k)["N"] for k in op._instances) == [3, 8]
    with pytest.raises(neo.NeoError, match="size K is 16 from 'x' but 15 from 'w'"):
        op(randn(4, 16), randn(15, 32), b)
    with pytest.raises(neo.NeoError, match=r"argument #0 \('x'\) of 'layer' has shape \(16,\) "
                                           r"but the signature says \(N, K\)"):
        op(randn(16), w, b)
    with pytest.raises(neo.NeoError, match="size N must be positive"):
        op(randn(0, 16), w, b)


def test_module_with_size_parameters_takes_any_batch():
    torch.manual_seed(11)
    m = nt.Module(SIZED.replace("f64", "f32"), parameters=["w", "b"], sizes={"K": 16, "H": 32})
    assert m.w.shape == (16, 32)
    for n in (5, 7):
        x = torch.randn(n, 16)
        assert close(m(x), layer_ref(x, m.w, m.b), 1e-5)
    with pytest.raises(neo.NeoError, match=r"parameter 'w' has shape \(K, H\): give "
                                           r"sizes=\{'H': ...\}"):
        nt.Module(SIZED, parameters=["w"], sizes={"K": 16})


def test_signatures_without_importing():
    (sig,) = neo.signatures(SIZED)
    assert sig["name"] == "layer"
    assert [(p["name"], p["dtype"], p["shape"]) for p in sig["params"]] == [
        ("x", "f64", ["N", "K"]), ("w", "f64", ["K", "H"]), ("b", "f64", ["H"])]
    assert sig["results"] == [{"name": "y"}]
    with pytest.raises(neo.NeoError, match=r"<python>.neo:1:14: error: expected a dimension size or a size parameter"):
        neo.signatures("def f(x: f32[) -> y {}")
    with pytest.raises(neo.NeoError, match="size parameter 'N' of parameter 'x' has no value"):
        neo.Module.from_source(SIZED)
    m = neo.Module.from_source(SIZED, sizes={"N": 2, "K": 3, "H": 4})
    f = m.compile()
    assert [s for _, _, s in f.inputs] == [(2, 3), (3, 4), (4,)]
    with pytest.raises(ValueError, match="size N must be a positive integer"):
        neo.Module.from_source(SIZED, sizes={"N": 0})


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _example(*args, env=None):
    import os
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "torch_ddp.py")
    return subprocess.Popen([sys.executable, script, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


@under_asan
def test_distributed_data_parallel_matches_one_process():
    # Two processes with torch.distributed (gloo) and DDP around a model with
    # a Neo cell: the parameters stay equal across ranks and equal those of
    # one process trained on the whole batches.
    p = _example("--world-size", "2", "--steps", "8", "--check", "--port", str(_free_port()))
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0, out
    assert "parameter spread across ranks 0.00e+00" in out, out
    assert "largest parameter difference" in out, out


@under_asan
def test_distributed_ranks_from_the_environment():
    # What a multi-machine run does (torchrun's variables), here with both
    # ranks on this machine.
    import os
    port = str(_free_port())
    procs = []
    for rank in range(2):
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE="2")
        procs.append(_example("--rank-from-env", "--steps", "4", env=env))
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert "parameter spread across ranks 0.00e+00" in outs[0], outs


def test_overlap_quick_version_first_then_tuned():
    torch.manual_seed(12)
    src = layer_source("f32")
    x, w, b = torch.randn(8, 16), randn(16, 32, dtype=torch.float32), randn(32, dtype=torch.float32)
    op = nt.op(src)  # overlap=True: returns before the tuned version is ready
    y0 = op(x, w, b)
    (g0,) = torch.autograd.grad(y0.sum(), (w,), retain_graph=True)
    assert op.wait(120) and only(op).tuned.is_set()
    y1 = op(x, w, b)
    (g1,) = torch.autograd.grad(y1.sum(), (w,))
    assert close(y1, y0, 1e-5) and close(g1, g0, 1e-5)
    assert close(y1, layer_ref(x, w, b), 1e-5)
    # A forward run by the quick version and its backward by the tuned one
    # (the swap between them) agree too: y0's graph is still alive.
    (g_mixed,) = torch.autograd.grad(y0.sum(), (w,))
    assert close(g_mixed, g0, 1e-5)
    eager = nt.op(src, overlap=False)
    assert only(eager).tuned.is_set() and eager.wait(0)
    # Options that the tuned compilation rejects: the quick version keeps
    # running, and wait() says why.
    bad = nt.op(src, options="bogus=1")
    assert close(bad(x, w, b), y1, 1e-5)
    with pytest.raises(neo.NeoError, match="tuned compilation of 'layer' failed.*bogus"):
        bad.wait(120)


def test_concurrent_calls_from_threads():
    import threading
    op = nt.op(SIZED)
    torch.manual_seed(13)
    w, b = randn(16, 32), randn(32)
    errors = []

    def work(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            for step in range(6):
                n = 3 + (seed + step) % 3  # three shapes, compiled concurrently
                x = torch.randn(n, 16, generator=g, dtype=torch.float64).requires_grad_()
                y = op(x, w, b)
                gx, gw = torch.autograd.grad(y.sum(), (x, w))
                rx, rw = torch.autograd.grad(layer_ref(x, w, b).sum(), (x, w))
                assert close(y, layer_ref(x, w, b), 1e-12)
                assert close(gx, rx, 1e-12) and close(gw, rw, 1e-12)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(op._instances) == 3


def test_device_error():
    op = nt.op(layer_source("f32"))
    x = torch.empty(8, 16, device="meta")
    with pytest.raises(neo.NeoError, match=r"argument #0 \('x'\) of 'layer' is on meta: "
                                           r"neo.torch runs on the CPU"):
        op(x, torch.randn(16, 32), torch.randn(32))


def test_openmp_workers_do_not_spin_inside_pytorch():
    # neo.torch makes libomp's workers sleep right after a parallel region
    # (KMP_BLOCKTIME=0), unless the user chose a value.
    import os
    import subprocess
    import sys
    code = "import neo.torch, os; print(os.environ['KMP_BLOCKTIME'])"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    env.pop("KMP_BLOCKTIME", None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"
    env["KMP_BLOCKTIME"] = "5"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "5"


@under_asan
def test_whole_sequence_op_matches_pytorch():
    # examples/torch_milstm.py's MI-LSTM unrolled over the sequence in one op.
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "examples"))
    import torch_milstm as tm
    # Finite differences in float64 through the unrolled op (3 steps); x
    # needs no gradient, so this runs the pair for the parameters alone.
    torch.manual_seed(8)
    op = nt.op(tm.sequence_source(3, 4, 3, "f64"), overlap=False)
    x = torch.rand(2, 3, 3, dtype=torch.float64)
    params = [p.double().requires_grad_() for p in tm.init_params(3, 4).values()]
    params[2] = (params[2] + 0.1 * torch.randn(16, dtype=torch.float64)).detach().requires_grad_()
    assert torch.autograd.gradcheck(op, (x, *params))
    # The float32 model against the same model in PyTorch: loss and every
    # parameter's gradient.
    m = tm.NeoMILSTMSeq(8, 16, 10, 5, overlap=False)
    ref = tm.TorchMILSTM(8, 16, 10)
    ref.head.load_state_dict(m.head.state_dict())
    xs, ys = torch.rand(6, 5, 8), torch.randint(0, 10, (6,))
    loss = torch.nn.functional.cross_entropy(m(xs), ys)
    want = torch.nn.functional.cross_entropy(ref(xs), ys)
    loss.backward()
    want.backward()
    assert abs(loss.item() - want.item()) <= 1e-5 * abs(want.item())
    for n in tm.PARAMS:
        assert close(getattr(m.cell, n).grad, getattr(ref, n).grad, 1e-5), n
    assert close(m.head.weight.grad, ref.head.weight.grad, 1e-5)


def test_dynamic_batch_compiles_once_for_every_batch_size():
    # N dynamic: compiled for the first batch (8 rows); 3, 21 and 1 rows run
    # in chunks of 8 (the last padded), results and gradients exact.
    op = nt.op(SIZED, dynamic="N", overlap=False)
    torch.manual_seed(12)
    w, b = randn(16, 32), randn(32)
    for n in (8, 3, 21, 8, 1):
        x = randn(n, 16)
        y = op(x, w, b)
        assert y.shape == (n, 32) and close(y, layer_ref(x, w, b), 1e-12)
        g = torch.randn_like(y)
        got = torch.autograd.grad(y, (x, w, b), g)
        want = torch.autograd.grad(layer_ref(x, w, b), (x, w, b), g)
        for a, r in zip(got, want):
            assert a.shape == r.shape and close(a, r, 1e-10)
    # Finite differences in float64 through the chunks (11 = 8 + 3 padded).
    assert torch.autograd.gradcheck(op, (randn(11, 16), w, b))
    assert [dict(k)["N"] for k in op._instances] == [8]
    # Only x needs a gradient: a pair without dw and db, still at 8 rows.
    x = randn(13, 16)
    (gx,) = torch.autograd.grad(op(x, w.detach(), b.detach()).sum(), (x,))
    (rx,) = torch.autograd.grad(layer_ref(x, w, b).sum(), (x,))
    assert close(gx, rx, 1e-10)
    assert {dict(k[0])["N"] for k in op._variants} == {8}


def test_dynamic_batch_with_a_given_chunk_and_index_inputs():
    # An embedding lookup with a dynamic batch of token ids, chunks of 4:
    # the padded ids are copies of real ones; E's gradient sums the chunks.
    op = nt.op("""def embed(E: f64[V, D], tok: i64[B], w: f64[D]) -> y {
  y[b, d] = E[tok[b], d] * w[d]
}""", dynamic={"B": 4}, overlap=False)
    torch.manual_seed(13)
    e, w = randn(11, 5), randn(5)
    for n in (6, 4, 9):
        tok = torch.randint(0, 11, (n,))
        tok[1] = tok[0]  # repeated ids accumulate
        y = op(e, tok, w)
        yr = e[tok] * w
        assert close(y, yr, 1e-12)
        g = torch.randn_like(y)
        for a, r in zip(torch.autograd.grad(y, (e, w), g), torch.autograd.grad(yr, (e, w), g)):
            assert close(a, r, 1e-10)
    assert [dict(k)["B"] for k in op._instances] == [4]


def test_dynamic_batch_errors():
    with pytest.raises(neo.NeoError, match="'layer' has no size parameter 'M' to make dynamic"):
        nt.op(SIZED, dynamic="M")
    with pytest.raises(ValueError, match="must be a positive integer"):
        nt.op(SIZED, dynamic={"N": 0})
    # Rows that mix along N: the first call says where.
    mixing = nt.op("""def center(x: f64[N, K]) -> y {
  y[i, k] = x[i, k] - x[0, k]
}""", dynamic="N", overlap=False)
    with pytest.raises(neo.NeoError, match=r"size parameter 'N' of 'center' cannot be dynamic: "
                                           r".*reads the batch dim of its operand #1 at 0"):
        mixing(randn(4, 3))
    loss = nt.op("""def total(x: f64[N, K]) -> s {
  s[k] = sum(i) x[i, k]
}""", dynamic="N", overlap=False)
    with pytest.raises(neo.NeoError, match=r"sums over the batch dim of its operand #0"):
        loss(randn(4, 3))


def test_dynamic_batch_of_large_rows():
    # Rows of 2M elements: the check binds the batch to a small prime, so the
    # probe module stays under the importer's 2^40 elements.
    op = nt.op("""def f(x: f32[B, 2048, 1024]) -> y {
  y[b, t, d] = x[b, t, d] * 2.0
}""", dynamic={"B": 1}, overlap=False)
    x = torch.randn(2, 2048, 1024)
    assert torch.equal(op(x), x * 2.0)


def test_dynamic_batch_dim_not_first():
    # The batch is dim 1 of the result (a transpose): chunks are put back
    # together along it, and the gradient along x's dim 0.
    op = nt.op("""def t(x: f64[B, 3]) -> y {
  y[d, b] = 2.0 * x[b, d]
}""", dynamic={"B": 4}, overlap=False)
    x = randn(10, 3)
    y = op(x)
    assert y.shape == (3, 10) and close(y, 2.0 * x.t(), 1e-12)
    assert torch.autograd.gradcheck(op, (x,))
