#!/usr/bin/python3
"""Generates docs/flow.md: one small layer (docs/examples/flow.neo) followed
through the frontend, neo-autodiff, neo-eqsat-fuse, convert-neo-to-linalg and
the phases of the CPU and GPU pipelines, with the commands and the IR that the
built tools print at each step.

    /usr/bin/python3 scripts/gen-flow-doc.py [--bin DIR] [--output FILE]
    /usr/bin/python3 scripts/gen-flow-doc.py --check   # exit 1 if docs/flow.md is stale

The tools are taken from --bin, else $NEO_BIN, else build/bin. The page is
deterministic: nothing in it depends on time, paths or the host (the compile
time that gpu-module-to-binary records and the seconds of the fusion report
are left out). test/docs/flow-up-to-date.test runs --check."""
import argparse
import collections
import difflib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(ROOT, "docs", "examples", "flow.neo")
OUTPUT = os.path.join(ROOT, "docs", "flow.md")

# Lines of IR shown in full at most; longer IR is cut (see skeleton and head).
FULL_LIMIT = 110


class Runner:
    """Runs the shown commands in a scratch directory holding flow.neo."""

    def __init__(self, bindir, workdir):
        self.bindir = bindir
        self.workdir = workdir
        self.env = dict(os.environ)
        # Tuning records would change the schedules of the CPU phases.
        self.env.pop("NEO_TUNING_RECORDS", None)

    def run(self, command):
        """Runs `command` (as shown on the page, tools without their directory)
        and returns its stdout."""
        argv = shlex.split(command)
        argv[0] = os.path.join(self.bindir, argv[0])
        proc = subprocess.run(argv, cwd=self.workdir, env=self.env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
        if proc.returncode != 0:
            sys.stderr.write("gen-flow-doc: `%s` failed (exit %d):\n%s%s" %
                             (command, proc.returncode, proc.stdout, proc.stderr))
            sys.exit(2)
        return proc.stdout

    def read(self, name):
        with open(os.path.join(self.workdir, name)) as f:
            return f.read()


# ---------------------------------------------------------------------------
# Cutting long IR
# ---------------------------------------------------------------------------

OP_RE = re.compile(r"^\s*(?:%[^=]*=\s*)?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)")


def op_name(line):
    m = OP_RE.match(line)
    return m.group(1) if m else None


def summarize(lines):
    """'N ops: 16 vector.fma, 8 vector.broadcast, ...' for elided lines."""
    counts = collections.Counter(n for n in map(op_name, lines) if n)
    total = sum(counts.values())
    if not total:
        return "%d line%s" % (len(lines), "" if len(lines) == 1 else "s")
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    more = ", ..." if len(counts) > 3 else ""
    return "%d op%s: %s%s" % (total, "" if total == 1 else "s",
                              ", ".join("%d %s" % (c, n) for n, c in top), more)


def indent_of(line):
    return line[:len(line) - len(line.lstrip())]


def skeleton(text, keep):
    """Keeps the lines that match the regex `keep` (and the closing braces of
    the regions they open) when their enclosing regions are kept; each run of
    other lines becomes one '// ... N ops: ...' line."""
    keep_re = re.compile(keep)
    out, pending, stack = [], [], []

    def flush():
        if pending:
            out.append("%s// ... %s" % (indent_of(pending[0]), summarize(pending)))
            del pending[:]

    for line in text.rstrip("\n").split("\n"):
        s = line.strip()
        if s.startswith("}"):
            kept = stack.pop() if stack else True
            if s.endswith("{"):
                stack.append(kept)
        else:
            kept = all(stack) and bool(keep_re.search(line))
            if s.endswith("{"):
                stack.append(kept)
        if kept:
            flush()
            out.append(line)
        else:
            pending.append(line)
    flush()
    return "\n".join(out) + "\n"


def first_region(text, opener):
    """The lines up to the end of the first region that a line matching
    `opener` opens, and a count of the rest."""
    lines = text.rstrip("\n").split("\n")
    start = next(i for i, l in enumerate(lines) if re.search(opener, l))
    close = indent_of(lines[start]) + "}"
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == close)
    return "\n".join(lines[:end + 1]) + "\n%s// ... %d more lines\n" % (
        indent_of(lines[start]), len(lines) - end - 1)


def llvm_excerpt(text, marker, shown):
    """The declarations and signature of the LLVM dialect module, then the
    first `shown` lines of the first block that contains `marker`."""
    lines = text.rstrip("\n").split("\n")
    sig = next(i for i, l in enumerate(lines) if l.startswith("  llvm.func") and l.endswith("{"))
    hit = next(i for i, l in enumerate(lines) if marker in l)
    # The block may be nested (in an omp region of a row-blocked kernel).
    label = max(i for i in range(sig, hit) if lines[i].lstrip().startswith("^bb"))
    indent = indent_of(lines[label])
    end = next((i for i in range(hit, len(lines))
                if lines[i].startswith(indent + "^bb") or lines[i].strip() == "}"), len(lines))
    stop = min(end, label + 1 + shown)
    out = lines[:sig + 1]
    out.append("    // ... %s" % summarize(lines[sig + 1:label]))
    out += lines[label:stop]
    if stop < end:
        out.append("    // ... %s" % summarize(lines[stop:end]))
    out.append("  // ... %d more lines" % (len(lines) - end))
    return "\n".join(out) + "\n"


def cut_bodies(text, op, keep):
    """Replaces the bodies of the `op` ops (func.func, gpu.func) whose names
    are not in `keep` by a summary line."""
    head_re = re.compile(r"^(\s*)%s @([\w$.]+)" % re.escape(op))
    out, body, closing = [], [], None
    for line in text.rstrip("\n").split("\n"):
        if closing is not None:
            if line == closing:
                out.append("%s  // ... %s" % (closing[:-1], summarize(body)))
                out.append(line)
                closing, body = None, []
            else:
                body.append(line)
            continue
        out.append(line)
        m = head_re.match(line)
        if m and m.group(2) not in keep and line.endswith("{"):
            closing = m.group(1) + "}"
    return "\n".join(out) + "\n"


def lines_of(text):
    return len(text.rstrip("\n").split("\n"))


def check_full(text, what):
    if lines_of(text) > FULL_LIMIT:
        sys.stderr.write("gen-flow-doc: %s has %d lines, more than the %d shown in full; "
                         "cut it (skeleton/head) or shrink docs/examples/flow.neo\n" %
                         (what, lines_of(text), FULL_LIMIT))
        sys.exit(2)
    return text


def mlir_string(escaped):
    """Decodes an MLIR string literal's body (\\XX hex escapes, \\\\, \\")."""
    return re.sub(r'\\([0-9A-Fa-f]{2}|\\|")',
                  lambda m: m.group(1) if len(m.group(1)) == 1 else chr(int(m.group(1), 16)),
                  escaped)


# ---------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------

class Page:
    def __init__(self):
        self.parts = []

    def text(self, s):
        """Adds Markdown, its plain paragraphs rewrapped at 76 columns (text
        with formatted values would otherwise make long lines)."""
        out = []
        for para in s.strip("\n").split("\n\n"):
            if "```" in para or para[:1] in "|#<- " or para.startswith("<!--"):
                out.append(para)
            else:
                # Spaces inside `code` do not break lines.
                text = re.sub(r"`[^`]*`", lambda m: m.group(0).replace(" ", "\0"),
                              " ".join(para.split()))
                out.append(textwrap.fill(text, 76, break_long_words=False,
                                         break_on_hyphens=False).replace("\0", " "))
        self.parts.append("\n\n".join(out) + "\n")

    def code(self, lang, s):
        body = "\n".join(l.rstrip() for l in s.rstrip("\n").split("\n"))
        self.parts.append("```%s\n%s\n```\n" % (lang, body))

    def render(self):
        return "\n".join(self.parts)


def generate(bindir):
    with open(EXAMPLE) as f:
        source = f.read()
    work = tempfile.mkdtemp(prefix="neo-flow-doc-")
    try:
        shutil.copy(EXAMPLE, os.path.join(work, "flow.neo"))
        return build_page(Runner(bindir, work), source)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_page(r, source):
    p = Page()
    steps = []  # (command, lines of IR) for the overview table

    def run(command, output_file=None):
        """Runs a command of the page; returns the IR it printed or wrote."""
        out = r.run(command)
        text = r.read(output_file) if output_file else out
        steps.append((command, lines_of(text)))
        return text

    def step(command, output_file=None):
        """run(), and shows the command here."""
        text = run(command, output_file)
        p.code("sh", command)
        return text

    # -- Intro ---------------------------------------------------------------
    p.text("""
<!-- Generated by scripts/gen-flow-doc.py from docs/examples/flow.neo; do not edit.
     test/docs/flow-up-to-date.test fails when this page is stale:
     /usr/bin/python3 scripts/gen-flow-doc.py regenerates it. -->
# How a `.neo` file flows through the passes

This page follows one small layer, [examples/flow.neo](examples/flow.neo),
from its source to the LLVM dialect and to PTX, step by step: each section
says what the pass does, gives the exact command, and shows the IR the built
tools print. The commands run in a directory holding a copy of `flow.neo`
with `build/bin` on `PATH`; `neo-run` and the Python package run the same
steps in memory. Long IR is cut: a `// ... N ops: ...` line stands for the
lines left out and names their most frequent ops.

The page is generated by `scripts/gen-flow-doc.py`, which runs the commands;
`test/docs/flow-up-to-date.test` fails when the tools print something else
(`/usr/bin/python3 scripts/gen-flow-doc.py` regenerates it).

```
flow.neo ──neo-translate --import-neo──▶ neo IR ──neo-autodiff──▶ + layer_grad, layer_fwdbwd
   ──neo-eqsat-fuse──▶ fewer kernels ──convert-neo-to-linalg──▶ linalg on tensors
   ├─neo-lower-to-cpu──▶ linalg ▶ bufferize ▶ schedule ▶ loops ▶ LLVM dialect ──▶ JIT
   └─neo-lower-to-ptx──▶ linalg ▶ bufferize ▶ gpu ▶ outline ▶ PTX (gpu.binary) ──▶ bundle
```
""")

    p.text("""
## 1. The source

A linear layer, a [mish](https://arxiv.org/abs/1908.08681) activation
(`z * tanh(softplus(z))`, written out since it is no builtin) and a sum as
the loss, with shapes small enough to read the IR
([language.md](language.md) has the grammar):
""")
    p.code("", source)

    # -- Import --------------------------------------------------------------
    p.text("""
## 2. Import: `neo-translate --import-neo`

The frontend (lexer, parser, sema, IRGen) turns each `def` into a
`func.func` of `neo.compute` ops, one per statement, except that a reduction
that is not a statement's whole right-hand side becomes an op of its own: the
matmul (`space [4, 6] sum [8]`) is hoisted out of the bias add. Each read is
an operand with an affine map over the iteration space (`#map1` reads
`w[k, j]` as `(d2, d1)`), the activation is a scalar body of `arith` and
`math` ops, and the loss is a full reduction with an empty parallel space
(`space []`). `neo.name` keeps the source's names for the tools that print
or bind them.
""")
    imported = step("neo-translate --import-neo flow.neo -o flow.mlir", "flow.mlir")
    p.code("mlir", check_full(imported, "the imported IR"))

    # -- Autodiff ------------------------------------------------------------
    grad = run("neo-opt flow.mlir --neo-autodiff=\"function=layer wrt=1,2\" -o grad.mlir",
               "grad.mlir")
    funcs = re.findall(r"func\.func @(\w+)", grad)
    p.text("""
## 3. Differentiate: `neo-autodiff`

[autodiff.md](autodiff.md). The gradient with respect to `w` and `b`
(arguments 1 and 2; `x` is data). The pass adds `@layer_grad` (the gradients
alone, forward values recomputed) and `@layer_fwdbwd` (loss and gradients in
one function that keeps the forward values); both take the seed `dloss`.
The backward ops of `@layer_fwdbwd`, after its four forward ops: the seed
broadcast over `[4, 6]` (the adjoint of the sum), the adjoint of the
activation as scalar code (the chain rule through `exp`, `log` and `tanh`,
from `ScalarDifferentiableOpInterface`) reading the pre-activation `%%1`, then
`db` as a sum over `i` and `dw` as a contraction of `x` with the adjoint over
`i`: the gather form of the read `w[k, j]`, found by solving its index map.
The module now has %s; the bodies of the other two are cut here:
""" % ", ".join("`@%s`" % f for f in funcs))
    p.code("sh", "neo-opt flow.mlir --neo-autodiff=\"function=layer wrt=1,2\" -o grad.mlir")
    p.code("mlir", check_full(cut_bodies(grad, "func.func", {"layer_fwdbwd"}), "the gradient IR"))

    p.text("""
A training step needs only `@layer_fwdbwd`, and the rest of the page follows
it alone. Upstream passes select it:
""")
    select = step("neo-opt grad.mlir --symbol-privatize=exclude=layer_fwdbwd --symbol-dce "
                  "-o step.mlir", "step.mlir")
    kept = re.findall(r"func\.func @(\w+)", select)
    assert kept == ["layer_fwdbwd"], kept

    # -- Fusion --------------------------------------------------------------
    fused = run("neo-opt step.mlir --neo-eqsat-fuse=\"report=fuse.json\" -o fused.mlir",
                "fused.mlir")
    report = json.loads(r.read("fuse.json"))
    rep = report["layer_fwdbwd"]
    applied = [x["name"] for x in rep["rules"] if x["applied"]]
    ilp = rep["extractors"]["ilp"]
    p.text("""
## 4. Fuse: `neo-eqsat-fuse`

[eqsat.md](eqsat.md). The function becomes an e-graph (%d e-nodes in %d
classes after %d iterations, %s), rewritten by the rules that applied
(%s), and the cheapest graph under the CPU cost model is extracted by the
ILP (%s): %d kernels become %d, and %d bytes of reads and writes become %d.
`inline` put the bias add and the activation into the loss reduction, which
now reads the matmul's result and `b` directly, and into the backward
kernel, which recomputes the activation from the matmul's result instead of
reading a stored one; the seed broadcast was inlined too. Contractions stay
as they are (inlining into them would stop them being GEMMs). `horizontal`
matched as well, but extraction found separate kernels cheaper here. After
extraction, %d row-blocked kernel(s) (`neo.fused ... row_block B`) group the
kernels that share the batch rows and read each other only at the same row:
per block of rows each computes its rows in turn, and only the values used
outside the group are written (see eqsat.md). The kernel count above counts
each as one.
""" % (rep["nodes"], rep["classes"], rep["iterations"], rep["stop_reason"],
       ", ".join("`%s`" % a for a in applied),
       "optimal" if ilp.get("optimal") else "not proven optimal",
       rep["kernels_before"], rep["kernels_after"], rep["bytes_before"], rep["bytes_after"],
       rep["row_blocked_kernels"]))
    p.code("sh", "neo-opt step.mlir --neo-eqsat-fuse=\"report=fuse.json\" -o fused.mlir")
    p.code("mlir", check_full(fused, "the fused IR"))

    def drop_seconds(v):
        if isinstance(v, dict):
            return {k: drop_seconds(x) for k, x in v.items() if k != "seconds"}
        if isinstance(v, list):
            return [drop_seconds(x) for x in v]
        return v

    p.text("`fuse.json`, the report (its `seconds` fields left out):")
    p.code("json", json.dumps(drop_seconds(report), indent=2, sort_keys=True))

    # -- Linalg --------------------------------------------------------------
    p.text("""
## 5. To linalg: `convert-neo-to-linalg`

[runtime.md](runtime.md#convert-neo-to-linalg). Each `neo.compute` becomes a
linalg op on tensors whose init is filled (`linalg.fill`) with the identity
of its reduction (0 for sums). The forward matmul is exactly one, so it
becomes `linalg.matmul` (`use-named-ops` is on by default); `dw` reads `x`
transposed and stays a `linalg.generic` (neo-tile still recognizes it as a
GEMM below). The reads' maps become `indexing_maps` and the parallel and
reduction dims `iterator_types`. Every read here stays in bounds, so no
bounds checks are generated; the `linalg.index` ops are unused and go at the
next canonicalization. The row-blocked kernel becomes an `scf.forall` over
its blocks of rows: each iteration slices the rows of the operands it reads
by row (`tensor.extract_slice`), runs its ops on them as linalg ops marked
`neo.serial` (the block loop is the parallel one), and inserts its rows of
the results (`tensor.parallel_insert_slice`).
""")
    linalg = step("neo-opt fused.mlir --convert-neo-to-linalg -o linalg.mlir", "linalg.mlir")
    p.code("mlir", check_full(linalg, "the linalg IR"))

    # -- CPU -----------------------------------------------------------------
    p.text("""
## 6. The CPU pipeline: `neo-lower-to-cpu`

[runtime.md](runtime.md#neo-lower-to-cpu), [schedules.md](schedules.md). The
pipeline starts again from the neo IR of step 4 and runs everything from
there; `stop-after` stops it after a phase (`linalg`, `bufferize`,
`schedule`, `loops`, or nothing for the LLVM dialect). `cpu=x86-64-v4`
(AVX-512) makes the schedules, and so this page, the same on every machine;
without it they follow the host ([schedules.md](schedules.md#targets-the-cpu-a-schedule-is-for)).

### 6.1 `stop-after=linalg`

Canonicalization and CSE, `convert-neo-to-linalg`, and elementwise fusion
(`neo-fuse-elementwise`, which finds nothing left to fuse after step 4):
constants are hoisted, the unused `linalg.index` ops are gone, and CSE
merged the identical `tensor.empty` ops.
""")
    cpu_linalg = step("neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=linalg\"")
    p.code("mlir", check_full(cpu_linalg, "the CPU linalg phase"))

    p.text("""
### 6.2 `stop-after=bufferize`

One-shot bufferization turns tensors into memrefs. The results become
out-parameters (`%arg4` is `loss`, `%arg5` `dw`, `%arg6` `db`) that the
kernels write in place, the matmul's result is the only temporary
(`memref.alloc` ... `memref.dealloc`), and the backward kernel overwrites it
in place since nothing reads it afterwards.
""")
    cpu_buf = step("neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=bufferize\"")
    p.code("mlir", check_full(cpu_buf, "the CPU bufferize phase"))

    cpu_sched = run("neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=schedule\"")
    p.text("""
### 6.3 `stop-after=schedule`

`neo-tile` and `neo-vectorize` ([schedules.md](schedules.md)) give every op
its schedule, here the defaults (no tuning records). Both GEMMs, the
forward matmul and `dw`, become packed kernels: panels of A and B copied
into zero-padded buffers (the short copy loops), then an 8 x 32 register
tile, 16 `vector<16xf32>` accumulators carried through the k loop as
`iter_args` and updated by `vector.fma`. The elementwise and reduction ops
are split over two threads (`scf.forall`) where they have a parallel dim
and vectorized along their innermost dim (`vector<6xf32>`, a whole row);
`exp`, `log` and `tanh` became polynomials (the runs of `math.fma`). The
loss, a reduction with no parallel dim, stays serial. %d lines; the loops,
allocations and kernels are kept:
""" % lines_of(cpu_sched))
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=schedule\"")
    structure = (r"^#|^module|func\.func|scf\.(for|forall|parallel|if)\b|"
                 r"memref\.(alloc|dealloc)\b|linalg\.|omp\.(parallel|wsloop|loop_nest)\b|"
                 r"^\s*return\b")
    p.code("mlir", skeleton(cpu_sched, structure))

    cpu_loops = run("neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=loops\"")
    p.text("""
### 6.4 `stop-after=loops`

The remaining linalg ops (the fill of the 0-d `loss`) become loops and
stores, and each `scf.forall` becomes an OpenMP parallel loop
(`omp.parallel` / `omp.wsloop` / `omp.loop_nest`). %d lines; the rest
continues like 6.3, so the outline is cut after the first parallel loop:
""" % lines_of(cpu_loops))
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4 stop-after=loops\"")
    p.code("mlir", first_region(skeleton(cpu_loops, structure), r"omp\.parallel"))

    llvm = run("neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4\"")
    counts = collections.Counter(n for n in map(op_name, llvm.split("\n")) if n)
    p.text("""
### 6.5 The LLVM dialect

The whole pipeline. With the bare-pointer calling convention each argument
is an `!llvm.ptr` to the data, inputs first, then the outputs; temporaries
use `malloc`/`free`; the OpenMP loops stay `omp` ops, which become calls to
the OpenMP runtime when the module is translated to LLVM IR. Loops are now
branches between blocks. %d lines; the signature and the start of the
forward GEMM's k step, where each `llvm.intr.fmuladd` updates one
`vector<16xf32>` accumulator:
""" % lines_of(llvm))
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-cpu=\"cpu=x86-64-v4\"")
    p.code("mlir", llvm_excerpt(llvm, "llvm.intr.fmuladd", 30))
    p.text("Its ops by count:")
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    table = "| op | count |\n|---|---|\n" + "".join(
        "| `%s` | %d |\n" % (n, c) for n, c in rows[:12])
    rest = sum(c for _, c in rows[12:])
    if rest:
        table += "| %d others | %d |\n" % (len(rows) - 12, rest)
    p.text(table)
    p.text("""
The execution engine ([runtime.md](runtime.md)) takes it from here: it
translates the module to LLVM IR, adds a `__neo_packed_layer_fwdbwd(void
**args)` entry point, optimizes at `-O3` for the host CPU and loads the
object file with ORC. `neo-run fused.mlir --check` compiles and runs it on
random inputs and compares every output with the reference interpreter.
""")

    # -- GPU -----------------------------------------------------------------
    gpu_linalg = run("neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=linalg\"")
    p.text("""
## 7. The GPU pipeline: `neo-lower-to-ptx`

[gpu.md](gpu.md). Same start, other phases: `stop-after` takes `linalg`,
`bufferize`, `gpu`, `outline`, or nothing for the module with its PTX. No GPU
is needed to compile (`ptxas`, when present, only checks the PTX when
`neo-run --emit-bundle` assembles it).

### 7.1 `stop-after=linalg` and `stop-after=bufferize`
""")
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=linalg\"")
    gpu_buf = run("neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=bufferize\"")
    diff = list(difflib.unified_diff(cpu_buf.split("\n"), gpu_buf.split("\n"), "cpu-bufferize",
                                     "gpu-bufferize", n=2, lineterm=""))
    changed = [l for l in diff[2:] if l[:1] in "+-"]
    only_deallocs = changed and all(l.startswith("-") and "memref.dealloc" in l for l in changed)
    if gpu_linalg == cpu_linalg:
        p.text("It prints exactly the IR of 6.1.")
    else:
        p.code("mlir", check_full(gpu_linalg, "the GPU linalg phase"))
    if only_deallocs:
        p.text("Bufferization differs from the CPU's only by the deallocations: the runtime "
               "owns GPU buffers, so temporaries are not freed (a diff against 6.2):")
    else:
        p.text("Bufferization, as a diff against 6.2:")
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=bufferize\"")
    p.code("diff", "\n".join(diff))

    gpu_map = run("neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=gpu\"")
    kinds = collections.Counter(re.findall(r'neo\.kernel = "(\w+)"', gpu_map))
    p.text("""
### 7.2 `stop-after=gpu`

`neo-gpu-map` turns every linalg op (fills included) into a `gpu.launch`
with constant grid and block sizes, tagged with its kind (`neo.kernel`): %s.
The two GEMMs are block-tiled SIMT kernels with their A and B tiles in
shared memory (the `workgroup` buffers); the other ops run one thread per
output element, or one thread in all for the 0-d loss (too few terms for a
block reduction). %d lines; the launches are kept:
""" % (", ".join("%d `%s`" % (c, k) for k, c in sorted(kinds.items())), lines_of(gpu_map)))
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=gpu\"")
    p.code("mlir", skeleton(gpu_map, r"^#|^module|func\.func|gpu\.launch\b|memref\.alloc\b|"
                                     r"^\s*return\b"))

    outline = run("neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=outline\"")
    p.text("""
### 7.3 `stop-after=outline`

Kernel outlining moves each launch's body into a `gpu.func` and
`neo-gpu-merge-modules` gathers them into one `gpu.module @neo_kernels`
with the NVVM target attached, so one PTX image serves the function. The
host function is now a sequence of `gpu.launch_func`. %d lines; the host
function and one kernel, the fused backward elementwise one (`kernel_3`),
are shown, the other kernels cut:
""" % lines_of(outline))
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-ptx=\"stop-after=outline\"")
    p.code("mlir", cut_bodies(outline, "gpu.func", {"layer_fwdbwd_kernel_3"}))

    final = run("neo-opt fused.mlir --neo-lower-to-ptx")
    m = re.search(r'assembly = "((?:[^"\\]|\\.)*)"', final)
    ptx = mlir_string(m.group(1))
    shown = re.sub(r'assembly = "(?:[^"\\]|\\.)*"', 'assembly = "..."', final)
    shown = re.sub(r"properties = \{[^}]*\}", "properties = {...}", shown)
    entries = re.findall(r"^\.visible \.entry (\w+)\(", ptx, re.M)
    p.text("""
### 7.4 PTX

The kernels go through `convert-gpu-to-nvvm` and LLVM's NVPTX backend
(`gpu-module-to-binary`); the `gpu.binary` holds the PTX as a string (cut
here, with the compile time it records) and the host function is unchanged:
""")
    p.code("sh", "neo-opt fused.mlir --neo-lower-to-ptx")
    p.code("mlir", shown.split("  func.func")[0] + "  func.func @layer_fwdbwd(...) {\n    ...\n"
           "  }\n" + shown[shown.index("  gpu.binary"):])
    first = ptx[:ptx.index("\n}\n") + 3]
    p.text("""
The PTX (%d lines, %d kernels from `%s` to `%s`), up to the end of the first
kernel, which zero-fills the matmul's result:
""" % (lines_of(ptx), len(entries), entries[0], entries[-1]))
    p.code("", first)
    p.text("""
`neo-run fused.mlir --emit-bundle DIR` writes this PTX (and a cubin when
`ptxas` is found) with a manifest of buffers and launches, sample inputs and
reference outputs ([bundle-format.md](bundle-format.md)); `neo-cuda-runner
DIR --check` runs it on a GPU, and `neo-run --device cuda` does both at once.
""")

    # -- Overview ------------------------------------------------------------
    p.text("""
## The steps at a glance

| command | lines of IR |
|---|---|
""" + "".join("| `%s` | %d |\n" % (c.replace("|", "\\|"), n) for c, n in steps))
    p.text("""
See also: [tutorial.md](tutorial.md) (writing, differentiating, fusing,
running and tuning an operator of your own), [architecture.md](architecture.md),
and [errors.md](errors.md) for what each step says about bad input.
""")
    return p.render()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.environ.get("NEO_BIN", os.path.join(ROOT, "build", "bin")),
                    help="directory of neo-opt and neo-translate (default: $NEO_BIN or build/bin)")
    ap.add_argument("--output", default=OUTPUT, help="the page to write or check")
    ap.add_argument("--check", action="store_true",
                    help="do not write; exit 1 when the page differs from what the tools print")
    args = ap.parse_args()
    for tool in ("neo-opt", "neo-translate"):
        if not os.access(os.path.join(args.bin, tool), os.X_OK):
            sys.stderr.write("gen-flow-doc: no %s in %s (give --bin or NEO_BIN)\n"
                             % (tool, args.bin))
            return 2
    page = generate(args.bin)
    if args.check:
        try:
            with open(args.output) as f:
                current = f.read()
        except OSError:
            current = ""
        if current != page:
            diff = list(difflib.unified_diff(current.split("\n"), page.split("\n"),
                                             "docs/flow.md", "generated", lineterm=""))
            sys.stdout.write("\n".join(diff[:60]) + "\n")
            if len(diff) > 60:
                print("... (%d more diff lines)" % (len(diff) - 60))
            print("docs/flow.md is stale: run /usr/bin/python3 scripts/gen-flow-doc.py")
            return 1
        print("docs/flow.md is up to date")
        return 0
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(page)
    os.replace(tmp, args.output)
    print("wrote %s" % os.path.relpath(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
