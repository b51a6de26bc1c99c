"""Shape functions written as composites (``registry``'s ``composite``) of the primitives numbax has, as
``jax.numpy`` writes them: ``np.fliplr``, ``np.flipud``, ``np.rot90``, ``np.column_stack``, ``np.dstack``,
``np.append``, ``np.diagflat``, ``np.hsplit``, ``np.vsplit`` and ``np.dsplit``; and the attribute ``x.mT``
(``np.matrix_transpose``, in ``array_api``).

Each takes NumPy's parameters that numbax implements (``keywords.IMPLEMENTED``), gives NumPy's values, and is
differentiated, batched and lowered as the primitives it calls. NumPy's errors for ranks it does not take are
NumPy's ``ValueError``s.
"""
import numpy as np

from numbax.primitives.registry import composite_of


@composite_of(np.fliplr)
def fliplr(m):
    """``np.fliplr``: the order of the columns (axis 1) reversed."""
    if np.asarray(m).ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return np.flip(m, axis=1)


@composite_of(np.flipud)
def flipud(m):
    """``np.flipud``: the order of the rows (axis 0) reversed."""
    if np.asarray(m).ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return np.flip(m, axis=0)


@composite_of(np.rot90)
def rot90(m, k=1, axes=(0, 1)):
    """``np.rot90``: ``k`` quarter turns in the plane of ``axes``, from the first axis towards the second."""
    ndim = np.asarray(m).ndim
    if len(axes) != 2 or ndim < 2 or axes[0] % ndim == axes[1] % ndim:
        raise ValueError("Axes must be different and of length 2, in an array of at least 2 dimensions.")
    k = k % 4
    if k == 0:
        return m[...]
    if k == 2:
        return np.flip(np.flip(m, axes[0]), axes[1])
    order = list(range(ndim))
    order[axes[0] % ndim], order[axes[1] % ndim] = order[axes[1] % ndim], order[axes[0] % ndim]
    if k == 1:
        return np.transpose(np.flip(m, axes[1]), tuple(order))
    return np.flip(np.transpose(m, tuple(order)), axes[1])


@composite_of(np.column_stack)
def column_stack(tup):
    """``np.column_stack``: vectors (and numbers) as columns, matrices as they are, joined along axis 1."""
    return np.concatenate([np.reshape(v, (-1, 1)) if np.asarray(v).ndim < 2 else v for v in tup], axis=1)


@composite_of(np.dstack)
def dstack(tup):
    """``np.dstack``: the arrays, each at least 3-D (``np.atleast_3d``), joined along axis 2."""
    return np.concatenate([np.atleast_3d(v) for v in tup], axis=2)


@composite_of(np.append)
def append(arr, values, axis=None):
    """``np.append``: ``values`` after ``arr`` along ``axis``; both flattened without it."""
    if axis is None:  # each as an array (a number or a list too), flattened
        return np.concatenate([np.ravel(np.atleast_1d(np.asarray(v))) for v in (arr, values)], axis=0)
    return np.concatenate((np.asarray(arr), np.asarray(values)), axis=axis)


@composite_of(np.diagflat)
def diagflat(v, k=0):
    """``np.diagflat``: the flattened ``v`` on the ``k``-th diagonal of a square matrix."""
    return np.diag(np.ravel(v), k)


@composite_of(np.hsplit)
def hsplit(ary, indices_or_sections):
    """``np.hsplit``: ``np.split`` along axis 1 (axis 0 of a vector)."""
    if np.asarray(ary).ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return np.split(ary, indices_or_sections, axis=1 if np.asarray(ary).ndim > 1 else 0)


@composite_of(np.vsplit)
def vsplit(ary, indices_or_sections):
    """``np.vsplit``: ``np.split`` along axis 0 of an array of at least 2 dimensions."""
    if np.asarray(ary).ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return np.split(ary, indices_or_sections, axis=0)


@composite_of(np.dsplit)
def dsplit(ary, indices_or_sections):
    """``np.dsplit``: ``np.split`` along axis 2 of an array of at least 3 dimensions."""
    if np.asarray(ary).ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return np.split(ary, indices_or_sections, axis=2)
