"""elementwise: the scalar functions the samplers apply per element, computed as JAX on the CPU computes them.

Bit-identical samples need bit-identical arithmetic, and XLA's CPU backend does not call the
C library for every function: float32 ``log`` and ``log1p`` are Cephes polynomials, float64
``log1p`` is a rational function below ``sqrt(2) - 1``, float32 ``erf`` is a rational function
evaluated with fused multiply-adds, and ``erf_inv`` is Giles' polynomial on top of ``log1p``.
Each function below repeats XLA's operations in XLA's order (read off the LLVM IR that
``XLA_FLAGS=--xla_dump_to`` writes for ``jax.jit(jnp.log1p)`` and friends, JAX 0.10.2), with
float32 constants kept in float32, and fuses a multiplication into the addition that
consumes it wherever LLVM does under XLA's ``fp-contract=fast`` (an ``fmul`` with one use
feeding an ``fadd`` or ``fsub`` becomes one ``fma``; the disassembly shows ``vfmadd``).
That needs a CPU with FMA instructions, as every x86-64 since 2013 has. Where XLA calls the C
library (float64 ``log``, ``erf``, ``pow``; float32 ``pow``), so does Numba; where XLA starts
``rsqrt`` (which it also substitutes for ``c / sqrt(x)``) from the CPU's estimate (``rsqrtss``,
AVX-512's ``vrsqrt14pd``), so does numbax; float64 ``rsqrt`` without AVX-512 is ``1 / sqrt(x)``
in both. An estimate's bits are the CPU's, so ``rsqrt`` (and ``gamma``, which calls it) agrees
with XLA to the bit on the CPU both run on, and within a few ulp across CPUs (see the README).

Each public function takes a float32 or float64 scalar and picks its version from the type,
in Python and inside Numba-compiled code alike:

    >>> import numpy as np
    >>> float(log1p(np.float32(0.5))) == float(np.float32(np.log1p(0.5))), log1p(0.5)
    (True, 0.4054651081081644)
"""
from __future__ import annotations

import math
import platform

import numpy as np
from llvmlite import binding as llvm_binding
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from numbax.runtime.cached import overload
from numbax.runtime.loops import compile_source

__all__ = ["bitcast", "fma", "horner", "as_type_of", "tiny", "above_minus_one", "unit_float", "log", "log1p", "erf",
           "erf_inv", "rsqrt"]


@intrinsic
def bitcast(typingctx, value, target):
    """Reinterpret the bits of a scalar as another scalar type of the same width (``bitcast(u, np.float32)``)."""
    to = target.instance_type if isinstance(target, types.NumberClass) else None
    if to is None or to.bitwidth != value.bitwidth:
        return None

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(to))

    return to(value, target), codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (LLVM's ``llvm.fma``), for three floats of one type."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


def _by_float_type(name: str, f32, f64):
    """A function of floats that runs ``f32`` on float32 and ``f64`` on float64, from Python and from Numba."""
    def dispatch(*args):
        return (f32 if isinstance(args[-1], np.float32) else f64)(*args)

    dispatch.__name__ = dispatch.__qualname__ = name
    dispatch.__doc__ = f"XLA CPU's ``{name}``, bit for bit: the float32 or float64 version by the argument's type."

    @overload(dispatch)
    def typed(*args):
        last = args[-1]
        if last == types.float32:
            return lambda *args: f32(*args)
        if last == types.float64:
            return lambda *args: f64(*args)
        return None

    return dispatch


def _f32(*words):
    """float32 constants from their bit patterns, as XLA's IR prints them (``f0x3D9021BB``)."""
    return tuple(np.uint32(w).view(np.float32) for w in words)


def _f64(*words):
    """float64 constants from their bit patterns (``f0x402E20359E903E37``)."""
    return tuple(np.uint64(w).view(np.float64) for w in words)


@njit(cache=True)
def _as_f32(value, like):
    return np.float32(value)


@njit(cache=True)
def _as_f64(value, like):
    return np.float64(value)


as_type_of = _by_float_type("as_type_of", _as_f32, _as_f64)
as_type_of.__doc__ = "``value`` converted to the float type of ``like``: the constants of dtype-generic kernels."


def horner(coefficients, x):
    """``(c0 * x + c1) * x + c2 ...``, each step one fused multiply-add, as XLA's CPU backend evaluates it."""
    p = coefficients[0]
    for c in coefficients[1:]:
        p = fma(p, x, c)
    return p


_HORNER_TEMPLATE = """
def impl(coefficients, x):
    p = coefficients[0]
{steps}
    return p
"""


@overload(horner, inline="always")
def _horner_unrolled(coefficients, x):
    """Numba: the steps written out, one per coefficient, so that LLVM can vectorise the caller's loop."""
    if not isinstance(coefficients, types.UniTuple):
        return None
    steps = "\n".join(f"    p = fma(p, x, coefficients[{k}])" for k in range(1, coefficients.count))
    return compile_source(_HORNER_TEMPLATE.format(steps=steps), fma=fma)


# ---- uniform floats in [1, 2) - 1 from the two hash words ----------------------------------


@njit(cache=True, inline="always")
def _unit_float32(b0, b1):
    word = np.uint32(((b0 ^ b1) >> np.uint64(9)) | np.uint64(0x3F800000))
    return bitcast(word, np.float32) - np.float32(1.0)


@njit(cache=True, inline="always")
def _unit_float64(b0, b1):
    word = (((b0 << np.uint64(32)) | b1) >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
    return bitcast(word, np.float64) - 1.0


def unit_float(b0, b1, like):
    """A float in ``[0, 1)`` of ``like``'s type from the hash words ``b0, b1``.

    Random mantissa bits under the exponent of 1.0, minus 1.

    float32 takes the top 23 bits of ``b0 ^ b1``, float64 the top 52 of ``b0 << 32 | b1``,
    as ``jax.random.uniform`` does.
    """
    return (_unit_float32 if isinstance(like, np.float32) else _unit_float64)(b0, b1)


@overload(unit_float)
def _unit_float_typed(b0, b1, like):
    if like == types.float32:
        return lambda b0, b1, like: _unit_float32(b0, b1)
    if like == types.float64:
        return lambda b0, b1, like: _unit_float64(b0, b1)
    return None


# ---- log (float32: Cephes, as Eigen's plog; float64: the C library) -----------------------

_F32 = np.float32
_LOG_F32_P = _f32(0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A, 0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50, 0x3E4CCEAC, 0xBE7FFFFC,
                  0x3EAAAAAA)
_SQRT_HALF_F32, _LN2_HI_F32, _LN2_LO_F32 = _f32(0x3F3504F3, 0x3F318000, 0xB95E8083)
_MIN_NORMAL_F32 = _F32(np.finfo(np.float32).tiny)
_MIN_NORMAL_F64 = float(np.finfo(np.float64).tiny)


def _float_constant(name: str, f32_value, f64_value, doc: str):
    """A function of ``like`` giving a constant in ``like``'s float type (float32 or float64), from Python and
    from Numba's CPU and CUDA targets alike."""
    f32_value, f64_value = _F32(f32_value), float(f64_value)

    def constant(like):
        return f32_value if isinstance(like, np.float32) else f64_value

    constant.__name__ = constant.__qualname__ = name
    constant.__doc__ = doc

    @overload(constant)
    def typed(like):
        if like == types.float32:
            return lambda like: f32_value
        if like == types.float64:
            return lambda like: f64_value
        return None

    return constant


tiny = _float_constant("tiny", _MIN_NORMAL_F32, _MIN_NORMAL_F64,
                       "The smallest normal float of ``like``'s type (``np.finfo(dtype).tiny``).")
above_minus_one = _float_constant("above_minus_one", -1.0 + 2.0 ** -24, -1.0 + 2.0 ** -53,
                                  "The float of ``like``'s type next above -1 (``np.nextafter(-1, 0)``, which "
                                  "numba.cuda cannot compile).")


@njit(cache=True)
def _log_f32(x):
    if x == _F32(0.0):
        return _F32(-np.inf)
    if x == _F32(np.inf):
        return x
    if not x > _F32(0.0):
        return _F32(np.nan)
    word = np.uint32(bitcast(max(x, _MIN_NORMAL_F32), np.uint32))
    exponent = _F32(np.int32(word >> np.uint32(23)) - np.int32(127)) + _F32(1.0)
    m = bitcast(np.uint32((word & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)), np.float32)
    below = m < _SQRT_HALF_F32
    exponent = exponent - (_F32(1.0) if below else _F32(0.0))
    m = (m - _F32(1.0)) + (m if below else _F32(0.0))
    m2 = m * m
    m3 = m2 * m
    p = _LOG_F32_P
    y0 = fma(fma(m, p[0], p[1]), m, p[2])
    y1 = fma(fma(m, p[3], p[4]), m, p[5])
    y2 = fma(fma(m, p[6], p[7]), m, p[8])
    y = fma(fma(fma(y0, m3, y1), m3, y2), m3, exponent * _LN2_LO_F32)
    m = fma(-m2, _F32(0.5), m)
    return fma(exponent, _LN2_HI_F32, m + y)


@njit(cache=True)
def _log_f64(x):
    return math.log(x)


log = _by_float_type("log", _log_f32, _log_f64)


# ---- log1p: a rational function near 0, log(1 + x) elsewhere -------------------------------

_LOG1P_F32_P = (_F32(4.527e-05),) + _f32(0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD, 0x41A05101)
_LOG1P_F32_Q = (_F32(1.0),) + _f32(0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A, 0x42707982)
_LOG1P_F64_P = _f64(0x3F07BC0962B395CA, 0x3FDFE818A0FE1A83, 0x401A509F46F4FA53, 0x403DE9738B8CB9C9,
                    0x404E798EB86C3351, 0x404C8E7597479A10, 0x40340A202D99830A)
_LOG1P_F64_Q = (1.0,) + _f64(0x402E20359E903E37, 0x4054C30B52213498, 0x406BB86590FCFB56, 0x407351945DC908A5,
                             0x406B0DB13E48E066, 0x404E0F304466448E)
_LOG1P_F32_SMALL, = _f32(0x3ED413CD)
_LOG1P_F64_SMALL, = _f64(0x3FDA827999FCEF32)


@njit(cache=True, inline="always")
def _log1p_small(x, p_coefficients, q_coefficients, minus_half):
    """``x + (-x**2 / 2 + x**3 * P(x) / Q(x))`` for ``|x| < sqrt(2) - 1``, Horner's scheme as XLA orders it."""
    x2 = x * x
    return x + fma(x2, minus_half, (x * x2) * (horner(p_coefficients, x) / horner(q_coefficients, x)))


@njit(cache=True)
def _log1p_f32(x):
    if abs(x) < _LOG1P_F32_SMALL:
        return _log1p_small(x, _LOG1P_F32_P, _LOG1P_F32_Q, _F32(-0.5))
    return _log_f32(x + _F32(1.0))


@njit(cache=True)
def _log1p_f64(x):
    if abs(x) < _LOG1P_F64_SMALL:
        return _log1p_small(x, _LOG1P_F64_P, _LOG1P_F64_Q, -0.5)
    return math.log(x + 1.0)


log1p = _by_float_type("log1p", _log1p_f32, _log1p_f64)


# ---- erf (float32: a rational function with fused multiply-adds; float64: the C library) ---

_ERF_F32_P = _f32(0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA)
_ERF_F32_Q = _f32(0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A) + (_F32(1.0),)
_ERF_F32_SATURATION, = _f32(0x407547CB)


@njit(cache=True)
def _erf_f32(x):
    if abs(x) >= _ERF_F32_SATURATION:
        return _F32(math.copysign(1.0, x))
    x2 = x * x
    return (x * horner(_ERF_F32_P, x2)) / horner(_ERF_F32_Q, x2)


@njit(cache=True)
def _erf_f64(x):
    return math.erf(x)


erf = _by_float_type("erf", _erf_f32, _erf_f64)


# ---- erf_inv: Giles' polynomials in w = -log1p(-x * x) -------------------------------------

_ERF_INV_F32_SMALL = _f32(0x32F16588, 0x34B84B36, 0xB66C7357, 0xB6935AC1, 0x396532DB, 0xBAA45408, 0xBB88E4EF,
                          0x3E7C8F63, 0x3FC02E2F)
_ERF_INV_F32_LARGE = _f32(0xB951F09B, 0x38D3B56B, 0x3AB0DC72, 0xBB70BDE7, 0x3BBC127B, 0xBBF9C5D7, 0x3C1AA57E,
                          0x3F8036DB, 0x40354F7E)


@njit(cache=True)
def _erf_inv_f32(x):
    if abs(x) == _F32(1.0):
        return x * _F32(np.inf)
    w = -_log1p_f32(x * -x)
    if w < _F32(5.0):
        return horner(_ERF_INV_F32_SMALL, w - _F32(2.5)) * x
    return horner(_ERF_INV_F32_LARGE, _F32(math.sqrt(w)) - _F32(3.0)) * x


_ERF_INV_F64_BELOW_6_25 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
_ERF_INV_F64_BELOW_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
_ERF_INV_F64_ABOVE_16 = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)


@njit(cache=True)
def _erf_inv_f64(x):
    if abs(x) == 1.0:
        return x * np.inf
    w = -_log1p_f64(x * -x)
    if w < 6.25:
        return horner(_ERF_INV_F64_BELOW_6_25, w - 3.125) * x
    if w < 16.0:
        return horner(_ERF_INV_F64_BELOW_16, math.sqrt(w) - 3.25) * x
    return horner(_ERF_INV_F64_ABOVE_16, math.sqrt(w) - 5.0) * x


erf_inv = _by_float_type("erf_inv", _erf_inv_f32, _erf_inv_f64)


# ---- rsqrt: the x86 estimate refined by Newton steps, as XLA's CPU backend computes it -----

_X86 = platform.machine().lower() in ("x86_64", "amd64")
_AVX512 = _X86 and "+avx512f" in llvm_binding.get_host_cpu_features().flatten().split(",")


@intrinsic
def _rsqrt_estimate(typingctx, x):
    """The CPU's estimate of ``1 / sqrt(x)``: ``rsqrtss`` for float32 (12 bits), ``vrsqrt14pd`` for float64 (14 bits).

    Its exact bits are the CPU's; elsewhere than x86 (and for float64 without AVX-512) it is ``1 / sqrt(x)``.
    """
    if x not in (types.float32, types.float64):
        return None
    single = x == types.float32

    def codegen(context, builder, signature, args):
        scalar = args[0].type
        if not (_X86 if single else _AVX512):
            sqrt = cgutils.get_or_insert_function(builder.module, ir.FunctionType(scalar, [scalar]),
                                                  f"llvm.sqrt.{scalar.intrinsic_name}")
            return builder.fdiv(ir.Constant(scalar, 1.0), builder.call(sqrt, [args[0]]))
        vector = ir.VectorType(scalar, 4 if single else 2)
        lane = ir.Constant(ir.IntType(32), 0)
        packed = builder.insert_element(ir.Constant(vector, ir.Undefined), args[0], lane)
        if single:
            estimate = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vector, [vector]),
                                                      "llvm.x86.sse.rsqrt.ss")
            result = builder.call(estimate, [packed])
        else:
            estimate = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(vector, [vector, vector, ir.IntType(8)]),
                "llvm.x86.avx512.rsqrt14.pd.128")
            result = builder.call(estimate, [packed, ir.Constant(vector, None), ir.Constant(ir.IntType(8), -1)])
        return builder.extract_element(result, lane)

    return x(x), codegen


@njit(cache=True, inline="always")
def _newton_rsqrt(x, y, minus_half, minus_one):
    """One Newton step towards ``1 / sqrt(x)`` from ``y``."""
    return fma(y * minus_half, fma(x * y, y, minus_one), y)


@njit(cache=True)
def _rsqrt_f32(x):
    y = _rsqrt_estimate(x)
    if not _MIN_NORMAL_F32 <= x < _F32(np.inf):
        return y
    return _newton_rsqrt(x, y, _F32(-0.5), _F32(-1.0))


@njit(cache=True)
def _rsqrt_f64(x):
    y = _rsqrt_estimate(x)
    if not _AVX512 or not _MIN_NORMAL_F64 <= x < np.inf:  # without AVX-512, XLA divides: nothing to refine
        return y
    return _newton_rsqrt(x, _newton_rsqrt(x, y, -0.5, -1.0), -0.5, -1.0)


rsqrt = _by_float_type("rsqrt", _rsqrt_f32, _rsqrt_f64)
