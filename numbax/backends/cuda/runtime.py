"""What the GPU backend's generated host drivers and kernels call (imported there as ``gr``).

The device functions kernels share, the shape arithmetic of broadcasting and reductions, the second pass of a
reduction, scans and sorts along lanes, reshapes, tapes, joins, gathers and scatters; launch shapes, allocation
and views come from ``memory``, matrix products and the rest of linear algebra from ``linalg`` (re-exported
here: generated code names them ``gr.<name>``). It imports NumPy and ``numba.cuda`` only, no compiler code.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Tuple

import numpy as np

from numbax.backends.cuda.availability import simulated
from numbax.backends.cuda.linalg import (cholesky, contract, determinant, inverse, matmul, solve,  # noqa: F401
                                         spectral_norms, triangle)
from numbax.backends.cuda.memory import (MAX_BLOCKS, THREADS, copy_1d, copy_2d, cuda, empty, expand,  # noqa: F401
                                         full, grid, installed_cupy, transpose)
from numbax.backends.cuda.simulated_math import MATH
from numbax.errors import NumbaxDeviceError, NumbaxIndexError, NumbaxShapeError, origin_at

if simulated():  # kernels run as Python there: NaN and infinities where ``math`` raises, as on a GPU
    math = MATH  # noqa: F811

_CPU = "run it on the CPU backend: jit(f) with NumPy arguments (numbax.device_get(x) brings device arrays back)."


@cuda.jit(device=True)
def maximum(a, b):
    """``np.maximum`` of two numbers: NaN if either is NaN."""
    return a if a > b or a != a else b


@cuda.jit(device=True)
def minimum(a, b):
    """``np.minimum`` of two numbers: NaN if either is NaN."""
    return a if a < b or a != a else b


@cuda.jit(device=True)
def square(a):
    """``a * a``: a norm's element, its operand's expression evaluated once."""
    return a * a


@cuda.jit(device=True)
def abs_slope(a):
    """``rt.abs_slope`` of a real number (the derivative of ``abs``): 1 at 0 and above, -1 below, NaN at NaN."""
    if a != a:
        return a
    return 1.0 if a >= 0 else -1.0


@cuda.jit(device=True)
def sign(a):
    """``np.sign`` of a number: -1, 0 or 1 (0 at -0.0, as NumPy's), NaN at NaN."""
    if a != a:
        return a
    return 1 if a > 0 else -1 if a < 0 else 0


@cuda.jit(device=True)
def floor(a):
    """``np.floor`` of a number, as a float: the number itself where it is an integer already (magnitudes of
    2**52 and above, infinities) or NaN, and the sign of a zero result the number's (``np.floor(-0.0)``)."""
    if not abs(a) < 4503599627370496.0:
        return a * 1.0
    return math.copysign(float(math.floor(a)), a)


@cuda.jit(device=True)
def ceil(a):
    """``np.ceil`` of a number, as ``floor`` (``np.ceil(-0.5)`` is -0.0)."""
    if not abs(a) < 4503599627370496.0:
        return a * 1.0
    return math.copysign(float(math.ceil(a)), a)


@cuda.jit(device=True)
def trunc(a):
    """``np.trunc`` of a number, as ``floor``."""
    if not abs(a) < 4503599627370496.0:
        return a * 1.0
    return math.copysign(float(int(a)), a)  # int() truncates toward zero


@cuda.jit(device=True)
def rint(a):
    """``np.rint`` (``np.round`` to 0 decimals) of a number, as ``floor``: halves to the even neighbour."""
    if not abs(a) < 4503599627370496.0:
        return a * 1.0
    return math.copysign(float(round(a)), a)


@cuda.jit(device=True)
def cbrt(a):
    """``np.cbrt`` of a number: the cube root of its magnitude with its sign (NaN at NaN)."""
    return math.copysign(abs(a) ** (1.0 / 3.0), a)


@cuda.jit(device=True)
def sinc(a):
    """``np.sinc``: ``sin(pi a) / (pi a)``, 1 at 0."""
    if a == 0:
        return 1.0
    y = math.pi * a
    return math.sin(y) / y


@cuda.jit(device=True)
def dsinc(a):
    """``rt.dsinc``, the derivative of ``np.sinc``: ``(cos(pi a) - sinc(a)) / a``, 0 at 0."""
    if a == 0:
        return 0.0
    return (math.cos(math.pi * a) - sinc(a)) / a


@cuda.jit(device=True)
def expit(a):
    """``scipy.special.expit``: ``1 / (1 + exp(-a))``."""
    return 1.0 / (1.0 + math.exp(-a))


@cuda.jit(device=True)
def logaddexp(a, b):
    """``np.logaddexp``: ``log(exp(a) + exp(b))`` without overflow, as NumPy computes it."""
    if a == b:
        return a + math.log(2.0)
    d = a - b
    if d > 0:
        return a + math.log1p(math.exp(-d))
    if d <= 0:
        return b + math.log1p(math.exp(d))
    return d


@cuda.jit(device=True)
def logaddexp2(a, b):
    """``np.logaddexp2``: ``log2(2**a + 2**b)`` without overflow, as NumPy computes it."""
    if a == b:
        return a + 1.0
    d = a - b
    if d > 0:
        return a + math.log1p(2.0 ** -d) / math.log(2.0)
    if d <= 0:
        return b + math.log1p(2.0 ** d) / math.log(2.0)
    return d


@cuda.jit(device=True)
def fmax(a, b):
    """``np.fmax`` of two numbers: the larger, the other where one is NaN."""
    return b if a != a or a < b else a


@cuda.jit(device=True)
def fmin(a, b):
    """``np.fmin`` of two numbers: the smaller, the other where one is NaN."""
    return b if a != a or a > b else a


def check_keys(keys: Any, where: str) -> None:
    """Raise where ``keys`` is not a key (``uint32`` words of shape ``(2,)``) or an array of keys: a thread reads
    two words (JAX raises ``TypeError`` too)."""
    if tuple(keys.shape)[-1] != 2:
        raise NumbaxShapeError(f"numbax.random: a key has shape (2,), and this array of keys has shape "
                               f"{tuple(keys.shape)}", where)


def host_shaped(shape: Sequence[int]) -> np.ndarray:
    """A host array of ``shape`` that holds no memory (strides 0): what the run-time checks of indexing read of
    a device array, its shape (``numbax.runtime.checks`` checks NumPy arrays)."""
    return np.broadcast_to(np.zeros((), np.int8), tuple(shape))


class shaped:  # noqa: N801 - read as a function in generated code
    """A stand-in with a shape only: what a run-time check of an array that a kernel folded away reads."""

    def __init__(self, shape: Sequence[int]):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)
        self.size = math.prod(self.shape)


def broadcast_shape(*shapes: Sequence[int]) -> Tuple[int, ...]:
    """NumPy's broadcast of ``shapes`` (the operands' shapes were checked where the user wrote them)."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> Tuple[int, ...]:
    """The shape of a reduction of an array of ``shape`` over ``axes`` (normalized, non-negative)."""
    return tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes)


def reduce(first, finish, shape: Sequence[int], axes: Sequence[int], keepdims: bool, dtype, operands,
           where: str, has_identity: bool) -> Any:
    """Launch a reduction: ``first`` (generated: each block reduces a slice of the elements of one output
    into ``partial[output, part]``), then ``finish`` (a second pass over the parts). A reduction to a number
    gives a NumPy scalar on the host, as ``np.sum`` does; over axes, a device array."""
    shape = tuple(shape)
    out_shape = reduced_shape(shape, axes, keepdims)
    n_out = math.prod(n for d, n in enumerate(shape) if d not in axes)
    count = math.prod(shape[d] for d in axes)
    if count == 0 and not has_identity:
        raise NumbaxShapeError("zero-size array to reduction operation which has no identity", where)
    parts = 1 if n_out >= MAX_BLOCKS else max(1, min(MAX_BLOCKS // max(n_out, 1), -(-count // THREADS)))
    partial = cuda.device_array((n_out, parts), dtype=dtype)
    if n_out:
        first[min(n_out * parts, MAX_BLOCKS), THREADS](partial, shape, parts, *operands)
    out = cuda.device_array(n_out, dtype=dtype)
    finish[grid(n_out)](out, partial, count)
    if not out_shape:
        return out.copy_to_host()[0]
    return out.reshape(out_shape)


@cuda.jit(device=True)
def _parts_added(partial, o):
    """Output ``o``'s parts added, in order (booleans' as integers: the count of True)."""
    acc = partial[o, 0]
    for p in range(1, partial.shape[1]):
        acc += partial[o, p]
    return acc


@cuda.jit
def finish_sum(out, partial, count):
    """Second pass of a sum: add each output's parts."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[o] = _parts_added(partial, o)


@cuda.jit
def finish_mean(out, partial, count):
    """Second pass of a mean: add each output's parts and divide by the number of elements."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[o] = _parts_added(partial, o) / count


@cuda.jit
def finish_norm(out, partial, count):
    """Second pass of a norm: add each output's parts (sums of squares) and take the square root."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[o] = math.sqrt(_parts_added(partial, o))


@cuda.jit
def finish_prod(out, partial, count):
    """Second pass of a product: multiply each output's parts."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        acc = partial[o, 0]
        for p in range(1, partial.shape[1]):
            acc = acc * partial[o, p]
        out[o] = acc


@cuda.jit
def finish_any(out, partial, count):
    """Second pass of ``np.any``: whether any part holds True (the parts added as integers are not 0)."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[o] = _parts_added(partial, o) > 0


@cuda.jit
def finish_all(out, partial, count):
    """Second pass of ``np.all``: whether every part holds True (the parts added are as many as the parts)."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[o] = _parts_added(partial, o) == partial.shape[1]


@cuda.jit
def finish_max(out, partial, count):
    """Second pass of a maximum (NaN wins, as in NumPy)."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        acc = partial[o, 0]
        for p in range(1, partial.shape[1]):
            acc = maximum(acc, partial[o, p])
        out[o] = acc


@cuda.jit
def finish_min(out, partial, count):
    """Second pass of a minimum (NaN wins, as in NumPy)."""
    for o in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        acc = partial[o, 0]
        for p in range(1, partial.shape[1]):
            acc = minimum(acc, partial[o, p])
        out[o] = acc


def scan(a: Any, axis: Any, dtype, rows, where: str, *given: Any) -> Any:
    """``np.cumsum`` or ``np.cumprod`` (``rows``: ``sum_rows`` or ``prod_rows``) of a 1-d or 2-d device array
    over ``axis``, or flattened in C order where ``axis`` is None (of a C-contiguous array: a strided view of
    two dimensions is refused), in ``dtype``: each lane by one thread, in order, as NumPy accumulates. The
    kernel reads the lanes of the arrays ``given`` (of ``a``'s shape, or flat, of its size) before ``a``'s
    (the derivatives of ``np.cumprod``)."""
    a, *given = (_flat(x, "a cumulative sum or product", where) if axis is None else x for x in (a,) + given)
    out = cuda.device_array(a.shape, dtype=dtype)
    if out.size:
        rows[grid(_lanes(out, axis).shape[0])](*(_lanes(x, axis) for x in [out] + given + [a]))
    return out


def _flat(a: Any, what: str, where: str) -> Any:
    if a.ndim > 1 and not a.is_c_contiguous():
        raise NumbaxDeviceError(f"{what} of a strided view of two dimensions, flattened, "
                                "is not supported by the GPU backend yet", origin_at(where),
                                hint="flatten np.ascontiguousarray(x) instead.")
    return a.reshape(a.size) if a.ndim > 1 else a


def _lanes(a: Any, axis: Any) -> Any:
    """A 1-d or 2-d array as the lanes a scan runs along (rows of a 2-d view)."""
    if a.ndim == 1:
        return expand(a, (0,))
    return a if axis == 1 else transpose(a, (1, 0))


def sort(a: Any, g: Any, axis: Any, scatter: bool, dtype, where: str) -> Any:
    """``np.sort(a, axis)`` (``g`` is ``a``), reverse mode's ``rt.sort_grad(g, a, axis)`` (``scatter``) and
    forward mode's ``rt.sort_gather(g, a, axis)`` of 1-d or 2-d device arrays over ``axis`` (None: flattened in
    C order, of a C-contiguous array), in ``dtype``: each lane by one thread (``_sort_rows``)."""
    a, g = (_flat(x, "a sort", where) if axis is None else x for x in (a, g))
    out = cuda.device_array(a.shape, dtype=dtype)
    if out.size:
        order = cuda.device_array(a.shape, dtype=np.int64)
        lanes = [_lanes(x, axis) for x in (out, order, g, a)]
        _sort_rows[grid(lanes[0].shape[0])](*lanes, scatter)
    return out


@cuda.jit(device=True)
def _after(x, v):
    """Whether ``x`` sorts after ``v`` in NumPy's order (NaN after every number)."""
    return x > v or (x != x and v == v)


@cuda.jit
def _sort_rows(out, order, g, a, scatter):
    """Each row: ``order`` the stable order that sorts ``a``'s (an insertion sort, NaN last, as NumPy's), then
    ``g``'s gathered into that order in ``out``, or scattered back from it (``scatter``)."""
    for r in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        n = a.shape[1]
        for k in range(n):
            order[r, k] = k
        for k in range(1, n):
            moved = order[r, k]
            j = k - 1
            while j >= 0 and _after(a[r, order[r, j]], a[r, moved]):
                order[r, j + 1] = order[r, j]
                j -= 1
            order[r, j + 1] = moved
        for k in range(n):
            if scatter:
                out[r, order[r, k]] = g[r, k]
            else:
                out[r, k] = g[r, order[r, k]]


def cumprod_grad(g: Any, a: Any, axis: Any, dtype, where: str) -> Any:
    """Reverse mode's ``rt.cumprod_grad(g, a, axis)`` on the device (the cotangent of ``np.cumprod(a, axis)``):
    in each lane, the products before each element times the sums from the end of ``g`` weighted by the
    products after it, as the CPU's helper; of ``a``'s shape."""
    out = scan(a, axis, dtype, cumprod_grad_rows, where, g)
    return out.reshape(a.shape) if axis is None else out


def cumprod_jvp(h: Any, a: Any, axis: Any, dtype, where: str) -> Any:
    """Forward mode's ``rt.cumprod_jvp(h, a, axis)`` on the device: ``np.cumprod``'s change in the direction
    ``h``, lane by lane as the CPU's helper (flat where ``axis`` is None)."""
    return scan(a, axis, dtype, cumprod_jvp_rows, where, h)


@cuda.jit
def cumprod_grad_rows(out, g, a):
    """Each lane: ``out[k]`` the sums from the end (``s = (s + g[k]) * a[k]``), then times the products
    before ``k``."""
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        n = out.shape[1]
        s = 0
        for k in range(n - 1, -1, -1):
            s = s + g[r, k]
            out[r, k] = s
            s = s * a[r, k]
        before = 1
        for k in range(n):
            out[r, k] = before * out[r, k]
            before = before * a[r, k]


@cuda.jit
def cumprod_jvp_rows(out, h, a):
    """Each lane: ``t = t * a[i] + (the product before i) * h[i]``."""
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        t = 0
        before = 1
        for i in range(out.shape[1]):
            t = t * a[r, i] + before * h[r, i]
            out[r, i] = t
            before = before * a[r, i]


@cuda.jit
def sum_rows(out, a):
    """Each row of ``out``: the running sums of ``a``'s, in order, in ``out``'s dtype."""
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[r, 0] = a[r, 0]
        for k in range(1, out.shape[1]):
            out[r, k] = out[r, k - 1] + a[r, k]


@cuda.jit
def prod_rows(out, a):
    """Each row of ``out``: the running products of ``a``'s, in order, in ``out``'s dtype."""
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[r, 0] = a[r, 0]
        for k in range(1, out.shape[1]):
            out[r, k] = out[r, k - 1] * a[r, k]


@cuda.jit
def sum_rows_reversed(out, a):
    """Each row of ``out``: the running sums of ``a``'s from its end (reverse mode's ``rt.cumsum_grad``)."""
    for r in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        n = out.shape[1]
        if n:
            out[r, n - 1] = a[r, n - 1]
        for k in range(n - 2, -1, -1):
            out[r, k] = out[r, k + 1] + a[r, k]


def cumsum_grad(g: Any, shape: Sequence[int], axis: Any, where: str) -> Any:
    """Reverse mode's ``rt.cumsum_grad(g, a, axis)`` on the device: ``g``'s sums from the end of each lane over
    ``axis`` (of ``g`` flattened, reshaped to ``a``'s ``shape``, where ``axis`` is None), in the CPU's order."""
    out = scan(g, axis, g.dtype, sum_rows_reversed, where)
    return out.reshape(tuple(shape)) if axis is None else out


def reshape(a: Any, shape: Any, where: str, copy: Any = None) -> Any:
    """``a.reshape(shape)`` of a device array, as NumPy's (``shape`` an int or a sequence of ints, one of them
    ``-1`` at most, that the run-time check ``rt.check_reshape`` found compatible): a view where NumPy's strides
    allow one (always, of a C-contiguous array), else a copy written by the generated kernel ``copy``
    (``contiguous``), reshaped; without ``copy``, that case is refused."""
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(d) for d in shape)
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        shape = tuple(a.size // known if d == -1 else d for d in shape)
    if a.is_c_contiguous():
        return a.reshape(shape)
    strides = _strides_of_view(a, shape)
    if strides is not None:
        if simulated():  # the simulator's device arrays wrap NumPy arrays
            return type(a)(np.reshape(a._ary, shape, copy=False))
        return type(a)(shape, strides, a.dtype, stream=a.stream, gpu_data=a.gpu_data)
    if copy is None:
        raise NumbaxDeviceError("reshaping an array that is not C-contiguous (a strided view) is not supported by "
                                "the GPU backend yet", origin_at(where),
                                hint="reshape np.ascontiguousarray(x) instead.")
    return contiguous(a, copy).reshape(shape)


def _strides_of_view(a: Any, shape: Tuple[int, ...]) -> Any:
    """The strides of NumPy's view of ``a`` (shape and strides only) reshaped to ``shape``; None where NumPy
    would copy."""
    layout = np.lib.stride_tricks.as_strided(np.empty(1, a.dtype), a.shape, a.strides)  # read nowhere
    try:
        return np.reshape(layout, shape, copy=False).strides
    except ValueError:
        return None


def contiguous(a: Any, copy: Any) -> Any:
    """``np.ascontiguousarray(a)`` of a device array: ``a`` itself where it is C-contiguous, else a copy written
    by the generated kernel ``copy``."""
    if a.is_c_contiguous():
        return a
    out = cuda.device_array(a.shape, dtype=a.dtype)
    if out.size:
        copy[grid(out.size)](out, a)
    return out


def grow_rows(table: Any) -> Any:
    """Reverse mode's ``rt.grow_rows`` on the device: a tape of 2-d rows with twice the rows, holding
    ``table``'s."""
    grown = cuda.device_array((2 * table.shape[0], table.shape[1]), dtype=table.dtype)
    if table.size:
        copy_2d[grid(table.size)](grown[:table.shape[0]], table)
    return grown


def reserve_rows(table: Any, rows: int) -> Any:
    """Reverse mode's ``rt.reserve_rows`` on the device: ``table`` where it has ``rows`` rows, else a longer
    tape (``rows``, or twice ``table``'s) holding its rows first."""
    if rows <= table.shape[0]:
        return table
    grown = cuda.device_array((max(rows, 2 * table.shape[0]), table.shape[1]), dtype=table.dtype)
    if table.size:
        copy_2d[grid(table.size)](grown[:table.shape[0]], table)
    return grown


def save_row(table: Any, row: int, values: Any, where: str) -> None:
    """Reverse mode's ``rt.save_row`` on the device: the 1-d ``values`` copied into row ``row`` of ``table``;
    the CPU backend's ``ValueError`` where their lengths differ."""
    if values.shape[0] != table.shape[1]:
        raise ValueError(f"{where}: a saved array's length changed between iterations of a loop")
    if values.size:
        copy_1d[grid(values.size)](table[row], values)


def prod_others(a: Any, axis: Any) -> Any:
    """``rt.prod_others(a, axis)`` of a 1-d or 2-d device array (the derivative of ``np.prod(a, axis)``): for
    each element, the product of the others it is reduced with, as the product of those before it (from the
    first) times that of those after it (from the last), in the CPU's helper's order."""
    out = cuda.device_array(a.shape, dtype=a.dtype)
    if out.size == 0:
        return out
    if a.ndim == 2 and axis is None:
        _others_flat[grid(a.size)](out, a)
    elif a.ndim == 1:
        _others_rows[grid(a.size)](expand(out, (0,)), expand(a, (0,)))
    elif axis == 1:
        _others_rows[grid(a.size)](out, a)
    else:
        _others_rows[grid(a.size)](transpose(out, (1, 0)), transpose(a, (1, 0)))
    return out


@cuda.jit
def _others_rows(out, rows):
    n = rows.shape[1]
    for q in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r, j = q // n, q % n
        before = 1
        for k in range(j):
            before = before * rows[r, k]
        after = 1
        for k in range(n - 1, j, -1):
            after = after * rows[r, k]
        out[r, j] = before * after


@cuda.jit
def _others_flat(out, a):
    n = a.shape[1]
    for q in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        before = 1
        for k in range(q):
            before = before * a[k // n, k % n]
        after = 1
        for k in range(a.size - 1, q, -1):
            after = after * a[k // n, k % n]
        out[q // n, q % n] = before * after


def item(a: Any, where: str) -> Any:
    """``a.item()`` of a device array: its one element as a Python number, read on the host (NumPy's
    ``ValueError`` at ``where`` where ``a`` has another size)."""
    if a.size != 1:
        raise NumbaxShapeError("can only convert an array of size 1 to a Python scalar", where)
    return a.copy_to_host().item()


def join(pieces: Sequence[Any], axis: int, stack: bool, dtype, copy: Any) -> Any:
    """``np.concatenate(pieces, axis)`` (``stack`` False) or ``np.stack(pieces, axis)`` of device arrays whose
    shapes fit (checked before): a new array of ``dtype``, each piece copied into its part (a view) by the
    generated kernel ``copy``."""
    first = tuple(pieces[0].shape)
    if stack:
        shape = first[:axis] + (len(pieces),) + first[axis:]
    else:
        shape = first[:axis] + (sum(p.shape[axis] for p in pieces),) + first[axis + 1:]
    out = cuda.device_array(shape, dtype=dtype)
    start = 0
    for k, piece in enumerate(pieces):
        width = 1 if stack else piece.shape[axis]
        part = out[(slice(None),) * axis + ((k if stack else slice(start, start + width)),)]
        start += width
        if piece.size:
            copy[grid(piece.size)](part, piece)
    return out


def diag_matrix(v: Any, shape: Tuple[int, int], dtype) -> Any:
    """``np.diag(v)`` of a 1-d device array (``shape`` square), or reverse mode's ``rt.diag_grad`` of a matrix of
    ``shape`` (``v`` its diagonal's cotangent): a new matrix of zeros in ``dtype`` with ``v`` on its diagonal."""
    out = full(tuple(shape), 0, dtype)
    if v.shape[0]:
        _fill_diagonal[grid(v.shape[0])](out, v)
    return out


@cuda.jit
def _fill_diagonal(out, v):
    for i in range(cuda.grid(1), v.shape[0], cuda.gridsize(1)):
        out[i, i] = v[i]


def diagonal(a: Any) -> Any:
    """``np.diagonal(a)`` of a 2-d device array: a view of the same memory."""
    if simulated():  # the simulator's device arrays wrap NumPy arrays
        return type(a)(np.diagonal(a._ary))
    return type(a)((min(a.shape),), (a.strides[0] + a.strides[1],), a.dtype, stream=a.stream, gpu_data=a.gpu_data)


def gather(x: Any, first: int, indices: Sequence[Any], kernel, where: str) -> Any:
    """``x[..., idx0, idx1, ...]`` of a device array: integer index arrays of one length (or a boolean mask's
    positions) at axes ``first``, ``first + 1``, ..., full slices elsewhere; the new axis where they stood, as in
    NumPy. ``kernel`` (generated) writes each element of the result; the indices are checked first."""
    indices = _index_arrays(x, first, indices, where)
    shape = tuple(x.shape[:first]) + (indices[0].shape[0],) + tuple(x.shape[first + len(indices):])
    out = cuda.device_array(shape, dtype=x.dtype)
    if out.size:
        kernel[grid(out.size)](out, x, *indices)
    return out


def scatter(out: Any, first: int, indices: Sequence[Any], kernel, values: Any, where: str, unique: bool) -> None:
    """``out[..., idx0, ...] = values`` (or ``op=``, or reverse mode's ``np.add.at``) into a device array, with
    ``gather``'s indices: ``kernel`` (generated) writes each element ``values`` (an array of the indexed part's
    shape, or a number) gives. Where ``unique``, repeated positions are refused: NumPy's store keeps the last
    value written there, and threads write in no order."""
    indices = _index_arrays(out, first, indices, where)
    shape = tuple(out.shape[:first]) + (indices[0].shape[0],) + tuple(out.shape[first + len(indices):])
    if np.ndim(values) and tuple(values.shape) != shape:
        raise NumbaxDeviceError(f"an array of shape {tuple(values.shape)} stored into an indexed part of shape "
                                f"{shape} is not supported by the GPU backend yet", origin_at(where), hint=_CPU)
    if unique and indices[0].shape[0] > 1 and not _positions_unique(out, first, indices):
        raise NumbaxDeviceError("a store at repeated positions of an integer-array index is not supported by the "
                                "GPU backend yet", origin_at(where), hint=_CPU)
    size = math.prod(shape)
    if size:
        kernel[grid(size)](out, shape, size, values, *indices)


def _index_arrays(x: Any, first: int, indices: Sequence[Any], where: str) -> Tuple[Any, ...]:
    """The integer index arrays of an advanced index at axis ``first``: as given (1-d, of one length), or a
    boolean mask's positions (``np.nonzero``); NumPy's ``IndexError`` where they do not index ``x``."""
    if len(indices) == 1 and np.dtype(indices[0].dtype) == np.bool_:
        mask = indices[0]
        for axis, (m, n) in enumerate(zip(mask.shape, x.shape[first:])):
            if m != n:
                raise NumbaxIndexError("boolean index did not match indexed array along axis {}; size of axis is "
                                       "{} but size of corresponding boolean axis is {}", where, first + axis, n, m)
        indices = _nonzero(mask)
    lengths = [i.shape[0] for i in indices]
    if len(set(lengths)) > 1:
        raise NumbaxIndexError("shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                               where, " ".join(f"({n},)" for n in lengths))
    bad = cuda.to_device(np.array([lengths[0]], np.int64))
    for axis, index in enumerate(indices):
        if lengths[0]:
            _first_out_of_bounds[grid(lengths[0])](bad, index, x.shape[first + axis])
        position = int(bad.copy_to_host()[0])
        if position < lengths[0]:
            raise NumbaxIndexError("index {} is out of bounds for axis {} with size {}", where,
                                   int(index[position:position + 1].copy_to_host()[0]), first + axis,
                                   x.shape[first + axis])
    return tuple(indices)


def _nonzero(mask: Any) -> Tuple[Any, ...]:
    """``np.nonzero`` of a device array: by CuPy where it is installed, else on the host (copied both ways)."""
    cupy = installed_cupy()
    if cupy is not None:
        return tuple(cuda.as_cuda_array(p) for p in cupy.nonzero(cupy.asarray(mask)))
    return tuple(cuda.to_device(np.ascontiguousarray(p)) for p in np.nonzero(mask.copy_to_host()))


def _positions_unique(x: Any, first: int, indices: Sequence[Any]) -> bool:
    """Whether integer index arrays (in bounds) name each position of ``x``'s indexed axes once (checked on the
    host)."""
    extents = tuple(x.shape[first:first + len(indices)])
    host = [np.asarray(i.copy_to_host(), np.int64) % n for i, n in zip(indices, extents)]
    flat = np.ravel_multi_index(host, extents)
    return np.unique(flat).size == flat.size


def arg_extremes(a: Any, axis: int, largest: bool, keepdims: bool, where: str) -> Any:
    """``np.argmax(a, axis)`` (``largest``) or ``np.argmin`` of a 2-d device array over ``axis`` (0 or 1): in
    each lane, the first position of its extreme, or of its first NaN, as NumPy's; NumPy's ``ValueError`` for
    lanes of no elements."""
    if a.shape[axis] == 0:
        raise NumbaxShapeError(f"attempt to get {'argmax' if largest else 'argmin'} of an empty sequence", where)
    lanes = a if axis == 1 else transpose(a, (1, 0))
    out = cuda.device_array(lanes.shape[0], dtype=np.int64)
    if out.size:
        (_argmax_lanes if largest else _argmin_lanes)[grid(out.size)](out, lanes)
    return out.reshape((1, out.size) if axis == 0 else (out.size, 1)) if keepdims else out


@cuda.jit
def _argmax_lanes(out, lanes):
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        best, value = 0, lanes[r, 0]
        if value == value:
            for k in range(1, lanes.shape[1]):
                x = lanes[r, k]
                if x != x:
                    best = k
                    break
                if x > value:
                    best, value = k, x
        out[r] = best


@cuda.jit
def _argmin_lanes(out, lanes):
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        best, value = 0, lanes[r, 0]
        if value == value:
            for k in range(1, lanes.shape[1]):
                x = lanes[r, k]
                if x != x:
                    best = k
                    break
                if x < value:
                    best, value = k, x
        out[r] = best


def first_index(a: Any, extreme: Any, where: str) -> np.int64:
    """The first flat position (C order) of ``a`` holding ``extreme``, or a NaN where ``extreme`` is NaN: what
    ``np.argmax`` and ``np.argmin`` give, ``extreme`` being the maximum or minimum (a strided view of two
    dimensions or more is refused: its flat positions are no view's)."""
    if a.ndim > 1:
        if not a.is_c_contiguous():
            raise NumbaxDeviceError("np.argmax or np.argmin of a strided view of two dimensions or more is not "
                                    "supported by the GPU backend yet", origin_at(where),
                                    hint="take it of np.ascontiguousarray(x) instead.")
        a = a.reshape(a.size)
    best = cuda.to_device(np.array([a.size], np.int64))
    _first_holding[grid(a.size)](best, a, extreme)
    return np.int64(best.copy_to_host()[0])


@cuda.jit
def _first_holding(best, a, extreme):
    """The smallest position of ``a`` holding ``extreme`` (a NaN where it is NaN), by ``atomic.min``."""
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        if a[i] == extreme or extreme != extreme and a[i] != a[i]:
            cuda.atomic.min(best, 0, i)


@cuda.jit
def _first_out_of_bounds(bad, index, n):
    """The first position of ``index`` (its smallest, by ``atomic.min``) that does not index an extent ``n``."""
    for i in range(cuda.grid(1), index.size, cuda.gridsize(1)):
        if index[i] >= n or index[i] < -n:
            cuda.atomic.min(bad, 0, i)
