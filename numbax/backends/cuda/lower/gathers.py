"""gathers: advanced indexing of device arrays in the host driver: gathers, boolean masks and scatters.

``x[idx]``, ``a[rows, cols]``, ``a[1:, idx]`` and ``x[mask]``, where the indices that are arrays (1-d integer
arrays of one length, or one boolean mask of any rank) stand next to each other and the others are slices,
become ``gr.gather``: the slices taken first as a view, a mask turned into its positions (``np.nonzero``), every
index checked against its axis (NumPy's ``IndexError``: the run-time checks of basic indexing pass arrays),
then a generated kernel writes each element of the result, its new axis where the index arrays stood::

    y = x[m] * 2.0                          _t_1 = gr.gather(x, 0, (m,), _gather_1, 'f.py:3:8')
                                            y = ...  (a kernel reading _t_1)

Stores go the other way, through ``gr.scatter`` into the driver's own arrays: ``out[idx] = v`` and
``out[idx] op= v`` (refused at run time where an integer index repeats a position and ``v`` is an array or
the update reads it: NumPy keeps the last write, threads write in no order), and reverse mode's
``rt.index_add(dx, idx, g)`` (``np.add.at``: repeated positions accumulate, by atomic additions, whose order
changes the last bits of a sum only).

Refused at the user's line: index arrays apart from each other (NumPy moves their axis to the front), next to
an integer, of more than one dimension, or with a mask; a store of a value of another dtype than an
accumulation keeps; a complex ``np.add.at``; a store into an array that is neither the driver's own nor an
argument's (``Indexing.writable``). A value that reads the array it writes is copied first (``buffered``).
"""
from __future__ import annotations

import copy
from typing import List, Optional, Tuple

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.indexing import Indexing
from numbax.backends.cuda.lower.kernels import gather_kernel, scatter_kernel
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text

_OPERATORS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/"}


class Gathers(Indexing):
    """Advanced indexing in the driver (see the module docstring)."""

    def hoist(self, node: gast.expr) -> gast.expr:
        """``node`` with its reductions, products and constructors launched first (``launches``)."""
        raise NotImplementedError

    def is_advanced(self, node: gast.expr) -> bool:
        """Whether ``node`` indexes an array of the driver by an array (``x[idx]``, ``x[mask]``)."""
        return self.is_indexing(node) and any(not isinstance(i, gast.Slice) and probes.is_array(self.probe(i))
                                              for i in _indices(node))

    def index_read(self, node: gast.Subscript) -> gast.Name:
        """``x[idx]`` on the host into a temporary: a gather where an index is an array, else basic indexing."""
        if not self.is_advanced(node):
            return super().index_read(node)
        base, first, names, count = self._split(node)
        kernel = self.fresh("gather")
        self.kernels.append((gather_kernel(kernel, self.env[base].ndim, first, count), self.origin))
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.gather({base}, {first}, ({', '.join(names)},), {kernel}, {self._where()!r})")
        self.env[temp] = np.ones((1,) * (self.env[base].ndim - count + 1), self.env[base].dtype)
        self.owned.add(temp)
        return _name(temp)

    def scatter(self, target: gast.Subscript, value: gast.expr, op: Optional[gast.operator],
                accumulate: bool = False) -> List[gast.stmt]:
        """``target = value`` (``op`` None), ``target op= value``, or ``np.add.at`` (``accumulate``), where
        ``target`` indexes by an array an array the driver may write (``writable``)."""
        array = target.value.id
        if not self.writable(array):
            raise self.refuse(f"`{_text(target)}`, a store into an array that is neither the driver's own nor an "
                              "argument's on every path,")
        self.pre = []
        value = self.hoist(value)
        stand_in = self.probe(value)
        values = self.temp_for(value).id if probes.is_array(stand_in) else _text(value)
        if not probes.is_array(stand_in):
            self.check_host(value)
        elif self.overlaps(array, {self.base_of(values)}):
            values = self.buffered(_name(values)).id
        dtype, given = self.env[array].dtype, np.asarray(stand_in).dtype
        if op is not None and np.result_type(dtype, stand_in) != dtype or \
                accumulate and (given != dtype or dtype.kind == "c") or not np.can_cast(given, dtype, "same_kind"):
            raise self.refuse(f"`{_text(target)}`, a store of a {given.name} value into a {dtype.name} array,")
        base, first, names, count = self._split(target)
        mask = len(names) == 1 and self.env[names[0]].dtype == np.bool_
        write = "add" if accumulate else "set" if op is None else _OPERATORS.get(type(op))
        if write is None:
            raise self.refuse(f"`{_text(target)}` updated by `{type(op).__name__}`")
        unique = not (accumulate or mask) and (op is not None or probes.is_array(stand_in))
        kernel = self.fresh("scatter")
        self.kernels.append((scatter_kernel(kernel, self.env[base].ndim, first, count, write, np.ndim(stand_in)),
                             self.origin))
        return self.pre + _parse(f"gr.scatter({base}, {first}, ({', '.join(names)},), {kernel}, {values}, "
                                 f"{self._where()!r}, {unique})")

    def store(self, stmt: gast.Assign) -> List[gast.stmt]:
        """``out[idx] = value``: a scatter where an index is an array, else basic indexing's store."""
        if self.is_advanced(stmt.targets[0]):
            return self.scatter(stmt.targets[0], stmt.value, None)
        return super().store(stmt)

    def index_add(self, call: gast.Call) -> List[gast.stmt]:
        """Reverse mode's ``rt.index_add(dx, idx, g)``: ``np.add.at`` into the driver's ``dx``."""
        if len(call.args) != 3 or call.keywords or not isinstance(call.args[0], gast.Name):
            raise self.refuse(f"`{_text(call)}`")
        target = gast.Subscript(value=call.args[0], slice=_written_slices(call.args[1]), ctx=gast.Load())
        if not self.is_advanced(target):
            raise self.refuse(f"`{_text(call)}`")
        return self.scatter(target, call.args[2], None, accumulate=True)

    def _where(self) -> str:
        return self.origin.position() if self.origin is not None else ""

    def _split(self, node: gast.Subscript) -> Tuple[str, int, List[str], int]:
        """The array an advanced index reads (a view of it where slices narrow it), the axis of its first index
        array, the names of the index arrays (each assigned before), and how many axes they index."""
        indices = _indices(node)
        arrays = [k for k, i in enumerate(indices) if not isinstance(i, gast.Slice) and
                  probes.is_array(self.probe(i))]
        if arrays != list(range(arrays[0], arrays[-1] + 1)):
            raise self.refuse(f"indexing `{_text(node)}` by index arrays apart from each other")
        others = [i for i in indices if isinstance(i, gast.Slice) or not probes.is_array(self.probe(i))]
        if not all(isinstance(i, gast.Slice) for i in others):
            raise self.refuse(f"indexing `{_text(node)}` by index arrays next to an integer, `None` or `...`")
        stand_ins = [self.probe(indices[k]) for k in arrays]
        if len(arrays) == 1 and stand_ins[0].dtype == np.bool_:
            count = stand_ins[0].ndim
        elif all(s.ndim == 1 and s.dtype.kind in "iu" for s in stand_ins):
            count = len(arrays)
        else:
            raise self.refuse(f"indexing `{_text(node)}` by other than 1-d integer arrays or one boolean mask")
        ndim = self.env[node.value.id].ndim
        if len(indices) - len(arrays) + count > ndim:
            raise self.refuse(f"indexing `{_text(node)}` with more indices than the array has dimensions")
        names = [self.temp_for(indices[k]).id for k in arrays]
        base = node.value.id
        if any(i.lower is not None or i.upper is not None or i.step is not None for i in others):
            full = [copy.deepcopy(i) for i in indices[:arrays[0]]] + \
                [gast.Slice(lower=None, upper=None, step=None) for _ in range(count)] + \
                [copy.deepcopy(i) for i in indices[arrays[-1] + 1:]]
            view = gast.Subscript(value=_name(base), slice=gast.Tuple(elts=full, ctx=gast.Load()), ctx=gast.Load())
            base = super().index_read(view).id
        return base, arrays[0], names, count


def _written_slices(index: gast.expr) -> gast.expr:
    """An index as a value (reverse mode's ``(slice(1, None, None), idx)``) as a subscript writes it
    (``1:, idx``): each call of the builtin ``slice`` a ``gast.Slice``."""
    def written(node: gast.expr) -> gast.expr:
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "slice" and \
                not node.keywords and 1 <= len(node.args) <= 3:
            bounds = [None if isinstance(a, gast.Constant) and a.value is None else a for a in node.args]
            bounds = [None] + bounds if len(bounds) == 1 else bounds  # slice(stop)
            return gast.Slice(*(bounds + [None] * (3 - len(bounds))))
        return node
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[written(e) for e in index.elts], ctx=gast.Load())
    return written(index)


def _indices(node: gast.Subscript) -> List[gast.expr]:
    return list(node.slice.elts) if isinstance(node.slice, gast.Tuple) else [node.slice]
