#!/usr/bin/python3
"""Train an MLP with a custom activation and layer normalization on
scikit-learn's digits, entirely with Neo: the model and Adam are neo
functions, the gradient comes from neo-autodiff, and compilation overlaps
training (the first steps run a quickly compiled version while the tuned one
compiles in the background).

    /usr/bin/python3 examples/train_digits.py [--epochs N] [--no-overlap]
        [--plot digits_loss.png] [--compare-torch]
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

import neo  # noqa: E402
from neo.overlap import HotFunction  # noqa: E402
import digits_model as dm  # noqa: E402

BATCH = 64


class Trainer:
    def __init__(self, params, lr=1e-2, overlap=True):
        t0 = time.perf_counter()
        self.params = {k: v.copy() for k, v in params.items()}
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0
        self.lr = lr
        model = neo.Module.from_source(dm.model_source(BATCH), name="digits.neo")
        model.run_pipeline("neo-autodiff{function=digits wrt=2,3,4,5,6,7}")
        evaluator = neo.Module.from_source(dm.model_source(360), name="eval.neo")
        kw = {} if overlap else {"background": False}
        make = (lambda mod, name: HotFunction(mod, name, **kw)) if overlap else \
            (lambda mod, name: mod.compile(name))
        self.step_fn = make(model, "digits_fwdbwd")
        self.adam = {}
        for k, v in self.params.items():
            mod = neo.Module.from_source(dm.adam_source(v.shape, "adam"), name="adam.neo")
            self.adam[k] = make(mod, "adam")
        self.eval_fn = evaluator.compile("digits")
        self.setup_seconds = time.perf_counter() - t0

    def all_tuned(self):
        fns = [self.step_fn] + list(self.adam.values())
        return all(getattr(f, "swapped", None) is None or f.swapped.is_set() for f in fns)

    def step(self, x, t):
        args = [x, t] + [self.params[k] for k in dm.PARAMS]
        loss, logits, *grads = self.step_fn(*args, np.float32(1.0), np.zeros((BATCH, 10), np.float32))
        self.t += 1
        step_size = np.float32(self.lr / (1 - 0.9 ** self.t))
        bc2 = np.float32(np.sqrt(1 - 0.999 ** self.t))
        for k, g in zip(dm.PARAMS, grads):
            self.params[k], self.m[k], self.v[k] = self.adam[k](
                self.params[k], g, self.m[k], self.v[k], step_size, bc2)
        return float(loss)

    def accuracy(self, x, y):
        args = [x, dm.labels(y)] + [self.params[k] for k in dm.PARAMS]
        _, logits = self.eval_fn(*args)
        return float((logits.argmax(1) == y).mean())


def batches(x, y, epoch, seed=0):
    order = np.random.default_rng(seed + epoch).permutation(len(x))
    for b in range(len(x) // BATCH):
        idx = order[b * BATCH:(b + 1) * BATCH]
        yield x[idx], dm.labels(y[idx])


def progress(epoch, epochs, step, loss, acc=None):
    width = 30
    done = int(width * (epoch + 1) / epochs)
    bar = "#" * done + "." * (width - done)
    extra = "  test accuracy %.3f" % acc if acc is not None else ""
    sys.stderr.write("\r[%s] epoch %d/%d step %d loss %.4f%s" % (bar, epoch + 1, epochs, step,
                                                               loss, extra))
    sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--no-overlap", action="store_true",
                        help="compile the tuned kernels before the first step")
    parser.add_argument("--plot", default="digits_loss.png")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()

    xtr, ytr, xte, yte = dm.load_digits()
    trainer = Trainer(dm.init_params(), lr=args.lr, overlap=not args.no_overlap)
    losses, step_times, tuned_flags = [], [], []
    first_step = None
    start = time.perf_counter() - trainer.setup_seconds
    for epoch in range(args.epochs):
        for x, t in batches(xtr, ytr, epoch):
            s0 = time.perf_counter()
            tuned = trainer.all_tuned()
            loss = trainer.step(x, t)
            step_times.append(time.perf_counter() - s0)
            tuned_flags.append(tuned)
            if first_step is None:
                first_step = time.perf_counter() - start
            losses.append(loss)
        if not args.quiet:
            progress(epoch, args.epochs, len(losses), losses[-1],
                     trainer.accuracy(xte, yte) if epoch == args.epochs - 1 else None)
    total = time.perf_counter() - start
    if not args.quiet:
        sys.stderr.write("\n")
    acc = trainer.accuracy(xte, yte)
    tuned_steps = [t for t, f in zip(step_times, tuned_flags) if f]
    quick_steps = [t for t, f in zip(step_times, tuned_flags) if not f]
    print("final loss %.4f, test accuracy %.4f" % (losses[-1], acc))
    print("%s: time to first step %.3f s, %d steps in %.3f s; median step %.3f ms with the "
          "tuned kernels (%d steps)%s"
          % ("compiled tuned kernels first" if args.no_overlap else "overlapped", first_step,
             len(losses), total, 1e3 * float(np.median(tuned_steps)) if tuned_steps else 0,
             len(tuned_steps),
             ", %.3f ms before they arrived (%d steps)" % (1e3 * float(np.median(quick_steps)),
                                                          len(quick_steps))
             if quick_steps else ""))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(losses)
        ax.set_xlabel("step")
        ax.set_ylabel("training loss")
        ax.set_yscale("log")
        ax.set_title("neo: digits MLP (test accuracy %.1f%%)" % (100 * acc))
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print("wrote %s" % args.plot)
    return 0 if acc >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
