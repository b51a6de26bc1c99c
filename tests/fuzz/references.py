"""What a generated program's right answers are: NumPy's value, JAX's gradient, central differences.

Each reference is either a value or the exception the reference itself raised (then numbax must raise
too). Central differences run in float64 (float32 arguments are widened; their values are exact in
both), perturb the real and the imaginary part of complex arguments separately and combine them as JAX
does (``d/dre - 1j * d/dim``), and mark elements where the left and right one-sided differences
disagree (a kink, a tie or a branch boundary within the step) as undecided: there only JAX decides.
"""
from __future__ import annotations

import copy
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy as np

from .grammar import run_quietly

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from grad_corpus import oracles  # noqa: E402  (also turns on JAX's float64 mode)

import jax  # noqa: E402

STEP = 1e-6


@dataclass(frozen=True)
class Reference:
    """A value (or a tuple of gradients), or the exception that computing it raised."""

    value: Any = None
    error: Optional[BaseException] = None


def numpy_call(fn: Callable, args: tuple) -> Reference:
    """``fn(*args)`` on copies of the arguments, warnings off."""
    try:
        return Reference(run_quietly(lambda: fn(*copy.deepcopy(args))))
    except Exception as error:  # noqa: BLE001 - the program's own failure is the reference
        return Reference(error=error)


def numpy_batch(fn: Callable, batch: tuple, in_axes: Sequence[Optional[int]]) -> Reference:
    """What ``vmap(fn, in_axes)(*batch)`` must equal: ``fn`` on each example, stacked."""
    size = next(len(a) for a, axis in zip(batch, in_axes) if axis is not None)
    outputs = []
    for k in range(size):
        example = tuple(a[k] if axis is not None else a for a, axis in zip(batch, in_axes))
        one = numpy_call(fn, example)
        if one.error is not None:
            return one
        outputs.append(one.value)
    return Reference(np.stack([np.asarray(o) for o in outputs]))


def jax_gradient(fn: Callable, args: tuple, argnums: Tuple[int, ...]) -> Reference:
    """``jax.grad`` of the same source with ``np`` bound to ``jax.numpy``, eagerly, in float64 mode; an
    empty reference where JAX cannot run the program (the refusals it shares with numbax are decided
    from the dtypes before JAX is asked)."""
    try:
        grads = jax.grad(oracles.to_jax(fn), argnums=argnums)(*copy.deepcopy(args))
    except Exception:  # noqa: BLE001 - JAX cannot run this program (its own limitation): no reference
        return Reference()
    return Reference(tuple(np.asarray(g) for g in grads))


def _widen(value):
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return value


def central_differences(fn: Callable, args: tuple, argnums: Tuple[int, ...]):
    """Per differentiated argument, ``(gradient, decided)``: central differences of the scalar ``fn``
    and a mask of the elements where ``fn`` is smooth within the step."""
    base = [_widen(a) for a in args]

    def at(k: int, index, delta) -> float:
        moved = list(copy.deepcopy(base))
        if isinstance(moved[k], np.ndarray):
            moved[k] = moved[k].copy()
            moved[k][index] += delta
        else:
            moved[k] = moved[k] + delta
        return float(np.real(run_quietly(lambda: fn(*moved))))

    f0 = float(np.real(run_quietly(lambda: fn(*copy.deepcopy(base)))))
    results = []
    for k in argnums:
        shape = np.shape(base[k])
        complex_arg = np.asarray(base[k]).dtype.kind == "c"
        grad = np.zeros(shape, dtype=complex if complex_arg else float)
        decided = np.ones(shape, dtype=bool)
        for index in np.ndindex(shape):
            scale = max(1.0, abs(np.asarray(base[k])[index]))
            parts = []
            for unit in ((1.0, -1j) if complex_arg else (1.0,)):
                h = STEP * scale
                direction = unit if unit == 1.0 else 1j
                fp, fm = at(k, index, direction * h), at(k, index, -direction * h)
                fp2, fm2 = at(k, index, direction * h / 2), at(k, index, -direction * h / 2)
                right, left = (fp - f0) / h, (f0 - fm) / h
                central = (-fp + 8 * fp2 - 8 * fm2 + fm) / (6 * h)
                smooth = np.isfinite(central) and abs(right - left) <= 1e-3 * (1 + abs(right) + abs(left))
                decided[index] &= bool(smooth)
                parts.append(unit * central)
            grad[index] = sum(parts)
        results.append((grad, decided))
    return results
