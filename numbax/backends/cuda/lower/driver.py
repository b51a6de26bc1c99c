"""lower: the GPU backend's last pass: the jitted function becomes kernels and a host driver that runs them.

Expects the jitted function after optimization (expressions folded back, run-time checks in place); gives a
module of ``numba.cuda.jit`` kernels followed by the driver, a plain Python function of the same parameters:

- an assignment of an elementwise array expression becomes one kernel over its shape and, in the driver, an
  allocation and a launch; an array read by one later statement of its block only (``fusible``) is not
  written at all: its reader's kernel computes it, as a local of each thread, so a run of elementwise
  statements over one shape becomes one kernel (run-time checks of its shape read ``gr.shaped(...)``);
- a reduction (``sum``, ``mean``, ``max``, ``min``; ``axis``, ``keepdims``) becomes a block-reduction kernel
  whose element is its operand's expression (fused too) and a launch through ``gr.reduce``, which runs the
  second pass; a reduction to a number gives a number on the host;
- ``a @ b`` of 1-d or 2-d arrays becomes ``gr.matmul`` (cuBLAS through CuPy, or a kernel); ``np.linalg.solve``,
  ``inv`` and ``det`` ``gr``'s helpers (cuSOLVER through CuPy, or a one-thread elimination kernel);
- indexing is ``indexing``'s (elements, views) and ``gathers``'s (integer arrays, masks: gather and scatter
  kernels); reverse mode's helpers are ``adjoints``'s or rewritten into other operations (``rewrites``);
  joins, diagonals, moved axes, ravels, ``item()`` and norms of other orders are ``array_ops``'s (the
  cotangents of joined arrays are written one statement each first: ``parts``);
- a store into an argument's array writes its device copy; ``WRITTEN`` (before the driver) names those
  arguments, which the call writes back where they were host arrays (``placement.write_back``);
- reverse mode's list tapes (``tape = []``, ``append``, ``pop``) are host lists of device arrays;
- the loop ``vmap`` writes over examples (``anno.Key.PER_THREAD``) becomes one kernel, one example per thread
  (``threads``), drawing its ``numbax.random`` numbers itself (``keys``);
- numbers, ``if``, ``while``, ``for ... in range`` (``control_flow``) and the run-time checks of shapes and
  divisors stay in the driver, on the host: a branch on a reduced value or ``while err > tol`` reads the reduced
  number there.

Anything else is refused at the user's line with a ``NumbaxDeviceError`` naming it: the GPU backend never
falls back to the CPU behind the user's back.
"""
from __future__ import annotations

import builtins
import copy
from typing import Any, Dict, List, Set

import gast
import numpy as np

from numbax.ast_passes import anno
from numbax.ast_passes.analyses.nodes import rt_call as _rt_call
from numbax.ast_passes.analyses.primitives import application
from numbax.backends.cuda.lower import fusible, indexing, parts, probes, threads
from numbax.backends.cuda.lower.control_flow import ControlFlow, call_of as _call_of
from numbax.backends.cuda.lower.state import name as _name, parse as _parse, text as _text
from numbax.errors import NumbaxDeviceError
from numbax.primitives.cuda import Elementwise
from numbax.primitives.registry import entry

IMPORTS = ["import math", "import numpy as np", "from numba import cuda", "from numbax import runtime as rt",
           "from numbax.backends.cuda import runtime as gr", "from numbax.backends.cuda.runtime import THREADS"]
# run-time checks of shapes and host numbers (each reads an array's shape only): they stay in the driver;
# reverse mode's too (its products' shapes, the dims it takes as equal: ``rt.ShapesDiffer``)
_CHECKS = frozenset({"check_reshape", "check_divisor", "check_broadcast", "check_in_place", "check_where",
                     "check_matmul", "check_dot", "check_vdot", "check_contraction", "assume_equal", "check_store",
                     "check_key", "check_row", "check_concatenate", "check_stack", "check_item", "check_bound",
                     "check_real"}) | \
    indexing.INDEX_CHECKS
# run-time checks of numbers' values (an integer's exponent, a shift's count): in the driver where the value
# they read (at this position) is a host number; of an array's elements they are refused with their operation
_NUMBER_CHECKS = {"check_power": 1, "check_shift": 0, "check_weak_int": 0}
# what the run-time checks the GPU backend does not take check: the operations it refuses with them
_CHECKED_OPERATIONS = {"rt.check_hstack": "stacking arrays", "rt.check_vstack": "stacking arrays",
                       "rt.check_extent": "indexing an array"}


class ListTape:
    """The stand-in of reverse mode's list tape, ``tape = []``: the host list holds device arrays (or numbers)
    of one dtype and rank, ``entry`` their stand-in (None before the first ``append``); ``copies``: whether
    each entry is a copy made for the tape (``rt.copy_of``), which nothing else reads or writes; ``owned``:
    whether each is an array the driver allocated (an argument's never: a write into a popped entry writes no
    argument)."""

    def __init__(self):
        self.entry = None
        self.copies = True
        self.owned = True


def transform(module: gast.Module, params: Dict[str, Any], arguments: Set[str] = frozenset()) -> gast.Module:
    """The module as kernels plus the driver; ``params`` maps each parameter of the main function to a
    stand-in of its dtype and ndim (``probes``); ``arguments`` are those the user passes (the others are
    constants). Where the driver writes arguments' arrays, ``WRITTEN`` comes before it: their positions, each
    with the user's line of its first write (``placement.write_back`` writes them into host arguments)."""
    main = parts.transform(module.body[-1])  # before the reads are counted: it renames tuples' parts
    lowering = Lowering(dict(params), fusible.reads_outside_checks(main))
    lowering.arguments = set(arguments)
    # what the code does before the user's first line (a transformation's checks) is refused there
    lowering.first_origin = next((anno.getanno(n, anno.Key.ORIGIN) for n in gast.walk(main)
                                  if anno.hasanno(n, anno.Key.ORIGIN)), None)
    main.body = lowering.block(main.body)
    kernels = []
    for source, origin in lowering.kernels:  # a kernel's source, or one that tags its own lines (``threads``)
        kernel = gast.parse(source).body[0] if isinstance(source, str) else source
        _tag(kernel, origin)
        kernels.append(kernel)
    positions = {k: lowering.written[a.id] for k, a in enumerate(main.args.args) if a.id in lowering.written}
    module.body = kernels + (_parse(f"WRITTEN = {positions!r}") if positions else []) + [main]  # main last
    return gast.fix_missing_locations(module)


def _is_range(node: gast.expr) -> bool:
    return _call_of(node, "range") and len(node.args) <= 3


def _raises_a_constant(stmt: gast.Raise) -> bool:
    """``raise ValueError("...")``: a built-in exception of constants (what checks written in Python raise)."""
    exc = stmt.exc
    return stmt.cause is None and isinstance(exc, gast.Call) and isinstance(exc.func, gast.Name) and \
        isinstance(getattr(builtins, exc.func.id, None), type) and \
        issubclass(getattr(builtins, exc.func.id), Exception) and not exc.keywords and \
        all(isinstance(a, gast.Constant) for a in exc.args)


def _tag(kernel: gast.FunctionDef, origin) -> None:
    """Give every statement of a kernel the user's line it computes (unparse comments it)."""
    if origin is None:
        return
    for node in gast.walk(kernel):
        if isinstance(node, gast.stmt) and node is not kernel:
            anno.setanno(node, anno.Key.ORIGIN, origin)


class Lowering(ControlFlow):
    """The walk over the driver: statements kept, rewritten as launches, or refused."""

    def block(self, stmts: List[gast.stmt]) -> List[gast.stmt]:
        """The driver's statements for ``stmts``, each tagged with the user's line it came from."""
        out = []
        folds = fusible.fusible(stmts, self.reads)
        for i, stmt in enumerate(stmts):
            saved, self.origin = self.origin, anno.getanno(stmt, anno.Key.ORIGIN) or self.origin
            fold = i in folds and not (isinstance(stmt, gast.Assign) and self._checks_an_array_output(stmt.value))
            for emitted in (self.fold(stmt) if fold else self.statement(stmt)):
                if not anno.hasanno(emitted, anno.Key.ORIGIN) and self.origin is not None:
                    anno.setanno(emitted, anno.Key.ORIGIN, self.origin)
                out.append(emitted)
            self.origin = saved
        return out

    def statement(self, stmt: gast.stmt) -> List[gast.stmt]:
        """The driver's statements for one statement (see the module docstring)."""
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.List) and not stmt.value.elts:
            self.env[stmt.targets[0].id] = ListTape()
            return [stmt]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and self.is_tape_call(stmt.value, "pop"):
            return self.pop(stmt.targets[0].id, stmt.value)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and self._checks_an_array_output(stmt.value):
            target = stmt.targets[0].id  # the array computed, then grad's check (JAX's TypeError) on the host
            return self.assign(target, stmt.value.args[0]) + [gast.Expr(value=_rt_call("scalar_output", _name(target)))]
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            return self.assign(stmt.targets[0].id, stmt.value)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and self.is_indexing(stmt.targets[0]):
            return self.store(stmt)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Tuple) \
                and all(isinstance(t, gast.Name) or self.is_indexing(t) for t in stmt.targets[0].elts):
            return self.unpack(stmt.targets[0].elts, stmt.value)
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            return self.update(stmt)
        if isinstance(stmt, gast.AugAssign) and self.is_indexing(stmt.target):
            return self.update_indexed(stmt)
        if isinstance(stmt, gast.Expr) and self._is_check(stmt.value):
            return [self.check(stmt)]
        if isinstance(stmt, gast.Expr) and self._checks_a_number(stmt.value):
            return [stmt]
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) == "rt.save_row":
            return self.save_row(stmt)
        if isinstance(stmt, gast.Expr) and self.is_tape_call(stmt.value, "append"):
            return self.append(stmt.value)
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) == "rt.scalar_output" and isinstance(stmt.value.args[0], gast.Name) and \
                stmt.value.args[0].id not in self.folded:
            return [stmt]  # grad's check that its output is a number: JAX's TypeError with the array's shape
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) == "rt.real_output" and not probes.is_array(self.probe(stmt.value.args[0])):
            return [stmt]  # grad's check of its output's dtype, on a number of the host
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) == "rt.index_add":
            return self.index_add(stmt.value)
        if isinstance(stmt, gast.Expr) and self._is_ufunc_into(stmt.value):
            return self.ufunc_into(stmt.value)
        if isinstance(stmt, gast.Expr) and self._fill_or_sort(stmt.value):
            return self.statement(self._as_store(stmt))
        if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) and \
                _text(stmt.value.func) in _CHECKED_OPERATIONS:
            raise self.refuse(_CHECKED_OPERATIONS[_text(stmt.value.func)])
        if isinstance(stmt, gast.If):
            return self.branch(stmt)
        if isinstance(stmt, gast.While) and not stmt.orelse:
            return self.loop_while(stmt)
        if isinstance(stmt, gast.For) and anno.getanno(stmt, anno.Key.PER_THREAD, False):
            return threads.lower(self, stmt)
        if isinstance(stmt, gast.For) and not stmt.orelse and isinstance(stmt.target, gast.Name) and \
                _is_range(stmt.iter):
            return self.loop_for(stmt)
        if isinstance(stmt, gast.For) and not stmt.orelse:
            held, loop = self.over_rows(stmt)
            return [s for hold in held for s in self.statement(hold)] + self.loop_for(loop)
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Pass)):
            return [stmt]
        if isinstance(stmt, gast.Return):
            return self.returns(stmt)
        if isinstance(stmt, gast.Raise) and _raises_a_constant(stmt):
            return [stmt]
        raise self.refuse(f"`{_text(stmt)}`")

    def _checks_an_array_output(self, node: gast.expr) -> bool:
        """``rt.scalar_output(v)`` of an array ``v``: grad's output, which raises (a gradient's own seed)."""
        return isinstance(node, gast.Call) and _text(node.func) == "rt.scalar_output" and \
            probes.is_array(self.probe(node.args[0]))

    @staticmethod
    def _is_check(node: gast.expr) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            isinstance(node.func.value, gast.Name) and node.func.value.id == "rt" and node.func.attr in _CHECKS

    def _checks_a_number(self, node: gast.expr) -> bool:
        """Whether ``node`` is a check of a number's value (``_NUMBER_CHECKS``) that reads a host number."""
        if not (isinstance(node, gast.Call) and _text(node.func).startswith("rt.") and
                node.func.attr in _NUMBER_CHECKS):
            return False
        value = node.args[_NUMBER_CHECKS[node.func.attr]]
        if isinstance(value, gast.Constant):
            return True
        return isinstance(value, gast.Name) and value.id not in self.folded and \
            not probes.is_array(self.env.get(value.id))

    @staticmethod
    def _is_ufunc_into(node: gast.expr) -> bool:
        """Whether ``node`` is ``np.f(a, ..., out[...])``: an elementwise function's operands and its ``out``."""
        if not isinstance(node, gast.Call) or node.keywords or not node.args or \
                not (isinstance(node.args[-1], gast.Subscript) and isinstance(node.args[-1].value, gast.Name)):
            return False
        app = application(gast.Call(func=node.func, args=node.args[:-1], keywords=[]))
        lowering = getattr(entry(app.key), "cuda", None) if app is not None else None
        return isinstance(lowering, Elementwise) and lowering.arity == len(node.args) - 1

    def ufunc_into(self, call: gast.Call) -> List[gast.stmt]:
        """``np.f(a, ..., out[s])`` (``vmap`` writes a block of examples' rows so): ``np.f(a, ...)`` launched,
        checked to fit ``out[s]`` as NumPy checks an ``out`` operand (``rt.check_in_place``: it broadcasts to
        that shape), then stored there; its dtype must be ``out``'s (NumPy would cast it)."""
        *operands, out = call.args
        value, view = self.fresh("t"), self.fresh("t")
        where = self.origin.position() if self.origin is not None else ""
        stmts = self.assign(value, gast.Call(func=call.func, args=operands, keywords=[]))
        stmts += self.assign(view, copy.deepcopy(out))
        if np.asarray(self.env[value]).dtype != np.asarray(self.env[view]).dtype:
            raise self.refuse(f"`{_text(call)}`, whose result's dtype is not its out's,")
        stmts.append(self.check(_parse(f"rt.check_in_place({view}, {value}, {where!r})")[0]))
        return stmts + self.store(gast.Assign(targets=[gast.Subscript(value=out.value, slice=out.slice,
                                                                      ctx=gast.Store())],
                                              value=_name(value), type_comment=None))

    def is_tape_call(self, node: gast.expr, method: str) -> bool:
        """Whether ``node`` is ``tape.<method>(...)`` of a list tape of the driver (``ListTape``)."""
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and \
            node.func.attr == method and isinstance(node.func.value, gast.Name) and \
            isinstance(self.env.get(node.func.value.id), ListTape)

    def append(self, call: gast.Call) -> List[gast.stmt]:
        """``tape.append(value)``: reverse mode's list tape (a host list of device arrays and numbers) grows by
        ``value``, whose dtype and rank every entry shares."""
        tape = self.env[call.func.value.id]
        if len(call.args) != 1 or call.keywords:
            raise self.refuse(f"`{_text(call)}`")
        self.pre = []
        copied = isinstance(call.args[0], gast.Call) and _text(call.args[0].func) == "rt.copy_of"
        tape.copies = (tape.copies if tape.entry is not None else True) and copied
        value = self.temp_for(self.hoist(call.args[0]))
        tape.owned = (tape.owned if tape.entry is not None else True) and self.owns(value.id)
        stand_in = self.env.get(value.id, self.probe(value))
        if tape.entry is not None and probes.signature(tape.entry) != probes.signature(stand_in):
            raise self.refuse(f"`{_text(call)}`, a tape of values of several dtypes or ranks,")
        tape.entry = stand_in
        call.args = [value]
        return self.pre + [gast.Expr(value=call)]

    def pop(self, target: str, call: gast.Call) -> List[gast.stmt]:
        """``target = tape.pop()``: the latest entry of a list tape: the driver's own array where the tape holds
        copies or arrays the driver allocated (then perhaps held by another name too), else an array of no one's
        (never updated in place: it may be an argument's)."""
        tape = self.env[call.func.value.id]
        if call.args or call.keywords or tape.entry is None:
            raise self.refuse(f"`{_text(call)}`")
        self.assigned_at[target] = self.origin
        self.retire(target)
        if tape.copies and probes.is_array(tape.entry):  # copies made for the tape: the driver's own
            self.owned.add(target)
            self.views.pop(target, None)
        elif tape.owned and probes.is_array(tape.entry):  # the driver's own, which other names may hold too
            self.owned.add(target)
            self.views[target] = indexing.AMBIGUOUS
        else:
            self.owned.discard(target)
            self.views[target] = indexing.AMBIGUOUS
        self.env[target] = tape.entry
        return [gast.Assign(targets=[_name(target, gast.Store())], value=call, type_comment=None)]

    def fold(self, stmt: gast.Assign) -> List[gast.stmt]:
        """An assignment ``fusible`` found: an elementwise array expression is kept for its reader's kernel;
        anything else is assigned as usual."""
        if self.is_tape_call(stmt.value, "pop"):
            return self.statement(stmt)
        self.pre = []
        target, value = stmt.targets[0].id, self.hoist(stmt.value)
        result = self.probe(value)
        if not self._launches(value, result):
            return self.assign_hoisted(target, value, result)
        value = self.numbers_for_metadata(value)  # read now: a kernel takes numbers
        if not self._elementwise(value):
            return self.assign_hoisted(target, value, result)
        self.folded[target] = value
        self.env[target] = result
        return self.pre

    def _elementwise(self, value: gast.expr) -> bool:
        """Whether a kernel computes ``value`` element by element: only such a value is folded, for a folded
        value's shape is its operands' broadcast (the rest is assigned, and refused there)."""
        try:
            self.element(value, self.operands(value))
        except NumbaxDeviceError:
            return False
        return True

    def check(self, stmt: gast.Expr) -> gast.stmt:
        """A run-time check: a folded array it reads becomes ``gr.shaped(its shape)`` (checks read shapes)."""
        call = stmt.value
        if indexing.host_check(call) and probes.is_array(self.env.get(call.args[0].id)):
            self.index_check(call)  # and an index array no kernel wrote is given its shape, as any array
        call.args = [self._shaped(arg) for arg in call.args]
        return stmt

    def _shaped(self, arg: gast.expr) -> gast.expr:
        """A check's argument with each folded array in it (``(x, t)`` of ``rt.check_concatenate`` too) as
        ``gr.shaped(its shape)``."""
        if isinstance(arg, gast.Tuple):
            return gast.Tuple(elts=[self._shaped(e) for e in arg.elts], ctx=gast.Load())
        if isinstance(arg, gast.Name) and arg.id in self.folded:
            return _parse(f"gr.shaped({self.shape_of(self.operands(self.folded[arg.id]))})")[0].value
        return arg

    def assign(self, target: str, value: gast.expr) -> List[gast.stmt]:
        """``target = value``: a launch where ``value`` is an array, a host statement where a number."""
        self.pre = []
        value = self.hoist(value)
        return self.assign_hoisted(target, value, self.probe(value))

    def _launches(self, value: gast.expr, result: Any) -> bool:
        """Whether ``value`` (with stand-in ``result``) is computed by a kernel: an array, not a name (unless
        folded: no one wrote it; views are names once hoisted)."""
        if isinstance(value, gast.Name):
            return value.id in self.folded
        return probes.is_array(result)

    def assign_hoisted(self, target: str, value: gast.expr, result: Any) -> List[gast.stmt]:
        """``target = value``, its reductions and products launched already (in ``self.pre``)."""
        self.assigned_at[target] = self.origin
        self.retire(target)
        if self._launches(value, result):
            launched = self.launch_elementwise(target, value, result)
            out = self.pre + launched
            self.owned.add(target)
            self.views.pop(target, None)
        else:
            source = value
            if isinstance(source, gast.Name) and source.id in self.owned:
                self.owned.add(target)
            else:
                self.owned.discard(target)
            base = self.base_of(source.id) if isinstance(source, gast.Name) and probes.is_array(result) else target
            if base != target:  # an alias or a view of an array
                self.views[target] = base
            else:
                self.views.pop(target, None)
            if not probes.is_array(result):
                self.check_host(value)
            out = self.pre + [gast.Assign(targets=[_name(target, gast.Store())], value=value, type_comment=None)]
        self.env[target] = result
        return out

    def unpack(self, targets: List[gast.expr], value: gast.expr) -> List[gast.stmt]:
        """``a, b = u, v``: each value into a temporary first (``a, b = b, a + b`` reads the old ``a``), then each
        name, or each place of an array, in order (``x[0], x[-1] = x[-1], x[0]``: the elements read first, rows
        as views, as NumPy's tuple holds them); ``n, m = x.shape`` of an array of as many dimensions: each
        extent, read on the host."""
        if isinstance(value, gast.Attribute) and value.attr == "shape" and isinstance(value.value, gast.Name) and \
                probes.is_array(self.env.get(value.value.id)) and self.env[value.value.id].ndim == len(targets) and \
                all(isinstance(t, gast.Name) for t in targets):
            values = [gast.Subscript(value=copy.deepcopy(value), slice=gast.Constant(value=k, kind=None),
                                     ctx=gast.Load()) for k in range(len(targets))]
            return [s for t, v in zip(targets, values) for s in self.assign(t.id, v)]
        if not (isinstance(value, gast.Tuple) and len(value.elts) == len(targets)):
            raise self.refuse(f"unpacking `{_text(value)}`")
        temps = [self.fresh("t") for _ in targets]
        out = [s for temp, v in zip(temps, value.elts) for s in self.assign(temp, v)]
        for target, temp in zip(targets, temps):
            out += self.assign(target.id, _name(temp)) if isinstance(target, gast.Name) else \
                self.store(gast.Assign(targets=[target], value=_name(temp), type_comment=None))
        return out

    def update(self, stmt: gast.AugAssign) -> List[gast.stmt]:
        """``x op= y``: on the host for a number; for an array, a kernel writing ``x op y`` into ``x``'s own
        memory (its run-time check made sure ``y`` broadcasts to ``x``'s shape)."""
        target = stmt.target.id
        if not probes.is_array(self.env.get(target)):
            combined = gast.BinOp(left=_name(target), op=stmt.op, right=stmt.value)
            return self.assign(target, combined)
        if not self.writable(target):
            raise self.refuse(f"`{_text(stmt)}`, an in-place update of an array that is neither the driver's "
                              "own nor an argument's on every path,")
        self.pre = []
        return self.pre_and_update_in_place(stmt, target, self.hoist(stmt.value))

    def pre_and_update_in_place(self, stmt: gast.AugAssign, target: str, hoisted: gast.expr) -> List[gast.stmt]:
        """The kernel of ``target op= hoisted`` into the array ``target`` (after ``self.pre``): each thread reads
        and writes its own element, so the value may read ``target`` itself; where it reads another view of
        its memory, it is copied first (``buffered``)."""
        if self.overlaps(target, self.bases_read(hoisted, besides=target)):
            hoisted = self.buffered(hoisted)
        value = gast.BinOp(left=_name(target), op=stmt.op, right=hoisted)
        result = self.probe(value)
        if probes.signature(result) != probes.signature(self.env[target]):
            raise self.refuse(f"`{_text(stmt)}`, which changes the dtype of an array in place,")
        return self.pre + self.launch(value, target, result, allocate=False)

    def update_indexed(self, stmt: gast.AugAssign) -> List[gast.stmt]:
        """``x[idx] op= y`` (how reverse mode adds a cotangent into an indexed part): one element read and
        written on the host where ``idx`` picks one and ``y`` is a number, else a kernel updating the view
        ``x[idx]`` in place."""
        if self.is_advanced(stmt.target):
            return self.scatter(stmt.target, stmt.value, stmt.op)
        array = stmt.target.value.id
        if not self.writable(array):
            raise self.refuse(f"`{_text(stmt)}`, an in-place update of an array that is neither the driver's "
                              "own nor an argument's on every path,")
        self.pre = []
        hoisted = self.hoist(stmt.value)
        view = self.index_read(copy.deepcopy(stmt.target))
        if probes.is_array(self.env[view.id]):
            return self.pre_and_update_in_place(stmt, view.id, hoisted)
        if probes.is_array(self.probe(hoisted)):
            raise self.refuse(f"`{_text(stmt)}`, an update of one element by an array,")
        value = gast.BinOp(left=view, op=stmt.op, right=hoisted)
        self.check_host(value)
        return self.pre + [gast.Assign(targets=[stmt.target], value=value, type_comment=None)]

    def _fill_or_sort(self, node: gast.expr) -> bool:
        """``x.fill(v)`` of a number ``v`` (NumPy refuses an array) or ``x.sort()``, of an array of at least one
        dimension (anything else stays refused)."""
        if not (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and
                isinstance(node.func.value, gast.Name) and not node.keywords):
            return False
        array = self.env.get(node.func.value.id)
        return probes.is_array(array) and array.ndim >= 1 and (
            node.func.attr == "fill" and len(node.args) == 1 and np.ndim(self.probe(node.args[0])) == 0 or
            node.func.attr == "sort" and not node.args)

    def _as_store(self, stmt: gast.Expr) -> gast.Assign:
        """``x.fill(v)`` as ``x[:, :] = v``, ``x.sort()`` as ``x[:, :] = np.sort(x)``: a store into every element
        (which casts, as the method does), at the call's line."""
        call = stmt.value
        array = call.func.value.id
        target = _parse(f"{array}[{', '.join([':'] * self.env[array].ndim)}] = 0")[0].targets[0]
        value = call.args[0] if call.func.attr == "fill" else _parse(f"np.sort({array})")[0].value
        store = gast.fix_missing_locations(gast.copy_location(
            gast.Assign(targets=[target], value=value, type_comment=None), stmt))
        if anno.hasanno(stmt, anno.Key.ORIGIN):
            anno.setanno(store, anno.Key.ORIGIN, anno.getanno(stmt, anno.Key.ORIGIN))
        return store

    def returns(self, stmt: gast.Return) -> List[gast.stmt]:
        """``return``: each returned value a name (of an array or a number) or a constant."""
        if stmt.value is None:
            return [stmt]
        values = stmt.value.elts if isinstance(stmt.value, gast.Tuple) else [stmt.value]
        out, names = [], []
        for value in values:
            if isinstance(value, gast.Name) and isinstance(self.env.get(value.id), ListTape):
                raise self.refuse(f"returning the list `{value.id}` built by `append`")
            if isinstance(value, gast.Constant) or isinstance(value, gast.Name) and value.id not in self.folded:
                names.append(value)
                continue
            temp = self.fresh("t")
            out += self.assign(temp, value)
            names.append(_name(temp))
        result = gast.Tuple(elts=names, ctx=gast.Load()) if isinstance(stmt.value, gast.Tuple) else names[0]
        return out + [gast.Return(value=result)]

    def temp_for(self, node: gast.expr) -> gast.Name:
        """A name holding ``node``'s value: itself if a name, else a temporary assigned before."""
        if isinstance(node, gast.Name) and node.id not in self.folded:
            return node
        temp = self.fresh("t")
        saved = self.pre
        emitted = self.assign(temp, node)
        self.pre = saved + emitted
        return _name(temp)
