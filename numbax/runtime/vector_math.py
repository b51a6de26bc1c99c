"""vector_math: ``exp`` and ``tanh`` that LLVM vectorizes, and the steps of vectorized reductions.

Numba compiles ``np.exp`` and ``np.tanh`` of a float to a call of the C library per
element, which no loop around it can vectorize: 2.9 ns an ``exp`` and 8 ns a ``tanh``
on the benchmark machine, most of a softmax's or a tanh layer's time. XLA, and Numba
with Intel's SVML, evaluate a polynomial inline instead. So does numbax: each scalar
function here is LLVM IR written at the call (an ``intrinsic``), with no branch, so a
loop of them runs on vector registers. ``exp`` is Cephes' (S. Moshier): ``x = n ln 2 + r``
with ``ln 2`` in two parts, ``exp(r) = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))``, and
``2^n`` made from its exponent bits in two factors so that subnormal results round
once. ``tanh`` is Cephes' rational function below 0.625 and ``1 - 2 / (exp(2|x|) + 1)``
above. Both stay within 2 ulp of the C library over the whole float64 range, and give
NaN, infinities, signed zeros, overflow and subnormal results as NumPy does
(``tests/test_vector_math.py``). float32 is computed in float64 and rounded once.

``add_unordered(total, x)`` is ``total + x`` that LLVM may reassociate: a fused loop's
sum (``np.sum``'s, or a broadcast's adjoint) accumulates with it, so the loop
vectorizes with partial sums in each lane, as NumPy's own pairwise ``np.sum`` does
not add in order either. A sum the user writes as a loop keeps its order. ``maximum`` and
``minimum`` (LLVM's, a NaN wins) are the steps of ``rt.max``/``rt.min``, which vectorize for the same
reason where a compare-and-select does not.

From Python each function is NumPy's (the ``python`` backend agrees with NumPy
bit for bit); in compiled code, arrays of other dtypes (complex) go to Numba's own.

    >>> import numba
    >>> x = np.array([-1.0, 0.0, 2.0])
    >>> bool(np.all(np.abs(numba.njit(lambda x: exp(x))(x) - np.exp(x)) <= 2 * np.spacing(np.exp(x))))
    True
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.errors import TypingError
from numba.extending import intrinsic

from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source, element_source, empty_like_source, function_source, nest

__all__ = ["exp", "tanh", "add_unordered"]

_F64 = ir.DoubleType()
_I64 = ir.IntType(64)
_LOG2E = 1.4426950408889634073599
_LN2 = (6.93145751953125E-1, 1.42860682030941723212E-6)  # ln 2 = hi + lo, hi with trailing zero bits
_EXP_P = (1.26177193074810590878E-4, 3.02994407707441961300E-2, 9.99999999999999999910E-1)
_EXP_Q = (3.00198505138664455042E-6, 2.52448340349684104192E-3, 2.27265548208155028766E-1,
          2.00000000000000000009E0)
_EXP_RANGE = (-746.0, 710.0)  # past these exp is 0 or inf; clamping keeps n an exact small int
_TANH_P = (-9.64399179425052238628E-1, -9.92877231001918586564E1, -1.61468768441708447952E3)
_TANH_Q = (1.0, 1.12811678491632931402E2, 2.23548839060100448583E3, 4.84406305325125486048E3)
_TANH_RATIONAL_BELOW = 0.625


def exp(x):
    """``np.exp(x)``; in compiled code, inline and vectorizable for real dtypes (within 2 ulp)."""
    return np.exp(x)


def tanh(x):
    """``np.tanh(x)``; in compiled code, inline and vectorizable for real dtypes (within 2 ulp)."""
    return np.tanh(x)


def add_unordered(total, x):
    """``total + x``, a step of a sum whose order compiled code may change (to vectorize the loop)."""
    return total + x


# ---- the scalar functions as LLVM IR ---------------------------------------------------------


def _const(value: float) -> ir.Constant:
    return ir.Constant(_F64, value)


def _horner(builder: ir.IRBuilder, x, coefficients):
    """``(c0 * x + c1) * x + c2 ...``."""
    p = _const(coefficients[0])
    for c in coefficients[1:]:
        p = builder.fadd(builder.fmul(p, x), _const(c))
    return p


def _unary_intrinsic(builder: ir.IRBuilder, name: str, x):
    fn = builder.module.declare_intrinsic(name, [_F64])
    return builder.call(fn, [x])


def _power_of_two(builder: ir.IRBuilder, n):
    """``2.0 ** n`` for an i64 ``n`` in the normal exponent range, from its bits."""
    return builder.bitcast(builder.shl(builder.add(n, ir.Constant(_I64, 1023)), ir.Constant(_I64, 52)), _F64)


def _exp_ir(builder: ir.IRBuilder, x):
    low, high = _EXP_RANGE
    clamped = builder.select(builder.fcmp_ordered("<", x, _const(high)), x, _const(high))  # NaN: high
    clamped = builder.select(builder.fcmp_ordered(">", clamped, _const(low)), clamped, _const(low))
    n = _unary_intrinsic(builder, "llvm.floor",
                         builder.fadd(builder.fmul(clamped, _const(_LOG2E)), _const(0.5)))
    r = builder.fsub(builder.fsub(clamped, builder.fmul(n, _const(_LN2[0]))), builder.fmul(n, _const(_LN2[1])))
    rr = builder.fmul(r, r)
    p = builder.fmul(r, _horner(builder, rr, _EXP_P))
    q = _horner(builder, rr, _EXP_Q)
    y = builder.fadd(_const(1.0), builder.fmul(_const(2.0), builder.fdiv(p, builder.fsub(q, p))))
    k = builder.fptosi(n, _I64)
    half = builder.ashr(k, ir.Constant(_I64, 1))
    y = builder.fmul(builder.fmul(y, _power_of_two(builder, half)),
                     _power_of_two(builder, builder.sub(k, half)))
    return builder.select(builder.fcmp_unordered("uno", x, x), x, y)


def _tanh_ir(builder: ir.IRBuilder, x):
    magnitude = _unary_intrinsic(builder, "llvm.fabs", x)
    z = builder.fmul(x, x)
    ratio = builder.fdiv(builder.fmul(_horner(builder, z, _TANH_P), z), _horner(builder, z, _TANH_Q))
    small = builder.fadd(magnitude, builder.fmul(magnitude, ratio))
    grown = _exp_ir(builder, builder.fmul(_const(2.0), magnitude))
    large = builder.fsub(_const(1.0), builder.fdiv(_const(2.0), builder.fadd(grown, _const(1.0))))
    t = builder.select(builder.fcmp_ordered("<", magnitude, _const(_TANH_RATIONAL_BELOW)), small, large)
    t = builder.select(builder.fcmp_ordered("<", x, _const(0.0)), builder.fsub(_const(-0.0), t), t)
    return builder.select(builder.fcmp_ordered("==", x, _const(0.0)), x, t)  # +-0 as given


def _scalar_intrinsic(emit):
    """An intrinsic of one float argument computing ``emit`` in float64 (float32: widened, rounded once)."""
    @intrinsic
    def scalar(typingctx, x):
        if not isinstance(x, types.Float):
            return None

        def codegen(context, builder, signature, args):
            wide = args[0] if x == types.float64 else builder.fpext(args[0], _F64)
            value = emit(builder, wide)
            return value if x == types.float64 else builder.fptrunc(value, context.get_value_type(x))

        return x(x), codegen

    return scalar


_exp_scalar = _scalar_intrinsic(_exp_ir)
_tanh_scalar = _scalar_intrinsic(_tanh_ir)


def _extremum_intrinsic(llvm_name: str):
    """``llvm.maximum``/``llvm.minimum`` of two floats of one type: NaN wins, -0.0 is below 0.0, and a loop
    reducing with it vectorizes (a compare-and-select does not, without fast-math flags)."""
    @intrinsic
    def extremum(typingctx, a, b):
        if not (isinstance(a, types.Float) and a == b):
            return None

        def codegen(context, builder, signature, args):
            kind = args[0].type
            fn = builder.module.declare_intrinsic(llvm_name, [kind], ir.FunctionType(kind, [kind, kind]))
            return builder.call(fn, args)

        return a(a, b), codegen

    return extremum


maximum = _extremum_intrinsic("llvm.maximum")
minimum = _extremum_intrinsic("llvm.minimum")


@intrinsic
def _add_reassociable(typingctx, total, x):
    if not (isinstance(total, types.Float) and total == x):
        return None

    def codegen(context, builder, signature, args):
        return builder.fadd(args[0], args[1], flags=("reassoc",))

    return total(total, x), codegen


# ---- in compiled code ------------------------------------------------------------------------


def _map_source(ndim: int, float64: bool) -> str:
    """Source of ``impl(x)``: ``scalar`` of each element, by a loop nest (no reshape for Numba to compile)."""
    allocate = f"out = {empty_like_source(ndim, 'x', float64)}"
    element_out, element_in = element_source(ndim, "out"), element_source(ndim, "x")
    body = [allocate] + nest(ndim, "out", [f"{element_out} = scalar(dtype({element_in}))"])
    return function_source("x", body + ["return out"])


def _float_of(numpy_fn, integer: types.Integer):
    """The float type NumPy computes ``numpy_fn`` of an integer in: float32 for int16 and uint16 (NumPy's
    first loop that holds them), float64 for wider ones (float16, for int8, is refused before code is made)."""
    dtype = numpy_fn(np.ones(1, np.dtype(str(integer)))).dtype
    return types.float32 if dtype == np.float32 else types.float64


def _register(helper, numpy_fn, scalar) -> None:
    @overload(helper)
    def impl(x):
        if isinstance(x, types.Float):
            return lambda x: scalar(x)
        if isinstance(x, types.Integer):
            cast = _float_of(numpy_fn, x)
            return lambda x: scalar(cast(x))
        if not (isinstance(x, types.Array) and isinstance(x.dtype, (types.Float, types.Integer)) and x.ndim > 0):
            return lambda x: numpy_fn(x)
        dtype = x.dtype if isinstance(x.dtype, types.Float) else _float_of(numpy_fn, x.dtype)
        return compile_source(_map_source(x.ndim, dtype == types.float64), scalar=scalar, dtype=dtype)


_register(exp, np.exp, _exp_scalar)
_register(tanh, np.tanh, _tanh_scalar)


@overload(add_unordered)
def _add_unordered(total, x):
    if isinstance(total, types.Array) or isinstance(x, types.Array):
        raise TypingError("numbax: add_unordered adds scalars")
    if isinstance(total, (types.Float, types.Integer)) and isinstance(x, (types.Float, types.Integer)):
        result = np.result_type(np.dtype(str(total)), np.dtype(str(x)))
        if result.kind == "f":
            cast = types.float32 if result == np.float32 else types.float64
            return lambda total, x: _add_reassociable(cast(total), cast(x))
    return lambda total, x: total + x
