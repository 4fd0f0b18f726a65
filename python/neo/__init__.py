"""Neo from Python: compile tensor-expression operators written in the .neo
language (or with the small DSL in neo.dsl), differentiate them, and run them
on numpy arrays on the CPU or, with device="cuda" (or "auto"), a CUDA GPU.

    import neo, numpy as np
    m = neo.Module.from_source('''
    def linear(x: f32[4, 3], w: f32[3, 2]) -> y {
      y[i, j] = sum(k) x[i, k] * w[k, j]
    }''')
    y = m.compile()(np.ones((4, 3), np.float32), np.ones((3, 2), np.float32))
    grad = neo.grad(m, "linear")       # linear_fwdbwd: (x, w, dy) -> (y, dx, dw)
    f = m.compile(device="auto")       # the GPU when there is one, else the CPU

Errors raise neo.NeoError with the compiler's diagnostics (file:line:col).
The package talks to libNeoCAPI.so through ctypes; set NEO_LIBRARY to use a
library other than the one of this repository's build tree.
"""
import ctypes
import os
import sys as _sys
import threading

import numpy as np

from . import _capi

__all__ = ["NeoError", "Context", "Module", "Function", "grad", "default_context",
           "cuda_available", "signatures", "to_bf16_bits", "from_bf16_bits"]

# bf16 tensors travel as their bits in uint16 arrays (numpy has no bfloat16):
# inputs may also be any float array (rounded to nearest even), and bf16
# outputs come back as float32 arrays holding the bf16 values exactly.
_DTYPES = {0: np.dtype(np.float16), 1: np.dtype(np.uint16), 2: np.dtype(np.float32),
           3: np.dtype(np.float64), 4: np.dtype(np.int32), 5: np.dtype(np.int64)}
_CODES = {v: k for k, v in _DTYPES.items()}
_BF16 = np.dtype(np.uint16)


def to_bf16_bits(x):
    """The bf16 bits (uint16) of float array `x`, rounded to nearest even
    (NaN stays NaN)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    if nan.any():
        rounded[nan] = 0x7FC0
    return rounded


def from_bf16_bits(b):
    """The float32 values of bf16 bits `b` (uint16)."""
    return (np.ascontiguousarray(b, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


class NeoError(RuntimeError):
    """A diagnostic from Neo's compiler or runtime."""


class Context:
    """Owns the MLIR context that modules live in, and the compile caches.
    A context and its modules are used by one thread at a time; compiled
    functions may run on several threads."""

    def __init__(self, cache_dir=None):
        self._handle = _capi.contextCreate(cache_dir.encode() if cache_dir else None)
        self._lock = threading.RLock()
        # Modules and executables alive in this context: the native context
        # is destroyed after the last of them (a garbage cycle finalizes its
        # objects in any order, and a context destroyed before its modules
        # made their destruction crash in ~Operation).
        self._children = 0
        self._released = False

    def _adopt(self):
        with self._lock:
            self._children += 1

    def _release_child(self, _is_finalizing=_sys.is_finalizing):
        with self._lock:
            self._children -= 1
            if self._released and self._children == 0 and self._handle and \
                    not _is_finalizing():
                _capi.contextDestroy(self._handle)
                self._handle = None

    def _error(self, default="unknown error"):
        message = _capi.getLastError(self._handle)
        return NeoError(message.decode().strip() if message else default)

    def __del__(self, _is_finalizing=_sys.is_finalizing):
        # At interpreter exit the order of finalization is arbitrary (a
        # context may go before its modules, a compile worker may still run):
        # leave the memory to the OS rather than free it out of order.
        # (_is_finalizing is bound when the class is made: at exit the
        # module's globals may already be None, as in multiprocessing's
        # workers.)
        if getattr(self, "_handle", None) and not _is_finalizing():
            with self._lock:
                self._released = True
                if self._children == 0:
                    _capi.contextDestroy(self._handle)
                    self._handle = None


_default = None


def default_context():
    global _default
    if _default is None:
        _default = Context()
    return _default


def _with_environment_records(options):
    """The pipeline options with `tuning-records=$NEO_TUNING_RECORDS` added
    when the variable is set and the options name no records (the native
    library reads no environment variable)."""
    path = os.environ.get("NEO_TUNING_RECORDS", "")
    if not path or "tuning-records" in options:
        return options
    if any(c in path for c in " ,{}'\""):
        raise NeoError("NEO_TUNING_RECORDS=%r: pass a path without spaces, commas, quotes "
                       "or braces, or options='tuning-records=...'" % (path,))
    return (options + " " if options else "") + "tuning-records=" + path


def _with_environment_toolkit(gpu_options):
    """The GPU pipeline options with `toolkit=$CUDA_HOME` (where ptxas is
    looked for first) when the variable is set and the options name none."""
    home = os.environ.get("CUDA_HOME", "")
    if not home or "toolkit" in gpu_options or any(c in home for c in " ,{}'\""):
        return gpu_options
    return (gpu_options + " " if gpu_options else "") + "toolkit=" + home


class Module:
    """A module of neo IR: functions imported from .neo source or MLIR."""

    def __init__(self, handle, context):
        self._handle = handle
        self.context = context
        context._adopt()
        # (function, wrt) -> (combined name, gradient name) made by grad().
        self._derived = {}

    @classmethod
    def from_source(cls, source, name="<python>.neo", context=None, max_expression_depth=None,
                    max_statements_per_function=None, sizes=None):
        """Imports `source` (str or bytes): the .neo language when `name`
        ends in .neo (the default), MLIR otherwise. The limits default to the
        importer's (docs/errors.md#limits); a NUL character is an error.
        `sizes` binds the size parameters of the signatures (`x: f32[N, 4]`):
        a dict such as {"N": 64}."""
        context = context or default_context()
        data = source if isinstance(source, bytes) else str(source).encode()
        options = _capi.NeoImportOptions(_limit(max_expression_depth, "max_expression_depth"),
                                         _limit(max_statements_per_function,
                                                "max_statements_per_function"),
                                         _sizes_text(sizes))
        with context._lock:
            handle = _capi.moduleImportSource(context._handle, data, len(data), name.encode(),
                                              ctypes.byref(options))
            if not handle:
                raise context._error("cannot import the module")
        return cls(handle, context)

    @classmethod
    def from_file(cls, path, context=None):
        context = context or default_context()
        with context._lock:
            handle = _capi.moduleImportFile(context._handle, str(path).encode())
            if not handle:
                raise context._error("cannot import %s" % path)
        return cls(handle, context)

    @property
    def functions(self):
        with self.context._lock:
            return [_capi.moduleFunctionName(self._handle, i).decode()
                    for i in range(_capi.moduleNumFunctions(self._handle))]

    def run_pipeline(self, pipeline):
        """Runs a textual pass pipeline on the module, e.g. "canonicalize,cse"."""
        with self.context._lock:
            if _capi.moduleRunPipeline(self._handle, pipeline.encode()):
                raise self.context._error("pass pipeline failed")
        return self

    def __str__(self):
        with self.context._lock:
            ptr = _capi.modulePrint(self._handle)
            try:
                return ctypes.string_at(ptr).decode()
            finally:
                _capi.free(ptr)

    def compile(self, function=None, options="", opt_level=3, device="cpu", gpu_options="",
                functions=None):
        """Compiles the module; returns the Function `function` (default: the
        first function). On the CPU, a named `function` is compiled with what
        it calls and nothing else (an autodiff module's other functions
        would add their compile time); `functions` (a list) names every
        function the executable must hold (their Functions are then
        neo.Function(f._exe, name)); with neither, the whole module.
        `device`: "cpu" (the default), "cuda" (a CUDA GPU: an error when
        there is no usable driver or device) or "auto" (the GPU when there
        is one, else the CPU); Function.device tells which. `options` are
        neo-lower-to-cpu's (CPU only), `gpu_options` neo-lower-to-ptx's
        (e.g. "chip=sm_90")."""
        if device not in _capi.DEVICES:
            raise NeoError("device must be 'cpu', 'cuda' or 'auto', got %r" % (device,))
        options = _with_environment_records(options)
        gpu_options = _with_environment_toolkit(gpu_options)
        roots = list(functions) if functions else ([function] if function else [])
        with self.context._lock:
            if device == "cpu" and roots:
                names = (ctypes.c_char_p * len(roots))(*[r.encode() for r in roots])
                exe = _capi.compileFunctions(self._handle, names, len(roots), options.encode(),
                                             opt_level)
            elif device == "cpu":
                exe = _capi.compile(self._handle, options.encode(), opt_level)
            else:
                exe = _capi.compileForDevice(self._handle, _capi.DEVICES[device],
                                             options.encode(), opt_level, gpu_options.encode())
            if not exe:
                raise self.context._error("compilation failed")
        executable = _Executable(exe, self.context)
        name = function or (roots[0] if roots else self.functions[0])
        return Function(executable, name, module=self)

    def interpret(self, function, *inputs, output_like=None):
        """Evaluates `function` with the reference interpreter (float64)."""
        fn = output_like or self.compile(function, options="schedule=false threads=1",
                                         opt_level=0)
        arrays = [fn._as_input(x, i) for i, x in enumerate(inputs)]
        outs = [np.empty(shape, dtype) for _, dtype, shape in fn.outputs]
        ins_c = _tensors(arrays)
        outs_c = _tensors(outs)
        with self.context._lock:
            if _capi.moduleInterpret(self._handle, function.encode(), ins_c, len(arrays),
                                     outs_c, len(outs)):
                raise self.context._error("interpretation failed")
        return outs[0] if len(outs) == 1 else tuple(outs)

    def gradcheck(self, function, seed=0, probes=8, tolerance=1e-5):
        """Finite differences in float64 against neo-autodiff's gradient.
        Returns (ok, report text)."""
        report = ctypes.c_void_p()
        with self.context._lock:
            rc = _capi.moduleGradcheck(self._handle, function.encode(), seed, probes, tolerance,
                                       ctypes.byref(report))
            if rc < 0:
                raise self.context._error("gradcheck failed")
        text = ctypes.string_at(report).decode() if report else ""
        _capi.free(report)
        return rc == 0, text

    def __del__(self, _is_finalizing=_sys.is_finalizing):
        # At interpreter exit the order of finalization is arbitrary (a
        # context may go before its modules, a compile worker may still run):
        # leave the memory to the OS rather than free it out of order.
        # The garbage collector may run this on any thread, also while
        # another one compiles in the same context: take its lock.
        if getattr(self, "_handle", None) and not _is_finalizing():
            with self.context._lock:
                _capi.moduleDestroy(self._handle)
                self._handle = None
                self.context._release_child()


def _sizes_text(sizes):
    if not sizes:
        return None
    parts = []
    for k, v in dict(sizes).items():
        if not isinstance(k, str) or not k.isidentifier():
            raise ValueError("size parameter names must be identifiers, got %r" % (k,))
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
            raise ValueError("size %s must be a positive integer, got %r" % (k, v))
        parts.append("%s=%d" % (k, v))
    return ",".join(parts).encode()


def signatures(source, name="<python>.neo", context=None):
    """The signatures of the functions of .neo `source`, without importing
    it: a list of {"name", "params": [{"name", "dtype", "shape"}], "results"}
    where a shape entry is an int or the name of a size parameter."""
    import json
    context = context or default_context()
    data = source if isinstance(source, bytes) else str(source).encode()
    with context._lock:
        ptr = _capi.sourceSignatures(context._handle, data, len(data), name.encode())
        if not ptr:
            raise context._error("cannot read the signatures")
        try:
            return json.loads(ctypes.string_at(ptr).decode())
        finally:
            _capi.free(ptr)


def _limit(value, what):
    if value is None:
        return 0  # the default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**32:
        raise ValueError("%s must be a positive integer below 2**32, got %r" % (what, value))
    return value


class _Executable:
    def __init__(self, handle, context):
        self.handle = handle
        self.context = context  # keeps the context alive
        context._adopt()

    def __del__(self, _is_finalizing=_sys.is_finalizing):
        # At interpreter exit the order of finalization is arbitrary (a
        # context may go before its modules, a compile worker may still run):
        # leave the memory to the OS rather than free it out of order.
        if getattr(self, "handle", None) and not _is_finalizing():
            with self.context._lock:  # as Module.__del__
                _capi.executableDestroy(self.handle)
                self.handle = None
                self.context._release_child()


def _tensor_array(described):
    """A NeoTensor array with the types and shapes of `described` ((name,
    dtype, shape) each) and no data pointers yet."""
    out = (_capi.NeoTensor * max(1, len(described)))()
    for i, (_, d, s) in enumerate(described):
        shape = (ctypes.c_int64 * max(1, len(s)))(*s)
        out[i].type = _CODES[d]
        out[i].rank = len(s)
        out[i].shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        setattr(out, "_shape%d" % i, shape)  # alive as long as the array
    return out


def _tensors(arrays):
    out = _tensor_array([(None, a.dtype, a.shape) for a in arrays])
    for i, a in enumerate(arrays):
        out[i].data = a.ctypes.data
    return out


class _PreparedRun:
    """neoExecutableRun's arguments for one function, built once (one set
    per thread: a call writes them): the NeoTensor arrays with their types
    and shapes, a ctypes view of each tensor's data pointer, and the other
    arguments as ctypes objects, which executableRunPrepared (no argtypes)
    passes without converting them."""

    def __init__(self, function):
        ins, outs = _tensor_array(function.inputs), _tensor_array(function.outputs)
        size, offset = ctypes.sizeof(_capi.NeoTensor), _capi.NeoTensor.data.offset
        self.pointers = [ctypes.c_void_p.from_buffer(array, i * size + offset)
                         for array, described in ((ins, function.inputs),
                                                  (outs, function.outputs))
                         for i in range(len(described))]
        self.error = ctypes.create_string_buffer(1024)
        self.args = (ctypes.c_void_p(function._exe.handle), ctypes.c_char_p(function._bname),
                     ins, ctypes.c_int(len(function.inputs)), outs,
                     ctypes.c_int(len(function.outputs)), self.error,
                     ctypes.c_size_t(len(self.error)))


class Function:
    """A compiled function: call it on numpy arrays (or anything
    numpy.asarray accepts); returns an array, or a tuple for several outputs.
    Inputs that are already C-contiguous arrays of the right dtype are not
    copied. Thread-safe."""

    def __init__(self, executable, name, module=None):
        self._exe = executable
        self.name = name
        self.module = module
        bname = name.encode()
        self._bname = bname
        n_in = _capi.executableNumInputs(executable.handle, bname)
        if n_in < 0:
            raise NeoError("no function named '%s' in the module" % name)
        n_out = _capi.executableNumOutputs(executable.handle, bname)
        self.device = {_capi.DEVICE_CPU: "cpu", _capi.DEVICE_CUDA: "cuda"}[
            _capi.executableGetDevice(executable.handle)]
        self.inputs = [self._describe(_capi.executableGetInput, i) for i in range(n_in)]
        self.outputs = [self._describe(_capi.executableGetOutput, i) for i in range(n_out)]
        self._runs = threading.local()  # _run_pointers' prepared arguments

    def _describe(self, getter, index):
        t, rank = ctypes.c_int(), ctypes.c_int64()
        shape, name = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_char_p()
        if getter(self._exe.handle, self.name.encode(), index, ctypes.byref(t),
                  ctypes.byref(rank), ctypes.byref(shape), ctypes.byref(name)):
            raise NeoError("cannot describe %s" % self.name)
        if t.value not in _DTYPES:
            raise NeoError("element type code %d is not supported from Python" % t.value)
        return name.value.decode(), _DTYPES[t.value], tuple(shape[i] for i in range(rank.value))

    def _as_input(self, x, i):
        name, dtype, shape = self.inputs[i]
        if dtype == _BF16 and not (isinstance(x, np.ndarray) and x.dtype == _BF16):
            x = to_bf16_bits(x)  # values, rounded (a uint16 array is bits already)
        a = np.asarray(x, dtype=dtype)
        if not a.flags.c_contiguous:
            a = np.ascontiguousarray(a)  # (ascontiguousarray alone makes 0-d arrays 1-d)
        if a.shape != shape:
            raise NeoError("input #%d ('%s') of '%s' has shape %s but %s is expected"
                           % (i, name, self.name, a.shape, shape))
        return a

    def _check_out(self, out):
        """The arrays to pass for `out=`, and the (given, temporary) pairs to
        copy back after the run: a given array that is not C-contiguous is
        computed into a contiguous temporary first."""
        if isinstance(out, np.ndarray):
            out = [out]
        out = list(out)
        if len(out) != len(self.outputs):
            raise NeoError("'%s' has %d outputs but out= gives %d arrays"
                           % (self.name, len(self.outputs), len(out)))
        arrays, copies = [], []
        for i, (a, (name, dtype, shape)) in enumerate(zip(out, self.outputs)):
            what = "out[%d] (output '%s' of '%s')" % (i, name, self.name)
            if not isinstance(a, np.ndarray):
                raise NeoError("%s must be a numpy array, not %s" % (what, type(a).__name__))
            if a.dtype != dtype or a.shape != shape:
                raise NeoError("%s has dtype %s and shape %s but %s %s is expected"
                               % (what, a.dtype, a.shape, dtype, shape))
            if not a.flags.writeable:
                raise NeoError("%s is read-only" % what)
            if a.flags.c_contiguous and a.flags.aligned:
                arrays.append(a)
            else:
                tmp = np.empty(shape, dtype)
                arrays.append(tmp)
                copies.append((a, tmp))
        return out, arrays, copies

    def __call__(self, *inputs, out=None):
        if len(inputs) != len(self.inputs):
            raise NeoError("'%s' takes %d inputs but %d were given"
                           % (self.name, len(self.inputs), len(inputs)))
        arrays = [self._as_input(x, i) for i, x in enumerate(inputs)]
        if out is None:
            outs = [np.empty(s, d) for _, d, s in self.outputs]
            results, copies = outs, []
        else:
            results, outs, copies = self._check_out(out)
            # An output that shares memory with an input would be read while
            # written: compute into a temporary (the C API rejects exact
            # overlaps; this also covers views that overlap partly).
            for k, o in enumerate(outs):
                if any(np.may_share_memory(o, a) for a in arrays) and o is results[k]:
                    tmp = np.empty(o.shape, o.dtype)
                    outs[k] = tmp
                    copies.append((o, tmp))
        ins_c, outs_c = _tensors(arrays), _tensors(outs)
        error = ctypes.create_string_buffer(1024)
        if _capi.executableRun(self._exe.handle, self.name.encode(), ins_c, len(arrays), outs_c,
                               len(outs), error, len(error)):
            raise NeoError(error.value.decode())
        for given, tmp in copies:
            given[...] = tmp
        if out is None:  # bf16 outputs as float32 values (out= keeps the bits)
            results = [from_bf16_bits(r) if r.dtype == _BF16 else r for r in results]
        return results[0] if len(results) == 1 else tuple(results)

    def _run_pointers(self, pointers):
        """Runs on raw data pointers, exactly one per input and then one per
        output, of buffers that the caller guarantees are C-contiguous, of
        the declared dtypes and shapes and not overlapping (neo.torch checks
        its tensors before it calls this). The call's arguments are built
        once per thread (_PreparedRun); only the pointers change."""
        try:
            run = self._runs.prepared
        except AttributeError:
            run = self._runs.prepared = _PreparedRun(self)
        if len(pointers) != len(run.pointers):  # no stale pointer from an earlier call
            raise NeoError("'%s' takes %d data pointers (inputs, then outputs), not %d"
                           % (self.name, len(run.pointers), len(pointers)))
        for slot, pointer in zip(run.pointers, pointers):
            slot.value = pointer
        if _capi.executableRunPrepared(*run.args):
            raise NeoError(run.error.value.decode())

    def time(self, *inputs, repeat=10):
        """The median milliseconds of `repeat` runs on `inputs` (on the GPU:
        kernel time by CUDA events)."""
        arrays = [self._as_input(x, i) for i, x in enumerate(inputs)]
        if len(arrays) != len(self.inputs):
            raise NeoError("'%s' takes %d inputs but %d were given"
                           % (self.name, len(self.inputs), len(arrays)))
        outs = [np.empty(s, d) for _, d, s in self.outputs]
        ins_c, outs_c = _tensors(arrays), _tensors(outs)
        error = ctypes.create_string_buffer(1024)
        ms = ctypes.c_double()
        if _capi.executableTime(self._exe.handle, self.name.encode(), ins_c, len(arrays), outs_c,
                                len(outs), repeat, ctypes.byref(ms), error, len(error)):
            raise NeoError(error.value.decode())
        return ms.value

    def __repr__(self):
        fmt = lambda ts: ", ".join("%s: %s%s" % (n, "bf16" if d == _BF16 else d.name, list(s))
                                   for n, d, s in ts)
        return "<neo.Function %s(%s) -> (%s) on %s>" % (self.name, fmt(self.inputs),
                                                        fmt(self.outputs), self.device)


def cuda_available():
    """Whether a CUDA driver with a device can be opened here."""
    return bool(_capi.cudaAvailable())


def grad(module, function, wrt=None, combined=True, options="", opt_level=3, device="cpu"):
    """Differentiates `function` of `module` with neo-autodiff (once) and
    compiles the result. Returns `function_fwdbwd(x..., dy...) -> (y...,
    dx...)` or, with combined=False, `function_grad(x..., dy...) -> (dx...)`.
    `wrt`: indices of the arguments to differentiate (default: all)."""
    functions = module.functions
    if function not in functions:
        raise NeoError("no function named '%s' in the module" % function)
    key = (function, tuple(wrt) if wrt else None)
    names = module._derived.get(key)
    if names is None:
        # The derived functions get fresh names: a function of the module
        # that happens to be called f_fwdbwd is not f's gradient.
        taken = set(functions)

        def fresh(base):
            name, n = base, 1
            while name in taken:
                name, n = "%s_%d" % (base, n), n + 1
            taken.add(name)
            return name
        names = (fresh(function + "_fwdbwd"), fresh(function + "_grad"))
        opts = "function=%s combined-name=%s grad-name=%s" % (function, names[0], names[1])
        if wrt:
            opts += " wrt=%s" % ",".join(str(int(i)) for i in wrt)
        module.run_pipeline("neo-autodiff{%s}" % opts)
        module._derived[key] = names
    name = names[0] if combined else names[1]
    return module.compile(name, options=options, opt_level=opt_level, device=device)
