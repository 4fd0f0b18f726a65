#!/usr/bin/env python3
"""Runs Neo's GPU kernels on the CPU, at the level of the gpu dialect.

    neo-opt f.mlir --pass-pipeline='builtin.module(neo-lower-to-ptx{stop-after=gpu})' \\
        -mlir-print-op-generic -o f.gpu.mlir
    neo-run f.mlir --emit-bundle B          # inputs/ and expected/ from Neo's interpreter
    gpusim.py f.gpu.mlir --bundle B [--async lazy|eager] [--rtol R --atol A]

Executes the host function of f.gpu.mlir (generic form) on the bundle's
inputs: every gpu.launch runs block by block, the threads of a block in
lockstep as numpy arrays (one element per thread). Warp-level instructions
are modelled from the PTX ISA's fragment layouts, independently of the
code generator: nvgpu.ldmatrix (x1/x2/x4, .trans), nvgpu.mma.sync (m16n8k16
f16/bf16, m16n8k8 tf32), gpu.subgroup_mma_* (WMMA, a fragment held whole
by each lane), gpu.shuffle, nvvm.wgmma.mma_async (m64nNk16 f16/bf16 and m64nNk8 tf32, the
operands read through their matrix descriptors by the canonical layouts of
the 128-byte swizzle; completed as late as wgmma.wait_group allows, with
errors for reading its accumulators before, overwriting its operands while
in flight, and operands written through the generic proxy without a later
fence.proxy.async); cp.async copies (nvgpu.device_async_copy with
nvvm.cp.async.commit.group / wait.group) complete either at once (`eager`:
exposes a copy that overwrites a buffer still being read) or as late as the
waits allow (`lazy`: exposes a read before the wait). Shared memory and
outputs start as NaN, so a read of a value never written shows; an access
out of a buffer's bounds by an active thread is an error, and so is a
shared-memory access that races with another warp's since the last
gpu.barrier (each element remembers its writer and readers per barrier
interval). Then compares each output with the bundle's expected/<name>.npy.

What it cannot see: races between blocks (they run one after another) or
within a warp, performance, and anything below the gpu dialect (NVVM/PTX
lowering, which ptxas and the device run check).
"""
import argparse
import functools
import json
import os
import re
import sys

import numpy as np


class SimError(Exception):
    pass


# ---------------------------------------------------------------- parsing


class Op:
    __slots__ = ("results", "name", "operands", "props", "attrs", "regions", "types", "line")

    def __init__(self):
        self.results, self.operands, self.regions = [], [], []
        self.props, self.attrs, self.types = "", "", ""
        self.name, self.line = "", 0


class Region:
    __slots__ = ("args", "arg_types", "ops")

    def __init__(self):
        self.args, self.arg_types, self.ops = [], [], []


_OP = re.compile(r'^(?:(%[\w]+)(?::(\d+))? = )?"([\w.]+)"\((.*?)\)(.*)$')


def _split_top(s, sep=","):
    """Splits at `sep` outside brackets."""
    out, depth, cur = [], 0, []
    for i, ch in enumerate(s):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and not (ch == ">" and i and s[i - 1] == "-"):
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def _result_names(name, count):
    if count is None:
        return [name]
    return ["%s#%d" % (name, i) for i in range(int(count))]


def _close(s):
    """The index of the bracket closing s[0] ("->" is no bracket)."""
    depth = 0
    for i, ch in enumerate(s):
        if ch in "<{[(":
            depth += 1
        elif ch in ">}])" and not (ch == ">" and s[i - 1] == "-"):
            depth -= 1
        if depth == 0:
            return i
    raise SimError("unbalanced brackets: %s" % s[:80])


AFFINE_MAPS = {}


def affine_map(text):
    """A callable (dims, symbols) -> list of results of `affine_map<...>`."""
    text = text.strip()
    if text.startswith("#"):
        if text not in AFFINE_MAPS:
            raise SimError("unknown affine map %s" % text)
        return AFFINE_MAPS[text]
    return _parse_affine_map(text)


@functools.lru_cache(maxsize=None)
def _parse_affine_map(text):
    """affine_map's parse of a literal map, once per distinct text."""
    m = re.match(r"^affine_map<\((.*?)\)(?:\[(.*?)\])?\s*->\s*\((.*)\)>$", text)
    if not m:
        raise SimError("cannot parse %s" % text)
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    syms = [d.strip() for d in (m.group(2) or "").split(",") if d.strip()]
    exprs = []
    for e in _split_top(m.group(3)):
        e = re.sub(r"\bfloordiv\b", "//", e)
        e = re.sub(r"\bmod\b", "%", e)
        e = re.sub(r"(\S+)\s+ceildiv\s+(\S+)", r"(-((-\1) // \2))", e)
        exprs.append(compile(e, "<affine>", "eval"))

    def apply(dv, sv):
        env = dict(zip(dims, dv))
        env.update(zip(syms, sv))
        return [eval(c, {"__builtins__": {}}, env) for c in exprs]
    apply.ndims = len(dims)
    return apply


def parse(lines):
    pos = [0]
    while lines and lines[0].startswith("#"):
        name, body = lines[0].split("=", 1)
        AFFINE_MAPS[name.strip()] = affine_map(body)
        lines = lines[1:]

    def block_args(line):
        m = re.match(r"^\^bb\d+\((.*)\):$", line)
        names, types = [], []
        for a in _split_top(m.group(1)):
            n, t = a.split(":", 1)
            names.append(n.strip())
            types.append(t.strip())
        return names, types

    def parse_ops(region):
        while pos[0] < len(lines):
            raw = lines[pos[0]]
            line = raw.strip()
            if not line or line.startswith("//"):
                pos[0] += 1
                continue
            if line.startswith("}"):
                return line
            if line.startswith("^bb"):
                if region.ops:
                    raise SimError("line %d: blocks after the first are not supported" % (pos[0] + 1))
                region.args, region.arg_types = block_args(line)
                pos[0] += 1
                continue
            m = _OP.match(line)
            if not m:
                raise SimError("line %d: cannot parse: %s" % (pos[0] + 1, line[:120]))
            op = Op()
            op.line = pos[0] + 1
            if m.group(1):
                op.results = _result_names(m.group(1), m.group(2))
            op.name = m.group(3)
            op.operands = [o.strip() for o in m.group(4).split(",") if o.strip()]
            rest = m.group(5).strip()
            if rest.startswith("<{"):
                i = _close(rest)
                op.props = rest[2:i - 1]
                rest = rest[i + 1:].strip()
            pos[0] += 1
            if rest.startswith("({"):
                while True:
                    r = Region()
                    end = parse_ops(r)
                    op.regions.append(r)
                    pos[0] += 1
                    if end.startswith("}, {"):
                        continue
                    rest = end[2:].strip()  # after "})"
                    break
            elif rest.startswith("("):
                raise SimError("line %d: unexpected %s" % (op.line, rest[:60]))
            if rest.startswith("{"):
                i = _close(rest)
                op.attrs = rest[1:i]
                rest = rest[i + 1:].strip()
            op.types = rest.lstrip(":").strip()
            region.ops.append(op)
        return ""

    top = Region()
    parse_ops(top)
    return top


def result_types(op):
    """The result types of an op's `(operands) -> results` signature."""
    return _result_types(op.types)


@functools.lru_cache(maxsize=None)
def _result_types(t):
    if "->" not in t:
        return ()
    res = t.rsplit("->", 1)[1].strip()
    if res.startswith("(") and res.endswith(")"):
        res = res[1:-1]
    return tuple(_split_top(res)) if res else ()


def operand_types(op):
    """The operand types of an op's `(operands) -> results` signature."""
    return _operand_types(op.types)


@functools.lru_cache(maxsize=None)
def _operand_types(t):
    if not t.startswith("("):
        return ()
    return tuple(_split_top(t[1:_close(t)]))


def prop(op, key, text=None):
    """The text of attribute `key` in the op's properties or attributes."""
    if text is not None:
        return _prop(text, "", key)
    return _prop(op.props, op.attrs, key)


@functools.lru_cache(maxsize=None)
def _prop(props, attrs, key):
    src = props + ", " + attrs if attrs else props
    for part in _split_top(src):
        if part.startswith(key + " =") or part.startswith(key + "="):
            return part.split("=", 1)[1].strip()
    return None


def int_prop(op, key, default=None):
    v = prop(op, key)
    if v is None:
        if default is None:
            raise SimError("line %d: %s needs %s" % (op.line, op.name, key))
        return default
    if v.startswith("array<"):
        body = v[v.index(":") + 1:-1].strip()
        return [int(x) for x in body.split(",")] if body else []
    if v in ("true", "false"):
        return v == "true"
    if v.startswith("["):
        return [int(x.split(":")[0]) for x in _split_top(v[1:-1])]
    return int(v.split(":")[0].strip())


# ------------------------------------------------------------------ types

_DT = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
       "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int64, "i64": np.int64,
       "index": np.int64}


@functools.lru_cache(maxsize=None)
def shaped(t):
    """(kind, shape, element) of a memref/vector type, or (scalar, (), t)."""
    m = re.match(r"^(memref|vector)<(.*)>$", t)
    if not m:
        return "scalar", (), t
    body = _split_top(m.group(2))[0]
    dims = body.split("x")
    elem = dims[-1]
    shape = tuple(-1 if d == "?" else int(d) for d in dims[:-1])
    return m.group(1), shape, elem


def memory_space(t):
    return "workgroup" if ("workgroup" in t or re.search(r",\s*3>$", t)) else "global"


def round_bf16(x):
    x = np.asarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    u = np.uint64  # (0-d arrays would promote uint64 with Python ints to float)
    bits = (bits + u(0x7FFF) + ((bits >> u(16)) & u(1))) & u(0xFFFF0000)
    return bits.astype(np.uint32).view(np.float32)


def cast_to(x, elem):
    if elem == "bf16":
        return round_bf16(x)
    return np.asarray(x).astype(_DT[elem])


class Mem:
    """A view of a flat buffer: offset + sum(index * stride)."""

    def __init__(self, buf, shape, elem, space, strides=None, offset=0):
        self.buf, self.shape, self.elem, self.space = buf, tuple(shape), elem, space
        if strides is None:
            strides, acc = [], 1
            for d in reversed(self.shape):
                strides.insert(0, acc)
                acc *= max(d, 1)
        self.strides, self.offset = tuple(strides), offset

    def flat(self, idx, mask, what):
        off = np.full(mask.shape, self.offset, dtype=np.int64)
        for i, (d, s) in enumerate(zip(self.shape, self.strides)):
            v = np.asarray(idx[i], dtype=np.int64)  # a scalar, or one per thread
            if v.ndim and v.shape != mask.shape:
                v = np.broadcast_to(v, mask.shape)
            if d >= 0:
                bad = mask & ((v < 0) | (v >= d))
                if bad.any():
                    lane = int(np.argmax(bad))
                    raise SimError("%s: index %d of dim %d (size %d) out of bounds in thread %d"
                                   % (what, int(np.broadcast_to(v, mask.shape)[lane]), i, d,
                                      lane))
            off = off + v * s
        bad = mask & ((off < 0) | (off >= self.buf.size))
        if bad.any():
            raise SimError("%s: element %d outside the buffer of %d" %
                           (what, int(off[np.argmax(bad)]), self.buf.size))
        return np.where(mask, off, 0)


# -------------------------------------------------------------- execution

_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater,
         5: np.greater_equal, 6: np.less, 7: np.less_equal, 8: np.greater, 9: np.greater_equal}
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         6: np.not_equal, 13: np.not_equal}


def parse_number(text, elem):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("0x") and elem in ("f16", "f32", "f64", "bf16"):
        bits = int(text, 16)
        if elem == "f32":
            return np.array([bits], dtype=np.uint32).view(np.float32)[0]
        if elem == "f64":
            return np.array([bits], dtype=np.uint64).view(np.float64)[0]
        if elem == "f16":
            return np.array([bits], dtype=np.uint16).view(np.float16)[0]
        return np.array([bits << 16], dtype=np.uint32).view(np.float32)[0]
    return float(text) if elem[0] in "fb" else int(text, 0)


class Pending:
    """The accumulators of a wgmma.mma_async that has not completed (lazy
    mode): only another wgmma (chained) or a loop may take them before the
    wgmma.wait_group that completes it."""
    __slots__ = ("value",)

    def __init__(self):
        self.value = None


class Machine:
    def __init__(self, async_mode, smem_base=0):
        self.async_mode = async_mode
        self.async_copies = 0  # device_async_copy ops executed
        self.epoch, self.trackers = 0, {}
        self.ops = 0
        # The shared-window address of dynamic shared memory (what
        # memref.extract_aligned_pointer_as_index gives; a multiple of 16).
        self.smem_base = smem_base
        # Per shared buffer: elements in-flight wgmmas read; elements written
        # through the generic proxy and not yet fenced (writer thread, or -1).
        self.wgmma_reads, self.unfenced = {}, {}
        self.wgmma_seen = False

    # --- values
    def get(self, env, name):
        if name not in env:
            raise SimError("unknown value %s" % name)
        return env[name]

    def constant(self, op):
        v = prop(op, "value")
        (ty,) = result_types(op)
        kind, shape, elem = shaped(ty)
        if v.startswith("dense<"):
            body = v[len("dense<"):len("dense") + _close(v[len("dense"):])]
            if body.startswith("["):
                vals = [parse_number(x, elem) for x in re.findall(r"[-+\w.]+", body)]
                return cast_to(np.array(vals).reshape(shape), elem)
            return cast_to(np.full(shape, parse_number(body, elem)), elem)
        num = v.rsplit(":", 1)[0] if ":" in v else v
        return cast_to(np.array(parse_number(num, elem)), elem)

    def run_region(self, region, env, mask, ctx):
        """Runs the ops of a region; returns the operands of its terminator."""
        for op in region.ops:
            try:
                out = self.step(op, env, mask, ctx)
            except SimError:
                raise
            except Exception as e:  # a bug here or IR it does not understand
                raise SimError("line %d: %s: %s: %s" % (op.line, op.name, type(e).__name__, e))
            if out is not None and op.name in ("scf.yield", "gpu.terminator", "func.return"):
                return out
        return []

    def step(self, op, env, mask, ctx):
        self.ops += 1
        n = op.name
        vals = [self.get(env, o) for o in op.operands] if not n.startswith("gpu.launch") else None
        # (Only kernels with wgmma have Pending values: no scan elsewhere.)
        if self.wgmma_seen and vals and any(isinstance(v, Pending) for v in vals):
            vals = [v.value if isinstance(v, Pending) and v.value is not None else v
                    for v in vals]
            if n not in ("nvvm.wgmma.mma_async", "scf.yield") and any(
                    isinstance(v, Pending) for v in vals):
                raise SimError("line %d: %s reads wgmma accumulators before the "
                               "wgmma.wait_group that completes them" % (op.line, n))
        rt = result_types(op)

        def put(*xs):
            for r, x in zip(op.results, xs):
                env[r] = x

        T = ctx["T"]

        def full(x, shape=()):
            x = np.asarray(x)
            out = np.empty((T,) + tuple(shape), x.dtype)
            out[...] = x
            return out

        if n in ("scf.yield", "func.return"):
            return vals
        if n == "gpu.terminator":
            return []
        if n == "arith.constant":
            return put(self.constant(op))
        if n == "gpu.launch":
            return self.launch(op, env)
        if n in _BINARY:
            a, b = vals
            res = _BINARY[n](np.asarray(a), np.asarray(b))
            elem = shaped(rt[0])[2]
            return put(cast_to(res, elem) if elem[0] in "fb" else res)
        if n in ("arith.divui", "arith.divsi", "arith.remui", "arith.remsi", "arith.floordivsi",
                 "arith.ceildivsi", "arith.ceildivui"):
            a, b = np.asarray(vals[0]), np.asarray(vals[1])
            bb = np.where(b == 0, 1, b)
            if np.any(b == 0):
                raise SimError("line %d: %s by zero" % (op.line, n))
            if n in ("arith.divui", "arith.floordivsi"):
                return put(a // bb)
            if n == "arith.divsi":
                return put(np.trunc(a / bb).astype(np.int64))
            if n in ("arith.ceildivsi", "arith.ceildivui"):
                return put(-((-a) // bb))
            if n == "arith.remsi":
                return put(np.fmod(a, bb))
            return put(a % bb)
        if n == "arith.cmpi":
            return put(_CMPI[int_prop(op, "predicate")](vals[0], vals[1]))
        if n == "arith.cmpf":
            p = int_prop(op, "predicate")
            a, b = np.asarray(vals[0]), np.asarray(vals[1])
            if p == 15:
                return put(np.ones(np.broadcast(a, b).shape, bool))
            if p == 0:
                return put(np.zeros(np.broadcast(a, b).shape, bool))
            if p in (7, 14):
                nan = np.isnan(a) | np.isnan(b)
                return put(~nan if p == 7 else nan)
            if p in _CMPF:
                r = _CMPF[p](a, b)
                return put(r & ~(np.isnan(a) | np.isnan(b)) if p != 13 else r)
            unordered = {8: np.equal, 9: np.greater, 10: np.greater_equal, 11: np.less,
                         12: np.less_equal}[p]
            return put(unordered(a, b) | np.isnan(a) | np.isnan(b))
        if n in ("affine.apply", "affine.min", "affine.max"):
            fn = affine_map(prop(op, "map"))
            res = fn([np.asarray(v) for v in vals[:fn.ndims]],
                     [np.asarray(v) for v in vals[fn.ndims:]])
            if n == "affine.apply":
                return put(res[0])
            red = np.minimum if n == "affine.min" else np.maximum
            out = res[0]
            for r in res[1:]:
                out = red(out, r)
            return put(out)
        if n == "arith.select":
            return put(np.where(vals[0], vals[1], vals[2]))
        if n in ("arith.index_cast", "arith.index_castui", "arith.extsi", "arith.extui",
                 "arith.trunci", "arith.fptosi", "arith.fptoui"):
            elem = shaped(rt[0])[2]
            x = np.asarray(vals[0])
            if elem == "i1":
                return put((x & 1).astype(bool))
            if n in ("arith.fptosi", "arith.fptoui"):
                x = np.trunc(x)
            if n == "arith.extui" and x.dtype == np.bool_:
                return put(x.astype(np.int64))
            return put(x.astype(np.int64))
        if n in ("arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"):
            return put(cast_to(vals[0], shaped(rt[0])[2]))
        if n == "arith.negf":
            return put(-vals[0])
        if n in _UNARY:
            elem = shaped(rt[0])[2]
            with np.errstate(all="ignore"):
                r = _UNARY[n](np.asarray(vals[0]).astype(np.float64))
            return put(cast_to(r, elem))
        if n in ("math.fma", "vector.fma"):
            elem = shaped(rt[0])[2]
            r = np.asarray(vals[0]).astype(np.float64) * vals[1] + vals[2]
            return put(cast_to(r, elem))
        if n == "math.powf":
            with np.errstate(all="ignore"):
                return put(cast_to(np.power(np.asarray(vals[0], np.float64), vals[1]),
                                   shaped(rt[0])[2]))
        if n == "math.copysign":
            return put(np.copysign(vals[0], vals[1]))
        # ---- memory
        if n in ("memref.collapse_shape", "memref.expand_shape", "memref.reshape"):
            m = vals[0]
            _, shape, elem = shaped(rt[0])
            return put(Mem(m.buf, shape, elem, m.space, offset=m.offset))
        if n == "memref.cast":
            return put(vals[0])
        if n == "memref.subview":
            return put(self.subview(op, vals, mask))
        if n == "memref.view":
            base = vals[0]
            _, shape, elem = shaped(rt[0])
            shift = int(np.asarray(vals[1]).flat[0])
            return put(self.view(base, shift, shape, elem, op))
        if n == "gpu.dynamic_shared_memory":
            return put(ctx["dynamic"])
        if n in ("memref.alloc", "memref.alloca"):
            _, shape, elem = shaped(rt[0])
            size = int(np.prod(shape)) if shape else 1
            buf = np.full(size, np.nan if elem[0] in "fb" else 0, dtype=_DT[elem])
            return put(Mem(buf, shape, elem, memory_space(rt[0])))
        if n == "memref.dealloc":
            return None
        if n == "memref.load":
            m = vals[0]
            off = m.flat(vals[1:], mask, "line %d: %s" % (op.line, n))
            self.track(m, off, mask, False, op)
            return put(m.buf[off])
        if n == "memref.store":
            m = vals[1]
            off = m.flat(vals[2:], mask, "line %d: %s" % (op.line, n))
            v = np.broadcast_to(np.asarray(vals[0]), mask.shape)
            self.track(m, off, mask, True, op)
            m.buf[off[mask]] = cast_to(v[mask], m.elem)
            return None
        if n == "memref.atomic_rmw":
            kind = int_prop(op, "kind")
            m = vals[1]
            off = m.flat(vals[2:], mask, "line %d: %s" % (op.line, n))
            v = np.broadcast_to(np.asarray(vals[0]), mask.shape)
            old = m.buf[off].copy()
            for lane in np.nonzero(mask)[0]:
                cur = m.buf[off[lane]]
                x = v[lane]
                m.buf[off[lane]] = {0: lambda: cur + x, 1: lambda: cur + x, 3: lambda: x,
                                    4: lambda: max(cur, x), 5: lambda: max(cur, x),
                                    6: lambda: max(cur, x), 8: lambda: min(cur, x),
                                    9: lambda: min(cur, x), 10: lambda: min(cur, x),
                                    12: lambda: cur * x}[kind]()
            return put(old)
        if n in ("vector.load", "vector.store"):
            m = vals[0] if n == "vector.load" else vals[1]
            idx = vals[1:] if n == "vector.load" else vals[2:]
            vshape = shaped(rt[0] if n == "vector.load" else operand_types(op)[0])[1]
            count = int(np.prod(vshape))
            off = m.flat(idx, mask, "line %d: %s" % (op.line, n))
            if m.strides[-1] != 1:
                raise SimError("line %d: vector access of a strided memref" % op.line)
            last = np.broadcast_to(np.asarray(idx[-1]), mask.shape)
            if (mask & (last + count > m.shape[-1])).any():
                raise SimError("line %d: %s runs past the end of the row" % (op.line, n))
            lanes = off[:, None] + np.arange(count)[None, :]
            self.track(m, lanes, mask, n == "vector.store", op)
            if n == "vector.load":
                return put(m.buf[lanes].reshape((T,) + vshape))
            v = full(vals[0], vshape).reshape(T, count)
            m.buf[lanes[mask]] = cast_to(v[mask], m.elem)
            return None
        # ---- vectors
        if n == "vector.extract":
            pos = int_prop(op, "static_position")
            if any(p < 0 for p in pos):
                dyn = [np.asarray(x) for x in vals[1:]]
                raise SimError("line %d: dynamic vector.extract" % op.line) if dyn else None
            x = full(vals[0], shaped(operand_types(op)[0])[1])
            return put(x[(slice(None),) + tuple(pos)])
        if n == "vector.insert":
            pos = int_prop(op, "static_position")
            dest_t = result_types(op)[0]
            d = full(vals[1], shaped(dest_t)[1])
            d[(slice(None),) + tuple(pos)] = vals[0] if np.ndim(vals[0]) else vals[0]
            return put(d)
        if n == "vector.from_elements":
            shape = shaped(rt[0])[1]
            parts = [full(v) for v in vals]
            return put(np.stack(parts, axis=1).reshape((T,) + shape))
        if n == "vector.to_elements":
            shp = shaped(operand_types(op)[0])[1]
            x = full(vals[0], shp).reshape(T, -1)
            return put(*[x[:, i] for i in range(x.shape[1])])
        if n in ("vector.broadcast", "vector.splat"):
            shape = shaped(rt[0])[1]
            src = np.asarray(vals[0])
            if src.ndim <= 1 and (src.ndim == 0 or src.shape[0] == T) and len(shape) >= 1:
                return put(np.broadcast_to(full(src).reshape((T,) + (1,) * len(shape)),
                                           (T,) + shape).copy())
            return put(np.broadcast_to(src, (T,) + shape).copy())
        if n == "vector.shape_cast":
            return put(full(vals[0]).reshape((T,) + shaped(rt[0])[1]) if np.ndim(vals[0]) > 1
                       else np.asarray(vals[0]).reshape((T,) + shaped(rt[0])[1]))
        if n == "vector.reduction":
            kind = prop(op, "kind")
            x = np.asarray(vals[0])
            f = {"add": np.sum, "mul": np.prod, "maxnumf": np.max, "minnumf": np.min,
                 "maximumf": np.max, "minimumf": np.min}
            r = None
            for k, fn in f.items():
                if k in kind:
                    r = fn(x, axis=-1)
                    break
            if r is None:
                raise SimError("line %d: vector.reduction kind %s" % (op.line, kind))
            if len(vals) > 1:
                r = {"add": np.add, "mul": np.multiply}.get(kind.split("<")[-1].rstrip(">"),
                                                             np.add)(r, vals[1])
            return put(cast_to(r, shaped(rt[0])[2]))
        # ---- control flow
        if n == "scf.for":
            lo, hi, step = (np.asarray(v) for v in vals[:3])
            carried = vals[3:]
            body = op.regions[0]
            if not all(self.is_uniform(v, mask) for v in (lo, hi, step)):
                # Bounds that differ between threads: each runs its own
                # iterations (masked), keeping its values after its last.
                step = self.uniform(step, mask, op)
                i = np.broadcast_to(lo, mask.shape).astype(np.int64).copy()
                hi = np.broadcast_to(hi, mask.shape)
                carried = list(carried)
                while True:
                    live = mask & (i < hi)
                    if not live.any():
                        break
                    inner = dict(env)
                    inner[body.args[0]] = i.copy()
                    for a, v in zip(body.args[1:], carried):
                        inner[a] = v
                    new = self.run_region(body, inner, live, ctx)
                    for k, (old, v) in enumerate(zip(carried, new)):
                        v, old = np.asarray(v), np.asarray(old)
                        shape = np.broadcast(v, old).shape
                        sel = live.reshape((T,) + (1,) * (len(shape) - 1)) if shape else live
                        carried[k] = np.where(sel, np.broadcast_to(v, shape),
                                              np.broadcast_to(old, shape))
                    i = i + step
                return put(*carried)
            lo, hi, step = (self.uniform(v, mask, op) for v in (lo, hi, step))
            i = lo
            while i < hi:
                inner = dict(env)
                inner[body.args[0]] = np.int64(i)
                for a, v in zip(body.args[1:], carried):
                    inner[a] = v
                carried = self.run_region(body, inner, mask, ctx)
                i += step
            return put(*carried)
        if n == "scf.if":
            cond = np.broadcast_to(np.asarray(vals[0]), mask.shape)
            active = cond[mask]
            if active.size and active.all() or (not active.size):
                res = self.run_region(op.regions[0], dict(env), mask, ctx)
                return put(*res)
            if not active.any():
                if len(op.regions) > 1 and op.regions[1].ops:
                    return put(*self.run_region(op.regions[1], dict(env), mask, ctx))
                return None
            then = self.run_region(op.regions[0], dict(env), mask & cond, ctx)
            other = []
            if len(op.regions) > 1 and op.regions[1].ops:
                other = self.run_region(op.regions[1], dict(env), mask & ~cond, ctx)
            merged = []
            for a, b in zip(then, other):
                a, b = np.asarray(a), np.asarray(b)
                c = cond.reshape((T,) + (1,) * max(a.ndim - 1, b.ndim - 1, 0))
                merged.append(np.where(c, a, b))
            return put(*merged)
        # ---- gpu
        if n == "gpu.barrier":
            if not mask.all():
                raise SimError("line %d: gpu.barrier under divergent control flow" % op.line)
            self.epoch += 1
            return None
        if n in ("gpu.thread_id", "gpu.block_id", "gpu.block_dim", "gpu.grid_dim"):
            dim = "xyz".index(re.search(r"dim (\w)", op.props + op.attrs).group(1))
            return put(ctx[n][dim])
        if n == "gpu.shuffle":
            return put(*self.shuffle(op, vals, mask, T))
        if n == "gpu.subgroup_mma_load_matrix":
            return put(self.wmma_load(op, vals, mask, T))
        if n == "gpu.subgroup_mma_compute":
            a, b, c = vals
            return put((a.astype(np.float32) @ b.astype(np.float32) + c).astype(c.dtype))
        if n == "gpu.subgroup_mma_store_matrix":
            return self.wmma_store(op, vals, mask, T)
        if n == "gpu.subgroup_mma_constant_matrix":
            shape = shaped(rt[0].replace("!gpu.mma_matrix", "vector").replace(', "COp"', "")
                           .replace(', "AOp"', "").replace(', "BOp"', ""))[1]
            return put(np.broadcast_to(np.asarray(vals[0]).reshape(
                (-1,) + (1,) * len(shape)), (T,) + shape).copy())
        if n == "nvgpu.ldmatrix":
            return put(self.ldmatrix(op, vals, mask, T))
        if n == "nvgpu.mma.sync":
            return put(self.mma_sync(op, vals, mask, T))
        if n == "nvgpu.device_async_copy":
            self.async_copy(op, vals, mask, ctx)
            return put(None)
        if n in ("nvvm.cp.async.commit.group", "nvgpu.device_async_create_group"):
            ctx["groups"].append(ctx["pending"])
            ctx["pending"] = []
            return put(None) if op.results else None
        if n in ("nvvm.cp.async.wait.group", "nvgpu.device_async_wait"):
            keep = int_prop(op, "n" if n.startswith("nvvm") else "numGroups", 0)
            while len(ctx["groups"]) > keep:
                for fn in ctx["groups"].pop(0):
                    fn()
            return None
        # ---- LLVM structs (the wgmma accumulators): (T, fields) arrays
        if n == "llvm.mlir.undef":
            fields = len(re.findall(r"\bf32\b", rt[0]))
            return put(np.full((fields,), np.nan, np.float32))
        if n == "llvm.insertvalue":
            (pos,) = int_prop(op, "position")
            d = np.asarray(vals[0])
            d = np.broadcast_to(d, (T,) + d.shape[-1:]).copy() if d.ndim < 2 else d.copy()
            d[:, pos] = vals[1]
            return put(d)
        if n == "llvm.extractvalue":
            (pos,) = int_prop(op, "position")
            return put(np.asarray(vals[0])[..., pos].copy())
        if n == "memref.extract_aligned_pointer_as_index":
            if not isinstance(vals[0].buf, dict):
                raise SimError("line %d: only dynamic shared memory's address is modelled"
                               % op.line)
            return put(np.int64(self.smem_base + vals[0].offset))
        if n == "nvvm.fence.proxy":
            if "async.shared" not in op.props:
                raise SimError("line %d: fence.proxy %s is not modelled" % (op.line, op.props))
            lanes = np.nonzero(mask)[0]
            for w in self.unfenced.values():
                w[np.isin(w, lanes)] = -1
            return None
        if n == "nvvm.wgmma.fence.aligned":
            self.warpgroups(mask, T, op)
            return None
        if n == "nvvm.wgmma.mma_async":
            self.wgmma_seen = True
            return put(self.wgmma(op, vals, mask, T, ctx))
        if n == "nvvm.wgmma.commit.group.sync.aligned":
            ctx["wg_groups"].append(ctx["wg_pending"])
            ctx["wg_pending"] = []
            return None
        if n == "nvvm.wgmma.wait.group.sync.aligned":
            keep = int_prop(op, "group")
            while len(ctx["wg_groups"]) > keep:
                for fn in ctx["wg_groups"].pop(0):
                    fn()
            return None
        raise SimError("line %d: the simulator does not model %s" % (op.line, n))

    def subview(self, op, vals, mask):
        src = vals[0]
        seg = int_prop(op, "operandSegmentSizes")
        dyn = list(vals[1:])
        dynamic = -9223372036854775808
        parts = []
        for key, count in zip(("static_offsets", "static_sizes", "static_strides"), seg[1:]):
            static = int_prop(op, key)
            taken, out = dyn[:count], []
            dyn = dyn[count:]
            for v in static:
                if v != dynamic:
                    out.append(v)
                    continue
                x = taken.pop(0)
                # Offsets may differ between threads (each its own view: a
                # row group's slice); sizes and strides may not.
                if key == "static_offsets" and not self.is_uniform(x, mask):
                    out.append(np.where(mask, np.asarray(x, dtype=np.int64), 0))
                else:
                    out.append(self.uniform(x, mask, op))
            parts.append(out)
        offsets, sizes, strides = parts
        offset = src.offset + sum(o * st for o, st in zip(offsets, src.strides))
        _, result_shape, elem = shaped(result_types(op)[0])
        # Rank reduction drops unit dims (the leading ones first).
        drop = len(sizes) - len(result_shape)
        shape, new_strides = [], []
        for size, stride, st in zip(sizes, strides, src.strides):
            if drop and size == 1:
                drop -= 1
                continue
            shape.append(size)
            new_strides.append(stride * st)
        if tuple(shape) != tuple(result_shape):
            raise SimError("line %d: subview sizes %s do not give %s" % (op.line, sizes,
                                                                        result_shape))
        return Mem(src.buf, shape, elem, src.space, strides=new_strides, offset=offset)

    def track_tile(self, m, off, rows, cols, ld, T, write, op):
        """A warp-wide tile access (WMMA): lane 0 of each warp stands for it."""
        tile = (np.arange(rows)[:, None] * ld + np.arange(cols)[None, :]).ravel()
        lane0 = (np.arange(T) % 32) == 0
        self.track(m, off[:, None] + tile[None, :], lane0, write, op)

    def track(self, mem, offsets, mask, write, op):
        """Checks a shared-memory access of the active lanes against the
        others since the last barrier: an element written by one warp and
        read or written by another, or read by one and written by another,
        in the same barrier epoch is a race (a missing gpu.barrier)."""
        if mem.space != "workgroup" or not isinstance(mem.buf, np.ndarray):
            return
        lanes = np.nonzero(mask)[0]
        if not lanes.size:
            return
        offs = np.asarray(offsets).reshape(mask.shape[0], -1)[lanes]
        o = offs.ravel()
        w = np.repeat(lanes // 32, offs.shape[1])
        if write and op.name != "nvvm.wgmma.mma_async":
            reads = self.wgmma_reads.get(id(mem.buf))
            if reads is not None and reads[o].any():
                raise SimError("line %d: %s overwrites shared memory that an in-flight "
                               "wgmma.mma_async reads (element %d)" %
                               (op.line, op.name, int(o[np.argmax(reads[o])])))
            unf = self.unfenced.setdefault(id(mem.buf), np.full(mem.buf.size, -1, np.int64))
            unf[o] = np.repeat(lanes, offs.shape[1])
        t = self.trackers.get(id(mem.buf))
        if t is None:
            t = self.trackers[id(mem.buf)] = {k: np.full(mem.buf.size, -1, np.int64)
                                              for k in ("we", "ww", "re", "rw")}
        e = self.epoch
        # Per element of this access: its lowest and highest warp.
        order = np.lexsort((w, o))
        o_s, w_s = o[order], w[order]
        first = np.r_[True, o_s[1:] != o_s[:-1]]
        at = np.flatnonzero(first)
        elems, lo = o_s[at], w_s[at]
        hi = np.maximum.reduceat(w_s, at)
        other_wrote = (t["we"][elems] == e) & ((t["ww"][elems] != lo) | (hi != lo))
        bad = other_wrote
        if write:
            other_read = (t["re"][elems] == e) & ((t["rw"][elems] != lo) | (hi != lo))
            bad = bad | other_read | (hi != lo)
        if bad.any():
            i = int(np.argmax(bad))
            raise SimError("line %d: %s: shared-memory race on element %d (warp %d %s it, "
                           "another warp accessed it since the last gpu.barrier)" %
                           (op.line, op.name, int(elems[i]), int(lo[i]),
                            "writes" if write else "reads"))
        if write:
            t["we"][elems], t["ww"][elems] = e, lo
        else:
            several = (hi != lo) | ((t["re"][elems] == e) & (t["rw"][elems] != lo))
            t["rw"][elems] = np.where(several, -2, lo)
            t["re"][elems] = e

    def is_uniform(self, v, mask):
        v = np.asarray(v)
        if v.ndim == 0:
            return True
        act = v[mask]
        return not act.size or (act == act[0]).all()

    def uniform(self, v, mask, op):
        v = np.asarray(v)
        if v.ndim == 0:
            return int(v)
        act = v[mask]
        if act.size and (act != act[0]).any():
            raise SimError("line %d: loop bounds differ between threads" % op.line)
        return int(act[0]) if act.size else int(v.flat[0])

    def view(self, base, shift, shape, elem, op):
        esize = 2 if elem in ("f16", "bf16") else np.dtype(_DT[elem]).itemsize
        if elem == "f32" and base.elem == "i8":
            esize = 4
        if shift % esize:
            raise SimError("line %d: memref.view at a misaligned byte offset" % op.line)
        # The byte buffer of dynamic shared memory is kept per element type
        # (one array per type, byte offsets divided by its size).
        arena = base.buf
        key = (elem, esize)
        if key not in arena:
            arena[key] = np.full(arena["bytes"] // esize, np.nan, dtype=_DT[elem])
        size = int(np.prod(shape))
        start = shift // esize
        if start + size > arena[key].size:
            raise SimError("line %d: memref.view past the end of dynamic shared memory" % op.line)
        return Mem(arena[key], shape, elem, "workgroup", offset=start)

    # --- launches
    def launch(self, op, env):
        seg = int_prop(op, "operandSegmentSizes")
        names = op.operands
        vals = [self.get(env, o) for o in names]
        # asyncDependencies, gridX..Z, blockX..Z, clusterX..Z, dynamicSharedMemorySize
        k = seg[0]
        grid = [int(vals[k + i]) for i in range(3)]
        block = [int(vals[k + 3 + i]) for i in range(3)]
        k += 6 + seg[7] + seg[8] + seg[9] if len(seg) > 10 else 6
        dyn = int(vals[k]) if seg[-1] else 0
        body = op.regions[0]
        nwg = int_prop(op, "workgroup_attributions", 0)
        T = block[0] * block[1] * block[2]
        tid = np.arange(T)
        tx, ty, tz = tid % block[0], (tid // block[0]) % block[1], tid // (block[0] * block[1])
        for bz in range(grid[2]):
            for by in range(grid[1]):
                for bx in range(grid[0]):
                    inner = dict(env)
                    ids = [np.int64(bx), np.int64(by), np.int64(bz), tx, ty, tz,
                           np.int64(grid[0]), np.int64(grid[1]), np.int64(grid[2]),
                           np.int64(block[0]), np.int64(block[1]), np.int64(block[2])]
                    for a, v in zip(body.args[:12], ids):
                        inner[a] = v
                    for a, t in zip(body.args[12:12 + nwg], body.arg_types[12:12 + nwg]):
                        _, shape, elem = shaped(t)
                        buf = np.full(int(np.prod(shape)), np.nan if elem[0] in "fb" else 0,
                                      dtype=_DT[elem])
                        inner[a] = Mem(buf, shape, elem, "workgroup")
                    self.epoch, self.trackers = 0, {}  # fresh shared memory
                    arena = {"bytes": dyn}
                    ctx = {"T": T, "dynamic": Mem(arena, (dyn,), "i8", "workgroup"),
                           "groups": [], "pending": [], "wg_groups": [], "wg_pending": []}
                    self.wgmma_reads, self.unfenced = {}, {}
                    self.run_region(body, inner, np.ones(T, bool), ctx)
                    if ctx["groups"] or ctx["pending"]:
                        raise SimError("line %d: the kernel ends with cp.async copies never "
                                       "waited for" % op.line)
                    if ctx["wg_groups"] or ctx["wg_pending"]:
                        raise SimError("line %d: the kernel ends with wgmma operations never "
                                       "waited for" % op.line)
        return None

    # --- warp-level instructions (PTX ISA fragment layouts)
    def warps(self, mask, T, op):
        if T % 32 or not mask.all():
            raise SimError("line %d: %s needs whole, converged warps" % (op.line, op.name))
        return T // 32

    def ldmatrix(self, op, vals, mask, T):
        m = vals[0]
        tiles = int_prop(op, "numTiles")
        trans = prop(op, "transpose") == "true"
        W = self.warps(mask, T, op)
        off = m.flat(vals[1:], mask, "line %d: ldmatrix" % op.line)
        if m.strides[-1] != 1:
            raise SimError("line %d: ldmatrix rows must be contiguous" % op.line)
        # Lanes 0 .. 8 * tiles - 1 of each warp give the rows it reads.
        gives = (np.arange(T) % 32) < 8 * tiles
        self.track(m, off[:, None] + np.arange(8)[None, :], gives, False, op)
        if ((off[gives] * 2) % 16).any():  # each row address: 16 bytes aligned
            raise SimError("line %d: ldmatrix row address not 16-byte aligned" % op.line)
        rows = off.reshape(W, 32)[:, :8 * tiles].reshape(W, tiles, 8)
        if rows.min() < 0 or rows.max() + 8 > m.buf.size:
            raise SimError("line %d: ldmatrix reads past its buffer" % op.line)
        # mats[w, j, r, c]: matrix j's row r (from lane 8j+r), column c.
        mats = m.buf[rows[..., None] + np.arange(8)]
        if trans:
            mats = mats.swapaxes(-1, -2)
        # Lane l holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1.
        lane = np.arange(32)[:, None]
        out = mats[:, :, lane // 4, 2 * (lane % 4) + np.arange(2)[None, :]]  # W, tiles, 32, 2
        return np.ascontiguousarray(out.transpose(0, 2, 1, 3)).reshape(T, tiles, 2)

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _mma_layout(K):
        """Per lane (32), fragment register and element: the (row, column) of
        A (16 x K), B (K x 8) and C/D (16 x 8) it holds (PTX ISA, mma.m16n8k16
        and m16n8k8 fragment layouts); each index array lanes x registers x
        elements."""
        lane = np.arange(32)[:, None, None]
        g, t = lane // 4, lane % 4
        r = np.arange(4)[None, :, None]  # the register (A: 4, B and C: the first 2)
        e = np.arange(2)[None, None, :]  # the element of a register
        rb = r[:, :2]
        if K == 16:
            a = (g + 8 * (r % 2), 2 * t + e + 8 * (r // 2))
            b = (2 * t + e + 8 * rb, g)
        else:  # one tf32 element a register
            a = (g + 8 * (r % 2), t + 4 * (r // 2))
            b = (t + 4 * rb, g)
        c = (g + 8 * rb, 2 * t + e)
        ne = 2 if K == 16 else 1
        return tuple(tuple(np.broadcast_to(x, (32, regs, n)) for x in xs)
                     for xs, regs, n in ((a, 4, ne), (b, 2, ne), (c, 2, 2)))

    def mma_sync(self, op, vals, mask, T):
        shape = int_prop(op, "mmaShape")
        # Uniform fragments (constants) hold one value for every lane.
        a, b, c = (np.broadcast_to(np.asarray(v), (T,) + shaped(t)[1]) for v, t in
                   zip(vals, operand_types(op)))
        tf32 = re.search(r"\btf32Enabled\b", op.props + op.attrs) is not None
        W = self.warps(mask, T, op)
        M, N, K = shape
        if (M, N) != (16, 8) or K not in (8, 16):
            raise SimError("line %d: mma.sync shape %s is not modelled" % (op.line, shape))
        (ar, ac), (br, bc), (cr, cc) = self._mma_layout(K)
        ne = 2 if K == 16 else 1
        A = np.zeros((W, 16, K), np.float64)
        B = np.zeros((W, K, 8), np.float64)
        C = np.zeros((W, 16, 8), np.float64)
        A[:, ar, ac] = a.reshape((W, 32) + a.shape[1:])[:, :, :4, :ne]
        B[:, br, bc] = b.reshape((W, 32) + b.shape[1:])[:, :, :2, :ne]
        C[:, cr, cc] = c.reshape((W, 32) + c.shape[1:])[:, :, :2, :2]
        if tf32:  # tf32 keeps 10 mantissa bits
            A = (A.astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
            B = (B.astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
        D = A.astype(np.float64) @ B.astype(np.float64) + C
        out = D[:, cr, cc].reshape((T,) + c.shape[1:])
        return out.astype(c.dtype)

    def warpgroups(self, mask, T, op):
        if T % 128 or not mask.all():
            raise SimError("line %d: %s needs whole, converged warpgroups" % (op.line, op.name))
        return T // 128

    def wgmma_operand(self, desc, rows, cols, k_major, what, op, esize=2):
        """Element offsets (rows x cols, an operand's M x K or N x K) of the
        dynamic shared memory that a matrix descriptor addresses, from the PTX
        ISA's canonical layouts (128-byte swizzle: Swizzle<3,4,3> on the
        byte address) for 16-bit elements, or K-major 4-byte ones (tf32)."""
        desc = int(desc)
        start = (desc & 0x3FFF) << 4
        lbo = ((desc >> 16) & 0x3FFF) << 4
        sbo = ((desc >> 32) & 0x3FFF) << 4
        base_offset, swizzle = (desc >> 49) & 7, (desc >> 62) & 3
        if swizzle != 1 or base_offset:
            raise SimError("line %d: %s descriptor: only the 128-byte swizzle with base offset "
                           "0 is modelled (swizzle mode %d, base offset %d)" %
                           (op.line, what, swizzle, base_offset))
        mn = np.arange(rows)[:, None]
        k = np.arange(cols)[None, :]
        if k_major:  # ((8,m),(T,2k)):((8T,SBO),(1,T))
            addr = start + (mn % 8) * 128 + (mn // 8) * sbo + k * esize
        else:  # ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))
            addr = start + (mn % 64) * 2 + (mn // 64) * lbo + (k % 8) * 128 + (k // 8) * sbo
        addr = addr ^ (((addr >> 7) & 7) << 4)
        rel = addr - self.smem_base
        return rel // esize, rel

    def wgmma(self, op, vals, mask, T, ctx):
        acc, desc_a, desc_b = vals
        groups = self.warpgroups(mask, T, op)
        shape = re.search(r"shape = #nvvm.shape<m = (\d+), n = (\d+), k = (\d+)>", op.props)
        M, N, K = (int(x) for x in shape.groups())
        ta = re.search(r"typeA = #nvvm.wgmma_type<(\w+)>", op.props).group(1)
        tb = re.search(r"typeB = #nvvm.wgmma_type<(\w+)>", op.props).group(1)
        td = re.search(r"typeD = #nvvm.wgmma_type<(\w+)>", op.props).group(1)
        tf32 = ta == "tf32"
        if (M, K) != (64, 8 if tf32 else 16) or ta != tb or ta not in ("f16", "bf16", "tf32") \
                or td != "f32":
            raise SimError("line %d: wgmma %s x %s -> %s m%dn%dk%d is not modelled" %
                           (op.line, ta, tb, td, M, N, K))
        if "wgmma_scale_out<one>" not in op.props or "scale_in<neg>" in op.props:
            raise SimError("line %d: only wgmma with scale-d 1 and no negation is modelled"
                           % op.line)
        a_kmajor = "layoutA = #nvvm.mma_layout<row>" in op.props
        b_kmajor = "layoutB = #nvvm.mma_layout<col>" in op.props
        if tf32 and not (a_kmajor and b_kmajor):
            raise SimError("line %d: tf32 wgmma reads K-major operands only" % op.line)
        elem, esize = ("f32", 4) if tf32 else (ta, 2)
        arena = ctx["dynamic"].buf
        key = (elem, esize)
        if key not in arena:
            raise SimError("line %d: wgmma reads %s shared memory never written" % (op.line, elem))
        buf = arena[key]
        da, db = (np.broadcast_to(np.asarray(d), (T,)) for d in (desc_a, desc_b))
        reads, plans = [], []
        for g in range(groups):
            sl = slice(128 * g, 128 * g + 128)
            if (da[sl] != da[sl][0]).any() or (db[sl] != db[sl][0]).any():
                raise SimError("line %d: wgmma descriptors differ within warpgroup %d" %
                               (op.line, g))
            ea, ra = self.wgmma_operand(da[sl][0], M, K, a_kmajor, "A", op, esize)
            eb, rb = self.wgmma_operand(db[sl][0], N, K, b_kmajor, "B", op, esize)
            for rel, what in ((ra, "A"), (rb, "B")):
                if (rel < 0).any() or (rel + esize > arena["bytes"]).any():
                    raise SimError("line %d: wgmma %s reads outside dynamic shared memory" %
                                   (op.line, what))
            unf = self.unfenced.get(id(buf))
            if unf is not None:
                for e, what in ((ea, "A"), (eb, "B")):
                    bad = unf[e.ravel()] >= 0
                    if bad.any():
                        raise SimError(
                            "line %d: wgmma reads %s (element %d) that thread %d wrote through "
                            "the generic proxy without a later fence.proxy.async" %
                            (op.line, what, int(e.ravel()[np.argmax(bad)]),
                             int(unf[e.ravel()][np.argmax(bad)])))
            # The warpgroup's first warp stands for its reads (races).
            lane0 = np.zeros(T, bool)
            lane0[128 * g] = True
            both = np.concatenate([ea.ravel(), eb.ravel()])
            self.track(Mem(buf, (buf.size,), elem, "workgroup"),
                       np.broadcast_to(both, (T, both.size)), lane0, False, op)
            reads.append(both)
            plans.append((g, ea, eb))
        result = Pending()
        acc_in = acc

        def done():
            c = np.asarray(acc_in.value if isinstance(acc_in, Pending) else acc_in)
            c = np.broadcast_to(c, (T, N // 2))
            out = np.zeros((T, N // 2), np.float32)
            x = np.arange(128)
            w, lane = x // 32, x % 32
            grp, t = lane // 4, lane % 4
            i = np.arange(N // 2)
            j, h, e = i // 4, (i // 2) % 2, i % 2
            rows = 16 * w[:, None] + grp[:, None] + 8 * h[None, :]
            cols = 8 * j[None, :] + 2 * t[:, None] + e[None, :]
            for g, ea, eb in plans:
                A, B = buf[ea], buf[eb]
                if tf32:  # tf32 keeps 10 mantissa bits
                    A = (A.astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
                    B = (B.astype(np.float32).view(np.uint32) & 0xFFFFE000).view(np.float32)
                A, B = A.astype(np.float64), B.astype(np.float64)
                C = np.zeros((M, N))
                C[rows, cols] = c[128 * g:128 * g + 128]
                D = A @ B.T + C
                out[128 * g:128 * g + 128] = D[rows, cols].astype(np.float32)
            result.value = out
            reads_of = self.wgmma_reads.get(id(buf))
            if reads_of is not None:
                for r in reads:
                    reads_of[r] = False

        # Always completed as late as the waits allow: what writes the
        # operands before then is an error (reads_of), what reads the
        # accumulators before then is one too (Pending).
        flags = self.wgmma_reads.setdefault(id(buf), np.zeros(buf.size, bool))
        for r in reads:
            flags[r] = True
        ctx["wg_pending"].append(done)
        return result

    def async_copy(self, op, vals, mask, ctx):
        count = int(prop(op, "dstElements").split(":")[0])
        # dst, dstIndices..., src, srcIndices..., [srcElements]
        dst = vals[0]
        k = 1 + len(dst.shape)
        dst_idx = vals[1:k]
        src = vals[k]
        src_idx = vals[k + 1:k + 1 + len(src.shape)]
        src_elems = vals[k + 1 + len(src.shape)] if len(vals) > k + 1 + len(src.shape) else None
        what = "line %d: device_async_copy" % op.line
        d = dst.flat(dst_idx, mask, what)
        s = src.flat(src_idx, mask, what)
        size = 2 if dst.elem in ("f16", "bf16") else np.dtype(_DT[dst.elem]).itemsize
        if ((d[mask] * size) % (count * size)).any() or ((s[mask] * size) % (count * size)).any():
            raise SimError(what + ": a %d-byte copy at an address it does not divide"
                           % (count * size))
        m = mask.copy()
        if (m & (np.broadcast_to(np.asarray(src_idx[-1]), m.shape) + count > src.shape[-1])).any():
            raise SimError(what + ": the copy runs past the source row")
        n_src = (np.broadcast_to(np.asarray(src_elems), m.shape) if src_elems is not None
                 else np.full(m.shape, count))

        def done():
            self.track(dst, d[:, None] + np.arange(count)[None, :], m, True, op)
            for lane in np.nonzero(m)[0]:
                k2 = int(n_src[lane])
                dst.buf[d[lane]:d[lane] + count] = 0
                dst.buf[d[lane]:d[lane] + k2] = src.buf[s[lane]:s[lane] + k2]

        self.async_copies += 1
        if self.async_mode == "eager":
            done()
            ctx["pending"].append(lambda: None)
        else:
            ctx["pending"].append(done)

    def shuffle(self, op, vals, mask, T):
        x, offset, width = (np.asarray(v) for v in vals)
        mode = re.search(r"shuffle_mode (\w+)", op.props + op.attrs).group(1)
        self.warps(mask, T, op)
        lane = np.arange(T) % 32
        off = np.broadcast_to(offset, (T,))
        wid = np.broadcast_to(width, (T,))
        seg = lane - lane % wid
        src = {"xor": lane ^ off, "down": lane + off, "up": lane - off, "idx": seg + off}[mode]
        valid = (src >= seg) & (src < seg + wid)
        src = np.where(valid, src, lane)
        warp0 = np.arange(T) - lane
        xs = np.broadcast_to(x, (T,) + np.shape(x)[1:])
        return xs[warp0 + src], valid

    def wmma_load(self, op, vals, mask, T):
        m = vals[0]
        ld = int_prop(op, "leadDimension")
        shape = shaped(result_types(op)[0].replace("!gpu.mma_matrix", "vector")
                       .split(", \"")[0] + ">")[1]
        self.warps(mask, T, op)
        off = m.flat(vals[1:], mask, "line %d: subgroup_mma_load_matrix" % op.line)
        trans = prop(op, "transpose") is not None
        out = np.zeros((T,) + shape, dtype=m.buf.dtype)
        rows, cols = shape if not trans else shape[::-1]
        self.track_tile(m, off, rows, cols, ld, T, False, op)
        for w in range(T // 32):
            o = off[w * 32]
            if (off[w * 32:w * 32 + 32] != o).any():
                raise SimError("line %d: WMMA load at different addresses in one warp" % op.line)
            rows, cols = shape if not trans else shape[::-1]
            mat = np.stack([m.buf[o + r * ld:o + r * ld + cols] for r in range(rows)])
            out[w * 32:w * 32 + 32] = mat.T if trans else mat
        return out

    def wmma_store(self, op, vals, mask, T):
        v, m = vals[0], vals[1]
        ld = int_prop(op, "leadDimension")
        self.warps(mask, T, op)
        off = m.flat(vals[2:], mask, "line %d: subgroup_mma_store_matrix" % op.line)
        self.track_tile(m, off, v.shape[1], v.shape[2], ld, T, True, op)
        for w in range(T // 32):
            mat = v[w * 32]
            o = off[w * 32]
            for r in range(mat.shape[0]):
                m.buf[o + r * ld:o + r * ld + mat.shape[1]] = cast_to(mat[r], m.elem)
        return None


_BINARY = {
    "arith.addi": np.add, "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.shli": np.left_shift, "arith.shrui": np.right_shift, "arith.shrsi": np.right_shift,
    "arith.minui": np.minimum, "arith.minsi": np.minimum, "arith.maxui": np.maximum,
    "arith.maxsi": np.maximum, "arith.addf": np.add, "arith.subf": np.subtract,
    "arith.mulf": np.multiply, "arith.divf": np.divide, "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum, "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin,
    "arith.remf": np.fmod,
}
_UNARY = {
    "math.exp": np.exp, "math.log": np.log, "math.tanh": np.tanh, "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x), "math.absf": np.abs, "math.exp2": np.exp2,
    "math.log2": np.log2, "math.log1p": np.log1p, "math.expm1": np.expm1, "math.sin": np.sin,
    "math.cos": np.cos, "math.floor": np.floor, "math.ceil": np.ceil, "math.erf": None,
    "math.atan": np.arctan, "math.round": np.round,
}
try:
    from math import erf as _erf
    _UNARY["math.erf"] = np.vectorize(_erf)
except ImportError:  # pragma: no cover
    del _UNARY["math.erf"]


def load_npy(path, dtype):
    a = np.load(path)
    if dtype == "bf16" and a.dtype == np.uint16:
        return (a.astype(np.uint32) << 16).view(np.float32)
    return a


def lower(source, options, neo_bin):
    """The host function and kernels of `source` after neo-lower-to-ptx{stop-after=gpu}."""
    import subprocess
    tool = os.path.join(neo_bin, "neo-opt") if neo_bin else "neo-opt"
    text = open(source).read()
    if source.endswith(".neo"):
        tr = os.path.join(neo_bin, "neo-translate") if neo_bin else "neo-translate"
        try:
            text = subprocess.run([tr, "--import-neo", "-"], input=text, capture_output=True,
                                  text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            raise SimError("cannot import %s with %s: %s" % (source, tr, e))
    pipeline = "builtin.module(neo-lower-to-ptx{stop-after=gpu %s})" % options
    try:
        proc = subprocess.run([tool, "-", "--pass-pipeline=" + pipeline,
                               "-mlir-print-op-generic"], input=text, capture_output=True,
                              text=True)
    except OSError as e:
        raise SimError("cannot run %s (--neo-bin, or neo-opt on PATH): %s" % (tool, e))
    if proc.returncode:
        raise SimError("neo-opt failed:\n" + proc.stderr)
    return proc.stdout


def simulate(top, bundle, manifest, mode, rtol, atol, smem_base=0):
    """Runs the bundle's function on its inputs; prints whether it matched and
    returns (matched, the number of asynchronous copies it issued)."""
    funcs = [op for m in top.ops for r in m.regions for op in r.ops
             if op.name == "func.func" and ('sym_name = "%s"' % manifest["function"]) in op.props]
    if not funcs:
        raise SimError("no function %s in the IR" % manifest["function"])
    body = funcs[0].regions[0]
    env = {}
    ins = [b for b in manifest["buffers"] if b["role"] == "input"]
    outs = [b for b in manifest["buffers"] if b["role"] == "output"]
    if len(body.args) != len(ins) + len(outs):
        raise SimError("the function takes %d buffers, the bundle has %d inputs and %d "
                       "outputs" % (len(body.args), len(ins), len(outs)))
    for a, t, b in zip(body.args, body.arg_types, ins + outs):
        _, shape, elem = shaped(t)
        if b["role"] == "input":
            data = load_npy(os.path.join(bundle, "inputs", b["name"] + ".npy"), elem)
            buf = cast_to(np.asarray(data).reshape(-1), elem).copy()
        else:
            buf = np.full(int(np.prod(shape)) if shape else 1, np.nan, dtype=_DT[elem])
        env[a] = Mem(buf, shape, elem, "global")
    machine = Machine(mode, smem_base)
    machine.run_region(body, env, np.ones(1, bool), {"T": 1})
    ok = True
    for a, b in zip(body.args[len(ins):], outs):
        got = env[a].buf.astype(np.float64)
        want = load_npy(os.path.join(bundle, "expected", b["name"] + ".npy"),
                        b["dtype"]).astype(np.float64).reshape(-1)
        # neo-cuda-runner's defaults (include/neo/Runtime/Support/Tolerance.h).
        drtol, datol = {"f16": (1e-2, 1e-2), "bf16": (3e-2, 3e-2), "f64": (1e-9, 1e-11)}.get(
            b["dtype"], (1e-4, 1e-5))
        rtol_b = drtol if rtol is None else rtol
        atol_b = datol if atol is None else atol
        err = np.abs(got - want)
        bad = ~(err <= atol_b + rtol_b * np.abs(want))
        rel = float(np.max(err / (np.abs(want) + atol_b))) if err.size else 0.0
        print("%s: %d elements, max abs error %.3g, max rel error %.3g%s" %
              (b["name"], got.size, float(np.max(err)) if err.size else 0.0, rel,
               "" if not bad.any() else ", %d outside tolerance (first at %d: %r vs %r)" %
               (int(bad.sum()), int(np.argmax(bad)), got[np.argmax(bad)], want[np.argmax(bad)])))
        ok &= not bad.any()
    print("gpusim: %s (%s copies, %d ops executed)" %
          ("match" if ok else "MISMATCH", mode, machine.ops))
    return ok, machine.async_copies


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ir", nargs="?", help="the function after neo-lower-to-ptx{stop-after=gpu}, "
                    "generic form (or --source)")
    ap.add_argument("--source", help="lower this .mlir/.neo file with neo-opt first")
    ap.add_argument("--gpu-pipeline-options", default="", help="with --source: options of "
                    "neo-lower-to-ptx (the bundle's)")
    ap.add_argument("--neo-bin", default="", help="where neo-opt is (default: PATH)")
    ap.add_argument("--bundle", required=True, help="a bundle with inputs/ and expected/")
    ap.add_argument("--async", dest="async_mode", choices=["eager", "lazy", "both"],
                    default="both")
    ap.add_argument("--rtol", type=float, default=None,
                    help="default: the runner's for the output's dtype (f32: 1e-4)")
    ap.add_argument("--atol", type=float, default=None, help="default: as the runner (f32: 1e-5)")
    ap.add_argument("--smem-base", type=lambda x: int(x, 0), default=0x400,
                    help="the shared-window address of dynamic shared memory (default 0x400: "
                    "sm_90 reserves the first 1 KiB); a multiple of 16")
    args = ap.parse_args(argv)
    try:
        if args.source:
            text = lower(args.source, args.gpu_pipeline_options, args.neo_bin)
        elif args.ir:
            text = open(args.ir).read()
        else:
            raise SimError("give the IR or --source")
        top = parse(text.splitlines())
        with open(os.path.join(args.bundle, "manifest.json")) as f:
            manifest = json.load(f)
        modes = ["eager", "lazy"] if args.async_mode == "both" else [args.async_mode]
        if args.smem_base % 16:
            raise SimError("--smem-base must be a multiple of 16")
        ok, copies = simulate(top, args.bundle, manifest, modes[0], args.rtol, args.atol,
                              args.smem_base)
        for m in modes[1:]:
            # The modes differ only in when asynchronous copies land: without
            # any, a second run would repeat the first op for op.
            if copies:
                ok &= simulate(top, args.bundle, manifest, m, args.rtol, args.atol,
                               args.smem_base)[0]
            else:
                print("gpusim: %s (%s copies: none issued, the %s run stands for it)" %
                      ("match" if ok else "MISMATCH", m, modes[0]))
        return 0 if ok else 1
    except SimError as e:
        print("gpusim: error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
