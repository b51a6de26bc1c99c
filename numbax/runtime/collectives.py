"""Collectives in generated code: the markers a collective leaves until its transport is chosen, and the
compiled helpers the batch transport (``vmap``'s loop) calls.

A marker (``rt.collective_psum(x, 'i@0')``) stands where the user called ``numbax.lax.psum``; its second
argument names the axes it runs over (each ``name@depth``, the depth of the ``vmap`` that bound it). The
``collectives`` pass replaces every marker before anything compiles it; one that reaches Python or Numba is a
numbax bug, so calling it raises.
"""
import numpy as np
from numba.extending import register_jitable

__all__ = ["collective_psum", "collective_pmean", "collective_pmax", "collective_pmin", "collective_all_gather",
           "collective_ppermute", "collective_psum_scatter", "permute_rows", "max_rows", "min_rows"]


def _unlowered():
    from numbax.errors import NumbaxInternalError

    raise NumbaxInternalError("a collective marker reached code that runs: the collectives pass lowers every one")


def collective_psum(x, axes):
    """``numbax.lax.psum``'s marker."""
    _unlowered()


def collective_pmean(x, axes):
    """``numbax.lax.pmean``'s marker."""
    _unlowered()


def collective_pmax(x, axes):
    """``numbax.lax.pmax``'s marker."""
    _unlowered()


def collective_pmin(x, axes):
    """``numbax.lax.pmin``'s marker."""
    _unlowered()


def collective_all_gather(x, axes, axis, tiled):
    """``numbax.lax.all_gather``'s marker."""
    _unlowered()


def collective_ppermute(x, axes, sources, destinations):
    """``numbax.lax.ppermute``'s marker."""
    _unlowered()


def collective_psum_scatter(x, axes, scatter_dimension, tiled):
    """``numbax.lax.psum_scatter``'s marker."""
    _unlowered()


@register_jitable
def permute_rows(x, sources, destinations):
    """``ppermute`` over the leading axis of ``x``: row ``destinations[k]`` of the result is row ``sources[k]``;
    rows no pair sends to are zeros (JAX's semantics)."""
    out = np.zeros_like(x)
    for k in range(len(sources)):
        if sources[k] >= x.shape[0] or destinations[k] >= x.shape[0]:
            raise ValueError("ppermute: an index of perm is not smaller than the axis size")
        out[destinations[k]] = x[sources[k]]
    return out


@register_jitable
def max_rows(xs):
    """The elementwise maximum of the rows of ``xs`` (``pmax`` over ``vmap``'s examples)."""
    out = xs[0]
    for k in range(1, xs.shape[0]):
        out = np.maximum(out, xs[k])
    return out


@register_jitable
def min_rows(xs):
    """The elementwise minimum of the rows of ``xs`` (``pmin`` over ``vmap``'s examples)."""
    out = xs[0]
    for k in range(1, xs.shape[0]):
        out = np.minimum(out, xs[k])
    return out
