"""NumPy 2's array-API functions, as composites (``registry``'s ``composite``) of the primitives numbax has, as
``jax.numpy`` writes them: ``np.vecdot``, ``np.matvec``, ``np.vecmat`` (generalized ufuncs, written as
``np.matmul`` of operands with a unit axis), ``np.matrix_transpose``, ``np.astype``, ``np.cumulative_sum``,
``np.cumulative_prod``, and ``np.linalg``'s ``vecdot``, ``matmul``, ``tensordot``, ``outer``, ``cross``,
``diagonal``, ``trace``, ``matrix_transpose``, ``vector_norm`` and ``matrix_norm``.

JAX code written against the array API runs on NumPy arrays with these: their derivatives in both modes, to
any order, their batching and their GPU lowering are those of the primitives each calls. Keywords numbax does
not implement (``out=``, ``copy=False`` of ``np.astype``, ``dtype=`` of ``np.linalg.trace``) are refused at
the user's line, never dropped.
"""
import numpy as np

from numbax.primitives.registry import composite_of, def_methods


@composite_of(np.vecdot, np.linalg.vecdot)
def vecdot(x1, x2, axis=-1):
    """``np.vecdot``: the dot product of vectors along ``axis`` of each operand (their other axes broadcast),
    the first operand conjugated, as NumPy's and JAX's; vectors of different lengths are the product's
    ValueError."""
    a = x1 if axis == -1 else np.moveaxis(x1, axis, -1)
    b = x2 if axis == -1 else np.moveaxis(x2, axis, -1)
    return np.matmul(np.conj(a)[..., None, :], b[..., :, None])[..., 0, 0]


@composite_of(np.matvec)
def matvec(x1, x2):
    """``np.matvec``: matrices (the last two axes of ``x1``) times vectors (the last axis of ``x2``)."""
    if np.asarray(x1).ndim < 2 or np.asarray(x2).ndim < 1:
        raise ValueError("matvec: a matrix and a vector are needed (signature (m,n),(n)->(m))")
    return np.matmul(x1, x2[..., :, None])[..., 0]


@composite_of(np.vecmat)
def vecmat(x1, x2):
    """``np.vecmat``: conjugated vectors (the last axis of ``x1``) times matrices (the last two axes of ``x2``)."""
    if np.asarray(x1).ndim < 1 or np.asarray(x2).ndim < 2:
        raise ValueError("vecmat: a vector and a matrix are needed (signature (n),(n,m)->(m))")
    return np.matmul(np.conj(x1)[..., None, :], x2)[..., 0, :]


@composite_of(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose(x):
    """``np.matrix_transpose``: the last two axes swapped."""
    if np.asarray(x).ndim < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return np.swapaxes(x, -1, -2)


@composite_of(np.astype)
def astype(x, dtype, copy=True):
    """``np.astype``: ``x.astype(dtype)``, a copy."""
    return x.astype(dtype)


def _cumulative(scan, initial, what: str):
    """The composite ``np.cumulative_<what>``: ``scan`` (``np.cumsum``) along ``axis`` (which a multi-dimensional
    ``x`` needs), after ``initial`` (``np.zeros_like``) of one slice where ``include_initial``."""
    def cumulative(x, axis=None, dtype=None, include_initial=False):
        if axis is None:
            if np.asarray(x).ndim != 1:
                raise ValueError("For arrays which have more than one dimension ``axis`` argument is required.")
            axis = 0
        out = scan(x, axis=axis, dtype=dtype)
        if not include_initial:
            return out
        rows = out if axis == 0 else np.moveaxis(out, axis, 0)
        joined = np.concatenate((initial(rows[:1]), rows), axis=0)
        return joined if axis == 0 else np.moveaxis(joined, 0, axis)

    cumulative.__name__ = cumulative.__qualname__ = f"cumulative_{what}"
    cumulative.__doc__ = f"``np.cumulative_{what}``: {scan.__name__} along ``axis``, after an identity where " \
                         "``include_initial``."
    return cumulative


cumulative_sum = composite_of(np.cumulative_sum)(_cumulative(np.cumsum, np.zeros_like, "sum"))
cumulative_prod = composite_of(np.cumulative_prod)(_cumulative(np.cumprod, np.ones_like, "prod"))


@composite_of(np.linalg.matmul)
def matmul(x1, x2):
    """``np.linalg.matmul``: ``np.matmul``."""
    return np.matmul(x1, x2)


@composite_of(np.linalg.tensordot)
def tensordot(x1, x2, axes=2):
    """``np.linalg.tensordot``: ``np.tensordot``."""
    return np.tensordot(x1, x2, axes=axes)


@composite_of(np.linalg.outer)
def outer(x1, x2):
    """``np.linalg.outer``: ``np.outer`` of two vectors (NumPy's ``np.outer`` flattens; this one refuses)."""
    if np.asarray(x1).ndim != 1 or np.asarray(x2).ndim != 1:
        raise ValueError("Input arrays must be one-dimensional")
    return np.outer(x1, x2)


@composite_of(np.linalg.cross)
def cross(x1, x2, axis=-1):
    """``np.linalg.cross``: ``np.cross`` of 3-vectors along ``axis`` of each operand, the result's vectors along
    ``axis``."""
    if axis == -1:
        return np.cross(x1, x2)
    return np.moveaxis(np.cross(np.moveaxis(x1, axis, -1), np.moveaxis(x2, axis, -1)), -1, axis)


@composite_of(np.linalg.diagonal)
def diagonal(x, offset=0):
    """``np.linalg.diagonal``: the diagonals of the last two axes."""
    return np.diagonal(x, offset=offset, axis1=-2, axis2=-1)


@composite_of(np.linalg.trace)
def trace(x, offset=0, dtype=None):
    """``np.linalg.trace``: the traces of the last two axes (``dtype`` is refused unless None)."""
    return np.trace(x, offset=offset, axis1=-2, axis2=-1)


@composite_of(np.linalg.vector_norm)
def vector_norm(x, axis=None, keepdims=False, ord=2):
    """``np.linalg.vector_norm``: the norm of the vectors along ``axis``, or along the axes of a tuple taken
    together (all of ``x``, flattened, without it); ``keepdims`` keeps the reduced axes as ones. Over one axis or
    all, ``np.linalg.norm``'s; over a tuple of axes, JAX's reductions (the same numbers and derivatives)."""
    if axis is None:
        value = np.linalg.norm(np.ravel(x), ord=ord)
        return np.reshape(value, (1,) * np.asarray(x).ndim) if keepdims else value
    if not isinstance(axis, tuple):
        return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)
    if np.asarray(x).dtype.kind not in "fc":
        x = np.asarray(x).astype(np.float64)
    if ord is None or ord == 2:
        return np.sqrt(np.sum(np.real(x * np.conj(x)), axis=axis, keepdims=keepdims))
    size = np.abs(x)
    if ord == np.inf:
        return np.max(size, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return np.min(size, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(np.where(x != 0, np.ones_like(size), np.zeros_like(size)), axis=axis, keepdims=keepdims)
    if ord == 1:
        return np.sum(size, axis=axis, keepdims=keepdims)
    return np.sum(size ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


@composite_of(np.linalg.matrix_norm)
def matrix_norm(x, keepdims=False, ord="fro"):
    """``np.linalg.matrix_norm``: ``np.linalg.norm`` of the matrix of the last two axes."""
    return np.linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def_methods({"mT": np.matrix_transpose})  # the attribute, which the specializer computes as the function's call
