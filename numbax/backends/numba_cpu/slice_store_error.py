"""Numba's error for a slice store of the wrong shape (``a[i] = row``), its message written in Python.

Numba compiles the error path of every array store into a slice (``out[i] = row``, which ``vmap`` writes
for each example, and ``x[i:j] = y``) with the store: its CPU implementation builds the message
"cannot assign slice of shape (2,) from input of shape (3,)" in nopython mode, and the string formatting
that takes (``str`` of ints, joins, f-strings) costs seconds of compilation in every new process, whatever
the disk cache holds: 0.3 s for the store alone against 7 s with it on a busy two-core machine.

``install`` (before anything compiles: a warm start that loads cached code imports none of Numba's array lowering,
``numba.np.arrayobj``, and installs nothing) points Numba's store at a function whose CPU implementation raises
``SliceShapeError``, a ``ValueError`` with the same message, with the two shapes as its arguments, as the
runtime's checks raise their errors (``numbax.runtime.checks``): Numba passes them to Python, which writes the
message. Other targets (``numba.cuda``) keep a constant message, as Numba's own generic implementation does.
"""
from __future__ import annotations

from numba.core import types
from numba.extending import overload


class SliceShapeError(ValueError):
    """Numba's ``ValueError`` for an array stored into a slice of another shape."""

    def __init__(self, index_shape: tuple, source_shape: tuple):
        super().__init__(f"cannot assign slice of shape {tuple(index_shape)} from input of shape "
                         f"{tuple(source_shape)}")


def raise_with_shape_context(src_shapes, index_shape):
    """Raise the error of a slice store whose source has shape ``src_shapes`` and target ``index_shape``
    (Numba's signature; compiled code only)."""
    raise SliceShapeError(index_shape, src_shapes)


def _integer_tuples(src_shapes, index_shape) -> bool:
    return all(isinstance(t, types.UniTuple) and isinstance(t.dtype, types.Integer)
               for t in (src_shapes, index_shape))


@overload(raise_with_shape_context, target="generic")
def _generic(src_shapes, index_shape):
    if _integer_tuples(src_shapes, index_shape):
        def impl(src_shapes, index_shape):
            raise ValueError("cannot assign slice from input of different size")
        return impl
    return None


@overload(raise_with_shape_context, target="CPU")
def _cpu(src_shapes, index_shape):
    if _integer_tuples(src_shapes, index_shape):
        def impl(src_shapes, index_shape):
            raise SliceShapeError(index_shape, src_shapes)
        return impl
    return None


def install() -> None:
    """Make Numba's slice stores, compiled from now on, raise ``SliceShapeError`` (see the module docstring)."""
    from numba.np import arrayobj

    arrayobj.raise_with_shape_context = raise_with_shape_context
