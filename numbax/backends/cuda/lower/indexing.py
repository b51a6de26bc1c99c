"""indexing: basic indexing of device arrays in the host driver: elements read, views, stores.

``x[i, 1:n:2]`` of a device array, its indices integers and slices of host numbers (the run-time checks before
it, ``rt.check_index`` and ``rt.check_span``, read its shape), is computed on the host: a number where every
dimension is indexed by an integer (one element copied from the device), else a view of ``x`` (a device array
that kernels read through its strides). A store ``out[idx] = value`` (how ``x.at[idx].set(v)`` and the other
updates write their copy) writes a number into one element from the host, or launches a kernel writing
``value``, broadcast, into the view ``out[idx]``::

    rt.check_index(x, i, 0, 'f.py:3:8')     rt.check_index(gr.host_shaped(x.shape), i, 0, 'f.py:3:8')
    a = x[i] * 2.0                          _t_1 = x[i]
                                            a = _t_1 * 2.0
    out[2:4] = out_0[2:4] + v               _t_2 = out[2:4]
                                            _t_3 = out_0[2:4]
                                            _kernel_1[gr.grid(_t_2.size)](_t_2, _t_3, v)

``None`` gives a new axis of extent 1 (``gr.expand``, a view); ``...`` stands for full slices. Indices that
are arrays (gathers, masks) are ``gathers``'s. Refused at the user's line: numbers other than integers; more indices
than dimensions; a store into an array that is neither the driver's own nor an argument's on every path (a
constant's, one a loop or branch may bind to either), of a value with
more dimensions than the part it writes. A value that reads the array it writes is copied first, as NumPy
buffers it.
"""
from __future__ import annotations

from typing import Any, List, Set

import gast
import numpy as np

from numbax.backends.cuda.lower import probes
from numbax.backends.cuda.lower.state import LoweringState, name as _name, parse as _parse, text as _text

# the base of a name that views one array on one path of the driver and another (or none) on another
AMBIGUOUS = "?"
# the run-time checks of indexing, whose array they read the shape of only
INDEX_CHECKS = frozenset({"check_index", "check_span"})


class Indexing(LoweringState):
    """Basic indexing in the driver (see the module docstring), each view it makes recorded in ``views``."""

    def launch(self, value: gast.expr, target: str, result: Any, allocate: bool) -> List[gast.stmt]:
        """An elementwise kernel's launch (``launches``)."""
        raise NotImplementedError

    def temp_for(self, node: gast.expr) -> gast.Name:
        """A name holding ``node``'s value (the driver assigns it)."""
        raise NotImplementedError

    def buffered(self, value: gast.expr) -> gast.Name:
        """An array value copied into a new array first (into ``self.pre``): NumPy buffers an operand that
        overlaps the memory it writes; a kernel would read elements other threads wrote."""
        return self.temp_for(gast.Call(func=gast.Attribute(value=_name("np"), attr="copy", ctx=gast.Load()),
                                       args=[value], keywords=[]))

    def is_indexing(self, node: gast.expr) -> bool:
        """Whether ``node`` indexes an array of the driver (``x[...]``)."""
        return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
            probes.is_array(self.env.get(node.value.id))

    def base_of(self, array: str) -> str:
        """The array that ``array`` views (itself if it is no view; ``AMBIGUOUS`` where that depends on the
        path the driver took)."""
        while array in self.views:
            array = self.views[array]
        return array

    def retire(self, name: str) -> None:
        """Before ``name`` is bound anew: the views and aliases of the array it held name that array by a token
        of its own (owned if it was), so that they do not follow ``name`` to its new array."""
        if name not in self.views.values():
            return
        token = self.fresh(f"{name}#")
        self.views.update({k: token for k, v in self.views.items() if v == name})
        if name in self.owned:
            self.owned.add(token)

    def owns(self, array: str) -> bool:
        """Whether ``array`` is (an alias or a view of) an array the driver allocated, on every path."""
        return array in self.owned or self.base_of(array) in self.owned

    def writable(self, array: str) -> bool:
        """Whether a kernel may write ``array``: the driver's own, or (a view of) an argument's array, which the
        call copies back where the argument was a host array (``written``); not a constant's."""
        if self.owns(array):
            return True
        base = self.base_of(array)
        if base not in self.arguments:
            return False
        self.written.setdefault(base, self.origin.position() if self.origin is not None else "")
        return True

    def overlaps(self, array: str, read: Set[str]) -> bool:
        """Whether a kernel writing ``array`` may read its memory through the arrays of ``read`` (their bases:
        ``bases_read``); where a base is ``AMBIGUOUS``, it may."""
        return bool({self.base_of(array), AMBIGUOUS} & read) or self.base_of(array) == AMBIGUOUS and bool(read)

    def is_shape_from_the_end(self, node: gast.expr) -> bool:
        """``x.shape[-k]`` of an array of the driver (the simulator's device arrays count from the front only)."""
        return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute) and \
            node.value.attr == "shape" and isinstance(node.value.value, gast.Name) and \
            probes.is_array(self.env.get(node.value.value.id)) and \
            -self.env[node.value.value.id].ndim <= _constant(node.slice) < 0

    def shape_from_the_front(self, node: gast.Subscript) -> gast.Subscript:
        """``x.shape[-k]`` as ``x.shape[ndim - k]``, ``x``'s rank known."""
        node.slice = gast.Constant(value=_constant(node.slice) + self.env[node.value.value.id].ndim, kind=None)
        return node

    def index_read(self, node: gast.Subscript) -> gast.Name:
        """``x[idx]`` computed on the host into a temporary (into ``self.pre``): a number or a view."""
        indices = self._without_ellipsis(node)
        node = gast.Subscript(value=node.value, ctx=gast.Load(),
                              slice=indices[0] if len(indices) == 1 else gast.Tuple(elts=indices, ctx=gast.Load()))
        if any(_is_none(i) for i in indices):
            return self.expanded(node, indices)
        array = node.value.id
        if array in self.folded:
            raise self.refuse(f"indexing `{_text(node)}`, an array no kernel wrote,")
        stand_in = self.env[array]
        integers = self._integers(node, stand_in.ndim)
        temp = self.fresh("t")
        self.pre.append(gast.Assign(targets=[_name(temp, gast.Store())], value=node, type_comment=None))
        if integers == stand_in.ndim:
            self.env[temp] = stand_in.dtype.type(1)
        else:
            self.env[temp] = np.ones((1,) * (stand_in.ndim - integers), stand_in.dtype)
            self.views[temp] = array
        return _name(temp)

    def _without_ellipsis(self, node: gast.Subscript) -> List[gast.expr]:
        """The indices of ``node``, ``...`` (one at most) written out as the full slices it stands for."""
        indices = list(node.slice.elts) if isinstance(node.slice, gast.Tuple) else [node.slice]
        dots = [k for k, i in enumerate(indices) if isinstance(i, gast.Constant) and i.value is Ellipsis]
        if not dots:
            return indices
        fill = self.env[node.value.id].ndim - sum(not _is_none(i) for i in indices) + len(dots)
        if len(dots) > 1 or fill < 0:
            raise self.refuse(f"indexing `{_text(node)}` with more indices than the array has dimensions")
        full = [gast.Slice(lower=None, upper=None, step=None) for _ in range(fill)]
        return indices[:dots[0]] + full + indices[dots[0] + 1:]

    def expanded(self, node: gast.Subscript, indices: List[gast.expr]) -> gast.Name:
        """``x[:, None]``, ``x[None, 1:]``, ``x[i, None]``: the view of the other indices (``x`` itself where there
        are none), with an axis of extent 1 where each ``None`` stands (``gr.expand``)."""
        kept = [i for i in indices if not _is_none(i)]
        positions, axes = [], 0
        for index in indices:
            if _is_none(index):
                positions.append(axes)
            axes += _is_none(index) or isinstance(index, gast.Slice)
        inner = node.value
        if kept:
            inner = self.index_read(gast.Subscript(value=node.value, ctx=gast.Load(), slice=kept[0] if len(kept) == 1
                                                   else gast.Tuple(elts=kept, ctx=gast.Load())))
        stand_in = self.env[inner.id]
        if not probes.is_array(stand_in):
            raise self.refuse(f"indexing `{_text(node)}`, an element given new axes,")
        temp = self.fresh("t")
        self.pre += _parse(f"{temp} = gr.expand({inner.id}, {tuple(positions)!r})")
        self.env[temp] = np.ones((1,) * (stand_in.ndim + len(positions)), stand_in.dtype)
        self.views[temp] = self.base_of(inner.id)
        return _name(temp)

    def _integers(self, node: gast.Subscript, ndim: int) -> int:
        """The number of dimensions ``node`` indexes by an integer; refuses what is not basic indexing."""
        indices = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if len(indices) > ndim:
            raise self.refuse(f"indexing `{_text(node)}` with more indices than the array has dimensions")
        integers = 0
        for index in indices:
            parts = [p for p in (index.lower, index.upper, index.step) if p is not None] \
                if isinstance(index, gast.Slice) else [index]
            for part in parts:
                value = self.probe(part)
                if np.ndim(value) or np.asarray(value).dtype.kind not in "iu":
                    raise self.refuse(f"indexing `{_text(node)}` by `{_text(part)}` (only integers and slices "
                                      "of integers index a device array)")
                self.check_host(part)
            integers += not isinstance(index, gast.Slice)
        return integers

    def bases_read(self, value: gast.expr, besides: str = "") -> Set[str]:
        """The arrays whose memory the kernel of ``value`` reads (through views too), but for the array
        ``besides`` itself (read at the element a thread writes)."""
        operands = self.operands(value)
        expressions = list(operands.computed.values()) + list(operands.inline.values())
        names = set(operands.arrays) | {n.id for e in expressions for n in gast.walk(e) if isinstance(n, gast.Name)}
        return {self.base_of(n) for n in names - {besides}}

    def index_check(self, call: gast.Call) -> None:
        """``rt.check_index`` / ``rt.check_span`` of a device array: given a host array of its shape (strides 0,
        no memory), as the check reads nothing else."""
        array = call.args[0]
        shape = f"{array.id}.shape" if array.id not in self.folded else self.shape_of(
            self.operands(self.folded[array.id]))
        call.args[0] = gast.parse(f"gr.host_shaped({shape})").body[0].value

    def store(self, stmt: gast.Assign) -> List[gast.stmt]:
        """``out[idx] = value`` into an array the driver may write (``writable``; see the module docstring)."""
        target = stmt.targets[0]
        array = target.value.id
        if not self.writable(array):
            raise self.refuse(f"`{_text(stmt)}`, a store into an array that is neither the driver's own nor an "
                              "argument's on every path,")
        self.pre = []
        value = self.hoist(stmt.value)
        result = self.probe(value)
        if self._integers(target, self.env[array].ndim) == self.env[array].ndim and not probes.is_array(result):
            self.check_host(value)  # one element, written from the host
            return self.pre + [gast.Assign(targets=[target], value=value, type_comment=None)]
        written = self.index_read(target)
        place = self.env[written.id]
        if np.ndim(result) > np.ndim(place):
            raise self.refuse(f"`{_text(stmt)}`, a store of a value of more dimensions than the part it writes,")
        if not probes.is_array(place):  # an array's element from a kernel: a view of one element
            raise self.refuse(f"`{_text(stmt)}`, a store of an array's element into one element,")
        if self.overlaps(array, self.bases_read(value)):
            value = self.buffered(value)
        return self.pre + self.launch(value, written.id, place, allocate=False)


def _is_none(node: gast.expr) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _constant(node: gast.expr) -> int:
    """The integer ``node`` writes (``3``, ``-1``), else 0."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return -_constant(node.operand)
    return node.value if isinstance(node, gast.Constant) and type(node.value) is int else 0


def host_check(call: gast.Call) -> bool:
    """Whether ``call`` is a run-time check of indexing (``INDEX_CHECKS``)."""
    return isinstance(call.func, gast.Attribute) and call.func.attr in INDEX_CHECKS and bool(call.args) and \
        isinstance(call.args[0], gast.Name)

