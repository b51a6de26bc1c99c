"""Collectives over named axes (``jax.lax.psum`` and the others), inside ``numbax.vmap(..., axis_name=...)``.

Each reduces or exchanges a value across the examples of the enclosing ``vmap`` (or ``vmaps``: a tuple of
names) that binds ``axis_name``. Inside compiled code a call leaves a marker
(``numbax.lax.collective_lowering``) that the ``collectives`` pass turns into code over the batch;
called in plain Python, outside any mapping, each raises JAX's ``NameError``: no axis is bound there.

    >>> import numpy as np, numbax
    >>> numbax.vmap(lambda x: x / numbax.lax.psum(x, "i"), axis_name="i")(np.array([1.0, 3.0]))
    array([0.25, 0.75])
"""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from numbax.lax.lowering import lowered_by
from numbax.lax import collective_lowering as lowering

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "ppermute", "psum_scatter", "axis_index"]


def _unbound(axis_name: Any) -> NameError:
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return NameError(f"unbound axis name: {names[0] if names else axis_name}")


@lowered_by(lowering.lower_psum)
def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum of ``x`` (a pytree) over the axis ``axis_name`` (a name or a tuple of names); every example
    gets it. ``psum(1, name)`` is the axis size. ``axis_index_groups`` is refused unless None."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_pmean)
def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The mean of ``x`` over ``axis_name``: ``psum(x, axis_name)`` divided by the axis size."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_pmax)
def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise maximum of ``x`` over ``axis_name``."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_pmin)
def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The elementwise minimum of ``x`` over ``axis_name``."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_all_gather)
def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0, tiled: bool = False,
               to: str = "varying") -> Any:
    """Every example's ``x``, stacked along a new axis ``axis`` (``tiled``: concatenated along axis ``axis``)."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_ppermute)
def ppermute(x: Any, axis_name: Any, perm: Sequence[Tuple[int, int]]) -> Any:
    """Example ``dst`` gets example ``src``'s ``x`` for each ``(src, dst)`` in ``perm``; examples no pair sends
    to get zeros."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_psum_scatter)
def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0, axis_index_groups: Any = None,
                 tiled: bool = False) -> Any:
    """``psum(x, axis_name)`` with example ``k`` keeping only block ``k`` of axis ``scatter_dimension`` (whose
    length is the axis size; ``tiled``: a multiple of it, the block kept as an axis)."""
    raise _unbound(axis_name)


@lowered_by(lowering.lower_axis_index)
def axis_index(axis_name: Any) -> Any:
    """The index of the example along ``axis_name`` (a tuple of names: the index in their flattened product)."""
    raise _unbound(axis_name)
