"""The digits example: per-step losses match PyTorch (same model, same
initialization, same batches, same Adam) for the first 20 steps within 1e-4
relative, and the MLP reaches at least 95% test accuracy."""
import numpy as np
import torch

import digits_model as dm
import train_digits as td


def test_first_20_losses_match_pytorch():
    xtr, ytr, _, _ = dm.load_digits()
    params = dm.init_params(seed=3)
    trainer = td.Trainer(params, lr=1e-2, overlap=False)
    p, loss_fn = dm.torch_model(params)
    opt = torch.optim.Adam([p[k] for k in dm.PARAMS], lr=1e-2)
    neo_losses, torch_losses = [], []
    for x, t in td.batches(xtr, ytr, epoch=0):
        neo_losses.append(trainer.step(x, t))
        opt.zero_grad()
        loss, _ = loss_fn(torch.tensor(x), torch.tensor(t))
        loss.backward()
        opt.step()
        torch_losses.append(float(loss))
        if len(neo_losses) == 20:
            break
    rel = np.abs(np.array(neo_losses) - np.array(torch_losses)) / np.abs(torch_losses)
    assert rel.max() < 1e-4, list(zip(neo_losses, torch_losses))


def test_training_reaches_95_percent():
    xtr, ytr, xte, yte = dm.load_digits()
    trainer = td.Trainer(dm.init_params(), lr=1e-2, overlap=True)
    first = None
    for epoch in range(12):
        for x, t in td.batches(xtr, ytr, epoch):
            loss = trainer.step(x, t)
            first = loss if first is None else first
    assert loss < first
    assert trainer.accuracy(xte, yte) >= 0.95
