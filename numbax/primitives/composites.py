"""Composites: NumPy functions that numbax compiles as Python written in other primitives (``registry``'s
``composite``), as ``jax.numpy`` writes them in ``lax``: ``np.diff``, ``np.take``, ``np.take_along_axis``,
``np.average``, ``np.cross``, ``np.kron``, ``np.deg2rad`` (``radians``) and ``np.rad2deg`` (``degrees``),
``np.float_power``, ``np.nan_to_num``, ``np.heaviside``, ``np.vander``, ``np.linalg.matrix_power``, ``np.trapezoid``,
``np.ediff1d``, ``np.correlate``, ``np.select``, ``np.linalg.multi_dot``.

Each function takes NumPy's parameters that numbax implements (``keywords.IMPLEMENTED`` lists them; any other
keyword is refused at the user's line unless it has its default) and gives NumPy's value; its derivatives in
both modes, to any order, its batching and its GPU lowering are those of the primitives it calls, which are
JAX's where JAX writes the function the same way. Indexing here is bounds-checked as the user's is: an index
out of bounds raises IndexError, as NumPy's ``take`` does (JAX's fills), never a value of another element.
Each is one function: the specializer inlines a composite, not helpers it would call.
"""
import numpy as np

from numbax.primitives.registry import define


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """``np.diff``: ``n`` differences of neighbours along ``axis``, after ``prepend`` and before ``append`` (a
    number is broadcast to one slice along ``axis``)."""
    if n < 0:
        raise ValueError("order must be non-negative")
    b = np.moveaxis(a, axis, -1)
    if prepend is not None:  # a number is a strong one here, as NumPy's ``asanyarray`` makes it
        first = np.asarray(prepend) + np.zeros_like(b[..., :1]) if np.asarray(prepend).ndim == 0 else \
            np.moveaxis(prepend, axis, -1)
        b = np.concatenate((first, b), axis=-1)
    if append is not None:
        last = np.asarray(append) + np.zeros_like(b[..., :1]) if np.asarray(append).ndim == 0 else \
            np.moveaxis(append, axis, -1)
        b = np.concatenate((b, last), axis=-1)
    for _ in tuple(range(n)):  # unrolled: each difference is one element shorter
        b = b[..., 1:] - b[..., :-1]
    return np.moveaxis(b, -1, axis)


def deg2rad(x):
    """``x * (pi / 180)``, NumPy's and JAX's."""
    return x * (np.pi / 180.0)


def rad2deg(x):
    """``x * (180 / pi)``, NumPy's and JAX's."""
    return x * (180.0 / np.pi)


def take(a, indices, axis=None):
    """``np.take``: elements of ``a`` (flattened without ``axis``) at ``indices`` along ``axis``; an index out
    of bounds raises IndexError (NumPy's ``mode='raise'``, the default), negative ones count from the end; bools are
    the indices 0 and 1 (NumPy casts them), not a mask."""
    if np.asarray(indices).dtype == np.bool_:
        indices = indices * 1
    if axis is None:
        return np.ravel(a)[indices]
    k = np.asarray(indices).ndim
    picked = np.moveaxis(a, axis, 0)[indices]
    if k == 0:
        return picked
    return np.moveaxis(picked, tuple(range(k)), tuple(range(axis % a.ndim, axis % a.ndim + k)))


def take_along_axis(arr, indices, axis):
    """``np.take_along_axis`` of a vector or matrix (``axis`` None: of the flattened ``arr``), as elements of
    the flattened ``arr``; an index out of bounds raises IndexError, as NumPy's (JAX fills), and so do indices that
    are not integers."""
    if np.asarray(indices).dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        return np.ravel(arr)[indices]
    if arr.ndim == 1:
        return arr[indices]
    size = arr.shape[axis % 2]
    along = np.where(indices < 0, indices + size, indices)
    if np.any(along < 0) or np.any(along >= size):
        raise IndexError("index out of bounds in np.take_along_axis")
    if axis % 2 == 0:
        return np.ravel(arr)[along * arr.shape[1] + np.arange(arr.shape[1])]
    return np.ravel(arr)[np.arange(arr.shape[0])[:, None] * arr.shape[1] + along]


def average(a, axis=None, weights=None, returned=False):
    """``np.average``: the mean, or the ``weights``-weighted mean (weights of ``a``'s shape, or 1-D weights along
    ``axis``), over ``axis``; with ``returned``, with the sum of the weights (the count without them) in the
    average's shape. Weights of another shape raise NumPy's TypeError (no ``axis``) or ValueError; weights that
    sum to zero along ``axis`` raise ZeroDivisionError, as NumPy's do."""
    if axis is not None and np.asarray(a).ndim == 0:
        raise ValueError("axis is out of bounds for array of dimension 0")  # NumPy's AxisError is a ValueError
    if weights is None:
        avg = np.mean(a, axis=axis)
        scale = np.sum(np.ones_like(a), axis=axis)  # the count, exactly
    else:
        w = weights
        b = a
        if np.asarray(weights).ndim != np.asarray(a).ndim:  # known while compiling
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if np.asarray(weights).ndim != 1 or np.shape(weights)[0] != np.shape(a)[axis]:
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            b = np.moveaxis(a, axis, -1)
            axis = -1
        elif np.shape(a) != np.shape(weights):  # of one rank: NumPy's errors, whatever the axis
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
        scale = np.sum(w + np.zeros_like(b), axis=axis)
        if np.any(scale == 0):  # NumPy's error (JAX gives nan)
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = np.sum(b * w, axis=axis) / scale
    if returned:
        return avg, scale
    return avg


def cross(a, b):
    """``np.cross`` of 3-vectors along the last axes (their other axes broadcast)."""
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError("numbax: np.cross takes vectors of 3 components (along the last axis)")
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def kron(a, b):
    """``np.kron`` of two vectors or two matrices."""
    if a.ndim == 1 and b.ndim == 1:
        return np.ravel(np.outer(a, b))
    blocks = a[:, None, :, None] * b[None, :, None, :]
    return blocks.reshape((a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]))


def float_power(x1, x2):
    """``np.power`` in float64 (complex128 for complex operands): each operand cast, not multiplied by 1.0 (which
    makes ``inf - 0.5j`` ``inf + nanj``)."""
    complex_numbers = np.asarray(x1).dtype.kind == "c" or np.asarray(x2).dtype.kind == "c"
    dtype = np.complex128 if complex_numbers else np.float64
    return np.power(np.asarray(x1, dtype=dtype), np.asarray(x2, dtype=dtype))


def heaviside(x1, x2):
    """0 below 0, ``x2`` at 0, 1 above; NaN at NaN (NumPy's; JAX gives ``x2`` there); the dtype NumPy's type
    promotion gives ``x1`` and ``x2`` (``np.where``'s, a Python number weak in both)."""
    promoted = np.where(x1 != x1, x1, x2)  # only its dtype and shape are read
    step = np.where(x1 < 0, np.zeros_like(promoted), np.where(x1 > 0, np.ones_like(promoted), x2))
    return np.where(x1 != x1, x1, step)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num`` of a real array, as a copy (``copy=False``, which writes into ``x``, is refused): NaN,
    inf and -inf replaced (by default with 0 and the dtype's largest and smallest numbers); the derivative flows
    where ``x`` is finite, as JAX's ``where``s give it."""
    x = np.asarray(x)  # a number as NumPy takes it: a value of its dtype
    if x.dtype.kind not in "fc":
        return x + 0
    big = 3.4028234663852886e38 if x.dtype == np.float32 else 1.7976931348623157e308  # np.finfo(x.dtype).max
    out = np.where(x != x, nan, x)
    out = np.where(out == np.inf, big if posinf is None else posinf, out)
    return np.where(out == -np.inf, -big if neginf is None else neginf, out)


def vander(x, N=None, increasing=False):
    """``np.vander``: the powers of the vector ``x``, decreasing unless ``increasing``."""
    if np.asarray(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    return x[:, None] ** powers[None, :]


def matrix_power(a, n):
    """``np.linalg.matrix_power``: ``a`` times itself ``n`` times (the identity of ``a``'s dtype for 0, powers of
    the inverse below 0)."""
    if n == 0:
        return np.eye(a.shape[0], dtype=a.dtype)
    base = np.linalg.inv(a) if n < 0 else a
    result = base
    for _ in tuple(range(abs(n) - 1)):  # unrolled, as a second derivative reads it
        result = result @ base
    return result


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``np.trapezoid``: the trapezoidal rule along ``axis``, over the sample points ``x`` (a vector along
    ``axis``, or an array of ``y``'s shape) or a spacing ``dx``."""
    rows = np.moveaxis(np.asarray(y), axis, -1)
    pairs = rows[..., 1:] + rows[..., :-1]
    if x is None:
        return np.sum(dx * pairs / 2.0, axis=-1)
    steps = np.diff(x) if np.asarray(x).ndim == 1 else np.diff(np.moveaxis(x, axis, -1), axis=-1)
    return np.sum(steps * pairs / 2.0, axis=-1)


def ediff1d(ary):
    """``np.ediff1d``: the differences of neighbours of the flattened array."""
    return np.diff(np.ravel(ary))


def correlate(a, v, mode="valid"):
    """``np.correlate``: the cross-correlation of two vectors, ``sum(a[n + k] * conj(v[n]))``, as a convolution
    with ``v`` reversed (NumPy's, of the longer vector with the shorter reversed where ``v`` is longer)."""
    a, v = np.asarray(a), np.asarray(v)
    if v.shape[0] > a.shape[0]:
        return np.conj(np.convolve(v, np.conj(a[::-1]), mode=mode))[::-1]
    return np.convolve(a, np.conj(v[::-1]), mode=mode)


def select(condlist, choicelist, default=0):
    """``np.select``: at each place, the choice of the first condition that holds there, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    result = default
    for condition, choice in zip(condlist[::-1], choicelist[::-1]):
        result = np.where(condition, choice, result)
    return result


def multi_dot(arrays):
    """``np.linalg.multi_dot``: the products of the arrays, left to right (a vector first is a row, last a
    column; NumPy orders the products by cost, which changes only the rounding)."""
    if len(arrays) < 2:
        raise ValueError("Expecting at least two arrays.")
    result = arrays[0]
    for array in arrays[1:]:
        result = result @ array
    return result


def _ranks(count: int, ranks: tuple, what: str):
    """The ``refuse`` rule ``the first count operands have one of ranks``."""
    def rule(app, args):
        got = tuple(a[1] if a is not None else None for a in args[:count])
        return None if got in ranks else f"of operands of {got} dimensions: it has {what}"

    return rule


def _real(app, args):
    """The ``refuse`` rule ``real operands only``."""
    return "of complex numbers: use it on np.real(z) and np.imag(z)" if any(a and a[0] == "c" for a in args) \
        else None


def _a_float_operand(app, args):
    """The ``refuse`` rule ``a float or complex operand``: of bool and integer operands alone, NumPy's result is
    a float as narrow as they are (float16 of two bool arrays), which numbax's float64 arithmetic would not be."""
    if all(a is not None and a[0] in "bi" for a in args[:2]):
        return "of bool or integer operands alone (NumPy's result is as narrow as they are: float16 of bools): " \
               "cast one first, np.heaviside(x1.astype(np.float64), x2)"
    return None


define(np.diff, composite=diff)
define(np.take, composite=take)
define(np.take_along_axis, composite=take_along_axis,
       refuse=_ranks(2, ((1, 1), (2, 2)), "a vector and its indices, or a matrix and its indices"))
define(np.average, composite=average)
define(np.cross, composite=cross)
define(np.kron, composite=kron, refuse=_ranks(2, ((1, 1), (2, 2)), "two vectors or two matrices"))
define(np.float_power, composite=float_power)
define(np.heaviside, composite=heaviside, refuse=_a_float_operand)
define(np.vander, composite=vander)
define(np.nan_to_num, composite=nan_to_num, refuse=_real)
define(np.linalg.matrix_power, composite=matrix_power)
define(np.trapezoid, composite=trapezoid)
define(np.ediff1d, composite=ediff1d)
define(np.correlate, composite=correlate, refuse=_ranks(2, ((1, 1),), "two vectors"))
define(np.select, composite=select)
define(np.linalg.multi_dot, composite=multi_dot)
define(np.deg2rad, np.radians, composite=deg2rad)
define(np.rad2deg, np.degrees, composite=rad2deg)
