"""Neo operators inside PyTorch: a new operator written in the .neo language
becomes a function on torch.Tensors that records autograd, with the backward
that neo-autodiff derives.

    import torch, neo.torch
    layer = neo.torch.op('''
    def layer(x: f32[64, 784], w: f32[784, 512], b: f32[512]) -> y {
      y[i, j] = relu(sum(k) x[i, k] * w[k, j] + b[j])
    }''')
    y = layer(x, w, b)          # torch.Tensor; y.sum().backward() fills w.grad

The function is split into f_fwd(x...) -> (y..., saved...) and
f_bwd(...) -> (dx...) (neo-autodiff split=true): the forward values the
backward needs are saved by autograd (ctx.save_for_backward) or recomputed,
as neo-autodiff's cost rule decides (max_saved_bytes bounds them). Inputs
and outputs pass zero-copy between torch and Neo (CPU tensors share their
memory with the numpy arrays Neo's runtime reads and writes; outputs are
allocated by torch). Shapes and dtypes are those of the .neo signature.
docs/pytorch.md has the details and what is not there yet.
"""
import hashlib
import math
import os
import re
import threading

import numpy as np
import torch

import neo as _neo
from neo import overlap as _overlap

__all__ = ["op", "Op", "Module"]

# Neo's compiled code runs its parallel loops on LLVM's OpenMP runtime
# (libomp), PyTorch on its own (GNU libgomp): two thread pools on the same
# cores. libomp's workers spin for 200 ms after each parallel region
# (KMP_BLOCKTIME) and take the cores from PyTorch's threads; on two cores
# an MI-LSTM step with a hidden size of 256 took 99 ms with Neo on two
# threads, 46 ms with KMP_BLOCKTIME=0 (docs/pytorch.md, "Threads"). libomp
# reads the variable when Neo first loads it, at the first compile: a value
# the user set stays.
os.environ.setdefault("KMP_BLOCKTIME", "0")

_TORCH_DTYPES = {np.dtype(np.float16): torch.float16, np.dtype(np.uint16): torch.bfloat16,
                 np.dtype(np.float32): torch.float32,
                 np.dtype(np.float64): torch.float64, np.dtype(np.int32): torch.int32,
                 np.dtype(np.int64): torch.int64}


def _fresh(base, taken):
    name, n = base, 1
    while name in taken:
        name, n = "%s_%d" % (base, n), n + 1
    taken.add(name)
    return name


_DTYPE_NAMES = {"f16": torch.float16, "f32": torch.float32, "f64": torch.float64,
                "i32": torch.int32, "i64": torch.int64}


class _Instance:
    """f_fwd and f_bwd of one function at one binding of its size parameters."""

    def __init__(self, module, name, wrt, options, opt_level, max_saved_bytes, overlap):
        taken = set(module.functions)
        fwd, bwd = _fresh(name + "_fwd", taken), _fresh(name + "_bwd", taken)
        opts = ("function=%s split=true fwd-name=%s bwd-name=%s combined-name=%s grad-name=%s"
                % (name, fwd, bwd, _fresh(name + "_fwdbwd", taken), _fresh(name + "_grad", taken)))
        if wrt:
            opts += " wrt=%s" % ",".join(str(int(i)) for i in wrt)
        if max_saved_bytes is not None:
            opts += " max-saved-bytes=%d" % max_saved_bytes
        module.run_pipeline("neo-autodiff{%s},neo-keep-functions{functions=%s,%s}"
                            % (opts, fwd, bwd))
        self._names = (fwd, bwd)
        self.tuned = threading.Event()
        self.error = None
        self._done = threading.Event()
        if overlap:
            # NeoFlow's overlap (neo.overlap): a version compiled quickly
            # now, the tuned one in the background thread, swapped in
            # between calls. Both compute the same function, so values that
            # a quick forward saved serve a tuned backward.
            quick_options, quick_level = _overlap.QUICK
            self._pair = self._compile(module, quick_options, quick_level)
            text = str(module)
            _overlap._submit(lambda: self._compile_tuned(text, options, opt_level))
        else:
            self._pair = self._compile(module, options, opt_level)
            self.tuned.set()
            self._done.set()
        fwd, bwd = self._pair
        # (name, dtype, shape) of f_fwd's outputs and f_bwd's, for allocation.
        self.fwd_outputs, self.bwd_outputs = fwd.outputs, bwd.outputs
        self.inputs = [(n, _TORCH_DTYPES[d], s) for n, d, s in fwd.inputs]
        # f_fwd returns the results, then the saved values ("saved.K").
        results = [o for o in fwd.outputs if not o[0].startswith("saved.")]
        self.outputs = [(n, _TORCH_DTYPES[d], s) for n, d, s in results]
        self.num_saved = len(fwd.outputs) - len(results)
        # f_bwd's arguments: inputs it reads, results it reads, saved values, dy...
        input_index = {n: i for i, (n, _, _) in enumerate(self.inputs)}
        output_index = {n: k for k, (n, _, _) in enumerate(self.outputs)}
        n_out, n_args = len(self.outputs), len(bwd.inputs)
        self.bwd_args = []
        for position, (n, _, _) in enumerate(bwd.inputs):
            if position >= n_args - n_out:
                self.bwd_args.append(("dy", position - (n_args - n_out)))
            elif n.startswith("saved."):
                self.bwd_args.append(("saved", int(n[len("saved."):])))
            elif n in output_index:
                self.bwd_args.append(("output", output_index[n]))
            else:
                self.bwd_args.append(("input", input_index[n]))
        # f_bwd's results are d<input> for each differentiated input.
        self.grad_of = [input_index[n[1:]] for n, _, _ in bwd.outputs]
        # What each call allocates, saves and checks, worked out once
        # (per-call overhead: docs/pytorch.md).
        self.num_results = n_out
        self._fwd_alloc = [(_size_args(s), _TORCH_DTYPES[d]) for _, d, s in fwd.outputs]
        self._bwd_alloc = [(_size_args(s), _TORCH_DTYPES[d]) for _, d, s in bwd.outputs]
        # f_bwd's arguments before the output adjoints, as positions in the
        # inputs followed by f_fwd's outputs (backward_args): only these are
        # saved for the backward, so autograd neither keeps the others
        # alive nor unpacks them (a tiny `2 * x` saves nothing).
        start = {"input": 0, "output": len(self.inputs), "saved": len(self.inputs) + n_out}
        self.bwd_sources = [start[kind] + k for kind, k in self.bwd_args if kind != "dy"]
        # (name, dtype, shape) of each output adjoint, as f_bwd declares it.
        self._dys = [(n, _TORCH_DTYPES[d], s) for n, d, s in bwd.inputs[n_args - n_out:]]

    def _compile(self, module, options, opt_level):
        fwd = module.compile(self._names[0], options=options, opt_level=opt_level,
                             functions=self._names)
        return fwd, _neo.Function(fwd._exe, self._names[1], module=module)

    def _compile_tuned(self, text, options, opt_level):
        try:
            context = _neo.Context()
            module = _neo.Module.from_source(text, name=self._names[0] + ".mlir",
                                             context=context)
            # One attribute assignment, atomic: each run reads _pair once
            # (no lock), so it runs the quick pair's function or the tuned's.
            self._pair = self._compile(module, options, opt_level)
            self.tuned.set()
        except Exception as e:  # reported through .error; the quick version stays
            self.error = e
        finally:
            self._done.set()

    def wait(self, timeout=None):
        self._done.wait(timeout)
        return self.tuned.is_set()

    def forward(self, inputs):
        """Runs f_fwd on `inputs` (checked by Op: CPU tensors of the declared
        dtypes and shapes); returns them made contiguous, and f_fwd's
        outputs (the results, then the saved values)."""
        xs = [t if t.is_contiguous() else t.contiguous() for t in inputs]
        outs = [torch.empty(*s, dtype=d) for s, d in self._fwd_alloc]
        # Zero-copy: the tensors' own memory (outputs fresh, so no overlap).
        self._pair[0]._run_pointers([t.data_ptr() for t in xs + outs])
        return xs, outs

    def backward_args(self, xs, outs):
        """What f_bwd reads besides the output adjoints, from forward()'s
        results."""
        tensors = xs + outs
        return [tensors[k] for k in self.bwd_sources]

    def backward(self, args, dys):
        """Runs f_bwd on `args` (backward_args) and the output adjoints `dys`
        (None for zeros); returns the gradients of the inputs in grad_of."""
        tensors = list(args)
        for g, (name, dtype, shape) in zip(dys, self._dys):
            if g is None:
                g = torch.zeros(shape, dtype=dtype)
            else:
                if g.dtype is not dtype:
                    g = g.to(dtype)
                if not g.is_contiguous():
                    g = g.contiguous()  # autograd's expanded adjoint of a sum
                if g.shape != shape:
                    raise _neo.NeoError("internal error: backward argument '%s' is %s %s"
                                        % (name, g.dtype, tuple(g.shape)))
            tensors.append(g)
        grads = [torch.empty(*s, dtype=d) for s, d in self._bwd_alloc]
        self._pair[1]._run_pointers([t.data_ptr() for t in tensors + grads])
        return grads


def _size_args(shape):
    """torch.empty(*_size_args(shape), ...): the dims as arguments, which
    PyTorch parses faster than a tuple (about a microsecond); a scalar's
    shape stays the tuple ()."""
    return tuple(shape) if shape else ((),)


class Op:
    """A Neo function as a differentiable PyTorch operation (see op())."""

    def __init__(self, source, name=None, *, wrt=None, options="", opt_level=3,
                 max_saved_bytes=None, context=None, overlap=True, skip_unneeded_grads=True,
                 dynamic=None):
        if max_saved_bytes is not None and (isinstance(max_saved_bytes, bool) or
                                            not isinstance(max_saved_bytes, int) or
                                            max_saved_bytes < 0):
            raise ValueError("max_saved_bytes must be a non-negative integer, got %r"
                             % (max_saved_bytes,))
        if isinstance(source, _neo.Module):
            self._text, self._buffer = str(source), "<module>.mlir"
            context = context or source.context
        elif isinstance(source, (str, bytes, os.PathLike)) and _is_neo_path(source):
            path = os.fspath(source)
            with open(path, "rb") as f:
                self._text, self._buffer = f.read(), path
        elif isinstance(source, (str, bytes)):
            self._text, self._buffer = source, "<python>.neo"
        else:
            raise TypeError("neo.torch.op takes .neo source, a path to a .neo file or a "
                            "neo.Module, not %s" % type(source).__name__)
        self._context = context or _neo.default_context()
        self._settings = (wrt, options, opt_level, max_saved_bytes, bool(overlap))
        self._instances = {}
        # Instances differentiated w.r.t. fewer inputs than wrt: (sizes, wrt).
        self._variants = {}
        self._skip_unneeded_grads = bool(skip_unneeded_grads)
        self._calls = {}
        self._lock = threading.Lock()
        if self._buffer.endswith(".neo"):
            functions = {f["name"]: f for f in _neo.signatures(self._text, self._buffer,
                                                               self._context)}
            names = list(functions)
        else:
            names = _neo.Module.from_source(self._text, self._buffer, self._context).functions
        if not names:
            raise _neo.NeoError("the source defines no function")
        self.name = name or names[0]
        if self.name not in names:
            raise _neo.NeoError("no function named '%s' (the source has %s)"
                                % (self.name, ", ".join(names)))
        if self._buffer.endswith(".neo"):
            sig = functions[self.name]
            for p in sig["params"]:
                if p["dtype"] not in _DTYPE_NAMES:
                    raise _neo.NeoError("parameter '%s' of '%s' is %s: neo.torch takes f16, "
                                        "f32, f64, i32 and i64 tensors"
                                        % (p["name"], self.name, p["dtype"]))
            # (name, torch dtype, shape with ints and size-parameter names)
            self.signature = [(p["name"], _DTYPE_NAMES[p["dtype"]], tuple(p["shape"]))
                              for p in sig["params"]]
        else:
            self.signature = None
        self.size_parameters = sorted({d for _, _, s in self.signature or [] for d in s
                                       if isinstance(d, str)})
        # A dynamic size parameter (a batch): one compiled size, any batch
        # in chunks of it (_call_dynamic). (name, chunk or None).
        self._dynamic = _dynamic_setting(dynamic, self.size_parameters, self.name)
        self._chunk = self._dynamic[1] if self._dynamic else None
        self._batch_info = {}  # other sizes -> (input batch dims, result batch dims)
        self._dyn_calls = {}
        if not self.size_parameters:
            self._instance({})  # compile now: errors surface when the op is made
        self._num_results = (len(functions[self.name]["results"]) if self.signature is not None
                             else len(self._instance({}).outputs))
        # The inputs f_bwd differentiates: wrt, or every floating-point input.
        floats = [i for i, (_, dtype, _) in enumerate(self.inputs) if dtype.is_floating_point]
        self._differentiable = (tuple(sorted({int(i) for i in wrt} & set(floats)))
                                if wrt else tuple(floats))
        # The custom op (neo::NAME_K) when PyTorch has torch.library.custom_op
        # (2.4 and later): torch.compile then traces calls without a graph
        # break. Before that, calls go through an autograd.Function.
        self.custom_op = (_register_custom_op(self) if hasattr(torch.library, "custom_op") and
                          hasattr(torch.library, "register_autograd") else None)

    @property
    def inputs(self):
        """(name, dtype, shape) of each input; a shape holds size-parameter
        names where the signature has them."""
        if self.signature is not None:
            return list(self.signature)
        return self._instance({}).inputs

    def wait(self, timeout=None):
        """Waits until the tuned versions of every shape compiled so far are
        in use (overlap=True); returns whether they all are, and raises
        NeoError when one of them failed to compile."""
        with self._lock:
            instances = list(self._instances.values()) + list(self._variants.values())
        ok = all([inst.wait(timeout) for inst in instances])
        for inst in instances:
            if inst.error is not None:
                # The quick version stays in use; the tuned one failed.
                raise _neo.NeoError("the tuned compilation of '%s' failed (the quickly "
                                    "compiled version stays in use): %s" % (self.name, inst.error))
        return ok

    def _instance(self, sizes, wrt=None):
        """The instance for the size binding `sizes`, differentiated w.r.t.
        the op's wrt, or w.r.t. the input positions `wrt` (a tuple, a
        subset of them) where given."""
        key = tuple(sorted(sizes.items()))
        table = self._instances if wrt is None else self._variants
        if wrt is not None:
            key = (key, wrt)
        with self._lock:
            inst = table.get(key)
            if inst is None:
                module = _neo.Module.from_source(self._text, self._buffer, self._context,
                                                 sizes=sizes or None)
                settings = self._settings if wrt is None else (list(wrt),) + self._settings[1:]
                inst = _Instance(module, self.name, *settings)
                table[key] = inst
            return inst

    def _needed_wrt(self, tensors):
        """The differentiable inputs whose gradients autograd will ask for
        (grad mode on, requires_grad), where they are some but not all of
        them; else None (the op's own instance). Like PyTorch's
        needs_input_grad: f_bwd then computes no gradient that nobody asks
        for (an RNN cell's data input x; its zero initial state)."""
        if not self._skip_unneeded_grads or not torch.is_grad_enabled():
            return None
        need = tuple(i for i in self._differentiable if tensors[i].requires_grad)
        return need if need and len(need) < len(self._differentiable) else None

    def _remembered(self, make_key, tensors, wrt_of):
        """The instance remembered under make_key(tensors) in _calls, else
        the one for `tensors` (checked against the signature by _bind)
        differentiated w.r.t. wrt_of() (None: the op's own), remembered."""
        try:
            key = make_key(tensors)
            inst = self._calls.get(key)
        except (AttributeError, TypeError):
            key, inst = None, None
        if inst is None:
            sizes = self._bind(tensors)
            inst = self._instance(sizes, wrt_of())
            if key is not None and not _is_compiling():
                self._calls[key] = inst
        return inst

    def _instance_with(self, tensors, wrt):
        """The instance differentiated w.r.t. the input positions `wrt` (a
        list; empty for the op's own), checked like _instance_for; the
        custom op's kernels call this."""
        wrt = tuple(wrt) or None

        def checked():  # on the first call with these tensors only
            if wrt is not None and not set(wrt) <= set(self._differentiable):
                raise _neo.NeoError("'%s' differentiates inputs %s, not %s"
                                    % (self.name, list(self._differentiable), list(wrt)))
            return wrt
        return self._remembered(lambda ts: (_key(ts), wrt), tensors, checked)

    def _instance_for(self, tensors, by_grad=False):
        """The instance that runs `tensors`, after checking them against the
        signature; remembered per (type, dtype, is_cpu, shape) of the
        tensors (_key), which __call__ looks up first. With `by_grad`, an
        instance without the gradients that no input needs (_needed_wrt),
        remembered per grad mode and requires_grad too (_grad_key)."""
        if by_grad:
            return self._remembered(_grad_key, tensors, lambda: self._needed_wrt(tensors))
        return self._remembered(_key, tensors, lambda: None)

    def _bind(self, tensors, keep=None):
        """Checks `tensors` against the signature; returns the size binding
        (size parameter `keep` as the tensors give it: a SymInt when
        torch.compile traces it as dynamic)."""
        if len(tensors) != len(self.inputs):
            raise _neo.NeoError("'%s' takes %d tensors (%s) but %d were given"
                                % (self.name, len(self.inputs),
                                   ", ".join(n for n, _, _ in self.inputs), len(tensors)))
        sizes, source = {}, {}
        for i, (t, (n, dtype, shape)) in enumerate(zip(tensors, self.inputs)):
            what = "argument #%d ('%s') of '%s'" % (i, n, self.name)
            if not isinstance(t, torch.Tensor):
                raise TypeError("%s must be a torch.Tensor, not %s" % (what, type(t).__name__))
            if t.device.type != "cpu":
                raise _neo.NeoError("%s is on %s: neo.torch runs on the CPU" % (what, t.device))
            if t.dtype != dtype:
                raise _neo.NeoError("%s has dtype %s but the signature says %s"
                                    % (what, t.dtype, dtype))
            if t.dim() != len(shape) or any(isinstance(d, int) and d != e
                                            for d, e in zip(shape, t.shape)):
                raise _neo.NeoError("%s has shape %s but the signature says %s"
                                    % (what, tuple(t.shape), _shape_text(shape)))
            for d, e in zip(shape, t.shape):
                if isinstance(d, str):
                    if d in sizes and sizes[d] != e:
                        raise _neo.NeoError("size %s is %d from '%s' but %d from '%s'"
                                            % (d, sizes[d], source[d], e, n))
                    if e == 0:
                        raise _neo.NeoError("%s has shape %s: size %s must be positive"
                                            % (what, tuple(t.shape), d))
                    sizes[d], source[d] = (e if d == keep else int(e)), n
        return sizes

    def __call__(self, *tensors):
        if self.custom_op is not None and _is_compiling():
            # Traced by torch.compile: the custom op (its fake implementation
            # binds and checks), differentiated w.r.t. the inputs that need
            # a gradient in the traced graph. Eager calls take the
            # autograd.Function below, the same computation without the
            # dispatcher's boxing and Python autograd layer.
            wrt = list(self._needed_wrt(tensors) or ())
            results = self.custom_op(list(tensors), wrt)[:self._num_results]
            return results[0] if len(results) == 1 else tuple(results)
        if self._dynamic is not None:
            return self._call_dynamic(tensors)
        try:  # tensors like those of an earlier call: checked then
            inst = self._calls[_grad_key(tensors)]
        except (KeyError, AttributeError, TypeError):
            inst = self._instance_for(tensors, by_grad=True)
        return _NeoFunction.apply(inst, *tensors)

    def _batch_dims(self, sizes):
        """(batch dim of each input, of each result; None for none) with the
        dynamic size parameter, after neo-check-batch has shown that the
        function never mixes rows along it; per binding of the other size
        parameters."""
        name = self._dynamic[0]
        others = tuple(sorted((k, v) for k, v in sizes.items() if k != name))
        info = self._batch_info.get(others)
        if info is not None:
            return info
        # The size bound to an extent that no number of the source and no
        # other size takes, so that the pass sees which dims are the batch's:
        # a prime from 1009 up (small enough that a row of a large tensor
        # times it stays under the importer's 2^40 elements).
        text = self._text.decode() if isinstance(self._text, bytes) else self._text
        probe = 1009
        while (re.search(r"\b%d\b" % probe, text) or probe in dict(others).values() or
               any(probe % k == 0 for k in range(2, int(probe ** 0.5) + 1))):
            probe += 2
        bound = dict(others)
        bound[name] = probe
        try:
            module = _neo.Module.from_source(self._text, self._buffer, self._context,
                                             sizes=bound)
            module.run_pipeline("neo-check-batch{function=%s extent=%d}" % (self.name, probe))
        except _neo.NeoError as e:
            raise _neo.NeoError("size parameter '%s' of '%s' cannot be dynamic: %s"
                                % (name, self.name, e)) from None
        inputs = [shape.index(name) if name in shape else None for _, _, shape in self.signature]
        info = (inputs, _result_batch_dims(str(module), self.name, self._num_results))
        self._batch_info[others] = info
        return info

    def _dynamic_entry(self, xs, wrt):
        """For the custom op of an op with a dynamic size parameter: (the
        instance compiled for the chunk size, differentiated w.r.t. `wrt`,
        the batch size b, the chunk size, the batch dims of the inputs and
        results). Under torch.compile b may be a SymInt (a dim traced as
        dynamic): it is never turned into a number, so one graph serves
        every batch size."""
        name = self._dynamic[0]
        wrt = tuple(wrt) or None
        if wrt is not None and not set(wrt) <= set(self._differentiable):
            raise _neo.NeoError("'%s' differentiates inputs %s, not %s"
                                % (self.name, list(self._differentiable), list(wrt)))
        sizes = self._bind(xs, keep=name)
        b = sizes[name]
        in_dims, out_dims = self._batch_dims(sizes)
        with self._lock:
            if self._chunk is None:
                # (A dynamic trace before any concrete call: the size the
                # tracer was started with.)
                hint = b if isinstance(b, int) else getattr(b.node, "hint", None)
                if hint is None:
                    raise _neo.NeoError(
                        "'%s': the first batch of dynamic size parameter '%s' has no known "
                        "size (traced as unbacked): give the chunk size, dynamic={'%s': 64}"
                        % (self.name, name, name))
                self._chunk = int(hint)
        chunk = dict(sizes)
        chunk[name] = self._chunk
        return self._instance(chunk, wrt), b, self._chunk, in_dims, out_dims

    def _call_dynamic(self, tensors):
        """A call with a dynamic size parameter: the instance compiled for
        the chunk size (the first batch size seen, or the one given), run
        once when the batch has that size, else over chunks of it, the last
        one padded with copies of its last row (whose gradients, with zero
        adjoints, add nothing)."""
        key = _grad_key(tensors)
        entry = self._dyn_calls.get(key)
        if entry is None:
            sizes = self._bind(tensors)
            name = self._dynamic[0]
            in_dims, out_dims = self._batch_dims(sizes)
            with self._lock:
                if self._chunk is None:
                    self._chunk = sizes[name]
            plan = (sizes[name], self._chunk, in_dims, out_dims)
            sizes = dict(sizes)
            sizes[name] = self._chunk
            entry = (self._instance(sizes, self._needed_wrt(tensors)), plan)
            if not _is_compiling():
                self._dyn_calls[key] = entry
        inst, plan = entry
        if plan[0] == plan[1]:
            return _NeoFunction.apply(inst, *tensors)
        return _NeoChunked.apply(inst, plan, *tensors)

    def __repr__(self):
        fmt = lambda ts: ", ".join("%s: %s%s" % (n, str(d).replace("torch.", ""),
                                                 _shape_text(s)) for n, d, s in ts)
        return "<neo.torch.Op %s(%s)>" % (self.name, fmt(self.inputs))


def _key(tensors):
    """What Op._bind's checks depend on: tensors with the same key pass them
    alike. (is_cpu rather than device: it builds no torch.device.)"""
    return tuple([(type(t), t.dtype, t.is_cpu, t.shape) for t in tensors])


def _grad_key(tensors):
    """_key with what Op._needed_wrt depends on: the grad mode and each
    tensor's requires_grad."""
    return (torch.is_grad_enabled(),
            tuple([(type(t), t.dtype, t.is_cpu, t.shape, t.requires_grad) for t in tensors]))


def _never_compiling():
    return False


# torch.compiler.is_compiling (PyTorch 2.3 and later) itself: torch.compile
# knows the function and makes it True in what it traces.
_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", _never_compiling)


_custom_op_count = [0]
with open(__file__, "rb") as _f:
    _MODULE_DIGEST = hashlib.sha1(_f.read()).digest()
_custom_op_lock = threading.Lock()


def _register_custom_op(op):
    """neo::NAME_K(Tensor[] xs, int[] wrt) -> Tensor[] (the results, then the
    saved values) with a fake implementation, so that torch.compile traces it
    without a graph break, and the autograd formula that runs
    neo::NAME_K_bwd(xs, wrt, outs, dys) (also an op) on the saved tensors.
    `wrt` lists the inputs differentiated (Op._needed_wrt when traced), or
    is empty for the op's own instance. Returns the OpOverload.

    Defined through torch.library.Library with plain CPU kernels rather than
    the torch.library.custom_op decorator, whose Python wrappers (aliasing
    check, dispatch through its own autograd layer) cost 15-30 us a call."""
    with _custom_op_lock:
        _custom_op_count[0] += 1
        # The name carries a digest of what shapes the op's fake
        # implementation (the source, its dynamic size, this module): the
        # name is part of the key of inductor's on-disk graph cache, which
        # must not serve a graph traced with another version.
        text = op._text if isinstance(op._text, bytes) else str(op._text).encode()
        # A dynamic size without a given chunk takes the first batch's size,
        # which the digest cannot know: a per-process nonce then keeps
        # another process's graphs out.
        nonce = (repr(os.getpid()) + repr(id(op))
                 if op._dynamic is not None and op._dynamic[1] is None else "")
        tag = hashlib.sha1(text + repr((op._dynamic, op._settings, nonce)).encode() +
                           _MODULE_DIGEST).hexdigest()[:10]
        name = "%s_%d_%s" % (op.name, _custom_op_count[0], tag)
    lib = torch.library.Library("neo", "FRAGMENT")
    op._library = lib  # the registrations live as long as the Library object
    lib.define(name + "(Tensor[] xs, int[] wrt) -> Tensor[]")
    lib.define(name + "_bwd(Tensor[] xs, int[] wrt, Tensor[] outs, Tensor[] dys) -> Tensor[]")
    instance = op._instance_with

    dynamic = op._dynamic is not None

    def fwd(xs, wrt):
        if dynamic:
            return _dynamic_forward(*op._dynamic_entry(xs, wrt), xs)
        return instance(xs, wrt).forward(xs)[1]

    def bwd(xs, wrt, outs, dys):
        if dynamic:
            return _dynamic_backward(*op._dynamic_entry(xs, wrt), xs, outs, dys)
        inst = instance(xs, wrt)
        xs = [x if x.is_contiguous() else x.contiguous() for x in xs]
        return inst.backward(inst.backward_args(xs, list(outs)), dys)

    lib.impl(name, fwd, "CPU")
    lib.impl(name + "_bwd", bwd, "CPU")

    @torch.library.register_fake("neo::" + name, lib=lib)
    def _(xs, wrt):
        if dynamic:
            # The results with b rows, then each of f_fwd's outputs for the
            # chunk size over the ceil(b / chunk) chunks, one after the other.
            inst, b, size, _, out_dims = op._dynamic_entry(xs, wrt)
            outs = []
            for k, (_, dtype, s) in enumerate(inst.outputs):
                shape = list(s)
                shape[out_dims[k]] = b
                outs.append(xs[0].new_empty(shape, dtype=dtype))
            # (Flat: a leading dim of chunks would make the tracer guard on
            # whether there is one chunk, and trace once more.)
            chunks = (b + size - 1) // size
            return outs + [xs[0].new_empty([chunks * math.prod(s)], dtype=_TORCH_DTYPES[d])
                           for _, d, s in inst.fwd_outputs]
        inst = instance(xs, wrt)
        return [xs[0].new_empty(s, dtype=_TORCH_DTYPES[d]) for _, d, s in inst.fwd_outputs]

    @torch.library.register_fake("neo::" + name + "_bwd", lib=lib)
    def _(xs, wrt, outs, dys):
        if dynamic:
            inst = op._dynamic_entry(xs, wrt)[0]
            return [xs[i].new_empty(xs[i].shape) for i in inst.grad_of]
        inst = instance(xs, wrt)
        return [xs[0].new_empty(s, dtype=_TORCH_DTYPES[d]) for _, d, s in inst.bwd_outputs]

    bwd_op = getattr(torch.ops.neo, name + "_bwd").default

    def setup_context(ctx, inputs, output):
        xs, wrt = inputs
        ctx.num_inputs, ctx.wrt = len(xs), list(wrt)
        ctx.save_for_backward(*xs, *output)

    def backward(ctx, grads):
        tensors = ctx.saved_tensors
        xs, outs = list(tensors[:ctx.num_inputs]), list(tensors[ctx.num_inputs:])
        inst = op._dynamic_entry(xs, ctx.wrt)[0] if dynamic else instance(xs, ctx.wrt)
        dys = [torch.zeros_like(y) if g is None else g.to(y.dtype)
               for y, g in zip(outs[:inst.num_results], grads)]
        dx = bwd_op(xs, ctx.wrt, outs, dys)
        result = [None] * len(xs)
        for g, i in zip(dx, inst.grad_of):
            result[i] = g
        # torch.library's structure for `wrt`: None for a list of ints, but
        # an empty list reads as an empty list of tensors.
        return result, (None if ctx.wrt else [])

    torch.library.register_autograd("neo::" + name, backward, setup_context=setup_context,
                                    lib=lib)
    return getattr(torch.ops.neo, name).default


def _shape_text(shape):
    return "(%s)" % ", ".join(str(d) for d in shape) if len(shape) != 1 else "(%s,)" % shape[0]


def _is_neo_path(source):
    if isinstance(source, bytes):
        return False
    path = os.fspath(source)
    return "\n" not in path and path.endswith(".neo") and os.path.isfile(path)


class _NeoFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inst, *inputs):
        xs, outs = inst.forward(inputs)
        ctx.inst = inst
        if inst.bwd_sources:
            ctx.save_for_backward(*inst.backward_args(xs, outs))
        n = inst.num_results
        return outs[0] if n == 1 else tuple(outs[:n])

    @staticmethod
    def backward(ctx, *dys):
        if torch.is_grad_enabled():
            # create_graph=True: f_bwd has no derivative, so differentiating
            # the gradients is an error (once_differentiable runs this again
            # without grad). Otherwise once_differentiable's no_grad would
            # be a microsecond for nothing.
            return _backward_once(ctx, *dys)
        inst = ctx.inst
        grads = inst.backward(ctx.saved_tensors, dys)
        needs = ctx.needs_input_grad  # (inst, *inputs)
        result = [None] * len(needs)
        for g, i in zip(grads, inst.grad_of):
            if needs[1 + i]:
                result[1 + i] = g
        return tuple(result)


_backward_once = torch.autograd.function.once_differentiable(_NeoFunction.backward)


def _dynamic_setting(dynamic, size_parameters, name):
    """Op's `dynamic`: None, a size parameter's name, or {name: chunk}."""
    if dynamic is None:
        return None
    chunk = None
    if isinstance(dynamic, dict):
        if len(dynamic) != 1:
            raise ValueError("dynamic takes one size parameter, not %d" % len(dynamic))
        (dynamic, chunk), = dynamic.items()
        if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, int) or
                                  chunk < 1):
            raise ValueError("the chunk size of dynamic %r must be a positive integer, not %r"
                             % (dynamic, chunk))
    if not isinstance(dynamic, str):
        raise TypeError("dynamic takes a size parameter's name or {name: chunk size}, not %s"
                        % type(dynamic).__name__)
    if dynamic not in size_parameters:
        raise _neo.NeoError("'%s' has no size parameter '%s' to make dynamic (it has %s)"
                            % (name, dynamic, ", ".join(size_parameters) or "none"))
    return (dynamic, chunk)


def _result_batch_dims(text, function, count):
    """The neo.batch_dim of each result of func.func @function in `text`
    (after neo-check-batch, every result has an attribute dict, in order
    after the arrow; argument types hold no arrow)."""
    for line in text.splitlines():
        start = line.find("func.func @%s(" % function)
        if start < 0:
            continue
        results = line[start:].split(") -> ", 1)[1]
        dims = [re.search(r"neo\.batch_dim = (\d+)", d)
                for d in re.findall(r"\{([^{}]*)\}", results)[:count]]
        return [int(m.group(1)) if m else None for m in dims]
    raise _neo.NeoError("internal error: no function '%s' after neo-check-batch" % function)


def _rows(t, dim, start, n, size, zeros=False):
    """Rows [start, start + n) of `t` along `dim`, padded to `size` rows
    with copies of the last one (zeros for adjoints), contiguous."""
    part = t.narrow(dim, start, n)
    if n < size:
        shape = list(t.shape)
        shape[dim] = size - n
        pad = (t.new_zeros(shape) if zeros else
               t.narrow(dim, start + n - 1, 1).expand(shape))
        part = torch.cat([part, pad], dim=dim)
    return part if part.is_contiguous() else part.contiguous()


def _dynamic_forward(inst, b, size, in_dims, out_dims, xs):
    """The custom op's forward for a dynamic size: the chunks of `size`
    rows (the last one padded) through the chunk-size instance; returns the
    results with b rows, then each of f_fwd's outputs of every chunk, one
    after the other in a flat tensor (what the backward of each chunk
    reads)."""
    xs = [x if x.is_contiguous() else x.contiguous() for x in xs]
    results = [[] for _ in range(inst.num_results)]
    stacked = [[] for _ in inst.fwd_outputs]
    for start in range(0, b, size):
        n = min(size, b - start)
        chunk = [x if d is None else _rows(x, d, start, n, size) for x, d in zip(xs, in_dims)]
        outs = inst.forward(chunk)[1]
        for k, o in enumerate(outs):
            stacked[k].append(o)
        for k in range(inst.num_results):
            results[k].append(outs[k] if n == size else outs[k].narrow(out_dims[k], 0, n))
    return ([torch.cat(r, dim=out_dims[k]) for k, r in enumerate(results)] +
            [torch.cat([o.reshape(-1) for o in t]) for t in stacked])


def _dynamic_backward(inst, b, size, in_dims, out_dims, xs, outs, dys):
    """The custom op's backward for a dynamic size: each chunk's f_bwd on
    its inputs, its stacked f_fwd outputs and its rows of the adjoints (zero
    for the padding); the gradients in grad_of order, batched ones
    concatenated, the others summed over the chunks."""
    stacked = [t.view(-1, *s) for t, (_, _, s) in zip(outs[inst.num_results:], inst.fwd_outputs)]
    grads = {}
    # (f_bwd reads its arguments as dense row-major buffers: a transposed
    # weight must be made contiguous, as the chunks of batched inputs are.)
    xs = [x if x.is_contiguous() else x.contiguous() for x in xs]
    for c, start in enumerate(range(0, b, size)):
        n = min(size, b - start)
        chunk = [x if d is None else _rows(x, d, start, n, size) for x, d in zip(xs, in_dims)]
        chunk_dys = [_rows(g, out_dims[k], start, n, size, zeros=True)
                     for k, g in enumerate(dys)]
        args = inst.backward_args(chunk, [t[c] for t in stacked])
        for g, i in zip(inst.backward(args, chunk_dys), inst.grad_of):
            if in_dims[i] is None:
                grads[i] = g if i not in grads else grads[i] + g
            else:
                grads.setdefault(i, []).append(g if n == size else g.narrow(in_dims[i], 0, n))
    return [grads[i] if in_dims[i] is None else torch.cat(grads[i], dim=in_dims[i])
            for i in inst.grad_of]


class _NeoChunked(torch.autograd.Function):
    """An instance compiled for batches of `size` rows run over a batch of
    `b` rows in chunks (Op._call_dynamic): plan = (b, size, batch dim of
    each input, of each result)."""

    @staticmethod
    def forward(ctx, inst, plan, *inputs):
        b, size, in_dims, out_dims = plan
        saved, results = [], [[] for _ in range(inst.num_results)]
        for start in range(0, b, size):
            n = min(size, b - start)
            chunk = [x if d is None else _rows(x, d, start, n, size)
                     for x, d in zip(inputs, in_dims)]
            xs, outs = inst.forward(chunk)
            saved.extend(inst.backward_args(xs, outs))
            for k in range(inst.num_results):
                results[k].append(outs[k] if n == size else outs[k].narrow(out_dims[k], 0, n))
        ctx.inst, ctx.plan = inst, plan
        ctx.save_for_backward(*saved)
        outs = [torch.cat(r, dim=out_dims[k]) for k, r in enumerate(results)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *dys):
        inst, (b, size, in_dims, out_dims) = ctx.inst, ctx.plan
        saved, per = ctx.saved_tensors, len(inst.bwd_sources)
        grads = {}
        for c, start in enumerate(range(0, b, size)):
            n = min(size, b - start)
            chunk_dys = [None if g is None else _rows(g, out_dims[k], start, n, size, zeros=True)
                         for k, g in enumerate(dys)]
            for g, i in zip(inst.backward(saved[c * per:(c + 1) * per], chunk_dys),
                            inst.grad_of):
                if in_dims[i] is None:  # summed over the batch: the chunks add up
                    grads[i] = g if i not in grads else grads[i] + g
                else:
                    grads.setdefault(i, []).append(g if n == size else g.narrow(in_dims[i], 0, n))
        needs = ctx.needs_input_grad  # (inst, plan, *inputs)
        result = [None] * len(needs)
        for i, g in grads.items():
            if needs[2 + i]:
                result[2 + i] = g if in_dims[i] is None else torch.cat(g, dim=in_dims[i])
        return tuple(result)


def op(source, name=None, **kwargs):
    """Compiles function `name` (default: the first) of `source` (.neo
    source, a path to a .neo file, or a neo.Module) into a differentiable
    operation on CPU torch.Tensors. Keyword arguments: wrt (indices of the
    inputs to differentiate, default every float input), options (the
    neo-lower-to-cpu options), opt_level, max_saved_bytes (at most this many
    bytes of forward values kept for the backward; more are recomputed),
    context (a neo.Context), overlap (default True: each shape first runs a
    version compiled quickly while the tuned one compiles in the background
    and is swapped in between calls, as neo.overlap.HotFunction does;
    op.wait() waits for it; False compiles the tuned version at once),
    skip_unneeded_grads (default True: a call where only some of the
    differentiable inputs require a gradient runs an f_fwd/f_bwd pair
    differentiated w.r.t. those alone, compiled once per such set, so the
    backward computes no gradient that autograd does not ask for; False
    always runs the pair for every input in wrt), dynamic (a size
    parameter's name, e.g. "B", or {"B": chunk}: one compilation for batches
    of `chunk` rows (default: the first batch size seen), and a batch of any
    other size runs in chunks of it, the last one padded, without
    recompiling; the function must never mix rows along that parameter's
    dims, which neo-check-batch checks on the first call, and every result
    must keep the batch dim; torch.compile's traced calls still compile
    once per size)."""
    return Op(source, name, **kwargs)


class Module(torch.nn.Module):
    """An nn.Module around a Neo function whose inputs named in `parameters`
    are the module's parameters (shapes from the .neo signature, with
    `sizes` giving the size parameters they use); forward() takes the other
    inputs in signature order.

        cell = neo.torch.Module(src, parameters=["w", "b"])
        y = cell(x)

    `init` maps a parameter name to a function that fills its tensor in
    place; the default is PyTorch's nn.Linear rule (kaiming_uniform with
    a=sqrt(5), so the fan-in is the product of dims 1..; a weight laid out
    [in, out] wants init=) for tensors of rank 2 and more, zeros for vectors."""

    def __init__(self, source, name=None, parameters=(), init=None, sizes=None, **kwargs):
        super().__init__()
        self.op = Op(source, name, **kwargs)
        sizes = dict(sizes or {})
        names = [n for n, _, _ in self.op.inputs]
        unknown = [p for p in parameters if p not in names]
        if unknown:
            raise _neo.NeoError("'%s' has no input named %s (its inputs: %s)"
                                % (self.op.name, ", ".join(repr(p) for p in unknown),
                                   ", ".join(names)))
        index = [n for n, dtype, _ in self.op.inputs
                 if n in parameters and not dtype.is_floating_point]
        if index:
            raise _neo.NeoError("%s of '%s' %s an index tensor: index tensors are inputs, not "
                                "parameters" % (", ".join(repr(p) for p in index), self.op.name,
                                                "is" if len(index) == 1 else "are"))
        self._param_names = list(parameters)
        self._init = dict(init or {})
        for n, dtype, shape in self.op.inputs:
            if n in parameters:
                unbound = [d for d in shape if isinstance(d, str) and d not in sizes]
                if unbound:
                    raise _neo.NeoError("parameter '%s' has shape %s: give sizes={%s} for "
                                        "its size parameters"
                                        % (n, _shape_text(shape),
                                           ", ".join("%r: ..." % d for d in unbound)))
                shape = tuple(sizes[d] if isinstance(d, str) else d for d in shape)
                self.register_parameter(n, torch.nn.Parameter(torch.empty(shape, dtype=dtype)))
        self.reset_parameters()

    def reset_parameters(self):
        with torch.no_grad():
            for n in self._param_names:
                p = getattr(self, n)
                if n in self._init:
                    self._init[n](p)
                elif p.dim() >= 2:
                    torch.nn.init.kaiming_uniform_(p, a=math.sqrt(5))
                else:
                    p.zero_()

    def forward(self, *tensors):
        args, it = [], iter(tensors)
        expected = len(self.op.inputs) - len(self._param_names)
        if len(tensors) != expected:
            raise _neo.NeoError("%s.forward takes %d tensors (%s) but %d were given"
                                % (type(self).__name__, expected,
                                   ", ".join(n for n, _, _ in self.op.inputs
                                             if n not in self._param_names), len(tensors)))
        for n, _, _ in self.op.inputs:
            args.append(getattr(self, n) if n in self._param_names else next(it))
        return self.op(*args)

    def _apply(self, fn, *args, **kwargs):
        # to() / cuda() / half(): Neo's compiled function has fixed dtypes and
        # runs on the CPU, so a conversion that changes either is an error
        # here rather than at the next call.
        result = super()._apply(fn, *args, **kwargs)
        for n, dtype, _ in self.op.inputs:
            if n in self._param_names:
                p = getattr(self, n)
                if p.device.type != "cpu" or p.dtype != dtype:
                    raise _neo.NeoError("parameter '%s' became %s on %s: this module's Neo "
                                        "function takes %s on the CPU"
                                        % (n, p.dtype, p.device, dtype))
        return result
