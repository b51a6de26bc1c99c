"""Elementwise primitives: Python's operators, NumPy's ufuncs, ``math``'s functions, comparisons and casts.

Every ufunc and ``math`` function is elementwise, with a float result (its abstract value) and the
broadcast of its operands' shapes, unless its entry below says more; its reverse-mode rule is the one
written here, or none. Reverse-mode templates follow NumPy's parameter names, so keyword calls bind as
NumPy binds them; broadcasting is undone by ``rt.unbroadcast``.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
import builtins
import math

import gast
import numpy as np

from numbax.primitives import kinds, symbolic
from numbax.primitives.registry import ELEMENTWISE, TRANSPOSED, def_elementwise, def_methods, \
    def_nondifferentiable, define, defjvp, defvjp, method_key

_UFUNCS = [fn for fn in vars(np).values() if isinstance(fn, np.ufunc) and fn.signature is None]  # not matmul
_MATH = [fn for name, fn in vars(math).items() if callable(fn) and not name.startswith("_")]
define(*_UFUNCS, *_MATH, aval=kinds.elementwise("f"), shape=symbolic.elementwise)
# NumPy's, not ``math``'s: those take numbers only
define(*(fn for fn in _UFUNCS if fn.nout == 1), gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.Mod,
       gast.FloorDiv, gast.USub, gast.UAdd, np.copy, method_key("copy"), method_key("astype"), batch=ELEMENTWISE)

_SAME = dict(aval=kinds.elementwise(), shape=symbolic.elementwise)  # the operands' promoted kind
_FLOAT = dict(aval=kinds.elementwise("f"), shape=symbolic.elementwise)
_BOOL = dict(aval=kinds.elementwise("b"), shape=symbolic.elementwise)
_LINEARIZED = dict(jvp=TRANSPOSED)  # forward mode reads the VJP template with ``g`` as the tangent

# ---------------------------------------------------------------------------
# Operators and their ufuncs


@defvjp(gast.Add, np.add, **_SAME, **_LINEARIZED)
def add(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(g, x2)


@defvjp(gast.Sub, np.subtract, **_SAME, **_LINEARIZED)
def subtract(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(-g, x2)


@defvjp(gast.Mult, np.multiply, **_SAME, **_LINEARIZED)
def multiply(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * x2, x1)
    d[x2] = rt.unbroadcast(g * x1, x2)


@defvjp(gast.Div, np.divide, np.true_divide, **_FLOAT, **_LINEARIZED)
def divide(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g / x2, x1)
    d[x2] = rt.unbroadcast(-g * ans / x2, x2)


@defvjp(gast.Pow, np.power, math.pow, **_SAME, **_LINEARIZED)
def power(g, ans, x1, x2):
    """JAX's conventions at ``x1 == 0``: ``x1 ** 0`` for an integer 0 has derivative 0, and the exponent's
    derivative is 0 there (``log`` of 1 in place of 0)."""
    d[x1] = rt.unbroadcast(g * x2 * x1 ** rt.power_exponent(x2), x1)
    d[x2] = rt.unbroadcast(g * ans * np.log(x1 * (x1 != 0) + (x1 == 0)), x2)


define(math.pow, **_FLOAT)  # always a float


@defvjp(gast.USub, np.negative, **_SAME, **_LINEARIZED)
def negative(g, ans, x):
    d[x] = -g


@defvjp(gast.UAdd, np.positive, np.copy, np.asarray, np.array, np.ascontiguousarray, float, np.float64, np.float32,
        aval=kinds.elementwise(), **_LINEARIZED)
def identity(g, ans, x):
    d[x] = g


define(np.positive, np.copy, shape=symbolic.elementwise)
define(np.array, np.asarray, aval=kinds.array_of, shape=symbolic.array_of)
define(float, aval=kinds.constant("f", 0))


def _astype(app, args):
    """``x.astype(dtype)``: ``x``'s ndim, the dtype's kind (unknown for a dtype numbax cannot read)."""
    dtype = kinds.argument(app, 1, "dtype")
    kind = kinds.dtype_kind(dtype) if dtype is not None else None
    return (kind, args[0][1]) if kind is not None and args and args[0] is not None else None


@defvjp(method_key("astype"), aval=_astype, shape=symbolic.elementwise, **_LINEARIZED)
def astype(g, ans, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    """A cast passes the derivative where the result holds floats (the real part where it holds real floats
    and the derivative is complex, as JAX's ``convert_element_type``), none where it holds integers or
    booleans (``rt.stored_cotangent`` asks the result's dtype). Reverse mode's cotangent of a real operand of a
    cast to complex is its real part, as any real variable's (``_in_kind``)."""
    d[x] = rt.stored_cotangent(g, ans)
_SCALAR_TYPES = sorted({t for t in np.sctypeDict.values() if issubclass(t, np.generic)}, key=lambda t: t.__name__)
for _type in _SCALAR_TYPES:
    define(_type, aval=kinds.cast(_type))


# ---------------------------------------------------------------------------
# Elementwise functions of one argument


def_elementwise(np.exp, math.exp, derivative="ans")
def_elementwise(np.exp2, derivative="ans * 0.6931471805599453")
def_elementwise(np.expm1, math.expm1, derivative="ans + 1.0")
def_elementwise(np.log, math.log, derivative="1.0 / x")
def_elementwise(np.log2, math.log2, derivative="1.0 / (x * 0.6931471805599453)")
def_elementwise(np.log10, math.log10, derivative="1.0 / (x * 2.302585092994046)")
def_elementwise(np.log1p, math.log1p, derivative="1.0 / (1.0 + x)")
def_elementwise(np.sqrt, math.sqrt, derivative="0.5 / ans")
def_elementwise(np.cbrt, derivative="ans ** -2.0 / 3.0")  # JAX's form: its second derivative is -inf at 0, not nan
def_elementwise(np.square, derivative="2.0 * x", aval=kinds.elementwise())
def_elementwise(np.reciprocal, derivative="-ans * ans")
def_elementwise(np.sin, math.sin, derivative="np.cos(x)")
def_elementwise(np.cos, math.cos, derivative="-np.sin(x)")
def_elementwise(np.tan, math.tan, derivative="1.0 + ans * ans")
def_elementwise(np.arcsin, math.asin, derivative="1.0 / np.sqrt(1.0 - x * x)")
def_elementwise(np.arccos, math.acos, derivative="-1.0 / np.sqrt(1.0 - x * x)")
def_elementwise(np.arctan, math.atan, derivative="1.0 / (1.0 + x * x)")
def_elementwise(np.sinh, math.sinh, derivative="np.cosh(x)")
def_elementwise(np.cosh, math.cosh, derivative="np.sinh(x)")
def_elementwise(np.tanh, math.tanh, derivative="1.0 - ans * ans")
def_elementwise(np.arcsinh, math.asinh, derivative="1.0 / np.sqrt(x * x + 1.0)")
def_elementwise(np.arccosh, math.acosh, derivative="1.0 / np.sqrt(x * x - 1.0)")
def_elementwise(np.arctanh, math.atanh, derivative="1.0 / (1.0 - x * x)")


@defvjp(np.abs, np.absolute, np.fabs, abs, math.fabs, aval=kinds.elementwise(real=True), shape=symbolic.elementwise,
        **_LINEARIZED)
def absolute(g, ans, x):
    d[x] = np.conj(g * rt.abs_slope(x))


define(np.fabs, math.fabs, **_FLOAT)


# ---------------------------------------------------------------------------
# Complex numbers, in JAX's convention: a holomorphic function's cotangent is ``g * f'(z)`` (the rules
# above), and a real function of ``z`` sends back the conjugate of its derivative along the real axis
# (``np.abs``, ``np.var``, ``np.linalg.norm``); ``np.conj`` is dropped where the operand is real.


@defvjp(np.real, method_key("real"), aval=kinds.elementwise(real=True), **_LINEARIZED)
def real(g, ans, val):
    d[val] = g


@defvjp(np.imag, method_key("imag"), aval=kinds.elementwise(real=True))
def imag(g, ans, val):
    d[val] = -1j * g


@defvjp(np.conj, np.conjugate, method_key("conj"), method_key("conjugate"), **_SAME, **_LINEARIZED)
def conj(g, ans, x):
    d[x] = np.conj(g)


@defvjp(np.angle, aval=kinds.elementwise("f", real=True), shape=symbolic.elementwise)
def angle(g, ans, z, deg=False):
    """JAX's ``atan2(imag z, real z)``: ``d/dre - 1j d/dim``, each a real division (``np.divide``: NaN at 0, as
    JAX's, where a complex or Python division raises)."""
    squared = np.real(z) ** 2 + np.imag(z) ** 2
    turn = np.divide(-g * np.imag(z), squared) - 1j * np.divide(g * np.real(z), squared)
    d[z] = turn * 57.29577951308232 if deg else turn


@defjvp(np.abs, np.absolute, abs)
def absolute_jvp(g, ans, x):
    """``Re(dz conj(z)) / |z|`` (the sign of ``x`` times its tangent on reals)."""
    d[x] = np.real(g * np.conj(rt.abs_slope(x)))


@defjvp(np.real, method_key("real"))
def real_jvp(g, ans, val):
    d[val] = np.real(g)


@defjvp(np.imag, method_key("imag"))
def imag_jvp(g, ans, val):
    d[val] = np.imag(g)


@defjvp(np.angle)
def angle_jvp(g, ans, z, deg=False):
    """JAX's ``atan2`` rule, ``(re z im dz - im z re dz) / |z|**2``, a real division (NaN at 0, as JAX's; 0 along
    the real axis, where the angle is constant), in degrees with ``deg``."""
    turn = np.divide(np.real(z) * np.imag(g) - np.imag(z) * np.real(g), np.real(z) ** 2 + np.imag(z) ** 2)
    d[z] = turn * 57.29577951308232 if deg else turn


@defvjp(np.sinc, **_FLOAT, **_LINEARIZED)
def sinc(g, ans, x):
    d[x] = g * rt.dsinc(x)


# ---------------------------------------------------------------------------
# Elementwise functions of two arguments


@defvjp(np.arctan2, math.atan2, **_FLOAT, **_LINEARIZED)
def arctan2(g, ans, x1, x2):
    r = x1 * x1 + x2 * x2
    d[x1] = rt.unbroadcast(g * x2 / r, x1)
    d[x2] = rt.unbroadcast(-g * x1 / r, x2)


@defvjp(np.hypot, math.hypot, **_FLOAT, **_LINEARIZED)
def hypot(g, ans, x1, x2):
    """``x1 / ans``; at ``hypot(0, 0)`` a half to each operand, JAX's value (its ``max(|x1|, |x2|)`` there), where
    the division would be 0 / 0; the divisor made 1 there so that no derivative of it is nan either."""
    at_zero = ans == 0
    divisor = np.where(at_zero, 1.0, ans)
    d[x1] = rt.unbroadcast(g * np.where(at_zero, 0.5, x1 / divisor), x1)
    d[x2] = rt.unbroadcast(g * np.where(at_zero, 0.5, x2 / divisor), x2)


@defvjp(np.logaddexp, **_FLOAT, **_LINEARIZED)
def logaddexp(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * np.exp(x1 - ans), x1)
    d[x2] = rt.unbroadcast(g * np.exp(x2 - ans), x2)


@defvjp(np.logaddexp2, **_FLOAT, **_LINEARIZED)
def logaddexp2(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * np.exp2(x1 - ans), x1)
    d[x2] = rt.unbroadcast(g * np.exp2(x2 - ans), x2)


@defvjp(np.maximum, **_SAME, **_LINEARIZED)
def maximum(g, ans, x1, x2):
    """Ties share the cotangent equally (JAX's and autograd's convention)."""
    d[x1] = rt.unbroadcast(g * ((x1 > x2) + 0.5 * (x1 == x2)), x1)
    d[x2] = rt.unbroadcast(g * ((x2 > x1) + 0.5 * (x1 == x2)), x2)


@defvjp(np.minimum, **_SAME, **_LINEARIZED)
def minimum(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g * ((x1 < x2) + 0.5 * (x1 == x2)), x1)
    d[x2] = rt.unbroadcast(g * ((x2 < x1) + 0.5 * (x1 == x2)), x2)


@defvjp(np.fmax, **_SAME, **_LINEARIZED)
def fmax(g, ans, x1, x2):
    """``x1`` where it is larger or ``x2`` is NaN, else ``x2`` (ties too), as JAX's ``where``: selected, so that
    the side not taken passes nothing (a NaN tangent of it too, as in JAX's forward mode)."""
    first = (x1 > x2) | np.isnan(x2)
    d[x1] = rt.unbroadcast(np.where(first, g, 0.0), x1)
    d[x2] = rt.unbroadcast(np.where(first, 0.0, g), x2)


@defvjp(np.fmin, **_SAME, **_LINEARIZED)
def fmin(g, ans, x1, x2):
    first = (x1 < x2) | np.isnan(x2)
    d[x1] = rt.unbroadcast(np.where(first, g, 0.0), x1)
    d[x2] = rt.unbroadcast(np.where(first, 0.0, g), x2)


@defvjp(builtins.max, **_SAME, **_LINEARIZED)
def builtin_max(g, ans, x1, x2):
    """Python's ``max(x1, x2)`` is ``x2`` only where ``x2 > x1``: a tie is the first argument's."""
    second = g * (x2 > x1)
    d[x1] = g - second
    d[x2] = second


@defvjp(builtins.min, **_SAME, **_LINEARIZED)
def builtin_min(g, ans, x1, x2):
    second = g * (x2 < x1)
    d[x1] = g - second
    d[x2] = second


def _clipped(app, args):
    """``np.clip(a, a_min, a_max)``: the promoted kind of the operand and its bounds, as NumPy's result type,
    bounds given by keyword (``x.clip(max=0.5)``) too; unknown where a keyword's bound is not a number."""
    bounds = [kinds.constant_value(node) for node in app.keywords.values()]
    if any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in bounds):
        return None
    return _ELEMENTWISE(app, list(args) + [("f" if isinstance(b, float) else "i", 0) for b in bounds])


_ELEMENTWISE = kinds.elementwise()


@defvjp(np.clip, method_key("clip"), aval=_clipped, shape=symbolic.elementwise, **_LINEARIZED)
def clip(g, ans, a, a_min=None, a_max=None):
    """``np.minimum(a_max, np.maximum(a_min, a))``, as JAX clips: a tie at a bound shares the cotangent."""
    low = a if a_min is None else np.maximum(a, a_min)
    through = g if a_max is None else g * ((low < a_max) + 0.5 * (low == a_max))
    d[a] = rt.unbroadcast(through if a_min is None else through * ((a > a_min) + 0.5 * (a == a_min)), a)
    d[a_min] = rt.unbroadcast(through * ((a_min > a) + 0.5 * (a == a_min)), a_min)
    d[a_max] = rt.unbroadcast(g * ((a_max < low) + 0.5 * (low == a_max)), a_max)


@defvjp(np.where, **_SAME, **_LINEARIZED)
def where(g, ans, condition, x, y):
    d[condition] = None
    d[x] = rt.unbroadcast(np.where(condition, g, 0.0), x)
    d[y] = rt.unbroadcast(np.where(condition, 0.0, g), y)


@defvjp(gast.Mod, np.mod, np.remainder, **_SAME, **_LINEARIZED)
def mod(g, ans, x1, x2):
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(-g * np.floor_divide(x1, x2), x2)


@defvjp(np.fmod, **_SAME, **_LINEARIZED)
def fmod(g, ans, x1, x2):
    """C's remainder, of ``x1``'s sign: ``x1 - x2 * trunc(x1 / x2)`` (JAX's rule for ``lax.rem``)."""
    d[x1] = rt.unbroadcast(g, x1)
    d[x2] = rt.unbroadcast(-g * np.trunc(x1 / x2), x2)


# ---------------------------------------------------------------------------
# No derivative: rounding, comparisons, logic, bits and casts to integers

def_nondifferentiable(np.sign, np.floor, np.ceil, np.rint, np.trunc, gast.FloorDiv, gast.Invert, gast.BitAnd,
                      gast.BitOr, gast.BitXor, gast.LShift, gast.RShift, np.bitwise_and, np.bitwise_or,
                      np.bitwise_xor, np.invert, **_SAME)
# ``np.sign`` carries no derivative for complex operands either, as in JAX (its JVP is zero)
define(np.sign, complex_verified=True)
def_nondifferentiable(np.round, np.around, aval=kinds.elementwise())
define(np.round, np.around, complex_verified=True)  # of a complex number, piecewise constant in each part
define(method_key("round"), aval=kinds.elementwise())
def_nondifferentiable(np.fix, np.floor_divide)
def_nondifferentiable(math.floor, math.ceil, math.trunc, aval=kinds.constant("i", 0), shape=symbolic.elementwise)


def _round(app, args):
    """Python's ``round(x)`` is an integer; ``round(x, ndigits)`` has ``x``'s kind."""
    if len(args) == 1:
        return ("i", 0)
    return args[0] if args and args[0] is not None else None


def_nondifferentiable(builtins.round, aval=_round)
def_nondifferentiable(np.isnan, np.isinf, np.isfinite, math.isnan, math.isinf, math.isfinite, np.logical_and,
                      np.logical_or, np.logical_not, np.logical_xor, np.equal, np.not_equal, np.less,
                      np.less_equal, np.greater, np.greater_equal, builtins.bool, **_BOOL)
def_nondifferentiable(np.isclose)
def_nondifferentiable(np.allclose, np.array_equal, np.array_equiv, aval=kinds.constant("b", 0))
def_nondifferentiable(np.int64, np.int32)
def_nondifferentiable(gast.Not, gast.Lt, gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq, gast.Is, gast.IsNot,
                      gast.In, gast.NotIn, gast.And, gast.Or)
# booleans and integers whatever their operands' kind: nothing to differentiate, complex operands too
define(np.isnan, np.isinf, np.isfinite, math.isnan, math.isinf, math.isfinite, np.logical_and, np.logical_or,
       np.logical_not, np.logical_xor, np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal,
       builtins.bool, np.isclose, np.allclose, np.array_equal, np.array_equiv, np.int64, np.int32, gast.Not, gast.Lt,
       gast.LtE, gast.Gt, gast.GtE, gast.Eq, gast.NotEq, gast.Is, gast.IsNot, gast.In, gast.NotIn, gast.And, gast.Or,
       complex_verified=True)


def _integer(app, args):
    """``len(x)`` and ``int(x)``: an integer (``int(s, base)`` is not numbax's)."""
    return ("i", 0) if len(app.args) == 1 and not app.keywords else None


def_nondifferentiable(builtins.len, builtins.int, aval=_integer)

def_methods({"copy": np.copy})

# Checked against JAX for complex operands (tests/test_grad_complex.py): reverse mode refuses any other
# primitive that meets a complex value, rather than give a number in another convention.
define(gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow, gast.USub, gast.UAdd, np.add, np.subtract, np.multiply,
       np.divide, np.power, np.negative, np.positive, np.copy, np.asarray, np.array, np.ascontiguousarray, np.exp,
       np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.sqrt, np.square, np.reciprocal, np.sin, np.cos,
       np.tan, np.arcsin, np.arccos, np.arctan, np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
       np.abs, builtins.abs, np.real, np.imag, np.conj, np.angle, np.where, method_key("real"),
       method_key("imag"), method_key("conj"), method_key("conjugate"), method_key("astype"),
       complex_verified=True)
