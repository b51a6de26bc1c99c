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
# A difference of values near ``|f|`` carries their rounding, about ``_ROUNDING * |f|``, divided by the step:
# an element whose differences could be off by more than ``_NOISE`` (relative) that way is not decided by them
# (``sum(2 / x)`` of an ``x`` near 1e-3 is 1e4, and its differences along an input it does not depend on 1e-6).
_ROUNDING = 16 * np.finfo(np.float64).eps
_NOISE = 1e-7


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
    """What ``vmap(fn, in_axes)(*batch)`` must equal: ``fn`` on each example in turn, stacked (an argument
    that is not mapped is one array for all of them: an example that writes into it changes what the next
    ones read, as the loop ``vmap`` compiles does); an error where the examples' results differ in shape
    (there is no batched result; JAX refuses such a program)."""
    size = next(np.shape(a)[axis] for a, axis in zip(batch, in_axes) if axis is not None)
    batch = copy.deepcopy(batch)
    outputs = []
    for k in range(size):
        example = tuple(np.take(a, k, axis=axis) if axis is not None else a for a, axis in zip(batch, in_axes))
        try:
            one = Reference(run_quietly(lambda: fn(*example)))
        except Exception as error:  # noqa: BLE001 - the program's own failure is the reference
            return Reference(error=error)
        outputs.append(np.array(one.value))  # a copy: a later example may write into what this one returned
    if len({o.shape for o in outputs}) > 1:  # a while loop that rebinds x to another shape on some examples
        return Reference(error=ValueError("vmap: the examples' outputs have different shapes: "
                                          + ", ".join(str(o.shape) for o in outputs)))
    return Reference(np.stack(outputs))


def jax_gradient(fn: Callable, args: tuple, argnums: Tuple[int, ...], value: Any) -> Reference:
    """``jax.grad`` of the same source with ``np`` bound to ``jax.numpy``, eagerly, in float64 mode; an
    empty reference where JAX cannot run the program (the refusals it shares with numbax are decided
    from the dtypes before JAX is asked), or where its value is not NumPy's ``value`` (JAX's floor division
    of zero keeps another zero's sign than NumPy's, so ``1 / (x // y)`` is another function there)."""
    try:
        jax_value, grads = jax.value_and_grad(oracles.to_jax(fn), argnums=argnums)(*copy.deepcopy(args))
    except Exception:  # noqa: BLE001 - JAX cannot run this program (its own limitation): no reference
        return Reference()
    if not _same_value(np.asarray(jax_value), np.asarray(value)):
        return Reference()
    return Reference(tuple(np.asarray(g) for g in grads))


def _same_value(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two values of one program agree: NaNs and infinities (with their signs) where the other has
    them, the finite values within float32's rounding."""
    if np.shape(a) != np.shape(b):
        return False
    finite = np.isfinite(a) & np.isfinite(b)
    return bool(np.array_equal(np.where(finite, 0, a), np.where(finite, 0, b), equal_nan=True)
                and np.allclose(a[finite], b[finite], rtol=1e-5, atol=1e-6))


def jax_jvp(fn: Callable, args: tuple, tangents: tuple, value: Any) -> Reference:
    """``jax.jvp`` of the same source with ``np`` bound to ``jax.numpy`` in float64 mode: the output's tangent,
    or an empty reference where JAX cannot run it or its value is not NumPy's ``value``."""
    try:
        jax_value, tangent = jax.jvp(oracles.to_jax(fn), tuple(copy.deepcopy(args)), tuple(tangents))
    except Exception:  # noqa: BLE001 - JAX cannot run this program (its own limitation): no reference
        return Reference()
    if not _same_value(np.asarray(jax_value), np.asarray(value)):
        return Reference()
    return Reference(np.asarray(tangent))


def jax_hvp(fn: Callable, args: tuple, argnums: Tuple[int, ...], tangents: tuple) -> Reference:
    """``jax.jvp(jax.grad(fn, argnums))`` (forward over reverse) of the same source in float64 mode: the
    tangents of the gradients, or an empty reference where JAX cannot run it."""
    try:
        _, tangent = jax.jvp(jax.grad(oracles.to_jax(fn), argnums=argnums), tuple(copy.deepcopy(args)),
                             tuple(tangents))
    except Exception:  # noqa: BLE001 - JAX cannot run this program (its own limitation): no reference
        return Reference()
    return Reference(tuple(np.asarray(t) for t in tangent))


def directional_differences(fn: Callable, args: tuple, tangents: dict) -> Tuple[np.ndarray, np.ndarray]:
    """``(derivative, decided)``: central differences of ``fn``'s (array) output along ``tangents`` (argument
    index -> direction), and a mask of the output elements where ``fn`` is smooth within the step (left and
    right differences agree, the values' rounding cannot move the difference by more than ``_NOISE``)."""
    base = [_widen(a) for a in args]

    def value(scale: float) -> np.ndarray:
        moved = list(copy.deepcopy(base))
        for k, t in tangents.items():
            moved[k] = moved[k] + scale * (np.asarray(t, dtype=complex if np.iscomplexobj(t) else float)
                                           if np.ndim(base[k]) else complex(t) if np.iscomplexobj(t) else float(t))
        try:
            return np.asarray(run_quietly(lambda: fn(*moved)), dtype=complex)
        except Exception:  # noqa: BLE001 - the program fails next to the point: nothing decided there
            return np.full(np.shape(f0), np.nan, dtype=complex)

    f0 = np.asarray(run_quietly(lambda: fn(*copy.deepcopy(base))), dtype=complex)
    h = STEP * max([1.0] + [float(np.max(np.abs(np.asarray(base[k])), initial=0.0)) for k in tangents])
    fp, fm, fp2, fm2 = value(h), value(-h), value(h / 2), value(-h / 2)
    central = (-fp + 8 * fp2 - 8 * fm2 + fm) / (6 * h)
    right, left = (fp - f0) / h, (f0 - fm) / h
    finite = np.isfinite(f0) & np.isfinite(central) & np.isfinite(right) & np.isfinite(left)
    with np.errstate(all="ignore"):
        agree = np.abs(right - left) <= 1e-3 * (1 + np.abs(right) + np.abs(left))
        noise = _ROUNDING * np.maximum(np.abs(f0), np.maximum(np.abs(fp), np.abs(fm))) / h
        quiet = noise <= _NOISE * np.maximum(1.0, np.abs(central))
    return central, finite & agree & quiet


def _widen(value):
    if isinstance(value, np.ndarray) and value.dtype == np.float32:
        return value.astype(np.float64)
    return value


def _agree(a: float, b: float) -> bool:
    return bool(np.isfinite(a) and np.isfinite(b) and abs(a - b) <= 1e-3 * (1 + abs(a) + abs(b)))


def central_differences(fn: Callable, args: tuple, argnums: Tuple[int, ...]):
    """Per differentiated argument, ``(gradient, decided)``: central differences of the scalar ``fn``
    and a mask of the elements where ``fn`` is smooth within the step.

    An element is decided where its left and right differences agree and the values' rounding cannot move
    its difference by more than ``_NOISE`` of it. All are undecided when ``fn`` is
    not finite, or when the derivative along one fixed pseudo-random direction disagrees with the
    gradient (a tie that no single coordinate breaks: ``sort`` or ``max`` of equal values).
    """
    base = [_widen(a) for a in args]

    def value(deltas) -> float:
        moved = list(copy.deepcopy(base))
        for k, delta in deltas.items():
            moved[k] = moved[k] + delta
        try:
            return float(np.real(run_quietly(lambda: fn(*moved))))
        except Exception:  # noqa: BLE001 - the program fails next to the point: nothing decided there
            return float("nan")

    def unit(k: int, index, direction) -> np.ndarray:
        delta = np.zeros(np.shape(base[k]), dtype=complex if isinstance(direction, complex) else float)
        delta[index] = direction
        return delta if np.ndim(base[k]) else delta.item()

    f0 = value({})
    results = []
    for k in argnums:
        shape = np.shape(base[k])
        complex_arg = np.asarray(base[k]).dtype.kind == "c"
        grad = np.zeros(shape, dtype=complex if complex_arg else float)
        decided = np.full(shape, np.isfinite(f0))
        for index in np.ndindex(shape):
            h = STEP * max(1.0, abs(np.asarray(base[k])[index]))
            for weight, direction in ((1.0, 1.0), (-1j, 1j)) if complex_arg else ((1.0, 1.0),):
                fp, fm = value({k: unit(k, index, direction * h)}), value({k: unit(k, index, -direction * h)})
                fp2, fm2 = value({k: unit(k, index, direction * h / 2)}), value({k: unit(k, index, -direction * h / 2)})
                central = (-fp + 8 * fp2 - 8 * fm2 + fm) / (6 * h)
                noise = _ROUNDING * max(abs(f0), abs(fp), abs(fm)) / h  # of the values, magnified by 1 / h
                decided[index] &= _agree((fp - f0) / h, (f0 - fm) / h) and bool(np.isfinite(central)) and \
                    noise <= _NOISE * max(1.0, abs(central))
                grad[index] += weight * central
        results.append((grad, decided))
    rng = np.random.default_rng(0)
    direction = {k: rng.standard_normal(np.shape(base[k])) + (
        1j * rng.standard_normal(np.shape(base[k])) if np.asarray(base[k]).dtype.kind == "c" else 0) for k in argnums}
    along = sum(float(np.real(np.sum(g * direction[k]))) for k, (g, _) in zip(argnums, results))
    step = {k: STEP * d for k, d in direction.items()}
    right = (value(step) - f0) / STEP
    left = (f0 - value({k: -d for k, d in step.items()})) / STEP
    if not (_agree(right, along) and _agree(left, along)):
        for _, decided in results:
            decided[...] = False
    return results
