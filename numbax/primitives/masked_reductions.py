"""Reductions with ``where=`` (and ``initial=`` of the extrema), as keyword composites (``registry``'s
``keyword_composite``): a call passing one of those keywords is compiled as this Python, written in the
reduction without them, as ``jax.numpy`` writes it (``_reduction``: the masked places filled with the
operation's identity, ``initial`` applied after); a call without them is the primitive itself.

``np.sum``, ``np.prod``, ``np.mean``, ``np.var``, ``np.std`` take ``where``; ``np.max``/``np.amax`` and
``np.min``/``np.amin`` take ``initial`` and ``where`` (which NumPy requires ``initial`` with). Their derivatives,
batching and lowering are those of ``np.where`` and the plain reductions: a masked place gets no derivative.
The mask is ``where`` broadcast against ``a``: one that does not broadcast to ``a``'s shape is a ValueError,
as NumPy's.
"""
import numpy as np

from numbax.primitives.registry import define


def _fold(reduce, identity):
    """The keyword composite of ``reduce`` (``np.sum``): the places ``where`` leaves out filled with
    ``identity`` of the array (``np.zeros_like``), as JAX's."""
    def folded(a, axis=None, dtype=None, keepdims=False, where=True):
        x = np.asarray(a)
        mask = np.logical_or(where, np.zeros_like(x, dtype=np.bool_))
        if mask.shape != x.shape:
            raise ValueError("the where mask does not broadcast to the array's shape")
        return reduce(np.where(mask, x, identity(x)), axis=axis, dtype=dtype, keepdims=keepdims)

    folded.__name__ = folded.__qualname__ = f"{reduce.__name__}_where"
    folded.__doc__ = f"``np.{reduce.__name__}(a, where=...)``: of the places ``where`` selects."
    return folded


def mean_where(a, axis=None, keepdims=False, where=True):
    """``np.mean(a, where=...)``: the sum of the places ``where`` selects over their count (NaN where none is), in
    ``a``'s float dtype (float64 of integers and bools)."""
    x = np.asarray(a)
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    count = np.sum(np.ones_like(x), axis=axis, keepdims=keepdims, where=where)
    return np.sum(x, axis=axis, keepdims=keepdims, where=where) / count


def var_where(a, axis=None, ddof=0, keepdims=False, where=True):
    """``np.var(a, where=...)``: the mean square deviation of the selected places from their mean, over their
    count less ``ddof`` (at least 0, as NumPy's)."""
    x = np.asarray(a)
    if x.dtype.kind in "biu":
        x = x.astype(np.float64)
    centered = x - np.mean(x, axis=axis, keepdims=True, where=where)
    squares = np.real(centered * np.conj(centered))
    count = np.sum(np.ones_like(squares), axis=axis, keepdims=keepdims, where=where)
    return np.sum(squares, axis=axis, keepdims=keepdims, where=where) / np.maximum(count - ddof, 0)


def std_where(a, axis=None, ddof=0, keepdims=False, where=True):
    """``np.std(a, where=...)``: the square root of ``np.var(a, where=...)``."""
    return np.sqrt(np.var(a, axis=axis, ddof=ddof, keepdims=keepdims, where=where))


def _extremum(reduce, pair, name: str, largest: bool):
    """The keyword composite of ``reduce`` (``np.max``), whose ``pair`` is ``np.maximum``: the places ``where``
    leaves out filled with the operation's identity (-inf of ``np.max``), ``initial`` applied after, as JAX's."""
    refusal = f"reduction operation '{name}' does not have an identity, so to use a where mask one has to specify " \
              "'initial'"

    def extremum(a, axis=None, keepdims=False, initial=None, where=True):
        x = np.asarray(a)
        if initial is None:
            raise ValueError(refusal)
        mask = np.logical_or(where, np.zeros_like(x, dtype=np.bool_))
        if mask.shape != x.shape:
            raise ValueError("the where mask does not broadcast to the array's shape")
        if x.dtype.kind in "fc":
            identity = -np.inf if largest else np.inf
        else:
            identity = (np.iinfo(x.dtype).min if largest else np.iinfo(x.dtype).max) if x.dtype.kind in "iu" else \
                not largest
        selected = reduce(np.where(mask, x, np.full_like(x, identity)), axis=axis, keepdims=keepdims)
        return pair(selected, np.asarray(initial, dtype=x.dtype))  # ``initial`` in ``a``'s dtype, as NumPy's

    extremum.__name__ = extremum.__qualname__ = f"{reduce.__name__}_initial"
    extremum.__doc__ = f"``np.{reduce.__name__}(a, initial=..., where=...)``: of the selected places and ``initial``."
    return extremum


_WHERE = frozenset({"where"})
_EXTREMUM = frozenset({"initial", "where"})
define(np.sum, keyword_composite=(_WHERE, _fold(np.sum, np.zeros_like)))
define(np.prod, keyword_composite=(_WHERE, _fold(np.prod, np.ones_like)))
define(np.mean, keyword_composite=(_WHERE, mean_where))
define(np.var, keyword_composite=(_WHERE, var_where))
define(np.std, keyword_composite=(_WHERE, std_where))
define(np.max, np.amax, keyword_composite=(_EXTREMUM, _extremum(np.max, np.maximum, "maximum", largest=True)))
define(np.min, np.amin, keyword_composite=(_EXTREMUM, _extremum(np.min, np.minimum, "minimum", largest=False)))
