"""``numbax.lax``: JAX's structured control flow over NumPy values.

Called directly, each function runs as plain Python with JAX's semantics.
Inside ``jit``, ``grad`` and the other transformations numbax rewrites each call
into native control flow at the user's line before anything else sees it
(``numbax.lax.lowering``): ``fori_loop`` becomes a ``for`` loop, ``while_loop`` a
``while`` loop, ``cond``/``switch`` an ``if``/``elif`` chain, and ``scan`` a loop
filling preallocated outputs. So they compile with Numba and reverse mode
differentiates them like any user loop -- ``while_loop`` included, which JAX
cannot reverse-differentiate.

    >>> from numbax import lax
    >>> lax.fori_loop(0, 4, lambda i, total: total + i, 0)
    6
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional, Sequence

import numpy as np

from numbax import tree_util
from numbax.lax import collectives, elementwise, lowering

__all__ = ["cond", "switch", "fori_loop", "while_loop", "scan", "select", "stop_gradient", "cumsum", "cumprod",
           "cumlogsumexp", "cummax", "cummin"] + elementwise.__all__ + collectives.__all__


@lowering.lowered_by(lowering.lower_fori_loop)
def fori_loop(lower: int, upper: int, body_fun: Callable[[int, Any], Any], init_val: Any, *,
              unroll: Optional[int] = None) -> Any:
    """``body_fun(i, val)`` for ``i`` in ``range(lower, upper)``, threading ``val``; returns the last ``val``.

    ``unroll`` is accepted for JAX compatibility and ignored (Numba unrolls itself).
    """
    val = init_val
    for i in range(lower, upper):
        val = body_fun(i, val)
    return val


@lowering.lowered_by(lowering.lower_while_loop)
def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)``; returns the last ``val``.

    Unlike JAX, reverse mode differentiates it: the trip count is recorded.
    """
    val = init_val
    while cond_fun(val):
        val = body_fun(val)
    return val


@lowering.lowered_by(lowering.lower_cond)
def cond(pred: Any, true_fun: Callable, false_fun: Callable, *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; both must return the same structure."""
    return true_fun(*operands) if pred else false_fun(*operands)


@lowering.lowered_by(lowering.lower_switch)
def switch(index: Any, branches: Sequence[Callable], *operands: Any) -> Any:
    """``branches[index](*operands)``, with ``index`` clamped into ``[0, len(branches) - 1]`` as JAX does."""
    if len(branches) == 0:
        raise ValueError("switch: empty branch sequence")
    clamped = builtins.min(builtins.max(int(index), 0), len(branches) - 1)  # ``min``/``max`` here are lax's
    return branches[clamped](*operands)


@lowering.lowered_by(lowering.lower_scan)
def scan(f: Callable[[Any, Any], Any], init: Any, xs: Any = None, length: Optional[int] = None,
         reverse: bool = False, unroll: int = 1) -> Any:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns ``(carry, stacked ys)``.

    ``xs`` and the ``y`` that ``f`` returns are pytrees; ``length`` gives the trip
    count when ``xs`` is ``None``. ``reverse=True`` runs from the last element and
    stores each ``y`` at its element's index, as JAX does. ``unroll`` is ignored.
    """
    n = lowering.scan_length(xs, length)
    carry = init
    ys = [None] * n
    for i in (reversed(range(n)) if reverse else range(n)):
        carry, ys[i] = f(carry, tree_util.tree_map(lambda leaf: leaf[i], xs))
    if n == 0:
        raise ValueError("scan over zero elements: numbax cannot tell the shape of the stacked outputs")
    return carry, tree_util.tree_map(lambda *leaves: np.stack(leaves), *ys)


@lowering.lowered_by(lowering.lower_select)
def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """Elementwise ``on_true`` where ``pred`` else ``on_false`` (``np.where``)."""
    return np.where(pred, on_true, on_false)


@lowering.lowered_by(lowering.lower_stop_gradient)
def stop_gradient(x: Any) -> Any:
    """``x`` unchanged (a pytree); ``grad`` and the other transformations treat it as a constant."""
    return x


from numbax.lax.cumulative import cumlogsumexp, cummax, cummin, cumprod, cumsum  # noqa: E402  (they call scan, defined above)
from numbax.lax.elementwise import *  # noqa: E402,F401,F403  (clamp calls stop_gradient, defined above)
from numbax.lax.collectives import *  # noqa: E402,F401,F403
