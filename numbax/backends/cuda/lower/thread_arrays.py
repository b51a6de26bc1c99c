"""thread_arrays: one example's small arrays (``threads``), each in its thread's local memory.

An example's body may build arrays whose shapes are written as numbers: ``np.zeros(3)``, ``np.ones((2, 2))``,
``np.full(3, x)`` (literal sizes, or sizes the specializer folded from static arguments), and what elementwise
arithmetic, ``zeros_like`` and the like make of them. Each such array gets ``cuda.local.array(shape, dtype)``
at the start of the thread's example and keeps it (one shape and dtype per name, on every path); each
statement on it becomes a loop over its elements::

    y = np.zeros(3)                   y = cuda.local.array((3,), np.float64)      # once per example
    ...                               for _j_1 in range(3):
    y = y + 0.01 * np.sin(y)              y[_j_1] = y[_j_1] + 0.01 * math.sin(y[_j_1])
    s = np.sum(y ** 2)                _r_1 = np.float64(0)
                                      for _j_1 in range(3):
                                          _r_1 = _r_1 + y[_j_1] ** 2
                                      s = _r_1

Local memory, not slices of one preallocated device buffer: the sizes are known when the kernel compiles,
so the driver allocates nothing, no index mixes the example's with the element's, and small arrays that the
compiler can unroll live in registers; what spills goes to local memory, which the hardware interleaves
across a warp's threads, so it coalesces as a buffer with the example's index last would.

Values, not references: an array assigned from another is a copy, which NumPy's aliasing agrees with unless
an element of either is written afterwards, so an element written into either after the copy is
refused. Each element loop reads its operands at its own element only: what reads elsewhere (a reduction, a
dot product, ``y[0]``) is computed into a number before the loop, so ``y = y / np.sum(y)`` reads the old
``y``. Operands of one shape only (a number broadcasts); reductions (``sum``, ``mean``, ``max``, ``min``,
``norm``) over all elements; ``@`` of two vectors; elements read and written with integer indices.

Refused, at the user's line: an array whose size is not written as numbers (``np.zeros(n)``: the kernel would
have no size to compile), a row of a mapped argument (``x[i]`` of a 2-d ``x``: its size is known only when
called), slices and views, broadcasting between shapes, reductions over an axis, matrix products, run-time
checks of indices (a literal index out of bounds is refused here), and an array a loop or branch gives
another shape or dtype.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.tree_copy import copy_tree
from numbax.backends.cuda.lower import probes, thread_lists
from numbax.backends.cuda.lower.state import LoweringState, name as _name, parse as _parse, text as _text
from numbax.primitives.cuda import MATMUL, Cast, Elementwise, Reduction
from numbax.primitives.registry import entry
from numbax.runtime.grad import copy_of

# an allocation, of a shape written as numbers: its fill (``np.full``'s, its second argument)
_FILLS = {"np.zeros": 0, "np.ones": 1, "np.empty": None, "np.full": 1}
_LIKE = {"np.zeros_like": 0, "np.ones_like": 1, "rt.zeros_like": 0, "rt.ones_like": 1}
# reverse mode's helpers on arrays per example: ``rt.copy_of(a)`` a copy; ``rt.unbroadcast(g, x)`` ``g`` itself
# where the shapes agree (NumPy's returns ``g``: the same memory) and ``np.sum(g)`` for a number ``x``;
# ``rt.unreduce(g, a, None, False)`` the number ``g`` at every element of ``a``; ``rt.scalar_output(v)``
# the number ``v``; ``rt.ones_like(v)``, ``rt.zeros_like(v)`` of a float number, one or zero of its dtype
_ADJOINTS = frozenset({"rt.copy_of", "rt.unbroadcast", "rt.unreduce", "rt.scalar_output"})
_STATIC_CHECKS = {"rt.check_broadcast", "rt.check_index"}  # of shapes known here: true, or refused
_PASSES = 3  # a loop's body walked until its numbers' dtypes settle (an int becoming a float, once)
_COMBINE = {"sum": "{0} + {1}", "max": "gr.maximum({0}, {1})", "min": "gr.minimum({0}, {1})"}


class _Runtime(probes._HOST_RUNTIME):  # noqa: SLF001 - the driver's helpers, and one more
    """The helpers reverse mode calls in one example's body, for the stand-ins (``probes``): the driver's, and
    the copy it makes of an array before writing into it."""

    copy_of = staticmethod(copy_of)


def _type(dtype: np.dtype) -> str:
    return f"np.{np.dtype(dtype).type.__name__}"


def _lowering(node: gast.expr) -> Any:
    app = application(node)
    return getattr(entry(app.key), "cuda", None) if app is not None else None


def read_after(body: List[gast.stmt], stmt: gast.stmt) -> Set[str]:
    """The names that may be read after ``stmt`` runs in ``body``: in the statements that follow it, and
    anywhere in the loops around it (their next iterations). The array written at an element, ``y`` of
    ``y[k] = v``, is not read there."""
    after: Set[str] = set()
    found = _reads_after(body, stmt, after)
    assert found, "read_after of a statement outside the body"
    return after


def _reads_after(stmts: List[gast.stmt], stmt: gast.stmt, after: Set[str]) -> bool:
    """Add to ``after`` what ``stmts`` read after ``stmt`` (see ``read_after``); whether ``stmt`` is there."""
    for k, current in enumerate(stmts):
        inner = [getattr(current, field) for field in ("body", "orelse") if isinstance(getattr(current, field, None),
                                                                                      list)]
        if current is stmt or any(_reads_after(block, stmt, after) for block in inner):
            after |= _reads(stmts[k + 1:])
            if isinstance(current, (gast.For, gast.While)) and current is not stmt:
                after |= _reads([current])
            return True
    return False


def _reads(stmts: List[gast.stmt]) -> Set[str]:
    nodes = list(gast.walk(gast.Module(body=stmts, type_ignores=[])))
    written = {id(n.value) for n in nodes if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)}
    return {n.id for n in nodes if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in written}


def _joined(a: Dict[str, FrozenSet[str]], b: Dict[str, FrozenSet[str]]) -> Dict[str, FrozenSet[str]]:
    """What may share memory where two paths join: what does on either."""
    return {name: a.get(name, frozenset()) | b.get(name, frozenset()) for name in set(a) | set(b)}


def combined(stmt: gast.AugAssign) -> gast.BinOp:
    """``x op y`` of ``x op= y`` (``x`` read)."""
    target = copy_tree(stmt.target)
    target.ctx = gast.Load()
    return gast.BinOp(left=target, op=stmt.op, right=copy_tree(stmt.value))


def _is_call(node: gast.AST, names) -> bool:
    return isinstance(node, gast.Call) and _text(node.func) in names


class LocalArrays:
    """The local arrays of one example's body (name -> shape and dtype), found by walking it in order on
    stand-ins of their true shapes (``probes``), each array-valued expression checked to be one whose shape
    the kernel can spell; and their statements as element loops (see the module docstring)."""

    def __init__(self, state: LoweringState, body: List[gast.stmt], index: str, opaque: Set[str]):
        self.state = state
        self.opaque = set(opaque)  # names the walk cannot stand in for (keys, tapes): no array reads them
        self.fixed = frozenset(opaque)  # keys and tapes: their statements are ``keys``'s and ``tapes``'s
        self.env: Dict[str, Any] = {**state.env, index: 0, "rt": _Runtime}
        self.arrays: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = {}
        # array name -> the names that NumPy would have share its memory here (``z = y``; a new array ends it)
        self.sharing: Dict[str, FrozenSet[str]] = {}
        self.dims: List[str] = []
        self.body = body
        self.made = thread_lists.made(body)
        # reverse mode's lists (``thread_lists``): each one's element (shape and dtype), counter and length
        self.lists: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = dict.fromkeys(self.made, ((), np.dtype(float)))
        self.tops = {name: state.fresh("top") for name in self.made}
        self.seen: Set[str] = set()  # the lists appended to so far
        self._walk(body)
        local = {n.id for n in gast.walk(gast.Module(body=body, type_ignores=[]))
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.lengths = {name: thread_lists.capacity(state, body, name, local) for name in self.made}

    # the walk: shapes and dtypes, and what is refused

    def _walk(self, stmts: List[gast.stmt]) -> None:
        for stmt in stmts:
            saved = self.state.origin
            self.state.origin = anno.getanno(stmt, anno.Key.ORIGIN) or saved
            self._statement(stmt)
            self.state.origin = saved

    def _statement(self, stmt: gast.stmt) -> None:
        if any(stmt is made for made in self.made.values()) or self._listed(stmt):
            return
        original = stmt  # the body's own (``read_after`` finds it there)
        in_place = isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name) and \
            stmt.target.id in self.arrays
        if in_place:  # ``y += t`` writes into the memory of ``y``, as NumPy does
            self._unshared(original, stmt.target.id)
        if isinstance(stmt, gast.AugAssign):
            stmt = gast.Assign(targets=[stmt.target], value=combined(stmt), type_comment=None)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            self._assign(stmt.targets[0].id, stmt.value)
        elif isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and \
                isinstance(stmt.targets[0], gast.Subscript) and self.is_element(stmt.targets[0]):
            self._unshared(original, stmt.targets[0].value.id)
            if self._probe(stmt.value, must=True) is not None and probes.is_array(self._probe(stmt.value)):
                raise self.state.refuse(f"`{_text(stmt)}`, an array written into part of an array,")
        elif isinstance(stmt, gast.Assign):
            if probes.is_array(self._probe(stmt.value)):
                raise self.state.refuse(f"`{_text(stmt)}`, an array per example stored,")
            for node in gast.walk(gast.Module(body=[stmt], type_ignores=[])):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self._forget(node.id)
        elif isinstance(stmt, gast.If):
            self._probe(stmt.test)
            before, sharing = dict(self.env), dict(self.sharing)
            self._walk(stmt.body)
            (after_body, self.env), (shared_in_body, self.sharing) = (self.env, before), (self.sharing, sharing)
            self._walk(stmt.orelse)
            self.env = {**after_body, **self.env}
            self.sharing = _joined(shared_in_body, self.sharing)
        elif isinstance(stmt, (gast.For, gast.While)):
            self._loop(stmt)
        elif isinstance(stmt, gast.Expr) and not _is_call(stmt.value, _STATIC_CHECKS):  # see ``lower``
            self._probe(stmt.value)

    def _listed(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` appends to a list or pops from one (``thread_lists``), each element of one shape."""
        pushed, pulled = thread_lists.appended(stmt, self.lists), thread_lists.popped(stmt, self.lists)
        if pushed:
            value = self._probe(pushed[1], must=True)
            element = (np.shape(value), np.asarray(value).dtype)
            if pushed[0] in self.seen and self.lists[pushed[0]] != element:
                raise self.state.refuse(f"`{_text(stmt)}`, elements of another shape or dtype on one list,")
            self.lists[pushed[0]] = element
            self.seen.add(pushed[0])
        elif pulled:
            shape, dtype = self.lists[pulled[1]]
            if pulled[1] not in self.seen:
                raise self.state.refuse(f"`{_text(stmt)}`, a list popped before it is appended to,")
            if pulled[0] in self.fixed:
                raise self.state.refuse(f"`{_text(stmt)}`, a key or tape popped from a list,")
            self._bind(pulled[0], np.ones(shape, dtype) if shape else dtype.type(1), None)
        return bool(pushed or pulled)

    def _loop(self, stmt) -> None:
        for walked in range(_PASSES):
            before = {k: probes.signature(v) for k, v in self.env.items()}
            start = self.sharing
            if isinstance(stmt, gast.For):
                for arg in stmt.iter.args:
                    self._probe(arg)
                if isinstance(stmt.target, gast.Name):
                    self.env[stmt.target.id] = 1
            else:
                self._probe(stmt.test)
            self._walk(stmt.body)
            self.sharing = _joined(start, self.sharing)  # at the loop's head: on entry, or after an iteration
            if walked and {k: probes.signature(v) for k, v in self.env.items()} == before:
                return  # walked twice at least: what the body writes after a copy it makes

    def _alias_of(self, value: gast.expr) -> Optional[str]:
        """The array whose memory ``value`` is, in NumPy: ``y`` of ``y``, or of ``rt.unbroadcast(y, x)`` where
        the shapes agree."""
        if _is_call(value, {"rt.unbroadcast"}) and len(value.args) == 2 and \
                np.shape(probes.evaluate(value.args[0], self.env)) == np.shape(probes.evaluate(value.args[1], self.env)):
            value = value.args[0]
        return value.id if isinstance(value, gast.Name) and value.id in self.arrays else None

    def _unshared(self, stmt: gast.stmt, name: str) -> None:
        """Refuse ``stmt``, a write into the memory of ``name``, where NumPy would share it with another name
        that is read afterwards (reverse mode keeps a reference it only writes into, to undo writes)."""
        shared = sorted((self.sharing.get(name, frozenset()) - {name}) & read_after(self.body, stmt))
        if shared:
            raise self.state.refuse(f"`{_text(stmt)}`, a write into an array per example that NumPy would share "
                                    f"with `{shared[0]}` (a thread's arrays are values: copied on assignment),")

    def _unshare(self, name: str) -> None:
        """``name`` given memory of its own."""
        for other in self.sharing.pop(name, frozenset()) - {name}:
            self.sharing[other] = self.sharing[other] - {name}

    def _forget(self, name: str) -> None:
        self._unshare(name)
        self.env.pop(name, None)
        self.opaque.add(name)
        if name in self.arrays:
            raise self.state.refuse(f"`{name}`, an array per example assigned otherwise than by an expression of "
                                    "arrays,")

    def _probe(self, node: gast.expr, must: bool = False, whole: bool = False) -> Any:
        """``node``'s stand-in, checked where it reads a local array (None where it reads what the walk
        cannot stand in for, which must then read no array)."""
        names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        for name in sorted(names & set(self.lists)):
            raise self.state.refuse(f"the list `{name}` otherwise than appended to and popped from")
        reads_arrays = self._reads_arrays(node)
        if names & self.opaque:
            if reads_arrays:
                raise self.state.refuse(f"`{_text(node)}`, arrays per example with keys or tapes,")
            return None
        try:
            value = probes.evaluate(node, self.env)
        except Exception:  # noqa: BLE001 - refused below where it matters, by the lowering otherwise
            helper = any(isinstance(n, gast.Call) and _text(n.func).startswith("rt.") for n in gast.walk(node))
            if reads_arrays or must:
                raise self.state.refuse(f"`{_text(node)}`" + (", a transformation's runtime helper," if helper else
                                                              "") + " on an array per example") from None
            return None
        if reads_arrays or probes.is_array(value):
            self._check(node, whole)
        return value

    def _reads_arrays(self, node: gast.expr) -> bool:
        """Whether ``node`` reads a local array or allocates one."""
        return any(isinstance(n, gast.Name) and n.id in self.arrays or _is_call(n, _FILLS) for n in gast.walk(node))

    def _assign(self, target: str, value: gast.expr) -> None:
        if target in self.fixed:
            return
        result = self._probe(value, whole=True)
        if result is None:
            self._forget(target)
            return
        self._bind(target, result, self._alias_of(value) if probes.is_array(result) else None)

    def _bind(self, target: str, result: Any, source: Optional[str]) -> None:
        """``target`` given the stand-in ``result``, the memory of the array ``source`` where not None."""
        if probes.is_array(result):
            known = self.arrays.setdefault(target, (result.shape, result.dtype))
            if known != (result.shape, result.dtype):
                raise self.state.refuse(f"`{target}`, an array per example given the shape {result.shape} and "
                                        f"dtype {result.dtype} here and {known[0]}, {known[1]} elsewhere,")
            self._unshare(target)
            if source is not None:
                group = self.sharing.get(source, frozenset({source})) | {target}
                self.sharing.update(dict.fromkeys(group, group))
            result = np.ones(result.shape, result.dtype)
        elif target in self.arrays:
            raise self.state.refuse(f"`{target}`, an array per example given a number,")
        self.env[target] = result

    def _check(self, node: gast.expr, whole: bool = False) -> None:
        """Refuse an expression holding an array whose shape the kernel cannot spell, or that no element
        loop computes (``np.empty`` only as the ``whole`` value assigned)."""
        value = probes.evaluate(node, self.env)
        if not probes.is_array(value):
            self._check_number(node)
        elif isinstance(node, gast.Name):
            if node.id not in self.arrays:
                raise self.state.refuse(f"the array `{node.id}`, the same for every example (an argument not "
                                        "mapped, or computed once on the host), read whole in one example's body")
        elif _is_call(node, _FILLS):
            self._check_allocation(node, whole)
        elif _is_call(node, _LIKE) and len(node.args) == 1 and not node.keywords:
            self._check(node.args[0])
        elif _is_call(node, _ADJOINTS):
            self._check_adjoint(node, value)
        elif isinstance(node, gast.Subscript):
            base = node.value
            if isinstance(base, gast.Name) and base.id in self.state.env and probes.is_array(self.state.env[base.id]):
                raise self.state.refuse(
                    f"an array per example (`{_text(node)}` of the {self.state.env[base.id].ndim}-d `{base.id}`, "
                    "whose size is known only when called, not when the kernel compiles: map the state's "
                    "components as separate 1-d arguments, or build it with `np.zeros(3)`),")
            raise self.state.refuse(f"`{_text(node)}`, a part of an array per example,")
        elif isinstance(_lowering(node), (Elementwise, Cast)) or isinstance(node, gast.Compare) and \
                len(node.ops) == 1:
            operands = [node.left, *node.comparators] if isinstance(node, gast.Compare) else application(node).args
            for operand in operands:
                shape = np.shape(probes.evaluate(operand, self.env))
                if shape and shape != value.shape:
                    raise self.state.refuse(f"`{_text(node)}`, broadcasting an array of shape {shape} to "
                                            f"{value.shape} in one example's body,")
                self._check(operand)
        else:
            raise self.state.refuse(f"`{_text(node)}`, an array per example that no element loop computes,")

    def _check_adjoint(self, node: gast.Call, value: np.ndarray) -> None:
        """An array that one of reverse mode's helpers makes (``_ADJOINTS``)."""
        name, args = _text(node.func), node.args
        shapes = [np.shape(probes.evaluate(a, self.env)) for a in args[:2]]
        if name == "rt.copy_of" and len(args) == 1 or name == "rt.unbroadcast" and len(args) == 2 and \
                shapes[0] == shapes[1]:
            self._check(args[0])
        elif name == "rt.unreduce" and len(args) == 4 and not shapes[0] and \
                all(isinstance(a, gast.Constant) and a.value in (None, False) for a in args[2:]):
            self._check(args[0])
            self._check(args[1])
        else:
            raise self.state.refuse(f"`{_text(node)}` of arrays per example of shapes {shapes}")

    def _check_allocation(self, node: gast.Call, whole: bool) -> None:
        shape = node.args[0] if node.args else None
        extents = shape.elts if isinstance(shape, gast.Tuple) else [shape]
        full = _text(node.func) == "np.full"
        if len(node.args) != 1 + full or {k.arg for k in node.keywords} - {"dtype"} or \
                not all(isinstance(e, gast.Constant) and type(e.value) is int for e in extents):
            raise self.state.refuse(f"`{_text(node)}`, an array per example whose shape is not written as numbers "
                                    "(a thread's local array needs its size when the kernel compiles),")
        if _FILLS[_text(node.func)] is None and not whole:
            raise self.state.refuse(f"`{_text(node)}` in an expression")
        if full and probes.is_array(self._probe(node.args[1], must=True)):
            raise self.state.refuse(f"`{_text(node)}`, filled with an array,")

    def _check_number(self, node: gast.expr) -> None:
        lowering = _lowering(node)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id in self.arrays:
            self._indices(node)
            return
        if isinstance(lowering, Reduction) or lowering is MATMUL:
            self._check_reduction(node, lowering)
            return
        if _is_call(node, {"rt.unbroadcast"}) and len(node.args) == 2:  # a number's cotangent: ``np.sum(g)``
            self._check(node.args[0])
            self._check(node.args[1])
            return
        for child in gast.iter_child_nodes(node):
            if isinstance(child, gast.expr):
                self._check(child)

    def _check_reduction(self, node: gast.expr, lowering: Any) -> None:
        app = application(node)
        keywords = {k: v for k, v in app.keywords.items()
                    if not (isinstance(v, gast.Constant) and v.value in ((None, False) if k != "axis" else (None,))
                            and k in ("axis", "keepdims"))}
        arity = 2 if lowering is MATMUL else 1
        if keywords or len(app.args) != arity:
            raise self.state.refuse(f"`{_text(node)}` of an array per example otherwise than over all its "
                                    "elements,")
        shapes = [np.shape(probes.evaluate(a, self.env)) for a in app.args]
        if lowering is MATMUL and not (len(shapes[0]) == 1 and shapes[0] == shapes[1]):
            raise self.state.refuse(f"`{_text(node)}`, a matrix product of arrays per example of shapes "
                                    f"{shapes[0]} and {shapes[1]},")
        if lowering is not MATMUL and lowering.op != "sum" and 0 in shapes[0]:
            raise self.state.refuse(f"`{_text(node)}` of an empty array")
        for arg in app.args:
            self._check(arg)

    def _indices(self, node: gast.Subscript) -> List[gast.expr]:
        """The indices of an element of a local array, each an integer, a literal one within bounds."""
        shape = self.arrays[node.value.id][0]
        indices = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        if len(indices) != len(shape):
            raise self.state.refuse(f"`{_text(node)}`, a part of an array per example,")
        for index, extent in zip(indices, shape):
            value = None if isinstance(index, gast.Slice) else self._probe(index)
            if value is None or np.asarray(value).dtype.kind not in "iu":
                raise self.state.refuse(f"`{_text(node)}`, indexing an array per example by other than integers,")
            if isinstance(index, gast.Constant) and not -extent <= index.value < extent:
                raise self.state.refuse(f"`{_text(node)}`, an index out of bounds for the shape {shape},")
        return indices

    # what the lowering asks

    def is_element(self, node: gast.expr) -> bool:
        """Whether ``node`` is an element of a local array, ``y[k]``."""
        return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and \
            node.value.id in self.arrays

    def declarations(self, names: Dict[str, str]) -> List[gast.stmt]:
        """Each local array's ``cuda.local.array``, at the start of an example (``names``: kernel names)."""
        return [s for name, (shape, dtype) in sorted(self.arrays.items())
                for s in _parse(f"{names[name]} = cuda.local.array({shape!r}, {_type(dtype)})")]

    def owns(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` assigns a local array, checks the broadcasting of one, or makes, appends to or pops
        from a list (``thread_lists``)."""
        if any(stmt is made for made in self.made.values()) or thread_lists.appended(stmt, self.lists) or \
                thread_lists.popped(stmt, self.lists):
            return True
        target = stmt.targets[0] if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, gast.AugAssign) else None
        if isinstance(target, gast.Name):
            return target.id in self.arrays
        if target is not None:
            return self.is_element(target)
        return isinstance(stmt, gast.Expr) and _is_call(stmt.value, _STATIC_CHECKS) and \
            any(isinstance(a, gast.Name) and a.id in self.arrays for a in stmt.value.args)

    def lower(self, stmt: gast.stmt, translate) -> List[gast.stmt]:
        """A statement ``owns`` claims, as the kernel's (after the numbers it hoists)."""
        listed = self._list_statement(stmt, translate)
        if listed is not None:
            return listed
        if _is_call(stmt.value, {"rt.check_index"}):
            self._index_holds(stmt.value)
            return []
        if isinstance(stmt, gast.Expr):
            self._broadcasts(stmt.value)
            return []
        target, value = (stmt.target, combined(stmt)) if isinstance(stmt, gast.AugAssign) else \
            (stmt.targets[0], copy_tree(stmt.value))
        if isinstance(target, gast.Subscript):
            return [gast.Assign(targets=[translate.target(target)], value=translate.expr(value), type_comment=None)]
        shape, _ = self.arrays[target.id]
        if _is_call(value, _FILLS) and _FILLS[_text(value.func)] is None:
            return []  # ``np.empty``: the local array as it is
        value = self.hoist(value, translate, elementwise=True)
        dims = self._dims(len(shape))
        element = translate.element_at(value, ", ".join(dims))
        nest = _parse(f"{translate.operands.names[target.id]}[{', '.join(dims)}] = {element}")
        for dim, extent in reversed(list(zip(dims, shape))):
            loop = gast.parse(f"for {dim} in range({extent}):\n    pass").body[0]
            loop.body = nest
            nest = [loop]
        return nest

    def _list_statement(self, stmt: gast.stmt, translate) -> Optional[List[gast.stmt]]:
        """``t = []``, ``t.append(v)``, ``v = t.pop()`` in the kernel (``thread_lists``); None for others."""
        made = next((name for name, made in self.made.items() if made is stmt), None)
        if made is not None:
            return _parse(f"{self.tops[made]} = 0")
        pushed, pulled = thread_lists.appended(stmt, self.lists), thread_lists.popped(stmt, self.lists)
        if pushed is None and pulled is None:
            return None
        name = pushed[0] if pushed else pulled[1]
        shape = self.lists[name][0]
        dims, tape = self._dims(len(shape)), translate.operands.names[name]
        if pushed:
            value = self.hoist(copy_tree(pushed[1]), translate, elementwise=True)
            text = translate.element_at(value, ", ".join(dims)) if shape else translate.text(value)
            return thread_lists.push(tape, self.tops[name], translate.body.index, dims, shape, text)
        return thread_lists.pull(tape, self.tops[name], translate.body.index, dims, shape,
                                 translate.operands.names[pulled[0]])

    def allocations(self, count: str) -> List[gast.stmt]:
        """The driver's allocation of each list's tape, for ``count`` examples (``thread_lists``)."""
        return [s for name in self.made
                for s in thread_lists.allocation(name, self.lengths[name], self.lists[name], count)]

    def _index_holds(self, call: gast.Call) -> None:
        """``rt.check_index(y, k, axis, where)`` of a literal ``k`` and ``axis``: true, or refused."""
        array, index, axis = call.args[:3]
        if not (isinstance(array, gast.Name) and array.id in self.arrays and isinstance(index, gast.Constant) and
                type(index.value) is int and isinstance(axis, gast.Constant) and type(axis.value) is int):
            raise self.state.refuse(f"`{_text(call)}`, a run-time check of an index, in one example's body")
        shape = self.arrays[array.id][0]
        extent = shape[axis.value]
        if not -extent <= index.value < extent:
            raise self.state.refuse(f"the index {index.value}, out of bounds for the axis {axis.value} of size "
                                    f"{extent} of `{array.id}`,")

    def _broadcasts(self, call: gast.Call) -> None:
        """``rt.check_broadcast(a, b, where)`` of shapes known here: true, or refused."""
        shapes = [np.shape(probes.evaluate(a, self.env)) if not (isinstance(a, gast.Name) and a.id in self.arrays)
                  else self.arrays[a.id][0] for a in call.args[:2]]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise self.state.refuse(f"arrays of shapes {shapes[0]} and {shapes[1]}, which do not broadcast "
                                    "together,") from None

    def _dims(self, ndim: int) -> List[str]:
        while len(self.dims) < ndim:
            self.dims.append(self.state.fresh("j"))
        return self.dims[:ndim]

    def hoist(self, node: gast.expr, translate, elementwise: bool = False) -> gast.expr:
        """``node`` with each reduction and dot product of local arrays (and, in an element loop, each element
        read) computed before it into a number (``translate.pending``); a like-constructor as its fill. What
        reads no local array is left to the lowering of numbers."""
        number = _is_call(node, _ADJOINTS | set(_LIKE)) and not probes.is_array(self._probe(node))
        if number and _is_call(node, {"rt.scalar_output", "rt.copy_of"}):
            return self.hoist(node.args[0], translate, elementwise)
        if number and _is_call(node, _LIKE) and np.asarray(self._probe(node)).dtype.kind == "f":
            return _name(translate.verbatim(f"{_type(np.asarray(self._probe(node)).dtype)}({_LIKE[_text(node.func)]})"))
        if not self._reads_arrays(node):
            return node
        if _is_call(node, {"rt.copy_of", "rt.unreduce"}):  # at each element: the array's, or the number
            return self.hoist(node.args[0], translate, elementwise)
        if _is_call(node, {"rt.unbroadcast"}):
            if number:  # a number's cotangent
                total = gast.parse("np.sum(_)").body[0].value
                total.args = node.args[:1]
                return self.hoist(total, translate, elementwise)
            return self.hoist(node.args[0], translate, elementwise)
        if self.is_element(node):
            if not elementwise:
                return node
            return self._into(translate, node, [], translate.text(node))
        if _is_call(node, {"np.full"}):
            return self.hoist(node.args[1], translate, elementwise)
        if _is_call(node, _LIKE) or _is_call(node, _FILLS):
            dtype = np.asarray(self._probe(node)).dtype
            fill = _LIKE.get(_text(node.func), _FILLS.get(_text(node.func)))
            return _name(translate.verbatim(f"{_type(dtype)}({fill})"))
        lowering = _lowering(node)
        if isinstance(lowering, Reduction) or lowering is MATMUL:
            return self._reduction(node, lowering, translate)
        for field, value in gast.iter_fields(node):
            if isinstance(value, gast.expr):
                setattr(node, field, self.hoist(value, translate, elementwise))
            elif isinstance(value, list):
                setattr(node, field, [self.hoist(v, translate, elementwise) if isinstance(v, gast.expr) else v
                                      for v in value])
        return node

    def _reduction(self, node: gast.expr, lowering: Any, translate) -> gast.Name:
        app = application(node)
        dtype = np.asarray(probes.evaluate(node, self.env)).dtype
        shape = np.shape(probes.evaluate(app.args[0], self.env))
        operands = [self.hoist(a, translate, elementwise=True) for a in app.args]
        dims = self._dims(len(shape))
        at = [translate.element_at(a, ", ".join(dims)) for a in operands]
        acc = self.state.fresh("r")
        if lowering is MATMUL:
            return self._into(translate, node, shape, f"{_type(dtype)}(0)",
                              _COMBINE["sum"].format(acc, f"{at[0]} * {at[1]}"), "", acc)
        first = translate.element_at(operands[0], ", ".join("0" for _ in shape))
        start = f"{_type(dtype)}(0)" if lowering.op == "sum" else first
        term = f"{at[0]} * {at[0]}" if lowering.norm else at[0]
        after = f"math.sqrt({acc})" if lowering.norm else \
            f"{acc} / {int(np.prod(shape))}" if lowering.mean else ""
        return self._into(translate, node, shape, start, _COMBINE[lowering.op].format(acc, term), after, acc)

    def _into(self, translate, node: gast.expr, shape, start: str, combine: Optional[str] = None,
              after: str = "", acc: str = "") -> gast.Name:
        """A number computed before the statement: ``start``, then ``combine`` at every element of ``shape``
        (over the loop indices ``_dims``), then ``after``."""
        acc = acc or self.state.fresh("r")
        lines = [f"{acc} = {start}"]
        dims = self._dims(len(shape))
        if combine is not None:
            lines += ["    " * k + f"for {d} in range({n}):" for k, (d, n) in enumerate(zip(dims, shape))]
            lines.append("    " * len(shape) + f"{acc} = {combine}")
        if after:
            lines.append(f"{acc} = {after}")
        stmts = _parse("\n".join(lines))
        origin = anno.getanno(node, anno.Key.ORIGIN) if anno.hasanno(node, anno.Key.ORIGIN) else None
        for stmt in stmts:
            if origin is not None:
                anno.setanno(stmt, anno.Key.ORIGIN, origin)
        translate.pending += stmts
        return _name(translate.verbatim(acc))

