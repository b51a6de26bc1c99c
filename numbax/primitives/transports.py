"""What each collective is on each transport: the one table that says "this collective, here, is this code".

A transport is what carries the examples (or shards) of an axis. ``BATCH`` is ``vmap``'s loop: the examples
run one after the other in one thread, so a collective's operands are the rows of a buffer ``xs`` that the
loop filled (row ``i`` from example ``i``), and the collective is array code over those rows, run between the
loop's stages (``ast_passes.collectives``). Ordinary NumPy code, so ``grad``, ``jvp`` and ``vmap``
differentiate and batch it with the registry's rules for ``np.sum``, ``np.moveaxis``... (JAX's batching rules
for its collectives are the same reductions; ``pmax`` and ``pmin`` call helpers without rules, as JAX has none). A transport that runs shards on threads or processes (a barrier and an
exchange buffer; MPI's ``Allreduce``) is another table of this shape: per collective, the code that replaces
the marker in each shard.

Each entry gives, from the collective's static parameters, the statements that compute ``{out}`` from ``xs``
(``{xs}``: the operand's rows, ``{n}``: the axis size, ``{where}``: the user's "file:line:column" as a
string literal, for a check's error) and, where examples get different parts of it, the
expression of example ``{i}``'s value (``None``: every example gets ``{out}``).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Dict, Optional

# flake8: noqa: E731


@dataclasses.dataclass(frozen=True)
class OverRows:
    """A collective over the rows of ``xs`` (one per example): its shared code and each example's part."""

    shared: Callable[..., str]
    per_example: Optional[Callable[..., str]] = None
    lifted: Callable[..., tuple] = lambda *params: params  # the parameters over a stack of inner examples


def _indexed(dimension: int, where: str) -> str:
    """``{out}[:, :, where]``: the ``where`` of axis ``dimension``."""
    return "{out}[" + ", ".join([":"] * dimension + [where]) + "]"


def _gathered(axis: int, tiled: bool, ndim: int) -> str:
    if not tiled:
        return "{out} = {xs}" if axis == 0 else f"{{out}} = np.moveaxis({{xs}}, 0, {axis})"
    moved = "{xs}" if axis == 0 else f"np.moveaxis({{xs}}, 0, {axis})"
    shape = [f"{{out}}_moved.shape[{k}]" for k in range(axis)] + ["-1"] + \
        [f"{{out}}_moved.shape[{k + 1}]" for k in range(axis + 1, ndim)]
    return f"{{out}}_moved = {moved}\n{{out}} = np.reshape({{out}}_moved, ({', '.join(shape)},))"


def _scattered(dimension: int, tiled: bool, ndim: int) -> str:
    return (f"rt.check_scatter({{xs}}.shape[{dimension + 1}], {{n}}, {tiled}, {{where}})\n"
            "{out} = np.sum({xs}, axis=0)")


def _block(dimension: int, tiled: bool, ndim: int) -> str:
    if not tiled:
        return _indexed(dimension, "{i}")
    block = f"({{out}}.shape[{dimension}] // {{n}})"
    return _indexed(dimension, f"{{i}} * {block}:({{i}} + 1) * {block}")


BATCH: Dict[str, OverRows] = {
    "psum": OverRows(lambda: "{out} = np.sum({xs}, axis=0)"),
    "pmean": OverRows(lambda: "{out} = np.mean({xs}, axis=0)"),
    "pmax": OverRows(lambda: "{out} = rt.max_rows({xs})"),  # no derivative: JAX has no rule for pmax
    "pmin": OverRows(lambda: "{out} = rt.min_rows({xs})"),
    "all_gather": OverRows(_gathered, lifted=lambda axis, tiled, ndim: (axis + 1, tiled, ndim + 1)),
    "ppermute": OverRows(lambda sources, destinations: f"{{out}} = rt.permute_rows({{xs}}, {sources!r}, "
                                                       f"{destinations!r})",
                         per_example=lambda sources, destinations: "{out}[{i}]"),
    "psum_scatter": OverRows(_scattered, per_example=_block,
                             lifted=lambda dimension, tiled, ndim: (dimension + 1, tiled, ndim + 1)),
}
"""``vmap``'s transport: each collective over the rows of the buffer its loop filled."""

TRANSPORTS: Dict[str, Dict[str, OverRows]] = {"batch": BATCH}
