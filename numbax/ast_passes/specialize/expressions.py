"""Evaluating expressions partially: compute what is known, rebuild the rest as code."""
from __future__ import annotations

import collections
import copy
import operator
from typing import Any, List, Optional, Tuple

import gast
import numpy as np

from numbax.ast_passes import anno, resolve, run_time_checks
from numbax.ast_passes.analyses import nodes
from numbax.ast_passes.analyses.nodes import rt_call
from numbax.ast_passes.specialize import checks, dtypes
from numbax.ast_passes.specialize.at_updates import AtIndexer
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn, Items, LocalFunction, MaybeBound, Method, NeedStatic, \
    Poison, RunTimeList

_COMPARE = {
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt, gast.LtE: operator.le,
    gast.Gt: operator.gt, gast.GtE: operator.ge, gast.Is: operator.is_, gast.IsNot: operator.is_not,
    gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b,
}


def _as_test(name: str, op: gast.boolop) -> gast.expr:
    """The test under which ``name``, the value of ``and``/``or`` so far, goes on to the next operand."""
    test = name_node(name)
    return test if isinstance(op, gast.And) else gast.UnaryOp(op=gast.Not(), operand=test)


def _is_runtime(value: Any) -> bool:
    """Dyn values and constant arrays must be computed by generated code, not folded here."""
    return isinstance(value, (Dyn, np.ndarray))


_UNARY_SYMBOLS = {gast.UAdd: "+", gast.USub: "-", gast.Invert: "~"}
_TUPLES = frozenset({"shape", "strides"})  # array attributes that are tuples: Numba checks their indices


_DIM = AVal(np.dtype(np.int64), 0, weak=True)  # a dim of a run-time array: a Python int, as len() is


def _python_int(value: Any) -> bool:
    """Whether ``value`` is a Python int known only at run time (``len(x)``, a ``range`` loop's index)."""
    aval = dtypes.aval_of(value)
    return isinstance(value, Dyn) and aval is not None and aval.weak and aval.ndim == 0 and aval.dtype.kind in "iu"


def _is_dim(base: Any, index: Any) -> bool:
    """Whether ``base[index]`` is one dim of a run-time array's ``shape``."""
    return isinstance(base, Method) and base.receiver is not None and isinstance(base.node, gast.Attribute) and \
        base.node.attr == "shape" and (type(index) is int or isinstance(index, Dyn) and index.aval is not None and
                                       index.aval.ndim == 0 and index.aval.dtype.kind in "iu")


class ExpressionsMixin:
    """Expression evaluation for the ``Specializer``; each visitor returns a partial value."""

    def eval(self, node: gast.expr) -> Any:
        """Evaluate ``node``: a Python value where known at compile time, else a ``Dyn``."""
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            self.fail(node, f"{type(node).__name__} expressions are not supported in compiled functions")
        return method(node)

    @staticmethod
    def dyn(node: gast.expr) -> Dyn:
        """A run-time value computed by ``node``."""
        return Dyn(node)

    def eval_Constant(self, node):
        return node.value

    def eval_Name(self, node):
        name = node.id
        if name in self.env:
            value = self.env[name]
            if isinstance(value, Poison):
                self.fail(node, f"`{name}` {value.why}",
                          hint="give it the same kind of value (an array, or the same container shape) "
                          "on every path.")
            if isinstance(value, MaybeBound):  # Python's UnboundLocalError where this path did not assign it
                message = f"cannot access local variable '{name}' where it is not associated with a value"
                where = self.origin(node).position() if self.origin(node) is not None else name
                self.emit(gast.Expr(value=rt_call("check_bound", name_node(value.flag), gast.Constant(
                    value=message, kind=None), gast.Constant(value=where, kind=None))))
                value = self.env[name] = Dyn(value.node, value.aval)  # assigned from here on
            return value
        if name in self.local_names:
            self.fail(node, f"local variable `{name}` is used before it is assigned")
        value = self.lookup_free(name, node)
        return value

    def eval_Attribute(self, node):
        base = self.eval(node.value)
        if isinstance(base, RunTimeList):
            self.fail(node, f"`.{node.attr}` of a list made at run time (held as the array of its items)",
                      hint="append to a list only in the loop that makes it; use np.stack(items) as an array.")
        if isinstance(base, Dyn) and node.attr == "mT":  # the array API's matrix transpose: a composite's call
            call = gast.copy_location(gast.Call(func=node, args=[node.value], keywords=[]), node)
            anno.copyanno(node, call)
            return self.call_value(call, np.matrix_transpose, [base], {})
        if isinstance(base, Dyn):
            return self.dyn_attribute(base, node.attr)
        if isinstance(base, np.ndarray) and node.attr in ("T", "mT", "real", "imag"):  # a constant array too
            return getattr(base, node.attr)
        if isinstance(base, np.ndarray) and node.attr not in ("ndim", "dtype", "shape", "size"):
            return self.dyn(gast.Attribute(value=self.materialize(base), attr=node.attr, ctx=gast.Load()))
        try:
            return getattr(base, node.attr)
        except AttributeError:
            self.fail(node, f"{type(base).__name__} object has no attribute `{node.attr}`")

    def dyn_attribute(self, base: Dyn, attr: str) -> Any:
        """``x.ndim`` and ``x.dtype`` are known from the abstract value (``x.size`` is a Python int); the rest is
        run-time."""
        if base.aval is not None and attr in ("ndim", "dtype"):
            self.builder.reads_avals = True
            return base.aval.ndim if attr == "ndim" else base.aval.dtype
        if attr == "at":  # JAX's indexed updates, functional (``at_updates``), of the array as it is now
            return AtIndexer(self.snapshot(base))
        if base.aval is not None and attr == "T":  # the axes reversed: the same dtype and rank
            return Dyn(gast.Attribute(value=base.expr(), attr=attr, ctx=gast.Load()), base.aval)
        if base.aval is not None and attr == "shape" and base.aval.ndim == 0:  # a number: no ``shape`` in Numba
            return ()
        if base.aval is not None and attr == "size":
            if base.aval.ndim == 0:  # a number (Numba's scalars have no ``size``)
                return 1
            return Dyn(gast.Attribute(value=base.expr(), attr=attr, ctx=gast.Load()), _DIM)
        return Method(gast.Attribute(value=base.expr(), attr=attr, ctx=gast.Load()), base.aval)

    def eval_BinOp(self, node):
        return self.binop(node, node.op, self.eval(node.left), self.eval(node.right))

    def binop(self, node: gast.expr, op: gast.operator, left: Any, right: Any) -> Any:
        """``left op right``: folded when both are known, else generated."""
        if isinstance(left, RunTimeList) or isinstance(right, RunTimeList):
            self.fail(node, f"`{dtypes.operator_symbol(op)}` of a list made at run time",
                      hint="operate on np.stack(items), the array of its items (`+` of lists would join them).")
        if _is_runtime(left) or _is_runtime(right):
            if isinstance(op, gast.Pow) and _python_int(left) and type(right) is int and right < 0:
                # Python's ``n ** -1`` of ints is a float: ``float(n) ** -1``, as Python computes it
                left = Dyn(gast.Call(func=name_node("float"), args=[self.materialize(left)], keywords=[]),
                           AVal(np.dtype(np.float64), 0, weak=True))
            out = self.runtime_binop(node, op, left, right)
            self.check(node, out, checks.binop(op, left, right))
            self.check(node, out, checks.power(op, left, right))
            self.check(node, out, checks.shift(op, left, right))
            return out
        return self.fold(node, dtypes.BINOPS[type(op)], left, right)

    def runtime_binop(self, node: gast.expr, op: gast.operator, left: Any, right: Any) -> Dyn:
        """``left op right`` in generated code, its abstract value inferred and weak numbers kept weak."""
        avals = [dtypes.aval_of(left), dtypes.aval_of(right)]
        if isinstance(op, gast.Pow) and isinstance(right, Dyn) and dtypes.squared_at_run_time(*avals):
            self.refuse_dtype(node, f"`**` of a {avals[0].dtype} array and a Python int known at run time",
                              "NumPy computes `x ** 2` as np.square(x) and other powers by promotion, in "
                              "different dtypes: write np.square(x) for 2, or cast x first, e.g. "
                              "x.astype(np.int64) ** n")
        if isinstance(op, gast.Pow) and dtypes.squared_0d_ambiguously(avals[0], right):
            self.refuse_dtype(node, f"`** 2` of a 0-d {avals[0].dtype} value",
                              "NumPy squares a 0-d array as np.square (int8 for bools) and a NumPy scalar by "
                              "promotion (int64): write np.square(x), or cast first, e.g. x.astype(np.int64) ** 2")
        func = dtypes.BINOPS[type(op)]
        self.refuse_numpys_refusal(node, func, avals, f"`{dtypes.operator_symbol(op)}`")
        result = self.representable(node, dtypes.binop(op, *avals, right), f"`{dtypes.operator_symbol(op)}`")
        narrowed = dtypes.narrowed_operands(func, avals, result)
        left, right = (self.fold(node, self.operand_in, v, result) if k in narrowed else v  # NumPy's OverflowError
                       for k, v in enumerate((left, right)))
        left, right = (self.weak_operand(node, v, a, result) for v, a in zip((left, right), avals))
        return self.in_numpys_scalar_dtype(gast.BinOp(left=left, op=op, right=right), func, avals, result)

    def updates_in_its_dtype(self, op: gast.operator, current: Dyn, value: Any) -> bool:
        """Whether ``current op= value`` can be written as it is: ``current`` is an array (NumPy updates it in
        place, in its dtype) or of unknown rank, or a 0-d value whose dtype ``current op value`` keeps with
        no cast written (``t += 0.5`` of a float32 ``t`` spells 0.5 as a float32, ``t += x`` of a float32 and
        a float64 makes a float64, ``t += b`` of int8 values casts the sum); a Python number ``t`` may
        become a NumPy scalar of its dtype (``t = 0.0; t += x[i]``), which ``updated_aval`` records."""
        aval, other = current.aval, dtypes.aval_of(value)
        if aval is None or aval.ndim:
            return True
        func = dtypes.BINOPS[type(op)]
        result = dtypes.binop(op, aval, other, value)
        return result is not None and result.dtype == aval.dtype and result.ndim == 0 and \
            dtypes.weak_cast(value, other, result) is None and \
            dtypes.widened_scalar(func, [aval, other], result) is None and \
            not dtypes.narrowed_operands(func, [aval, other], result)

    def check_power_in_place(self, node: gast.stmt, op: gast.operator, current: Any, value: Any,
                             target: gast.expr, operand: gast.expr) -> None:
        """``rt.check_power(x, e, message, where)`` before ``x **= e`` of integers: an update is no operation
        that ``run_time_checks`` marks, so the check is written here."""
        check, origin = checks.power(op, current, value), self.origin(node)
        if check is None or origin is None:
            return
        args = [copy.deepcopy(target), copy.deepcopy(operand), gast.Constant(value=check[1], kind=None),
                gast.Constant(value=origin.position(), kind=None)]
        self.emit(gast.Expr(value=gast.Call(func=resolve.reference_node("rt.check_power"), args=args, keywords=[])))

    @staticmethod
    def narrows_in_place(op: gast.operator, current: Dyn, value: Any) -> bool:
        """Whether ``current op= value`` updates an array of a narrower dtype than ``current op value``'s
        (``y += x`` of a float32 ``y`` and a float64 ``x``: NumPy computes in float64 and stores float32)."""
        aval = current.aval
        result = dtypes.binop(op, aval, dtypes.aval_of(value), value) if aval is not None and aval.ndim else None
        return result is not None and result.dtype != aval.dtype

    def refuse_in_place(self, node: gast.stmt, op: gast.operator, target: Optional[AVal], value: Any) -> None:
        """Refuse ``target op= value`` where NumPy refuses it: no loop for the dtypes (``b -= c`` of bools),
        or an array updated in place with a result its dtype cannot hold under NumPy's ``casting='same_kind'``
        (``i8 += 1.5``), which Numba would compute anyway, or crash on. A 0-d target is rebound, not updated
        (``t += 0.5`` of a NumPy int makes a float), so only arrays are cast."""
        other, symbol = dtypes.aval_of(value), f"`{dtypes.operator_symbol(op)}=`"
        self.refuse_numpys_refusal(node, dtypes.BINOPS[type(op)], [target, other], symbol)
        result = dtypes.binop(op, target, other, value)
        if target is not None and target.ndim and result is not None and \
                not np.can_cast(result.dtype, target.dtype, "same_kind"):
            self.refuse_dtype(node, f"{symbol} into an array of {target.dtype} with a {result.dtype} result (NumPy "
                              f"raises UFuncTypeError: casting='same_kind' cannot store it in place)",
                              f"write a new array instead (x = x {dtypes.operator_symbol(op)} y), or cast the "
                              f"operand to {target.dtype}")

    @staticmethod
    def updated_aval(op: gast.operator, current: Dyn, value: Any) -> Optional[AVal]:
        """The abstract value of ``current`` after ``current op= value`` in place."""
        aval = current.aval
        return aval if aval is None or aval.ndim else dtypes.binop(op, aval, dtypes.aval_of(value), value)

    def in_numpys_scalar_dtype(self, expr: gast.expr, func: Any, avals, result: Optional[AVal]) -> Dyn:
        """``expr``, cast to NumPy's dtype where it is a 0-d integer or bool that Numba computes wider
        (``np.int8(a + b)``; see ``dtypes.widened_scalar``)."""
        dtype = dtypes.widened_scalar(func, avals, result)
        if dtype is not None:
            expr = gast.Call(func=self.materializer.reference(dtype.type), args=[expr], keywords=[])
            anno.setanno(expr, anno.Key.SCALAR_CAST, True)
        return Dyn(expr, result)

    def refuse_numpys_refusal(self, node: gast.expr, func: Any, avals, what: str) -> None:
        """Refuse ``what`` where NumPy has no loop for its operands' dtypes (``bool - bool``), which Numba
        would compute anyway."""
        message = dtypes.numpy_refusal(func, avals)
        if message is not None:
            dtypes_text = " and ".join(str(a.dtype) for a in avals)
            self.refuse_dtype(node, f"{what} of {dtypes_text} (NumPy raises TypeError: {message})",
                              "do what NumPy's message says, or cast first, e.g. x.astype(np.int64)")

    def runtime_compare(self, node: gast.expr, op: gast.cmpop, left: Any, right: Any) -> Dyn:
        """``left op right`` in generated code, compared in the dtype NumPy 2 compares in: a weak number
        next to a float32 array is a float32 (``x > np.float32(0.1)``). Complex numbers have no order here.
        Of two Python numbers the result is a Python bool (weak: ``(s == 1) + (s == 2)`` is an int)."""
        avals = [dtypes.aval_of(left), dtypes.aval_of(right)]
        common = dtypes.binop(gast.Add(), *avals)
        if common is not None and common.dtype.kind == "c" and type(op) in dtypes.ORDERINGS:
            self.refuse_dtype(node, f"`{dtypes.ORDERINGS[type(op)]}` on complex numbers",
                              "compare np.real(z) or np.abs(z) instead (NumPy's lexicographic order of "
                              "complex numbers is not compiled)")
        left, right = (self.weak_operand(node, v, a, common, beyond="keep") for v, a in zip((left, right), avals))
        python = all(a is not None and a.weak for a in avals)  # Python numbers compare to a Python bool
        result = AVal(np.dtype(bool), common.ndim, weak=python) if common is not None else None
        return Dyn(gast.Compare(left=left, ops=[op], comparators=[right]), result)

    def refuse_dtype(self, node: gast.expr, what: str, hint: str):
        """Raise a ``NumbaxDtypeError`` at the user's ``node``."""
        from numbax.errors import NumbaxDtypeError

        raise NumbaxDtypeError(f"{what} cannot be compiled", self.origin(node), hint=hint)

    def representable(self, node: gast.expr, result: Optional[AVal], what: str) -> Optional[AVal]:
        """``result``, the abstract value NumPy gives ``what``; refused where Numba has no such dtype
        (float16: NumPy's ``np.sin`` of a bool, int8 or uint8 array, which no other dtype rounds as it does)."""
        if result is not None and result.dtype == np.float16:
            self.refuse_dtype(node, f"{what} gives float16 in NumPy, which",
                              "cast the operands first, e.g. x.astype(np.float64), or x.astype(np.float32) "
                              "to compute in float32")
        return result

    def weak_operand(self, node: gast.expr, value: Any, aval, result, literal_kept: bool = True,
                     beyond: str = "raise") -> gast.expr:
        """The operand's expression in ``node``; a weak number in the dtype NumPy 2 gives ``result`` (see
        ``dtypes``, ``weak_cast``). A Python int outside an integer dtype's range raises NumPy's OverflowError at
        the user's line (arithmetic), or is kept as it is (``beyond="keep"``: NumPy 2 compares it exactly, as
        Numba's int64 comparison does)."""
        if beyond == "raise" and result is not None and result.dtype.kind in "iu" and type(value) is int:
            self.fold(node, dtypes.weak_int, value, result.dtype, beyond)  # NumPy's OverflowError outside the range
        dtype = dtypes.weak_cast(value, aval, result, literal_kept)
        if dtype is None:
            return self.materialize(value)
        if isinstance(value, Dyn):
            cast = gast.Call(func=self.materializer.reference(dtype.type), args=[value.expr()], keywords=[])
            if beyond == "raise" and dtype.kind in "iu" and aval is not None and aval.dtype.kind in "iu":
                # NumPy's OverflowError
                run_time_checks.mark(cast, "check_weak_int", self.check_origin(node), dtype.name)
            return cast
        if dtype.kind in "iu" and type(value) is int:
            return self.materialize(self.fold(node, dtypes.weak_int, value, dtype, beyond))
        return self.materialize(self.fold(node, dtype.type, value))

    def eval_UnaryOp(self, node):
        operand = self.eval(node.operand)
        if _is_runtime(operand):
            aval, func = dtypes.aval_of(operand), dtypes.UNARY[type(node.op)]
            if not isinstance(node.op, gast.Not):
                self.refuse_numpys_refusal(node, func, [aval], f"unary `{_UNARY_SYMBOLS[type(node.op)]}`")
            expr = gast.UnaryOp(op=node.op, operand=self.materialize(operand))
            return self.in_numpys_scalar_dtype(expr, func, [aval], dtypes.unaryop(node.op, aval))
        return self.fold(node, dtypes.UNARY[type(node.op)], operand)

    def eval_BoolOp(self, node):
        values: List[Any] = []
        needs: List[List[gast.stmt]] = []  # the statements each run-time operand's evaluation needs first
        for sub in node.values:
            needed, value = self.eval_on_path(sub) if values else ([], self.eval(sub))
            if not values and not isinstance(value, Dyn):
                decided = (not value) if isinstance(node.op, gast.And) else bool(value)
                if decided:
                    return value
                continue
            values.append(value)
            needs.append(needed)
        if not values:
            return value  # every operand known, none deciding: Python's value is the last
        if len(values) == 1:
            return values[0]
        if not any(needs):
            return self.dyn(gast.BoolOp(op=node.op, values=[self.materialize(v) for v in values]))
        # an operand whose evaluation needs statements (a check) runs them only where Python evaluates it
        chosen = self.namer.new("either" if isinstance(node.op, gast.Or) else "both")
        self.emit(nodes.assign(chosen, self.materialize(values[0])))
        for value, needed in zip(values[1:], needs[1:]):
            self.emit(gast.If(test=_as_test(chosen, node.op), orelse=[],
                              body=needed + [self.located(nodes.assign(chosen, self.materialize(value)))]))
        return self.dyn(name_node(chosen))

    def eval_Compare(self, node):
        operands = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
        if any(isinstance(op, (gast.Is, gast.IsNot)) for op in node.ops) and len(node.ops) == 1:
            left, right = operands
            if isinstance(left, Dyn) != isinstance(right, Dyn):
                return isinstance(node.ops[0], gast.IsNot)
        if any(_is_runtime(v) for v in operands) and len(node.ops) == 1:
            return self.runtime_compare(node, node.ops[0], *operands)
        if any(_is_runtime(v) for v in operands):
            return self.dyn(gast.Compare(left=self.materialize(operands[0]), ops=node.ops,
                                         comparators=[self.materialize(v) for v in operands[1:]]))
        result = True
        for op, left, right in zip(node.ops, operands, operands[1:]):
            result = self.fold(node, _COMPARE[type(op)], left, right)
            if not result:
                return result
        return result

    def eval_IfExp(self, node):
        test = self.eval(node.test)
        if not isinstance(test, Dyn):
            return self.eval(node.body if test else node.orelse)
        (body_needs, body), (orelse_needs, orelse) = self.eval_on_path(node.body), self.eval_on_path(node.orelse)
        # one abstract value where both arms have it (``2.0 if c else 0.5`` stays a weak float, which a float32
        # array keeps its dtype with); arms of two dtypes or ranks give the value's dtype by the path taken
        avals = {dtypes.aval_of(body), dtypes.aval_of(orelse)}
        aval = avals.pop() if len(avals) == 1 else None
        if not (body_needs or orelse_needs):
            return Dyn(gast.IfExp(test=test.expr(), body=self.materialize(body), orelse=self.materialize(orelse)),
                       aval)
        # an arm whose evaluation needs statements (a check) runs them only on its path, as Python does
        chosen = self.namer.new("chosen")
        arms = [needs + [self.located(nodes.assign(chosen, self.materialize(value)))]
                for needs, value in ((body_needs, body), (orelse_needs, orelse))]
        self.emit(gast.If(test=test.expr(), body=arms[0], orelse=arms[1]))
        return Dyn(name_node(chosen), aval)

    def eval_on_path(self, node) -> Tuple[List[gast.stmt], Any]:
        """Evaluate ``node``, which runs only on some paths (an arm of ``a if c else b``, an operand of ``and``
        after the first): the statements its evaluation emits, returned rather than emitted, and its value.
        A variable whose read it checks (``MaybeBound``) is still unchecked on the other paths."""
        saved = (self.block, self.env)
        self.block, self.env = [], dict(self.env)
        self.runtime_depth += 1
        try:
            value = self.eval(node)
            return self.block, value
        finally:
            self.runtime_depth -= 1
            self.block, self.env = saved

    def eval_Tuple(self, node):
        return tuple(self.eval(e) for e in node.elts)

    def eval_List(self, node):
        return [self.eval(e) for e in node.elts]

    def eval_Dict(self, node):
        if any(k is None for k in node.keys):
            self.fail(node, "`**` unpacking in dict literals is not supported")
        return {self.static(k, "a dict key"): self.eval(v) for k, v in zip(node.keys, node.values)}

    def eval_Slice(self, node):
        parts = [None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts)

    def eval_Subscript(self, node):
        base, index = self.eval(node.value), self.eval(node.slice)
        if isinstance(base, AtIndexer):  # ``x.at[index]``
            return base.at_index(self.snapshot(index))
        if isinstance(base, RunTimeList):
            return self.list_item(node, base, index)
        if _is_runtime(base):
            aval = _DIM if _is_dim(base, index) else base.item(index) if isinstance(base, Items) else \
                dtypes.index(dtypes.aval_of(base), index)
            return Dyn(self.user_subscript(node, self.materialize(base), index, gast.Load()), aval)
        if isinstance(index, Dyn) or (isinstance(index, tuple) and any(isinstance(i, Dyn) for i in index)):
            raise NeedStatic(f"indexing a {type(base).__name__} with a run-time value")
        try:
            return base[index]
        except (IndexError, KeyError, TypeError) as exc:
            self.fail(node, f"cannot index this {type(base).__name__}: {exc}")

    def user_subscript(self, node: gast.Subscript, base: gast.expr, index: Any, ctx: gast.expr_context):
        """``base[index]`` for the user's subscript ``node``, its integer indices to be checked at run time.

        Only subscripts the user wrote come through here: the ones numbax generates (``vmap``'s loop over
        the batch, loops over an array's rows) are built without the mark and are never checked."""
        subscript = gast.Subscript(value=base, slice=self.materialize_index(index), ctx=ctx)
        if not (isinstance(base, gast.Attribute) and base.attr in _TUPLES):
            run_time_checks.mark(subscript, "check_index", self.check_origin(node))
        return subscript

    def check(self, node: gast.AST, value: Any, check) -> None:
        """Have the run-time check ``check`` (from ``specialize.checks``) made of ``value``, the run-time result
        of the user's ``node``, before it is computed.

        Code that a transformation rewrites gets its contractions checked by reverse mode itself
        (``contraction_checks``, JAX's error); its other shape checks stay in the forward sweep, and reverse
        mode drops those that its symbolic shapes prove (``proven_checks``)."""
        if check is None or not isinstance(value, Dyn) or \
                (self.builder.differentiated and check[0] in checks.CONTRACTION_CHECKS):
            return
        operation = value.node.args[0] if anno.getanno(value.node, anno.Key.SCALAR_CAST, False) else value.node
        run_time_checks.mark(operation, check[0], self.check_origin(node), *check[1:])

    def materialize_index(self, index: Any) -> gast.expr:
        """An index expression: slices stay slices inside tuples (``x[:, 0]``); a list of integers or bools is
        the array NumPy makes of it (``x[[1, 1, 0]]``: Numba indexes with arrays, not lists)."""
        if isinstance(index, tuple):
            return gast.Tuple(elts=[self.materialize(dtypes.index_array(i)) for i in index], ctx=gast.Load())
        return self.materialize(dtypes.index_array(index))

    def eval_Lambda(self, node):
        ret = gast.copy_location(gast.Return(value=node.body), node.body)
        fdef = gast.FunctionDef(name="lambda_", args=node.args, body=[ret], decorator_list=[], returns=None,
                                type_comment=None, type_params=[])
        return self.local_function(gast.copy_location(fdef, node))

    def eval_ListComp(self, node):
        return self.comprehension(node.elt, node.generators, [], node)

    def eval_GeneratorExp(self, node):
        """``sum(f(x) for x in xs)``: the list its items make, unrolled like a list comprehension's (the code
        numbax compiles is pure, so evaluating the items at once gives what a consumer would)."""
        return self.comprehension(node.elt, node.generators, [], node)

    def comprehension(self, elt, generators, out: list, node: Optional[gast.expr] = None) -> Any:
        """A list comprehension (or generator expression) over compile-time containers, unrolled; over a
        run-time range or array (its one generator, ``node`` the comprehension), a ``RunTimeList``."""
        if not generators:
            out.append(self.snapshot(self.eval(elt)))
            return out
        gen = generators[0]
        iterable = self.eval(gen.iter)
        if isinstance(iterable, (Dyn, RunTimeList)):
            if node is None or len(generators) > 1:
                self.fail(gen.iter, "a comprehension with several `for`s over run-time values",
                          hint="write the loops, filling a preallocated array (out[i, j] = ...).")
            return self.run_time_comprehension(node, elt, gen, iterable)
        saved = dict(self.env)
        for item in iterable:
            self.bind_static_target(gen.target, item)
            if all(self.static(cond, "a comprehension condition") for cond in gen.ifs):
                self.comprehension(elt, generators[1:], out)
        self.env = saved
        return out

    def eval_JoinedStr(self, node):
        parts = []
        for value in node.values:
            if isinstance(value, gast.Constant):
                parts.append(str(value.value))
            else:
                inner = self.static(value.value, "a value in an f-string")
                spec = self.static(value.format_spec, "a format spec") if value.format_spec else ""
                parts.append(format(inner, spec))
        return "".join(parts)

    def eval_FormattedValue(self, node):
        return self.eval_JoinedStr(gast.JoinedStr(values=[node]))

    def static(self, node: gast.expr, what: str) -> Any:
        """Evaluate ``node``, which must be known at compile time."""
        value = self.eval(node)
        if isinstance(value, Dyn):
            self.fail(node, f"{what} must be known at compile time, but it depends on run-time values",
                      hint="compute it from static arguments, shapes' ndim or container lengths, "
                      "or mark the argument static with static_argnums.")
        return value

    def fold(self, node: gast.expr, fn, *args, **kwargs) -> Any:
        """Apply ``fn`` at compile time, reporting its error at the user's line."""
        try:
            return fn(*args, **kwargs)
        except NeedStatic:
            raise
        except Exception as exc:  # the user's own error, surfaced at their line
            self.fail(node, f"{type(exc).__name__} while evaluating at compile time: {exc}")

    def local_function(self, node: gast.FunctionDef) -> LocalFunction:
        """A closure over the current environment and the ones enclosing it (a lambda in a local ``def`` reads
        the compiled function's variables too, not globals of their names), with its defaults evaluated now."""
        defaults = [self.eval(d) for d in node.args.defaults]
        kw_defaults = {arg.id: self.eval(d) for arg, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
                       if d is not None}
        env = collections.ChainMap(self.env, self.closure_env) if self.closure_env else self.env
        return LocalFunction(node=node, env=env, name=node.name, defaults=defaults, namespace=self.namespace,
                             owner=self, kw_defaults=kw_defaults)

    def lookup_free(self, name: str, node: gast.expr) -> Any:
        """A name not assigned in the function: closure cell, global or builtin."""
        value = self.namespace.lookup(name)
        if value is resolve.MISSING:
            self.fail(node, f"name `{name}` is not defined")
        return value
