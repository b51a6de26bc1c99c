"""``jacfwd``, ``jacrev`` and ``hessian`` of a generated program, classified as ``classify`` does the others.

``jacfwd`` and ``jacrev`` of ``prog`` are checked against central differences along each input element
(``references.directional_differences``), and JAX's Jacobian of the program (or its functional twin) where
the differences leave elements undecided, or where they disagree with a Jacobian that is JAX's (its convention
at a tie, which a function flat around the tie does not follow); ``hessian`` of ``prog_sum`` against JAX's only (unchecked without
it). They are checked where ``grad``'s own refusals do not apply (float inputs, a finite float output):
those refusals are ``grad``'s to check.
"""
from __future__ import annotations

import copy
from typing import List, Optional

import jax
import numpy as np

import numbax

from . import loader, references
from .classify import (RIGHT, TRANSFORMS, UNCHECKED, WRONG, Outcome, _call, argnums_of, check, difference,
                       jax_function, single_precision)
from .compositions import COMPOSITIONS, check_compositions
from .grammar import Program

JACOBIANS = ("jacfwd", "jacrev", "hessian")
EXTENDED_TRANSFORMS = TRANSFORMS + JACOBIANS
_MAKERS = {"jacfwd": (numbax.jacfwd, jax.jacfwd), "jacrev": (numbax.jacrev, jax.jacrev),
           "hessian": (numbax.hessian, jax.hessian)}


def finite_differences(fn, args: tuple, argnums) -> list:
    """Per argument in ``argnums``, ``(jacobian, decided)`` of ``fn``'s output by central differences along
    each of its elements, in the shape ``output + argument``."""
    results = []
    for k in argnums:
        shape = np.shape(args[k])
        columns, masks = [], []
        for index in np.ndindex(shape):
            unit = np.zeros(shape)
            unit[index] = 1.0
            central, decided = references.directional_differences(
                fn, args, {k: float(unit) if isinstance(args[k], float) else unit})
            columns.append(central.real)
            masks.append(decided)
        out_ndim = np.ndim(columns[0])
        jac = np.moveaxis(np.stack(columns, axis=-1), -1, out_ndim).reshape(np.shape(columns[0]) + shape)
        mask = np.moveaxis(np.stack(masks, axis=-1), -1, out_ndim).reshape(np.shape(columns[0]) + shape)
        results.append((jac, mask))
    return results


def _jax_reference(program: Program, module, transform: str, argnums, value) -> Optional[tuple]:
    name = "prog_sum" if transform == "hessian" else "prog"
    jax_fn = jax_function(program, module, name)
    if jax_fn is None:
        return None
    oracles = references.oracles
    try:
        jax_value = oracles.to_jax(jax_fn)(*copy.deepcopy(program.args))
        got = _MAKERS[transform][1](oracles.to_jax(jax_fn), argnums=argnums)(*copy.deepcopy(program.args))
    except Exception:  # noqa: BLE001 - JAX cannot run this program (its own limitation): no reference
        return None
    if not references._same_value(np.asarray(jax_value), np.asarray(value)):
        return None
    return tuple(np.asarray(g) for g in jax.tree_util.tree_leaves(got))


def check_jacobian(program: Program, module, backend: str, path: str, transform: str) -> Optional[Outcome]:
    """``transform`` (one of ``JACOBIANS``) of the program: None where its refusals are ``grad``'s to check."""
    argnums = argnums_of(program)
    fn = module.prog_sum if transform == "hessian" else module.prog
    expected = references.numpy_call(fn, program.args)
    if any(np.asarray(program.args[k]).dtype.kind != "f" for k in argnums) or expected.error is not None \
            or np.asarray(expected.value).dtype.kind != "f" or not np.all(np.isfinite(expected.value)):
        return None
    got, raised = _call(transform, lambda: _MAKERS[transform][0](fn, argnums=argnums, backend=backend),
                        program.args, path, references.Reference())
    if raised is not None:
        return raised
    if not isinstance(got, tuple) or len(got) != len(argnums):
        return Outcome(transform, WRONG, f"structure: {type(got).__name__} for argnums={argnums}")
    single = single_precision(program.args)
    fd = None if transform == "hessian" else finite_differences(fn, program.args, argnums)
    if fd is None or not all(mask.all() for _, mask in fd):
        against_jax = _against_jax(program, module, transform, argnums, expected.value, got, single)
        if against_jax is not None:
            return against_jax
    if fd is None or not any(mask.any() for _, mask in fd):
        return Outcome(transform, UNCHECKED)
    for k, g, (jac, mask) in zip(argnums, got, fd):
        if np.shape(g) != jac.shape:
            return Outcome(transform, WRONG, f"shape: {np.shape(g)}, expected {jac.shape} (d{'xys'[k]})")
        wrong = difference(g, jac, "fd", mask & ~np.isnan(np.asarray(g)), single)
        if wrong:  # right where it is JAX's Jacobian: JAX's convention at a tie, which a flat function does not
            # follow (np.clip(0.5, x, 0.5) is 0.5 around x = 0.5, JAX's ties give x a quarter)
            against_jax = _against_jax(program, module, transform, argnums, expected.value, got, single)
            if against_jax is not None and against_jax.kind == RIGHT:
                return against_jax
            return Outcome(transform, WRONG, f"{wrong} (d{'xys'[k]})")
    return Outcome(transform, RIGHT)


def _against_jax(program: Program, module, transform: str, argnums, value, got, single: bool) -> Optional[Outcome]:
    """``got`` against JAX's Jacobian of the program (or its twin): None where JAX gives none."""
    want = _jax_reference(program, module, transform, argnums, value)
    if want is None:
        return None
    leaves = jax.tree_util.tree_leaves(got)
    if len(leaves) != len(want):
        return Outcome(transform, WRONG, f"structure: {len(leaves)} blocks, expected {len(want)}")
    for k, (g, w) in enumerate(zip(leaves, want)):
        wrong = difference(g, w, "jax", single=single)
        if wrong:
            return Outcome(transform, WRONG, f"{wrong} (block {k}, JAX's)")
    return Outcome(transform, RIGHT)


def check_all(program: Program, backend: str, transforms=EXTENDED_TRANSFORMS) -> List[Outcome]:
    """``classify.check``'s outcomes for its transforms in ``transforms``, then the Jacobians', then the
    compositions' (``compositions.py``)."""
    outcomes = check(program, backend, tuple(t for t in transforms if t not in JACOBIANS + COMPOSITIONS))
    wanted = [t for t in transforms if t in JACOBIANS]
    composed = [t for t in transforms if t in COMPOSITIONS]
    if composed:
        outcomes += check_compositions(program, backend, composed)
    if not wanted:
        return outcomes
    module = loader.load(program.source)
    try:
        for transform in wanted:
            outcome = check_jacobian(program, module, backend, module.__file__, transform)
            outcomes += [outcome] if outcome is not None else []
    finally:
        loader.unload(module)
    return outcomes
