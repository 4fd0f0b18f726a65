"""The DLRM-like example (examples/dlrm.py): a bottom MLP, two EmbeddingBag
tables over CSR bags and a top MLP trained with BCE trains like the same
model in PyTorch (nn.functional.embedding_bag, sum mode), step by step, and
its table gradients are gathers (no scatter form is left in the gradient)."""
import os

import numpy as np
import pytest

import dlrm

under_asan = pytest.mark.skipif("libclang_rt.asan" in os.environ.get("LD_PRELOAD", ""),
                                reason="slow under ASan; covered by the Release suite")


@under_asan
def test_dlrm_trains_like_pytorch():
    pytest.importorskip("torch")
    losses, _ = dlrm.train_neo(40, 0.1)
    ref = dlrm.train_torch(40, 0.1)
    np.testing.assert_allclose(losses, ref, rtol=1e-4)
    assert np.mean(losses[-10:]) < np.mean(losses[:10])


def test_gradients_match_pytorch():
    """One step's gradients of every parameter, tables included, against
    PyTorch's (embedding_bag accumulates repeated ids; empty bags add
    nothing)."""
    pytest.importorskip("torch")
    model = dlrm.NeoDLRM()
    p = dlrm.init(3)
    x, bags, y = next(dlrm.batches(1, seed=5))
    _, grads = model.loss_and_grads(p, x, bags, y)
    t = dlrm.TorchDLRM(p)
    t.loss(x, bags, y).backward()
    for k in dlrm.PARAMS:
        np.testing.assert_allclose(grads[k], t.params[k].grad.numpy(), rtol=2e-4, atol=1e-6,
                                   err_msg=k)


def test_gradient_has_no_scatter_form():
    import neo
    sizes = {"B": dlrm.B, "B1": dlrm.B + 1, "DENSE": dlrm.DENSE, "HID": dlrm.HID,
             "DIM": dlrm.DIM, "V0": dlrm.VOCAB[0], "V1": dlrm.VOCAB[1], "L0": dlrm.IDS[0],
             "L1": dlrm.IDS[1]}
    m = neo.Module.from_source(dlrm.SOURCE, name="dlrm.neo", sizes=sizes)
    m.run_pipeline("neo-autodiff{function=dlrm wrt=3,6}")
    text = str(m)
    # One inverse per table (the ids inverted within their bags) in each of
    # dlrm_fwdbwd and dlrm_grad, and no scatter (a reduction pinned to the
    # ids, `where ... == 0` over the whole batch of ids) for the tables.
    assert text.count("neo.invert_index of") == 4
    assert text.count("segments") == 4
