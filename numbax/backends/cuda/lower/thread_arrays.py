"""thread_arrays: one example's small arrays (``threads``), each in its thread's local memory.

An example's body may build arrays whose shapes are written as numbers: ``np.zeros(3)``, ``np.ones((2, 2))``,
``np.full(3, x)`` (literal sizes, or sizes the specializer folded from static arguments), and what elementwise
arithmetic, ``zeros_like`` and reverse mode's helpers (``ADJOINTS``) make of them. ``LocalArrays`` walks the
body in order on stand-ins of their true shapes (``probes``), each name's shape and dtype the same on every
path, and checks each expression that holds an array; ``thread_loops`` gives each such array
``cuda.local.array(shape, dtype)`` at the start of the thread's example and each statement on it a loop over
its elements::

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
across a warp's threads, so it coalesces as a buffer with the example's index last would. Reverse mode's
lists of arrays, which grow with a loop's trips, are the exception: tapes in device memory
(``thread_lists``).

Values, not references: an array assigned from another is a copy, which agrees with NumPy's shared memory
unless one of them is written into while the other is still read: refused (``thread_sharing``). Operands of
one shape only (a number broadcasts); reductions (``sum``, ``mean``, ``max``, ``min``, ``norm``) over all
elements; ``@`` of two vectors; elements read and written with integer indices.

Refused, at the user's line: an array whose size is not written as numbers (``np.zeros(n)``: the kernel would
have no size to compile), a row of a mapped argument (``x[i]`` of a 2-d ``x``: its size is known only when
called) or an array the same for every example (computed once on the host), slices and views,
broadcasting between shapes, reductions over an axis, matrix products, run-time checks of indices (a literal
index out of bounds is refused here), derivative rules without an element loop (``rt.chooser_weights`` of
``max``), and an array a loop or branch gives another shape or dtype.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.primitives import application
from numbax.ast_passes.tree_copy import copy_tree
from numbax.backends.cuda.lower import keys, probes, thread_lists
from numbax.backends.cuda.lower.thread_sharing import joined, read_after
from numbax.backends.cuda.lower.state import LoweringState, text as _text
from numbax.primitives.cuda import MATMUL, Cast, Elementwise, Reduction
from numbax.primitives.registry import entry
from numbax.runtime.grad import copy_of
from numbax.runtime.overlap import unaliased

# an allocation, of a shape written as numbers: its fill (``np.full``'s, its second argument)
FILLS = {"np.zeros": 0, "np.ones": 1, "np.empty": None, "np.full": 1}
LIKE = {"np.zeros_like": 0, "np.ones_like": 1, "rt.zeros_like": 0, "rt.ones_like": 1}
# reverse mode's helpers on arrays per example: ``rt.copy_of(a)`` a copy, and so ``rt.unaliased(a, x)`` (the
# operand of ``x op= a``, which each element reads at its own index before writing it); ``rt.unbroadcast(g, x)``
# ``g`` itself
# where the shapes agree (NumPy's returns ``g``: the same memory) and ``np.sum(g)`` for a number ``x``;
# ``rt.unreduce(g, a, None, False)`` the number ``g`` at every element of ``a``; ``rt.scalar_output(v)``
# the number ``v``; ``rt.ones_like(v)``, ``rt.zeros_like(v)`` of a float number, one or zero of its dtype
ADJOINTS = frozenset({"rt.copy_of", "rt.unaliased", "rt.unbroadcast", "rt.unreduce", "rt.scalar_output"})
STATIC_CHECKS = {"rt.check_broadcast", "rt.check_where", "rt.check_index"}  # of shapes known here: true, or refused
_PASSES = 3  # a loop's body walked until its numbers' dtypes settle (an int becoming a float, once)


class _Runtime(probes._HOST_RUNTIME):  # noqa: SLF001 - the driver's helpers, and one more
    """The helpers reverse mode calls in one example's body, for the stand-ins (``probes``): the driver's, and
    the copies it makes of an array before writing into it."""

    copy_of = staticmethod(copy_of)
    unaliased = staticmethod(unaliased)


def kernel_type(dtype: np.dtype) -> str:
    """The kernel's name of ``dtype``'s NumPy type, ``np.float64``."""
    return f"np.{np.dtype(dtype).type.__name__}"


def lowering_of(node: gast.expr) -> Any:
    """The GPU lowering of the primitive ``node`` applies, in the registry (``primitives.cuda``); None if none."""
    app = application(node)
    return getattr(entry(app.key), "cuda", None) if app is not None else None


def combined(stmt: gast.AugAssign) -> gast.BinOp:
    """``x op y`` of ``x op= y`` (``x`` read)."""
    target = copy_tree(stmt.target)
    target.ctx = gast.Load()
    return gast.BinOp(left=target, op=stmt.op, right=copy_tree(stmt.value))


def is_call(node: gast.AST, names) -> bool:
    """Whether ``node`` calls one of ``names`` (``"np.zeros"``, ``"rt.copy_of"``)."""
    return isinstance(node, gast.Call) and _text(node.func) in names


class LocalArrays:
    """The local arrays of one example's body (name -> shape and dtype), found by walking it in order on
    stand-ins of their true shapes (``probes``), each array-valued expression checked to be one whose shape
    the kernel can spell and that an element loop computes (``thread_loops``), and reverse mode's lists with
    the shape of their elements and how many there can be (``thread_lists``)."""

    def __init__(self, state: LoweringState, body: List[gast.stmt], index: str, keys: Set[str],
                 tapes: Dict[str, gast.Assign]):
        self.state = state
        self.opaque = set(keys)  # names the walk cannot stand in for (keys): no array reads them
        self.fixed = frozenset(keys) | set(tapes)  # their statements are ``keys``'s and ``tapes``'s
        self.env: Dict[str, Any] = {**state.env, index: 0, "rt": _Runtime}
        for name, allocation in tapes.items():  # reverse mode's tables of numbers: stand-ins of their rows
            try:
                self.env[name] = probes.evaluate(allocation.value, self.env)
            except Exception:  # noqa: BLE001 - a size the stand-ins cannot give: what reads it, no array reads
                self.opaque.add(name)
        self.arrays: Dict[str, Tuple[Tuple[int, ...], np.dtype]] = {}
        # array name -> the names that NumPy would have share its memory here (``z = y``; a new array ends it)
        self.sharing: Dict[str, FrozenSet[str]] = {}
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
            if self.probe(stmt.value, must=True) is not None and probes.is_array(self.probe(stmt.value)):
                raise self.state.refuse(f"`{_text(stmt)}`, an array written into part of an array,")
        elif isinstance(stmt, gast.Assign):
            if probes.is_array(self.probe(stmt.value)):
                raise self.state.refuse(f"`{_text(stmt)}`, an array per example stored,")
            for node in gast.walk(gast.Module(body=[stmt], type_ignores=[])):
                if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                    self._forget(node.id)
        elif isinstance(stmt, gast.If):
            self.probe(stmt.test)
            before, sharing = dict(self.env), dict(self.sharing)
            self._walk(stmt.body)
            (after_body, self.env), (shared_in_body, self.sharing) = (self.env, before), (self.sharing, sharing)
            self._walk(stmt.orelse)
            for name in sorted(set(after_body) & set(self.env)):
                if probes.is_array(after_body[name]) != probes.is_array(self.env[name]):
                    raise self.state.refuse(f"`{name}`, an array per example on one branch and a number on the "
                                            "other,")
            self.env = {**after_body, **self.env}
            self.sharing = joined(shared_in_body, self.sharing)
        elif isinstance(stmt, (gast.For, gast.While)):
            self._loop(stmt)
        elif isinstance(stmt, gast.Expr) and not is_call(stmt.value, STATIC_CHECKS):  # see ``lower``
            self.probe(stmt.value)

    def _listed(self, stmt: gast.stmt) -> bool:
        """Whether ``stmt`` appends to a list or pops from one (``thread_lists``), each element of one shape."""
        pushed, pulled = thread_lists.appended(stmt, self.lists), thread_lists.popped(stmt, self.lists)
        if pushed:
            value = self.probe(pushed[1], must=True)
            element = (np.shape(value), np.asarray(value).dtype)
            if pushed[0] in self.seen and self.lists[pushed[0]] != element:
                raise self.state.refuse(f"`{_text(stmt)}`, elements of another shape or dtype on one list,")
            self.lists[pushed[0]] = element
            self.seen.add(pushed[0])
            if isinstance(pushed[1], gast.Name) and pushed[1].id in self.arrays:  # NumPy's list holds its memory
                group = self.sharing.get(pushed[1].id, frozenset({pushed[1].id})) | {pushed[0]}
                self.sharing.update(dict.fromkeys(group, group))
        elif pulled:
            shape, dtype = self.lists[pulled[1]]
            if pulled[1] not in self.seen:
                raise self.state.refuse(f"`{_text(stmt)}`, a list popped before it is appended to,")
            if pulled[0] in self.fixed:
                raise self.state.refuse(f"`{_text(stmt)}`, a key or tape popped from a list,")
            self._bind(pulled[0], np.ones(shape, dtype) if shape else dtype.type(1), pulled[1] if shape else None)
        return bool(pushed or pulled)

    def _loop(self, stmt) -> None:
        for walked in range(_PASSES):
            before = {k: probes.signature(v) for k, v in self.env.items()}
            start = self.sharing
            if isinstance(stmt, gast.For):
                for arg in stmt.iter.args:
                    self.probe(arg)
                if isinstance(stmt.target, gast.Name):
                    self.env[stmt.target.id] = 1
            else:
                self.probe(stmt.test)
            self._walk(stmt.body)
            self.sharing = joined(start, self.sharing)  # at the loop's head: on entry, or after an iteration
            if walked and {k: probes.signature(v) for k, v in self.env.items()} == before:
                return  # walked twice at least: what the body writes after a copy it makes

    def _alias_of(self, value: gast.expr) -> Optional[str]:
        """The array whose memory ``value`` is, in NumPy: ``y`` of ``y``, or of ``rt.unbroadcast(y, x)`` and
        ``rt.unaliased(y, x)`` where the shapes agree."""
        if is_call(value, {"rt.unbroadcast", "rt.unaliased"}) and len(value.args) == 2:
            shapes = [np.shape(probes.evaluate(a, self.env)) for a in value.args]
            value = value.args[0] if shapes[0] == shapes[1] else value
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

    def probe(self, node: gast.expr, must: bool = False, whole: bool = False) -> Any:
        """``node``'s stand-in, checked where it reads a local array (None where it reads what the walk
        cannot stand in for, which must then read no array)."""
        names = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        for name in sorted(names & set(self.lists)):
            raise self.state.refuse(f"the list `{name}` otherwise than appended to and popped from")
        reads_arrays = self.reads_arrays(node)
        drawn = keys.sample(node, self.env)
        if drawn is not None:  # a number drawn from a key: its dtype's stand-in
            return drawn
        if names & self.opaque:
            if reads_arrays:
                raise self.state.refuse(f"`{_text(node)}`, arrays per example with keys,")
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

    def reads_arrays(self, node: gast.expr) -> bool:
        """Whether ``node`` reads a local array or allocates one."""
        return any(isinstance(n, gast.Name) and n.id in self.arrays or is_call(n, FILLS) for n in gast.walk(node))

    def _assign(self, target: str, value: gast.expr) -> None:
        if target in self.fixed:
            return
        if target in self.lists:
            raise self.state.refuse(f"the list `{target}` assigned again")
        result = self.probe(value, whole=True)
        if result is None:
            self._forget(target)
            return
        self._bind(target, result, self._alias_of(value) if probes.is_array(result) else None)

    def _bind(self, target: str, result: Any, source: Optional[str]) -> None:
        """``target`` given the stand-in ``result``, the memory of the array ``source`` where not None."""
        if probes.is_array(result):
            if target in self.env and not probes.is_array(self.env[target]) and target not in self.arrays:
                raise self.state.refuse(f"`{target}`, a number elsewhere, given an array per example,")
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
        elif is_call(node, FILLS):
            self._check_allocation(node, whole)
        elif is_call(node, LIKE) and len(node.args) == 1 and not node.keywords:
            self._check(node.args[0])
        elif is_call(node, ADJOINTS):
            self._check_adjoint(node, value)
        elif isinstance(node, gast.Subscript):
            base = node.value
            if isinstance(base, gast.Name) and base.id in self.state.env and probes.is_array(self.state.env[base.id]):
                raise self.state.refuse(
                    f"an array per example (`{_text(node)}` of the {self.state.env[base.id].ndim}-d `{base.id}`, "
                    "whose size is known only when called, not when the kernel compiles: map the state's "
                    "components as separate 1-d arguments, or build it with `np.zeros(3)`),")
            raise self.state.refuse(f"`{_text(node)}`, a part of an array per example,")
        elif isinstance(lowering_of(node), (Elementwise, Cast)) or isinstance(node, gast.Compare) and \
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
        """An array that one of reverse mode's helpers makes (``ADJOINTS``)."""
        name, args = _text(node.func), node.args
        shapes = [np.shape(probes.evaluate(a, self.env)) for a in args[:2]]
        if name == "rt.copy_of" and len(args) == 1 or name in ("rt.unbroadcast", "rt.unaliased") and \
                len(args) == 2 and shapes[0] == shapes[1]:
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
        if FILLS[_text(node.func)] is None and not whole:
            raise self.state.refuse(f"`{_text(node)}` in an expression")
        if full and probes.is_array(self.probe(node.args[1], must=True)):
            raise self.state.refuse(f"`{_text(node)}`, filled with an array,")

    def _check_number(self, node: gast.expr) -> None:
        lowering = lowering_of(node)
        if isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name) and node.value.id in self.arrays:
            self._indices(node)
            return
        if isinstance(lowering, Reduction) or lowering is MATMUL:
            self._check_reduction(node, lowering)
            return
        if is_call(node, {"rt.unbroadcast"}) and len(node.args) == 2:  # a number's cotangent: ``np.sum(g)``
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
        if lowering is not MATMUL and lowering.op not in ("sum", "max", "min"):
            raise self.state.refuse(f"`{_text(node)}` of an array per example")
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
            value = None if isinstance(index, gast.Slice) else self.probe(index)
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
