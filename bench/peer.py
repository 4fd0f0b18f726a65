"""One benchmark peer in its own process: PyTorch eager, torch.compile or JAX.

    <venv>/bin/python bench/peer.py --system eager|compile|jax --threads N

Run by bench/run.py with the venv's python (scripts/bench-env.sh); it sets
OMP_NUM_THREADS and friends, XLA_FLAGS and the CPU affinity before it starts
this. Reads one JSON command a line on stdin and answers one JSON line each
(on the process's original stdout; anything the libraries print goes to
stderr):

    {"op": "sgemm", "a": A.npy, "b": B.npy, "out": DIR}
    {"op": "train", "label": ..., "inputs": [npy...], "dys": [npy...],
     "step": bool, "out": DIR}     -> outputs and gradients as DIR/<i>.npy
    {"op": "time", "reps": N}      -> median ms of the last set-up case, and
                                      process CPU time / wall time of the loop
    {"op": "quit"}

A training case returns the outputs, then the gradient of every input, for
the output adjoints `dys` (what neo's f_fwdbwd returns); a `step` (the MLP)
returns the weights after one SGD step (lr 0.01) instead."""
import argparse
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


class Torch:
    def __init__(self, threads, compiled):
        import torch
        self.torch = torch
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:
            pass
        self.compiled = compiled
        self.versions = {"torch": torch.__version__,
                         "torch_threads": torch.get_num_threads()}
        import re
        cfg = torch.__config__.show()
        blas = re.search(r"BLAS_INFO=(\w+)", cfg)
        self.versions["torch_blas"] = "BLAS %s%s" % (
            blas.group(1) if blas else "?", ", oneDNN" if "USE_MKLDNN=ON" in cfg else "")

    def sgemm(self, a, b):
        torch = self.torch
        ta, tb = torch.from_numpy(a), torch.from_numpy(b)
        return lambda: torch.mm(ta, tb), lambda: [torch.mm(ta, tb).numpy()]

    def train(self, label, xs, dys, step):
        torch = self.torch
        import models
        _, _, ref = {lab: build for lab, _, build in models.TRAINING}[label]()
        if self.compiled:
            torch._dynamo.reset()
            ref = torch.compile(ref)

        def make():
            # A training step differentiates the weights (inputs 2..) only.
            ts = [torch.tensor(x, requires_grad=not step or i >= 2) for i, x in enumerate(xs)]
            ds = [torch.tensor(d) for d in dys]
            opt = torch.optim.SGD(ts[2:], lr=0.01) if step else None

            def run():
                for t in ts:
                    t.grad = None
                o = ref(*ts)
                o = o if isinstance(o, tuple) else (o,)
                torch.autograd.backward(o, ds)
                if opt:
                    opt.step()
                return o
            return ts, run

        # Results from a fresh copy (the timed one drifts under SGD).
        ts, run = make()

        def results():
            o = run()
            if step:
                return [t.detach().numpy().copy() for t in ts[2:]]
            return ([y.detach().numpy() for y in o] +
                    [(t.grad if t.grad is not None else torch.zeros_like(t)).numpy() for t in ts])
        _, timed = make()
        return timed, results


class Jax:
    def __init__(self, threads):
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", "cpu")
        self.jax, self.jnp = jax, jnp
        import jaxlib
        self.versions = {"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                         "jax_devices": str(jax.devices())}

    def sgemm(self, a, b):
        jax, jnp = self.jax, self.jnp
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        f = jax.jit(jnp.matmul)
        return (lambda: f(ja, jb).block_until_ready()), (lambda: [np_(f(ja, jb))])

    def train(self, label, xs, dys, step):
        jax, jnp = self.jax, self.jnp
        import models
        import models_jax
        _, fn, _ = {lab: build for lab, _, build in models.TRAINING}[label]()
        f = models_jax.REFS[fn]
        n = len(xs)
        jxs = [jnp.asarray(x) for x in xs]
        jds = [jnp.asarray(d) for d in dys]
        if step:
            def sgd(*ps):
                _, g = jax.value_and_grad(f, argnums=tuple(range(2, n)))(*ps)
                return [p - 0.01 * gi for p, gi in zip(ps[2:], g)]
            g = jax.jit(sgd)

            def run():
                return jax.block_until_ready(g(*jxs))

            def results():
                return [np_(y) for y in run()]
        else:
            def loss(*args):
                o = f(*args[:n])
                o = o if isinstance(o, tuple) else (o,)
                return sum(jnp.vdot(y, d) for y, d in zip(o, args[n:])), o
            g = jax.jit(jax.value_and_grad(loss, argnums=tuple(range(n)), has_aux=True))

            def run():
                return jax.block_until_ready(g(*jxs, *jds))

            def results():
                (_, o), grads = run()
                return [np_(y) for y in o] + [np_(y) for y in grads]
        return run, results


def np_(x):
    import numpy as np
    return np.asarray(x)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--system", required=True, choices=["eager", "compile", "jax"])
    parser.add_argument("--threads", type=int, required=True)
    args = parser.parse_args()
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)

    def reply(**kw):
        proto.write(json.dumps(kw) + "\n")

    import numpy as np
    try:
        peer = Jax(args.threads) if args.system == "jax" else Torch(args.threads,
                                                                     args.system == "compile")
    except Exception as e:  # noqa: BLE001
        reply(ok=False, error="%s: %s" % (type(e).__name__, e))
        return 1
    versions = dict(peer.versions, numpy=np.__version__, python=sys.version.split()[0])
    reply(ok=True, versions=versions, affinity=sorted(os.sched_getaffinity(0)))
    run = None
    for line in sys.stdin:
        cmd = json.loads(line)
        try:
            if cmd["op"] == "quit":
                break
            if cmd["op"] == "time":
                times = []
                cpu0, wall0 = time.process_time(), time.perf_counter()
                for _ in range(cmd["reps"]):
                    t0 = time.perf_counter()
                    run()
                    times.append((time.perf_counter() - t0) * 1e3)
                cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
                reply(ok=True, ms=median(times), times=times, cpu_s=cpu, wall_s=wall,
                      cores=cpu / wall if wall > 0 else float("nan"))
                continue
            if cmd["op"] == "sgemm":
                run, results = peer.sgemm(np.load(cmd["a"]), np.load(cmd["b"]))
            elif cmd["op"] == "train":
                run, results = peer.train(cmd["label"], [np.load(p) for p in cmd["inputs"]],
                                          [np.load(p) for p in cmd["dys"]], cmd["step"])
            else:
                raise ValueError("unknown op %r" % cmd["op"])
            t0 = time.perf_counter()
            outs = results()  # the first call compiles (torch.compile, jax.jit)
            first_ms = (time.perf_counter() - t0) * 1e3
            os.makedirs(cmd["out"], exist_ok=True)
            paths = []
            for i, y in enumerate(outs):
                paths.append(os.path.join(cmd["out"], "%d.npy" % i))
                np.save(paths[-1], np.asarray(y, dtype=np.float32))
            run()  # warm up the timed copy
            reply(ok=True, outputs=paths, first_ms=first_ms)
        except Exception as e:  # noqa: BLE001
            run = None
            reply(ok=False, error="%s: %s" % (type(e).__name__, e),
                  trace=traceback.format_exc()[-2000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
