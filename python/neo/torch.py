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
import math
import os
import threading

import numpy as np
import torch

import neo as _neo

__all__ = ["op", "Op", "Module"]

_TORCH_DTYPES = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32,
                 np.dtype(np.float64): torch.float64}


def _fresh(base, taken):
    name, n = base, 1
    while name in taken:
        name, n = "%s_%d" % (base, n), n + 1
    taken.add(name)
    return name


class Op:
    """A Neo function as a differentiable PyTorch operation (see op())."""

    def __init__(self, source, name=None, *, wrt=None, options="", opt_level=3,
                 max_saved_bytes=None, context=None):
        if isinstance(source, _neo.Module):
            module = _neo.Module.from_source(str(source), name="<module>.mlir",
                                             context=context or source.context)
        elif isinstance(source, (str, bytes, os.PathLike)) and _is_neo_path(source):
            module = _neo.Module.from_file(os.fspath(source), context=context)
        elif isinstance(source, (str, bytes)):
            module = _neo.Module.from_source(source, context=context)
        else:
            raise TypeError("neo.torch.op takes .neo source, a path to a .neo file or a "
                            "neo.Module, not %s" % type(source).__name__)
        functions = module.functions
        if not functions:
            raise _neo.NeoError("the source defines no function")
        name = name or functions[0]
        if name not in functions:
            raise _neo.NeoError("no function named '%s' (the module has %s)"
                                % (name, ", ".join(functions)))
        if max_saved_bytes is not None and (isinstance(max_saved_bytes, bool) or
                                            not isinstance(max_saved_bytes, int) or
                                            max_saved_bytes < 0):
            raise ValueError("max_saved_bytes must be a non-negative integer, got %r"
                             % (max_saved_bytes,))
        taken = set(functions)
        fwd, bwd = _fresh(name + "_fwd", taken), _fresh(name + "_bwd", taken)
        opts = ("function=%s split=true fwd-name=%s bwd-name=%s combined-name=%s grad-name=%s"
                % (name, fwd, bwd, _fresh(name + "_fwdbwd", taken), _fresh(name + "_grad", taken)))
        if wrt:
            opts += " wrt=%s" % ",".join(str(int(i)) for i in wrt)
        if max_saved_bytes is not None:
            opts += " max-saved-bytes=%d" % max_saved_bytes
        module.run_pipeline("neo-autodiff{%s},neo-keep-functions{functions=%s,%s}"
                            % (opts, fwd, bwd))
        self.name = name
        self._fwd = module.compile(fwd, options=options, opt_level=opt_level)
        self._bwd = _neo.Function(self._fwd._exe, bwd, module=module)
        self.inputs = [(n, _TORCH_DTYPES[d], s) for n, d, s in self._fwd.inputs]
        # f_fwd returns the results, then the saved values ("saved.K").
        results = [o for o in self._fwd.outputs if not o[0].startswith("saved.")]
        self.outputs = [(n, _TORCH_DTYPES[d], s) for n, d, s in results]
        self._num_saved = len(self._fwd.outputs) - len(results)
        # f_bwd's arguments: inputs it reads, results it reads, saved values, dy...
        input_index = {n: i for i, (n, _, _) in enumerate(self.inputs)}
        output_index = {n: k for k, (n, _, _) in enumerate(self.outputs)}
        n_out = len(self.outputs)
        self._bwd_args = []
        for position, (n, _, _) in enumerate(self._bwd.inputs):
            if position >= len(self._bwd.inputs) - n_out:
                self._bwd_args.append(("dy", position - (len(self._bwd.inputs) - n_out)))
            elif n.startswith("saved."):
                self._bwd_args.append(("saved", int(n[len("saved."):])))
            elif n in output_index:
                self._bwd_args.append(("output", output_index[n]))
            else:
                self._bwd_args.append(("input", input_index[n]))
        # f_bwd's results are d<input> for each differentiated input.
        self._grad_of = [input_index[n[1:]] for n, _, _ in self._bwd.outputs]
        self._lock = threading.Lock()

    def __call__(self, *tensors):
        if len(tensors) != len(self.inputs):
            raise _neo.NeoError("'%s' takes %d tensors (%s) but %d were given"
                                % (self.name, len(self.inputs),
                                   ", ".join(n for n, _, _ in self.inputs), len(tensors)))
        for i, (t, (n, dtype, shape)) in enumerate(zip(tensors, self.inputs)):
            what = "argument #%d ('%s') of '%s'" % (i, n, self.name)
            if not isinstance(t, torch.Tensor):
                raise TypeError("%s must be a torch.Tensor, not %s" % (what, type(t).__name__))
            if t.device.type != "cpu":
                raise _neo.NeoError("%s is on %s: neo.torch runs on the CPU" % (what, t.device))
            if t.dtype != dtype:
                raise _neo.NeoError("%s has dtype %s but the signature says %s"
                                    % (what, t.dtype, dtype))
            if tuple(t.shape) != shape:
                raise _neo.NeoError("%s has shape %s but the signature says %s"
                                    % (what, tuple(t.shape), shape))
        results = _NeoFunction.apply(self, *tensors)
        return results[0] if len(results) == 1 else results

    def _forward(self, inputs):
        xs = [t.detach().contiguous() for t in inputs]
        outs = [torch.empty(s, dtype=_TORCH_DTYPES[d]) for _, d, s in self._fwd.outputs]
        self._fwd(*[x.numpy() for x in xs], out=[o.numpy() for o in outs])
        n = len(self.outputs)
        return xs, outs[:n], outs[n:]

    def _backward(self, xs, ys, saved, dys):
        args = []
        for kind, k in self._bwd_args:
            t = {"input": xs, "output": ys, "saved": saved, "dy": dys}[kind][k]
            args.append(t.numpy())
        grads = [torch.empty(s, dtype=_TORCH_DTYPES[d]) for _, d, s in self._bwd.outputs]
        self._bwd(*args, out=[g.numpy() for g in grads])
        return grads

    def __repr__(self):
        fmt = lambda ts: ", ".join("%s: %s%s" % (n, str(d).replace("torch.", ""), list(s))
                                   for n, d, s in ts)
        return "<neo.torch.Op %s(%s) -> (%s)>" % (self.name, fmt(self.inputs), fmt(self.outputs))


def _is_neo_path(source):
    if isinstance(source, bytes):
        return False
    path = os.fspath(source)
    return "\n" not in path and path.endswith(".neo") and os.path.isfile(path)


class _NeoFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, op, *inputs):
        xs, ys, saved = op._forward(inputs)
        ctx.op = op
        # Everything f_bwd may read: the inputs, the results and the saved values.
        ctx.save_for_backward(*xs, *ys, *saved)
        ctx.counts = (len(xs), len(ys))
        return tuple(ys)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *dys):
        op = ctx.op
        tensors = ctx.saved_tensors
        nx, ny = ctx.counts
        xs, ys, saved = tensors[:nx], tensors[nx:nx + ny], tensors[nx + ny:]
        grads_out = []
        for (_, dtype, shape), g in zip(op.outputs, dys):
            grads_out.append(torch.zeros(shape, dtype=dtype) if g is None
                             else g.detach().to(dtype).contiguous())
        grads = op._backward(xs, ys, saved, grads_out)
        result = [None] * nx
        for g, i in zip(grads, op._grad_of):
            if ctx.needs_input_grad[1 + i]:
                result[i] = g
        return (None, *result)


def op(source, name=None, **kwargs):
    """Compiles function `name` (default: the first) of `source` (.neo
    source, a path to a .neo file, or a neo.Module) into a differentiable
    operation on CPU torch.Tensors. Keyword arguments: wrt (indices of the
    inputs to differentiate, default every float input), options (the
    neo-lower-to-cpu options), opt_level, max_saved_bytes (at most this many
    bytes of forward values kept for the backward; more are recomputed),
    context (a neo.Context)."""
    return Op(source, name, **kwargs)


class Module(torch.nn.Module):
    """An nn.Module around a Neo function whose inputs named in `parameters`
    are the module's parameters (shapes from the .neo signature); forward()
    takes the other inputs in signature order.

        cell = neo.torch.Module(src, parameters=["w", "b"])
        y = cell(x)

    `init` maps a parameter name to a function that fills its tensor in
    place; the default is PyTorch's nn.Linear rule (kaiming_uniform with
    a=sqrt(5), so the fan-in is the product of dims 1..; a weight laid out
    [in, out] wants init=) for tensors of rank 2 and more, zeros for vectors."""

    def __init__(self, source, name=None, parameters=(), init=None, **kwargs):
        super().__init__()
        self.op = Op(source, name, **kwargs)
        names = [n for n, _, _ in self.op.inputs]
        unknown = [p for p in parameters if p not in names]
        if unknown:
            raise _neo.NeoError("'%s' has no input named %s (its inputs: %s)"
                                % (self.op.name, ", ".join(repr(p) for p in unknown),
                                   ", ".join(names)))
        self._param_names = list(parameters)
        self._init = dict(init or {})
        for n, dtype, shape in self.op.inputs:
            if n in parameters:
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
