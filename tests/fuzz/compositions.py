"""Compositions of transformations on a generated program, classified as ``classify`` does the others.

- ``rvp``: reverse over reverse, ``grad`` of the gradient's inner product with tangents (a Hessian-vector
  product, as ``hvp``'s forward over reverse), against JAX's forward over reverse of the program or its twin;
- ``vgrad``: ``vmap`` of ``grad`` (per-example gradients) over the program's batch, against ``grad`` of each
  example in turn, stacked;
- ``gvmap``: ``grad`` of the sum of ``vmap`` of ``prog_sum`` over the batch, against the same gradients of each
  example, stacked for a mapped argument and summed for one that is not.

The references of ``vgrad`` and ``gvmap`` are numbax's ``grad``, which the ``grad`` check holds to central
differences and JAX: these check that batching the generated adjoint code (and differentiating batched
code) changes no number. They run where ``grad`` of each example gives a value (its refusals are ``grad``'s).
"""
from __future__ import annotations

import copy
from typing import Callable, List, Optional

import numpy as np

import numbax
from numbax.errors import NumbaxError

from . import loader, references
from .classify import (REFUSED, RIGHT, WRONG, Outcome, _call, against_jax_hvp, argnums_of, difference,
                       differentiable_at, single_precision, tangents_for)
from .grammar import Program, run_quietly

COMPOSITIONS = ("rvp", "vgrad", "gvmap")


def _along(gradient: Callable) -> Callable:
    """``(x, y, s, tangents) -> sum_k <gradient(x, y, s)[k], tangents[k]>``, which ``grad`` differentiates."""
    def along(x, y, s, tangents):
        total = 0.0
        grads = gradient(x, y, s)
        for k in range(len(grads)):
            total = total + np.sum(grads[k] * tangents[k])
        return total

    return along


def _summed(mapped: Callable) -> Callable:
    """``(x, y, s) -> np.sum(mapped(x, y, s))``."""
    def summed(x, y, s):
        return np.sum(mapped(x, y, s))

    return summed


def check_rvp(program: Program, module, backend: str, path: str) -> Optional[Outcome]:
    """``grad`` of the gradient along the tangents against JAX's ``jvp`` of ``grad`` of the program."""
    argnums = argnums_of(program)
    if not differentiable_at(program, module, argnums):
        return None
    tangents = tangents_for(program.args)
    chosen = tuple(tangents[k] for k in argnums)
    gradient = numbax.grad(module.prog_sum, argnums=argnums, backend=backend)
    got, raised = _call("rvp", lambda: lambda *a: numbax.grad(_along(gradient), argnums=argnums, backend=backend)(
        *a, chosen), program.args, path, references.Reference())
    if raised is not None:
        return raised
    return against_jax_hvp("rvp", program, module, argnums, tangents, got)


def _examples(program: Program) -> List[tuple]:
    size = next(np.shape(a)[axis] for a, axis in zip(program.batch, program.in_axes) if axis is not None)
    return [tuple(np.take(a, k, axis=axis) if axis is not None else a for a, axis in zip(program.batch,
                                                                                         program.in_axes))
            for k in range(size)]


def _per_example(program: Program, module, backend: str, argnums) -> Optional[List[tuple]]:
    """``grad`` of ``prog_sum`` of each example, or None where one of them has none (a refusal, the program's
    own error, a non-finite value)."""
    gradient = numbax.grad(module.prog_sum, argnums=argnums, backend=backend)
    grads = []
    for example in _examples(program):
        value = references.numpy_call(module.prog_sum, example)
        if value.error is not None or np.asarray(value.value).dtype.kind != "f" or \
                not np.all(np.isfinite(value.value)):
            return None
        try:
            grads.append(numbax.device_get(run_quietly(lambda: gradient(*copy.deepcopy(example)))))
        except (NumbaxError, ArithmeticError, IndexError, ValueError, TypeError):
            return None
    return grads


def _compare(transform: str, got, want: List[np.ndarray], argnums, single: bool) -> Outcome:
    if not isinstance(got, tuple) or len(got) != len(argnums):
        return Outcome(transform, WRONG, f"structure: {type(got).__name__} for argnums={argnums}")
    for k, g, w in zip(argnums, got, want):
        wrong = difference(g, w, "jax", single=single)
        if wrong:
            return Outcome(transform, WRONG, f"{wrong} (d{'xys'[k]})")
    return Outcome(transform, RIGHT)


def check_batched(program: Program, module, backend: str, path: str, transform: str) -> Optional[Outcome]:
    """``vgrad`` or ``gvmap`` against ``grad`` of each example."""
    argnums = argnums_of(program)
    if any(np.asarray(program.batch[k]).dtype.kind != "f" for k in argnums):
        return None
    grads = _per_example(program, module, backend, argnums)
    if grads is None:
        return None
    stacked = [np.stack([np.asarray(g[i]) for g in grads]) for i in range(len(argnums))]
    axes = program.in_axes
    if transform == "vgrad":
        make = lambda: numbax.vmap(numbax.grad(module.prog_sum, argnums=argnums, backend=backend),  # noqa: E731
                                   in_axes=axes, backend=backend)
        want = stacked
    else:
        make = lambda: numbax.grad(_summed(numbax.vmap(module.prog_sum, in_axes=axes, backend=backend)),  # noqa
                                   argnums=argnums, backend=backend)
        want = [np.moveaxis(s, 0, axes[k]) if axes[k] is not None else np.sum(s, axis=0)
                for k, s in zip(argnums, stacked)]
    got, raised = _call(transform, make, program.batch, path, references.Reference())
    if raised is not None:
        return raised
    return _compare(transform, got, want, argnums, single_precision(program.batch))


def _refused_here(outcome: Outcome) -> Outcome:
    """A numbax error at a line of this file (the inner function's call in ``_along`` or ``_summed``: a
    refusal of the composition, ``grad`` of a gradient with a list tape) as a refusal."""
    refused = outcome.detail.startswith("message names no line of the program: Numbax") and \
        "NumbaxInternalError" not in outcome.detail and f"{__file__}:" in outcome.detail
    return Outcome(outcome.transform, REFUSED, outcome.detail) if refused else outcome


def check_compositions(program: Program, backend: str, transforms) -> List[Outcome]:
    """The outcomes of the compositions in ``transforms``."""
    module = loader.load(program.source)
    outcomes = []
    try:
        for transform in transforms:
            if transform == "rvp":
                outcome = check_rvp(program, module, backend, module.__file__)
            else:
                outcome = check_batched(program, module, backend, module.__file__, transform)
            outcomes += [_refused_here(outcome)] if outcome is not None else []
    finally:
        loader.unload(module)
    return outcomes
