"""Property tests of the Python API with random arguments (issue 18).

Random element types (f16, f32, f64, bf16, and names that are not types),
random output names, and random inputs and `out=` buffers: other dtypes,
Fortran order, strided and transposed views, broadcast (stride-0) and
read-only arrays, wrong shapes and counts. The property: each call either
returns numpy's result (and leaves its inputs alone) or raises neo.NeoError;
it never crashes, raises another exception, or writes memory outside the
`out=` buffers (each buffer is a view into a larger array whose other
elements are checked afterwards).

The cases are drawn from a fixed seed when the module is collected, so a
failure names a case that reproduces. Every case must pass (the bugs it
found, out= layouts and dtypes and NUL bytes, are fixed).
Compilations are cached; the whole file runs in a few seconds.
"""
import numpy as np
import pytest

import neo

SEED = 18
NUM_CALL_CASES = 120
NUM_NAME_CASES = 24

# A program with two outputs (elementwise and a reduction) and a GEMM.
TWO_OUTPUTS = """def f(x: {t}[3, 4], w: {t}[4]) -> ({y}, {s}) {{
  {y}[i, j] = x[i, j] * w[j] + 1
  {s}[i] = sum(j) x[i, j] * x[i, j]
}}"""
GEMM = """def g(x: {t}[5, 7], w: {t}[7, 3]) -> {y} {{
  {y}[i, j] = sum(k) x[i, k] * w[k, j]
}}"""
PROGRAMS = {
    "two": (TWO_OUTPUTS, [(3, 4), (4,)], lambda x, w: [x * w + 1, (x * x).sum(1)]),
    "gemm": (GEMM, [(5, 7), (7, 3)], lambda x, w: [x @ w]),
}
# Which outputs are sums: of f16 reads they accumulate and are stored in f32
# (docs/language.md "Element types").
SUM_OUTPUTS = {"two": [False, True], "gemm": [True]}


def output_dtype(program, i, dtype):
    return np.float32 if dtype == np.float16 and SUM_OUTPUTS[program][i] else dtype
TYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
# bf16 functions take float arrays (rounded to bf16) and return float32 values.
NAME_TYPES = dict(TYPES, bf16=np.float32)
TOLERANCE = {np.float16: 2e-2, np.float32: 1e-5, np.float64: 1e-12}
# Output names of the call cases (few, as each pair is one compilation;
# test_random_names_and_types_import_or_raise draws many more).
OUTPUT_NAMES = [("y", "s"), ("out", "Y_2"), ("sum", "very_long_output_name_" * 4)]

_compiled = {}


def compiled(program, type_name, names):
    """The Function of `program` with element type `type_name` and output
    names `names` (cached), or the NeoError that making it raised."""
    key = (program, type_name, tuple(names))
    if key not in _compiled:
        template, _, _ = PROGRAMS[program]
        if program == "two":
            source = template.format(t=type_name, y=names[0], s=names[1])
        else:
            source = template.format(t=type_name, y=names[0])
        try:
            _compiled[key] = neo.Module.from_source(source).compile(options="threads=1")
        except neo.NeoError as error:
            _compiled[key] = error
    return _compiled[key]


def make_input(rng, shape, layout, dtype):
    """An array of `shape` (values small integers, exact in f16) with the
    given layout and dtype, and whether a call must reject it."""
    values = rng.integers(-3, 4, size=shape)
    if np.dtype(dtype).kind == "u":
        values = np.abs(values)
    if layout == "list":
        return values.tolist(), False
    if layout == "str":
        return np.full(shape, "q"), True
    if layout == "wrong-shape":
        return values.astype(dtype).reshape(-1)[:-1], True
    a = values.astype(dtype)
    if layout == "fortran":
        a = np.asfortranarray(a)
    elif layout == "strided":
        big = np.zeros(shape[:-1] + (2 * shape[-1],), dtype)
        big[..., ::2] = a
        a = big[..., ::2]
    elif layout == "transposed":
        a = np.ascontiguousarray(a.T).T
    elif layout == "broadcast":
        a = np.broadcast_to(a.reshape(-1)[:1].reshape((1,) * len(shape)), shape)
    elif layout == "readonly":
        a.flags.writeable = False
    return a, False


class Guarded:
    """An out= buffer that is a view into a larger array filled with a
    sentinel: `outside_intact()` says whether the call wrote only the view."""

    SENTINEL = 1234.5

    def __init__(self, shape, dtype, layout):
        n = int(np.prod(shape))
        step = 2 if layout == "strided" else 1
        self.base = np.full(8 + step * n + 8, self.SENTINEL, dtype=dtype)
        self.inside = np.zeros(self.base.shape, bool)
        self.inside[8:8 + step * n:step] = True
        view = self.base[8:8 + step * n:step]
        if layout == "fortran" and len(shape) == 2:
            view = view.reshape(shape[::-1]).T
        else:
            view = view.reshape(shape)
        if layout == "readonly":
            view.flags.writeable = False
        self.view = view
        self.before = self.base.copy()

    def outside_intact(self):
        return np.array_equal(self.base[~self.inside], self.before[~self.inside])

    def unchanged(self):
        return np.array_equal(self.base, self.before)


def call_cases():
    rng = np.random.default_rng(SEED)
    cases = []
    in_layouts = ["c", "c", "c", "fortran", "strided", "transposed", "broadcast",
                  "readonly", "list", "str", "wrong-shape"]
    in_dtypes = [np.float16, np.float32, np.float64, np.int32, np.int64, np.bool_,
                 np.uint8, np.dtype(">f4")]
    out_layouts = [None, None, "c", "c", "fortran", "strided", "readonly", "wrong-dtype",
                   "wrong-shape", "wrong-count", "not-an-array", "tuple"]
    for index in range(NUM_CALL_CASES):
        program = ["two", "gemm"][rng.integers(2)]
        type_name = list(TYPES)[rng.integers(3)]
        names = list(OUTPUT_NAMES[rng.integers(len(OUTPUT_NAMES))])
        inputs = [(in_layouts[rng.integers(len(in_layouts))],
                   in_dtypes[rng.integers(len(in_dtypes))]) for _ in range(2)]
        out = out_layouts[rng.integers(len(out_layouts))]
        seed = int(rng.integers(1 << 30))
        marks = []
        case_id = "%d-%s-%s-%s-%s-out=%s" % (index, program, type_name, inputs[0][0],
                                               inputs[1][0], out)
        cases.append(pytest.param(program, type_name, names, inputs, out, seed, id=case_id,
                                  marks=marks))
    return cases


@pytest.mark.parametrize("program,type_name,names,inputs,out,seed", call_cases())
def test_call_computes_numpy_or_raises(program, type_name, names, inputs, out, seed):
    rng = np.random.default_rng(seed)
    fn = compiled(program, type_name, names)
    assert isinstance(fn, neo.Function), "a valid program fails: %s" % fn
    _, shapes, reference = PROGRAMS[program]
    dtype = TYPES[type_name]
    args, must_fail = [], False
    for shape, (layout, in_dtype) in zip(shapes, inputs):
        a, bad = make_input(rng, shape, layout, in_dtype)
        args.append(a)
        must_fail |= bad
    copies = [np.array(a, copy=True) for a in args]
    want = None
    if not must_fail:
        want = reference(*[np.asarray(a, dtype).astype(np.float64) for a in args])

    guards, out_arg = [], None
    out_shapes = [s for _, _, s in fn.outputs]
    if out is not None:
        for i, shape in enumerate(out_shapes):
            layout, out_dtype = out, output_dtype(program, i, dtype)
            if out == "wrong-dtype" and i == 0:
                out_dtype = [np.int32, np.dtype(">f4"), np.float64][rng.integers(3)]
                if out_dtype == np.float64 and dtype == np.float64:
                    out_dtype = np.float32
                must_fail = True
            if out == "wrong-shape" and i == len(out_shapes) - 1:
                shape = shape[:-1] + (shape[-1] + 1,)
                must_fail = True
            guards.append(Guarded(shape, out_dtype, layout if layout in
                                  ("fortran", "strided", "readonly") else "c"))
        out_arg = [g.view for g in guards]
        if out == "wrong-count":
            out_arg = out_arg + [np.empty(3, dtype)]
            must_fail = True
        elif out == "not-an-array":
            out_arg = out_arg[:-1] + [1.0]
            must_fail = True
        elif out == "tuple":
            out_arg = tuple(out_arg)

    try:
        result = fn(*args, out=out_arg)
    except neo.NeoError:
        for g in guards:
            assert g.unchanged(), "a call that failed wrote its out= buffers"
        error = True
    except (ValueError, TypeError):
        # numpy's own conversion of an input it cannot convert (strings).
        assert any(layout == "str" for layout, _ in inputs), "not a neo.NeoError"
        error = True
    else:
        error = False
    for a, c in zip(args, copies):
        assert np.array_equal(np.asarray(a), c), "the call changed an input"
    if error:
        # Read-only and non-contiguous out= buffers may be rejected too.
        assert must_fail or out in ("fortran", "strided", "readonly"), \
            "a valid call raised neo.NeoError"
        return
    assert not must_fail, "an invalid call returned a result"
    results = list(result) if isinstance(result, tuple) else [result]
    assert len(results) == len(out_shapes)
    for i, (r, w, shape) in enumerate(zip(results, want, out_shapes)):
        assert r.shape == shape and r.dtype == output_dtype(program, i, dtype)
        np.testing.assert_allclose(r.astype(np.float64), w, rtol=TOLERANCE[dtype],
                                   atol=TOLERANCE[dtype])
    for g, r in zip(guards, results):
        assert g.outside_intact(), "the call wrote memory outside its out= buffer"
        if out == "readonly":
            raise AssertionError("the call wrote a read-only out= buffer")
        np.testing.assert_array_equal(g.view, r)


def name_cases():
    rng = np.random.default_rng(SEED + 1)
    alphabet = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
    special = ["x", "w", "def", "sum", "max", "inf", "pad", "not", "and", "f32", "1y",
               "", "y y", "y-z", "é", "y\tz", "a" * 300]
    cases = []
    for index in range(NUM_NAME_CASES):
        names = []
        for _ in range(2):
            if rng.random() < 0.5:
                names.append(special[rng.integers(len(special))])
            else:
                names.append("".join(rng.choice(alphabet, size=rng.integers(1, 12))))
        type_name = ["f16", "f32", "f64", "bf16", "f8", "i32", "F32"][rng.integers(7)]
        cases.append(pytest.param(type_name, names, id="%d-%s-%r" % (index, type_name, names)))
    return cases


@pytest.mark.parametrize("type_name,names", name_cases())
def test_random_names_and_types_import_or_raise(type_name, names):
    source = TWO_OUTPUTS.format(t=type_name, y=names[0], s=names[1])
    try:
        fn = neo.Module.from_source(source).compile(options="threads=1")
    except neo.NeoError as error:
        assert str(error), "an empty error message"
        return
    # It compiled: the outputs carry the names given, and the results are
    # numpy's (bf16: exact here, small integers).
    assert type_name in NAME_TYPES
    assert [n for n, _, _ in fn.outputs] == names
    dtype = NAME_TYPES[type_name]
    x, w = np.ones((3, 4), dtype), np.arange(4, dtype=dtype)
    y, s = fn(x, w)
    np.testing.assert_allclose(y, x * w + 1)
    np.testing.assert_allclose(s, (x * x).sum(1))


def test_bf16_values_in_and_out():
    """bf16 tensors from Python: float inputs rounded to bf16, bf16 outputs as
    float32 values, uint16 arrays as bits; a wrong shape is a NeoError."""
    fn = neo.Module.from_source(TWO_OUTPUTS.format(t="bf16", y="y", s="s")).compile()
    assert [d for _, d, _ in fn.outputs] == [np.dtype(np.uint16), np.dtype(np.float32)]
    x = np.full((3, 4), 1 + 2 ** -9, np.float64)  # rounds to 1 in bf16
    y, s = fn(x, neo.to_bf16_bits(np.arange(4.0)))
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.ones((3, 4)) * np.arange(4) + 1)
    np.testing.assert_array_equal(s, np.full(3, 4.0))
    with pytest.raises(neo.NeoError):
        fn(np.ones((4, 3)), np.ones(4))


@pytest.mark.parametrize("where", ["end", "middle", "start"])
def test_nul_bytes_in_source_raise(where):
    source = TWO_OUTPUTS.format(t="f32", y="y", s="s")
    at = {"end": len(source), "middle": source.index("{") + 1, "start": 0}[where]
    with pytest.raises(neo.NeoError):
        neo.Module.from_source(source[:at] + "\0 garbage" + source[at:])
