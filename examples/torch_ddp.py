"""Data-parallel training of a model with a Neo operator, with PyTorch's own
distributed engine (torch.distributed + DistributedDataParallel, gloo).

    /usr/bin/python3 examples/torch_ddp.py --world-size 2 --steps 20

starts `--world-size` processes on this machine (rank 0 is also the
rendezvous, 127.0.0.1:--port); each trains on its shard of every batch and
DDP averages the gradients. Across machines, start one process per rank with
torchrun-style variables instead (MASTER_ADDR, MASTER_PORT, RANK,
WORLD_SIZE) and `--rank-from-env`. With `--check` rank 0 also trains the
same model in one process on the whole batches and exits 1 unless the
parameters agree (docs/pytorch.md).
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import neo.torch  # noqa: E402

# A new cell: a gated tanh unit whose gate and candidate share one input
# projection (researchers' kind of operator: not a stock PyTorch layer).
CELL = """
def gtu(x: f32[N, 16], w: f32[16, 32], v: f32[16, 32], b: f32[32]) -> y {
  g[i, j] = sigmoid(sum(k) x[i, k] * v[k, j])
  h[i, j] = tanh(sum(k) x[i, k] * w[k, j] + b[j])
  y[i, j] = g[i, j] * h[i, j]
}"""


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = neo.torch.Module(CELL, parameters=["w", "v", "b"],
                                     init={"w": lambda t: torch.nn.init.normal_(t, 0, 0.25),
                                           "v": lambda t: torch.nn.init.normal_(t, 0, 0.25)})
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.cell(x))


def batches(steps, batch, seed=0):
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(16, 4, generator=g)
    for _ in range(steps):
        x = torch.randn(batch, 16, generator=g)
        yield x, (x @ w).argmax(1)


def train(model, data, rank=0, world=1, lr=0.1):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for x, t in data:
        shard = slice(rank * len(x) // world, (rank + 1) * len(x) // world)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x[shard]), t[shard])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def worker(rank, world, args):
    torch.manual_seed(0)  # the same initial parameters on every rank
    torch.set_num_threads(1)
    if not args.rank_from_env:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    model = Model()
    reference = None
    if args.check and rank == 0:
        reference = Model()
        reference.load_state_dict(model.state_dict())
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    losses = train(ddp, batches(args.steps, args.batch), rank, world)
    # Every rank holds the same parameters after each step.
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    status = 0
    if rank == 0:
        spread = max((g - flat).abs().max().item() for g in gathered)
        print("ranks %d, steps %d, loss %.4f -> %.4f, parameter spread across ranks %.2e"
              % (world, args.steps, losses[0], losses[-1], spread))
        if spread > 0:
            status = 1
        if reference is not None:
            ref_losses = train(reference, batches(args.steps, args.batch))
            diff = max((p - q).abs().max().item()
                       for p, q in zip(model.parameters(), reference.parameters()))
            print("one process on the whole batches: loss %.4f -> %.4f, largest parameter "
                  "difference %.2e" % (ref_losses[0], ref_losses[-1], diff))
            if diff > 1e-5 or not ref_losses[-1] < ref_losses[0]:
                status = 1
    dist.destroy_process_group()
    if status:
        sys.exit(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--port", type=int, default=29511)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--rank-from-env", action="store_true",
                        help="one process of a multi-machine run: RANK and WORLD_SIZE from "
                             "the environment")
    args = parser.parse_args()
    if args.batch % args.world_size:
        parser.error("--batch must be a multiple of --world-size")
    if args.rank_from_env:
        worker(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)
        return
    mp.spawn(worker, args=(args.world_size, args), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
