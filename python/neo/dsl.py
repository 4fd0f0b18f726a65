"""A small Python DSL that writes .neo programs (in the spirit of TVM's te):
index variables and tensors with operator overloading.

    from neo import dsl
    f = dsl.Function("linear")
    x = f.input("x", (64, 784))
    w = f.input("w", (784, 10))
    b = f.input("b", (10,))
    i, j, k = dsl.vars("i j k")
    y = f.compute("y", [i, j], dsl.relu(dsl.sum(k, x[i, k] * w[k, j]) + b[j]))
    f.output(y)
    module = f.module()          # neo.Module; f.source() is the .neo text
"""
import numbers

# Precedence levels of the .neo grammar (docs/language.md), loosest first.
# Operands are parenthesized only where the grammar needs it, so a long chain
# `a + b + c ...` is written flat: the importer parses chains in a loop, but
# every parenthesis is one level of nesting (ImportOptions.maxExpressionDepth).
_OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _ATOM = range(1, 9)


def _wrap(e, level):
    """The text of `e` as an operand that needs precedence `level`."""
    return e.text if e.prec >= level else "(" + e.text + ")"

__all__ = ["Function", "Var", "vars", "sum", "max", "min", "prod", "exp", "expm1", "log",
           "log1p", "tanh", "sigmoid", "softplus", "relu", "sqrt", "rsqrt", "abs", "sin", "cos",
           "erf", "pow", "to_float", "maximum", "minimum", "select"]


def _lift(x):
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        raise TypeError("booleans are not neo values")
    if isinstance(x, numbers.Integral):
        return Expr(str(int(x)), index=True, prec=_UNARY if x < 0 else _ATOM)
    if isinstance(x, numbers.Real):
        if x != x:
            raise ValueError("NaN cannot be written in .neo")
        if x in (float("inf"), float("-inf")):
            return Expr("inf" if x > 0 else "-inf", prec=_ATOM if x > 0 else _UNARY)
        text = repr(float(x))
        return Expr(text, prec=_UNARY if text.startswith("-") else _ATOM)
    raise TypeError("cannot use %r in a neo expression" % (x,))


class Expr:
    """An expression; `index` marks integer expressions of index variables.
    Its text is built when it is (iteratively: each operator formats its
    operands' texts), so printing never recurses; `prec` is the precedence
    level of its outermost operator."""

    def __init__(self, text, index=False, condition=False, prec=_ATOM):
        self.text = text
        self.index = index
        self.condition = condition
        self.prec = prec

    def __str__(self):
        return self.text

    def _bin(self, op, other, swap=False):
        a, b = (_lift(other), self) if swap else (self, _lift(other))
        index = a.index and b.index and op in "+-*"
        level = _ADD if op in "+-" else _MUL
        # Left-associative: the left operand may be a chain of the same level.
        return Expr("%s %s %s" % (_wrap(a, level), op, _wrap(b, level + 1)), index=index,
                    prec=level)

    __add__ = lambda s, o: s._bin("+", o)
    __radd__ = lambda s, o: s._bin("+", o, True)
    __sub__ = lambda s, o: s._bin("-", o)
    __rsub__ = lambda s, o: s._bin("-", o, True)
    __mul__ = lambda s, o: s._bin("*", o)
    __rmul__ = lambda s, o: s._bin("*", o, True)
    __truediv__ = lambda s, o: s._bin("/", o)
    __rtruediv__ = lambda s, o: s._bin("/", o, True)

    def __floordiv__(self, other):
        return Expr("%s // %s" % (_wrap(self, _MUL), _wrap(_lift(other), _MUL + 1)),
                    index=True, prec=_MUL)

    def __mod__(self, other):
        return Expr("%s %% %s" % (_wrap(self, _MUL), _wrap(_lift(other), _MUL + 1)),
                    index=True, prec=_MUL)

    def __neg__(self):
        text = _wrap(self, _UNARY)
        return Expr("-" + (" " if text.startswith("-") else "") + text, index=self.index,
                    prec=_UNARY)

    def _cmp(self, op, other):
        return Expr("%s %s %s" % (_wrap(self, _ADD), op, _wrap(_lift(other), _ADD)),
                    condition=True, prec=_CMP)

    __lt__ = lambda s, o: s._cmp("<", o)
    __le__ = lambda s, o: s._cmp("<=", o)
    __gt__ = lambda s, o: s._cmp(">", o)
    __ge__ = lambda s, o: s._cmp(">=", o)

    def eq(self, other):
        return self._cmp("==", other)

    def ne(self, other):
        return self._cmp("!=", other)

    def __and__(self, other):
        return Expr("%s and %s" % (_wrap(self, _AND), _wrap(other, _NOT)), condition=True,
                    prec=_AND)

    def __or__(self, other):
        return Expr("%s or %s" % (_wrap(self, _OR), _wrap(other, _AND)), condition=True,
                    prec=_OR)

    def __invert__(self):
        return Expr("not %s" % _wrap(self, _NOT), condition=True, prec=_NOT)

    def __bool__(self):
        raise TypeError("neo expressions have no truth value: use select()")


class Var(Expr):
    """An index variable, optionally with an explicit extent."""

    def __init__(self, name, extent=None):
        if not name.isidentifier():
            raise ValueError("bad index variable name %r" % name)
        super().__init__(name, index=True)
        self.name = name
        self.extent = extent

    def decl(self):
        return self.name if self.extent is None else "%s < %d" % (self.name, self.extent)


def vars(names, extents=None):
    """vars("i j k") -> three index variables."""
    names = names.split()
    extents = extents or [None] * len(names)
    vs = [Var(n, e) for n, e in zip(names, extents)]
    return vs[0] if len(vs) == 1 else vs


class Tensor:
    def __init__(self, name, shape, dtype="f32"):
        if not name.isidentifier():
            raise ValueError("bad tensor name %r" % name)
        self.name, self.shape, self.dtype = name, tuple(shape), dtype

    def __getitem__(self, indices):
        if not isinstance(indices, tuple):
            indices = (indices,)
        if len(indices) != len(self.shape):
            raise IndexError("%s has rank %d but is indexed with %d indices"
                             % (self.name, len(self.shape), len(indices)))
        return Expr("%s[%s]" % (self.name, ", ".join(str(_lift(i)) for i in indices)))

    def padded(self, value):
        """Access with an out-of-bounds value: x.padded(-inf)[i, j]."""
        tensor = self
        if value != value:
            raise ValueError("NaN cannot be a pad value")
        if value in (float("inf"), float("-inf")):
            literal = "inf" if value > 0 else "-inf"
        else:
            literal = repr(float(value))

        class _Padded:
            def __getitem__(self, indices):
                return Expr("(%s pad %s)" % (tensor[indices], literal))
        return _Padded()

    def type_text(self):
        return "%s[%s]" % (self.dtype, ", ".join(str(d) for d in self.shape))


def _reduce(kind, variables, body):
    if isinstance(variables, Var):
        variables = [variables]
    # The body of a reduction is a multiplicative term; the reduction itself
    # is parenthesized (its body would otherwise take in a following `* x`).
    return Expr("(%s(%s) %s)" % (kind, ", ".join(v.decl() for v in variables),
                                 _wrap(_lift(body), _MUL)))


def sum(variables, body):
    return _reduce("sum", variables, body)


def prod(variables, body):
    return _reduce("prod", variables, body)


def max(variables, body):
    return _reduce("max", variables, body)


def min(variables, body):
    return _reduce("min", variables, body)


def _call(name, *args):
    return Expr("%s(%s)" % (name, ", ".join(str(_lift(a)) for a in args)))


exp = lambda x: _call("exp", x)
log = lambda x: _call("log", x)
tanh = lambda x: _call("tanh", x)
sigmoid = lambda x: _call("sigmoid", x)
relu = lambda x: _call("relu", x)
sqrt = lambda x: _call("sqrt", x)
rsqrt = lambda x: _call("rsqrt", x)
abs = lambda x: _call("abs", x)
expm1 = lambda x: _call("expm1", x)
log1p = lambda x: _call("log1p", x)
softplus = lambda x: _call("softplus", x)
sin = lambda x: _call("sin", x)
cos = lambda x: _call("cos", x)
erf = lambda x: _call("erf", x)


def pow(x, exponent):
    """x ** exponent for a constant real exponent (a Python number)."""
    if isinstance(exponent, bool) or not isinstance(exponent, numbers.Real):
        raise TypeError("the exponent of pow() must be a number, not %r" % (exponent,))
    return _call("pow", x, exponent)


def to_float(index):
    """An integer expression of index variables as a value: .neo's float()."""
    if not isinstance(index, Expr) or not index.index:
        raise TypeError("to_float() takes an integer expression of index variables")
    return _call("float", index)


maximum = lambda a, b: _call("max", a, b)
minimum = lambda a, b: _call("min", a, b)


def select(condition, a, b):
    if not isinstance(condition, Expr) or not condition.condition:
        raise TypeError("select() needs a condition (a comparison)")
    return _call("select", condition, a, b)


class Function:
    """Builds one `def` of a .neo program."""

    def __init__(self, name):
        if not name.isidentifier():
            raise ValueError("bad function name %r" % name)
        self.name = name
        self.inputs, self.statements, self.outputs = [], [], []
        self._names = set()

    def _claim(self, name):
        if name in self._names:
            raise ValueError("'%s' is defined twice" % name)
        self._names.add(name)

    def input(self, name, shape, dtype="f32"):
        self._claim(name)
        t = Tensor(name, shape, dtype)
        self.inputs.append(t)
        return t

    def compute(self, name, indices, expr, shape=None):
        """name[indices] = expr; `shape` (or extents on the variables) gives
        ranges that cannot be inferred."""
        self._claim(name)
        indices = list(indices)
        decls = []
        for pos, v in enumerate(indices):
            if not isinstance(v, Var):
                raise TypeError("output indices must be index variables")
            if shape is not None and v.extent is None:
                decls.append("%s < %d" % (v.name, shape[pos]))
            else:
                decls.append(v.decl())
        self.statements.append("  %s[%s] = %s" % (name, ", ".join(decls), _lift(expr)))
        return Tensor(name, shape or tuple(v.extent or -1 for v in indices))

    def output(self, *tensors):
        self.outputs.extend(tensors)

    def source(self):
        params = ", ".join("%s: %s" % (t.name, t.type_text()) for t in self.inputs)
        results = ", ".join(t.name for t in self.outputs)
        return "def %s(%s) -> (%s) {\n%s\n}\n" % (self.name, params, results,
                                                  "\n".join(self.statements))

    def module(self, context=None):
        from . import Module
        return Module.from_source(self.source(), name=self.name + ".neo", context=context)
