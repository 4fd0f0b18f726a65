"""A DLRM-like training step (examples/dlrm.py's model: bottom MLP, two
EmbeddingBag tables in sum mode, top MLP, binary cross-entropy; forward and
the gradients of every parameter, tables included) in Neo against PyTorch
eager (nn.functional.embedding_bag) and torch.compile of the same step, one
and two threads, side by side.

    /usr/bin/python3 bench/dlrm.py [--batch 2048] [--vocab 100000,50000]
        [--ids 40960,20480] [--rounds 20] [--repeats 3] [--out docs/dlrm-benchmarks.md]

Each system runs in its own process (this script re-invokes itself with
--one), pinned to its threads with taskset and told the count; the cores
used (CPU time / wall time) are reported. PyTorch comes from the bench venv
(scripts/bench-env.sh). Neo's loss and gradients are compared with PyTorch
eager's (float32, same weights, same batch) before anything is timed.
"""
import argparse
import json
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "python"))

import sidebyside  # noqa: E402
import spmm  # noqa: E402

SYSTEMS = ["neo", "torch", "torch.compile"]


def one(system, threads, args):
    import dlrm
    dlrm.configure(args.batch, [int(v) for v in args.vocab.split(",")],
                   [int(v) for v in args.ids.split(",")])
    p = dlrm.init(0)
    # Steps cycle through 4 batches: new ids every step, as in training (Neo's
    # index checks run every step; the same ids again would skip them).
    data = list(dlrm.batches(4, seed=2))
    t0 = time.perf_counter()
    res = {"step": 0}

    def batch():
        res["batch"] = data[res["step"] % len(data)]
        res["step"] += 1
        return res["batch"]
    if system == "neo":
        model = dlrm.NeoDLRM(options="threads=%d" % threads)

        def run():
            res["out"] = model.loss_and_grads(p, *batch())
        run()
        compile_s = time.perf_counter() - t0
        got = lambda: [np.asarray(res["out"][0])] + [res["out"][1][k]  # noqa: E731
                                                     for k in dlrm.PARAMS]
    else:
        import torch
        torch.set_num_threads(threads)
        model = dlrm.TorchDLRM(p)

        def step(x, bags, y):
            for v in model.params.values():
                v.grad = None
            loss = model.loss(x, bags, y)
            loss.backward()
            return loss
        if system == "torch.compile":
            step = torch.compile(step)

        def run():
            res["out"] = step(*batch())
        run()
        compile_s = time.perf_counter() - t0
        got = lambda: [res["out"].detach().numpy()] + [  # noqa: E731
            model.params[k].grad.numpy() for k in dlrm.PARAMS]
    ms, cores = spmm.time_it(run, args.rounds)
    err = -1.0
    if system == "neo" and args.check:
        import torch  # noqa: F401 (the check runs PyTorch eager in this process)
        t = dlrm.TorchDLRM(p)
        loss = t.loss(*res["batch"])  # the batch of the last timed step
        loss.backward()
        ref = [loss.detach().numpy()] + [t.params[k].grad.numpy() for k in dlrm.PARAMS]
        err = max(float(np.abs(np.asarray(g) - r).max() / max(1e-30, np.abs(r).max()))
                  for g, r in zip(got(), ref))
    print(json.dumps({"ms": ms, "cores": cores, "err": err, "compile_s": compile_s}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--vocab", default="100000,50000")
    ap.add_argument("--ids", default="40960,20480")
    sidebyside.add_run_options(ap, rounds=20)
    ap.add_argument("--check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--one", nargs=2, metavar=("SYSTEM", "THREADS"))
    args = ap.parse_args()
    if args.one:
        return one(args.one[0], int(args.one[1]), args)
    venv = spmm.VENV_PY if os.path.exists(spmm.VENV_PY) else sys.executable

    def command(system, threads):
        # Neo runs under the venv's Python too: its check needs PyTorch.
        return [venv, os.path.abspath(__file__), "--one", system, str(threads),
                "--batch", str(args.batch), "--vocab", args.vocab, "--ids", args.ids,
                "--rounds", str(args.rounds)] + (["--check"] if system == "neo" else [])
    runs = sidebyside.run_processes(SYSTEMS, args, command)
    model, isa = spmm.cpu_model()
    lines = ["# DLRM-like training step", "",
             "Machine: %s, %s, %d cores. examples/dlrm.py's model at batch %d, tables of %s "
             "rows (16 wide), %s ids per batch in bags of varying size (Zipf ids), f32; a "
             "step is the forward, the loss and the gradients of all parameters." % (
                 model, isa, os.cpu_count(), args.batch, args.vocab, args.ids), "",
             "Command: `/usr/bin/python3 bench/dlrm.py --batch %d --vocab %s --ids %s "
             "--rounds %d --repeats %d --out %s`" % (args.batch, args.vocab, args.ids,
                                                      args.rounds, args.repeats, args.out), "",
             "Each system ran in %d processes, alternated; a process times the median of %d "
             "steps after a warm-up step (which compiles); the steps cycle through 4 batches "
             "(new ids every step, as in training: Neo's index checks run every step). Neo's "
             "loss and gradients are "
             "checked against PyTorch eager's (max error relative to each tensor's largest "
             "value, column 'error')." % (args.repeats, args.rounds), "",
             "| threads | system | ms | this / neo | cores | error | compile s | all ms |",
             "|---|---|---|---|---|---|---|---|"]
    for threads in sorted({t for t, _ in runs}):
        med = {system: sidebyside.median_process(runs[(threads, system)]) for system in SYSTEMS}
        for system in SYSTEMS:
            r = med[system]
            lines.append("| %d | %s | %.2f | %.2f | %.2f | %s | %.2f | %s |" % (
                threads, system, r["ms"], r["ms"] / med["neo"]["ms"], r["cores"],
                "%.1e" % r["err"] if r["err"] >= 0 else "", r["compile_s"],
                ", ".join("%.2f" % x for x in r["all_ms"])))
    sidebyside.write_report(lines, args.out)


if __name__ == "__main__":
    main()
