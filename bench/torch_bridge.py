"""neo.torch from PyTorch, measured: the per-call overhead of a tiny Neo op
against a torch.autograd.Function written in PyTorch, and the training step
of examples/torch_milstm.py's model (MI-LSTM on digits rows) with the Neo
cell (one op a time step; "neo-seq": the 8-step sequence unrolled in one op)
against the same model in PyTorch eager and under torch.compile.

    NEO_LIBRARY=build/lib/libNeoCAPI.so ~/.cache/neo/bench-venv/bin/python \\
        bench/torch_bridge.py --threads 1,2 [--rounds 3] [--out docs/torch-bridge-benchmarks.md]

Each configuration runs in its own process (this script re-invokes itself
with --one), with torch.set_num_threads and Neo's threads= set to the same
count; the cores used (CPU time / wall time) are printed to check it. Times
are medians over alternated rounds.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

TINY = """
def tiny(x: f32[4]) -> y {
  y[i] = 2 * x[i]
}"""


def measure(fn, repeat, rounds=5):
    fn()
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        times.append((time.perf_counter() - t0) / repeat)
    return statistics.median(times)


def one(kind, threads):
    import torch
    torch.set_num_threads(threads)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if kind in ("tiny-neo", "tiny-torch"):
        x = torch.randn(4, requires_grad=True)
        if kind == "tiny-neo":
            import neo.torch
            op = neo.torch.op(TINY, overlap=False, options="threads=1")
        else:
            class Twice(torch.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    return 2 * x

                @staticmethod
                def backward(ctx, g):
                    return 2 * g
            op = Twice.apply
        fwd = measure(lambda: op(x), 2000)
        step = measure(lambda: op(x).sum().backward(), 1000)
        result = {"forward_us": fwd * 1e6, "forward_backward_us": step * 1e6}
    else:
        import torch_milstm as tm
        torch.manual_seed(0)
        # A batch shaped like the example's (64 digits, 8 rows of 8 pixels).
        xb, yb = torch.rand(64, 8, 8), torch.randint(0, 10, (64,))
        if kind.startswith("neo-seq"):
            # The whole 8-step sequence in one Neo op (tm.sequence_source).
            model = tm.NeoMILSTMSeq(8, 64, 10, 8, options="threads=%d" % threads,
                                    overlap=False)
        elif kind.startswith("neo"):
            model = tm.NeoMILSTM(8, 64, 10, options="threads=%d" % threads, overlap=False)
        else:
            model = tm.TorchMILSTM(8, 64, 10)
        if kind.endswith("compile"):
            model = torch.compile(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)

        def step():
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            opt.step()
        for _ in range(3):
            step()  # compile, warm up
        cpu0, wall0 = time.process_time(), time.perf_counter()
        result = {"step_ms": measure(step, 20) * 1e3}
    result["cores_used"] = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    result["torch"] = torch.__version__
    print(json.dumps(result))


def report(threads, rounds):
    """The report's lines for one thread count."""
    kinds = ["tiny-neo", "tiny-torch", "neo", "torch", "neo+compile", "torch+compile", "neo-seq"]
    results = {k: [] for k in kinds}
    cpus = ",".join(str(c) for c in range(threads))
    for _ in range(rounds):
        for k in kinds:
            out = subprocess.run(["taskset", "-c", cpus, sys.executable, __file__, "--one", k,
                                  "--threads", str(threads)], capture_output=True, text=True,
                                 env=dict(os.environ, OMP_NUM_THREADS=str(threads),
                                          MKL_NUM_THREADS=str(threads)))
            if out.returncode:
                print(out.stdout, out.stderr, file=sys.stderr)
                sys.exit(1)
            results[k].append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = lambda k, f: statistics.median(r[f] for r in results[k])  # noqa: E731
    lines = ["threads %d, torch %s, %d rounds (each its own process)"
             % (threads, results["torch"][0]["torch"], rounds)]
    lines.append("tiny op call, forward: neo.torch %.1f us, torch.autograd.Function %.1f us "
                 "(+%.1f us)" % (med("tiny-neo", "forward_us"), med("tiny-torch", "forward_us"),
                                 med("tiny-neo", "forward_us") - med("tiny-torch", "forward_us")))
    lines.append("tiny op forward+backward: neo.torch %.1f us, torch.autograd.Function %.1f us "
                 "(+%.1f us)" % (med("tiny-neo", "forward_backward_us"),
                                 med("tiny-torch", "forward_backward_us"),
                                 med("tiny-neo", "forward_backward_us")
                                 - med("tiny-torch", "forward_backward_us")))
    for k in ("neo", "neo-seq", "torch", "neo+compile", "torch+compile"):
        lines.append("MI-LSTM H64 B64 T8 training step, %-14s %7.2f ms  (cores used %.2f)"
                     % (k, med(k, "step_ms"), med(k, "cores_used")))
    lines.append("ratios (PyTorch / Neo): eager %.2fx, torch.compile %.2fx"
                 % (med("torch", "step_ms") / med("neo", "step_ms"),
                    med("torch+compile", "step_ms") / med("neo", "step_ms")))
    lines.append("ratios (PyTorch / Neo with the sequence in one op): eager %.2fx, "
                 "torch.compile %.2fx"
                 % (med("torch", "step_ms") / med("neo-seq", "step_ms"),
                    med("torch+compile", "step_ms") / med("neo-seq", "step_ms")))
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", default="1", help="thread counts, e.g. 1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default="", help="also write the report (markdown) here")
    p.add_argument("--one", default="")
    args = p.parse_args()
    if args.one:
        return one(args.one, int(args.threads))
    sys.path.insert(0, HERE)
    import harness
    with open("/proc/cpuinfo") as f:
        model, isa = harness.cpu_info(f.read())
    lines = ["# neo.torch benchmarks", "",
             "Generated by `NEO_LIBRARY=%s %s bench/torch_bridge.py --threads %s --rounds %d` "
             "on %s." % (os.environ.get("NEO_LIBRARY", "(default)"), sys.executable, args.threads,
                         args.rounds, time.strftime("%Y-%m-%d")),
             "", "- CPU: %s, %s" % (model, isa),
             "- Each configuration in its own process, pinned to its threads (taskset) and told "
             "the count (torch.set_num_threads, Neo's threads=); medians over the rounds. See "
             "[pytorch.md](pytorch.md#measured) for what is measured.", "", "```"]
    for t in (int(v) for v in args.threads.split(",")):
        lines += report(t, args.rounds)
    lines.append("```")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
