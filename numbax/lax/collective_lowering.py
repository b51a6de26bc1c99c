"""A collective call while specializing: its arguments checked as JAX checks them, then a marker.

``numbax.lax.psum(x, 'i')`` inside a function that ``vmap(..., axis_name='i')`` maps becomes, for each leaf of
``x``, ``_t = rt.collective_psum(x, ('i@0',))``: the operand, the tags of the axes (``axes.Frame.tag``) and the
collective's static parameters. Nothing else is decided here: the ``collectives`` pass lowers each marker for
the transport that serves its axes (``transports``). A number known at compile time needs no marker for a
reduction (``psum(1, 'i')`` is the axis size); ``axis_index`` is the example's index, which ``vmap`` knows.
Over the GPUs of a ``pmap`` (``axes.ON_GPUS``) no loop holds the shard's program, so no pass lowers a marker:
the call of the exchange between the shards' host drivers is emitted here, ``_t = rt.gpu_psum(x, 'f.py:3:8')``
(``runtime.gpu_shards``).
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Sequence

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.compile_time import bind_call
from numbax.ast_passes.specialize.values import AVal, Dyn, contains_dyn, is_static_scalar
from numbax.errors import NumbaxBatchingError, NumbaxDeviceError
from numbax import runtime
from numbax.runtime import collectives as markers
from numbax.lax import named_axes as axes

_INDEX = AVal(np.dtype(np.int64), 0)


def _bind(spec, node, name: str, args: List[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """The call's arguments by parameter; every one but ``x`` known at compile time, no index groups."""
    from numbax import lax

    bound = bind_call(spec, node, getattr(lax, name), f"numbax.lax.{name}", args, kwargs)
    for param, value in bound.items():
        if param != "x" and contains_dyn(value):
            spec.fail(node, f"numbax.lax.{name}'s {param} must be known at compile time")
    if bound.get("axis_index_groups") is not None:
        spec.fail(node, f"numbax.lax.{name}: axis_index_groups is not supported",
                  hint="reduce over the whole axis, or split it into two named axes (nested vmaps).")
    return bound


def _frames(spec, node, axis_name: Any, staged: bool = True, single: str = "") -> List[axes.Frame]:
    try:
        hash(axis_name)
    except TypeError:
        spec.fail(node, f"axis_name must be a hashable name or a tuple of them, got {axis_name!r}")
    frames = axes.lookup(axis_name, spec.origin(node), staged)
    if any(frame.transport == axes.ON_GPUS for frame in frames):
        _check_over_gpus(spec, node, axis_name, frames)
    if any(frame.transport == axes.PER_THREAD for frame in frames):
        raise NumbaxDeviceError(f"collectives over the axis of a vmap on the GPU backend ({axis_name!r}) are not "
                                "built yet: one thread runs each example", spec.origin(node),
                                hint="run the vmap on the CPU backend (NumPy arguments), or call the collective "
                                     "on the vmap's stacked result.")
    if single and len(frames) != 1:
        spec.fail(node, f"numbax.lax.{single} over several axes at once is not supported",
                  hint="call it once per axis name.")
    return frames


def _check_over_gpus(spec, node, axis_name: Any, frames: List[axes.Frame]) -> None:
    """Refuse what collectives over the axis of a ``pmap`` over GPUs do not run: another axis at once, or a
    ``vmap`` inside the ``pmap`` (its examples are a kernel's threads, which do not reach the host's
    exchange)."""
    if len(frames) > 1:
        raise NumbaxDeviceError(f"a collective over the axis of a pmap over GPUs and another axis at once "
                                f"({axis_name!r}) is not built yet", spec.origin(node),
                                hint="call the collective once per axis name.")
    if frames[0] is not axes.innermost():
        raise NumbaxDeviceError(f"a collective over the axis of a pmap over GPUs ({axis_name!r}) inside a vmap is "
                                "not built yet", spec.origin(node),
                                hint="call it outside the vmap, on the vmap's stacked result; or pmap over CPU "
                                     "devices (numbax.devices('cpu')).")


def _operand(spec, node, leaf: Any, name: str) -> Dyn:
    """A leaf of ``x`` as a named run-time value of known dtype and rank."""
    if isinstance(leaf, np.ndarray) or is_static_scalar(leaf):
        leaf = Dyn(spec.materialize(leaf), AVal.of(leaf))
    if not isinstance(leaf, Dyn):
        spec.fail(node, f"numbax.lax.{name} takes arrays, numbers and containers of them, not a "
                  f"{type(leaf).__name__}")
    if leaf.aval is None:
        spec.fail(node, f"cannot tell the dtype and rank of the operand of numbax.lax.{name}")
    if leaf.aval.dtype.kind == "c":
        spec.fail(node, f"numbax.lax.{name} of complex values is not supported yet")
    if leaf.aval.dtype.kind in "iu" and leaf.aval.dtype.itemsize < 8:  # NumPy's sum and Numba's scalars widen them
        spec.fail(node, f"numbax.lax.{name} of {leaf.aval.dtype.name} values is not supported yet (numbax would "
                  "compute it in int64)", hint="cast the operand to np.int64 or to a float first.")
    return spec.snapshot(leaf)


def _marker(spec, node, kind: str, leaf: Dyn, frames: Sequence[axes.Frame], params: tuple, aval: AVal) -> Dyn:
    """``_t = rt.collective_<kind>(leaf, tags, *params)``, emitted now (one marker per call, at its line); over
    the GPUs of a ``pmap``, the exchange's call itself, ``_t = rt.gpu_<kind>(leaf, *params, where)``."""
    if frames[0].transport == axes.ON_GPUS:  # a call of the exchange between the shards' drivers
        where = spec.origin(node).position() if spec.origin(node) is not None else ""
        call = gast.Call(func=spec.materializer.reference(getattr(runtime, f"gpu_{kind}")),
                         args=[leaf.expr()] + [spec.materialize(p) for p in params + (where,)], keywords=[])
        return spec.snapshot(Dyn(call, aval))
    func = getattr(markers, f"collective_{kind}")
    tags = tuple(frame.tag for frame in frames)
    call = gast.Call(func=spec.materializer.reference(func),
                     args=[leaf.expr(), spec.materialize(tags)] + [spec.materialize(p) for p in params], keywords=[])
    return spec.snapshot(Dyn(call, aval))


def _size(frames: Sequence[axes.Frame]) -> Any:
    """The product of the axes' sizes: an int, or a run-time value."""
    size: Any = 1
    for frame in frames:
        if isinstance(frame.size, Dyn) or isinstance(size, Dyn):
            size = Dyn(gast.BinOp(left=_expr(size), op=gast.Mult(), right=_expr(frame.size)), _INDEX)
        else:
            size *= frame.size
    return size


def _expr(value: Any) -> gast.expr:
    return value.expr() if isinstance(value, Dyn) else gast.Constant(value=value, kind=None)


def _reduction(kind: str, spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    bound = _bind(spec, node, kind, args, kwargs)
    frames = _frames(spec, node, bound["axis_name"])

    def leaf_of(leaf: Any) -> Any:
        if is_static_scalar(leaf) and not isinstance(leaf, complex):  # the same number in every example
            if kind == "psum":
                size = _size(frames)
                return leaf * size if not isinstance(size, Dyn) else spec.snapshot(
                    Dyn(gast.BinOp(left=spec.materialize(leaf), op=gast.Mult(), right=size.expr()),
                        AVal(np.result_type(type(leaf), np.int64), 0)))
            return leaf / 1 if kind == "pmean" else leaf
        operand = _operand(spec, node, leaf, kind)
        aval = operand.aval
        if kind == "pmean" and aval.dtype.kind not in "fc":
            aval = AVal(np.dtype(np.float64), aval.ndim)
        return _marker(spec, node, kind, operand, frames, (), aval)

    return tree_util.tree_map(leaf_of, bound["x"], is_leaf=lambda v: isinstance(v, Dyn))


lower_psum = functools.partial(_reduction, "psum")
lower_pmean = functools.partial(_reduction, "pmean")
lower_pmax = functools.partial(_reduction, "pmax")
lower_pmin = functools.partial(_reduction, "pmin")


def _axis(spec, node, axis: Any, ndim: int, what: str) -> int:
    """``axis`` among ``ndim`` axes, counted from the front (JAX's ``ValueError`` where there is no such axis)."""
    if type(axis) is not int:
        spec.fail(node, f"{what} must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise NumbaxBatchingError(f"{what} {axis} is out of bounds for an array of {ndim} dimensions",
                                  spec.origin(node))
    return axis % ndim


def _tiled(spec, node, bound: Dict[str, Any], what: str) -> bool:
    """The collective's ``tiled`` argument, refused at the user's line unless a bool."""
    tiled = bound["tiled"]
    if type(tiled) is not bool:
        spec.fail(node, f"numbax.lax.{what}'s tiled must be a bool, got {tiled!r}")
    return tiled


def lower_all_gather(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``all_gather(x, name, axis=, tiled=)``: the stacked examples, the new axis at ``axis``."""
    bound = _bind(spec, node, "all_gather", args, kwargs)
    if bound["to"] != "varying":
        spec.fail(node, f"numbax.lax.all_gather: to={bound['to']!r} is not supported", hint="leave to='varying'.")
    tiled = _tiled(spec, node, bound, "all_gather")
    frames = _frames(spec, node, bound["axis_name"], single="all_gather")

    def leaf_of(leaf: Any) -> Dyn:
        operand = _operand(spec, node, leaf, "all_gather")
        ndim = operand.aval.ndim
        if tiled and ndim == 0:
            raise NumbaxBatchingError("all_gather with tiled=True needs an operand of at least one dimension",
                                      spec.origin(node))
        axis = _axis(spec, node, bound["axis"], ndim if tiled else ndim + 1, "all_gather axis")
        aval = AVal(operand.aval.dtype, ndim if tiled else ndim + 1)
        return _marker(spec, node, "all_gather", operand, frames, (axis, tiled, ndim), aval)

    return tree_util.tree_map(leaf_of, bound["x"], is_leaf=lambda v: isinstance(v, Dyn))


def _perm(spec, node, perm: Any) -> tuple:
    """``perm`` as a tuple of ``(source, destination)`` pairs of non-negative ints, each used once."""
    try:
        pairs = tuple((int(s), int(d)) for s, d in perm)
    except (TypeError, ValueError):
        spec.fail(node, f"ppermute's perm must be a sequence of (source, destination) pairs of ints, got {perm!r}")
    if any(s < 0 or d < 0 for s, d in pairs):
        raise NumbaxBatchingError(f"ppermute's perm has a negative index: {perm!r}", spec.origin(node))
    sources, destinations = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(sources)) != len(sources) or len(set(destinations)) != len(destinations):
        raise NumbaxBatchingError(f"ppermute sources and destinations must be unique, got {pairs}.",
                                  spec.origin(node))
    return pairs


def lower_ppermute(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``ppermute(x, name, perm)``: each destination gets its source's ``x``, the others zeros."""
    bound = _bind(spec, node, "ppermute", args, kwargs)
    frames = _frames(spec, node, bound["axis_name"], single="ppermute")
    pairs = _perm(spec, node, bound["perm"])

    def leaf_of(leaf: Any) -> Dyn:
        operand = _operand(spec, node, leaf, "ppermute")
        if not pairs:
            return spec.call_value(node, np.zeros_like, [operand], {})
        sources, destinations = tuple(s for s, _ in pairs), tuple(d for _, d in pairs)
        return _marker(spec, node, "ppermute", operand, frames, (sources, destinations), operand.aval)

    return tree_util.tree_map(leaf_of, bound["x"], is_leaf=lambda v: isinstance(v, Dyn))


def lower_psum_scatter(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``psum_scatter(x, name, scatter_dimension=, tiled=)``: the sum's block along the scattered axis."""
    bound = _bind(spec, node, "psum_scatter", args, kwargs)
    tiled = _tiled(spec, node, bound, "psum_scatter")
    frames = _frames(spec, node, bound["axis_name"], single="psum_scatter")

    def leaf_of(leaf: Any) -> Dyn:
        operand = _operand(spec, node, leaf, "psum_scatter")
        ndim = operand.aval.ndim
        if ndim == 0:
            raise NumbaxBatchingError("psum_scatter needs an operand of at least one dimension", spec.origin(node))
        dimension = _axis(spec, node, bound["scatter_dimension"], ndim, "psum_scatter scatter_dimension")
        aval = AVal(operand.aval.dtype, ndim if tiled else ndim - 1)
        return _marker(spec, node, "psum_scatter", operand, frames, (dimension, tiled, ndim), aval)

    return tree_util.tree_map(leaf_of, bound["x"], is_leaf=lambda v: isinstance(v, Dyn))


def lower_axis_index(spec, node, args: List[Any], kwargs: Dict[str, Any]) -> Any:
    """``axis_index(name)``: the example's index (in the flattened product of several names' axes), an int32 as
    JAX gives it."""
    from numbax import lax

    axis_name = bind_call(spec, node, lax.axis_index, "numbax.lax.axis_index", args, kwargs)["axis_name"]
    index: Any = 0
    for frame in _frames(spec, node, axis_name, staged=False):
        scaled = index * frame.size if not isinstance(index, Dyn) and not isinstance(frame.size, Dyn) else Dyn(
            gast.BinOp(left=_expr(index), op=gast.Mult(), right=_expr(frame.size)), _INDEX)
        along = frame.index if frame.first_shard is None else Dyn(  # across processes: from this one's first
            gast.BinOp(left=_expr(frame.first_shard), op=gast.Add(), right=_expr(frame.index)), _INDEX)
        if isinstance(scaled, Dyn) or isinstance(along, Dyn):
            index = Dyn(gast.BinOp(left=_expr(scaled), op=gast.Add(), right=_expr(along)), _INDEX)
        else:
            index = scaled + along
    if not isinstance(index, Dyn):
        return np.int32(index)
    return spec.snapshot(spec.call_value(node, np.int32, [spec.snapshot(index)], {}))
