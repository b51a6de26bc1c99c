"""Calls during specialization: fold what is known, inline user functions, emit the rest."""
from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import types
from typing import Any, Dict, List

import gast
import numpy as np

from numbax import source_files
from numbax.ast_passes import legalize, resolve
from numbax.ast_passes.analyses.primitives import Application
from numbax.ast_passes.specialize import checks, dtypes, keywords
from numbax.ast_passes.specialize import compile_time  # noqa: F401  (gives tree_util's functions the hooks read here)
from numbax.ast_passes.specialize import stacking  # noqa: F401  (gives rt.stack_buffer its hook)
from numbax.ast_passes.specialize.materialize import name_node
from numbax.ast_passes.specialize.values import AVal, Dyn, Items, LocalFunction, Method, Partial, RunTimeList, \
    contains_dyn, is_static_scalar
from numbax.errors import NumbaxError, NumbaxShapeError
from numbax.primitives import registry
from numbax.runtime import special

# Builtins that work on containers whatever their leaves are (``len(params)``, ``zip(ws, bs)``).
_STRUCTURAL = {len, zip, enumerate, reversed, list, tuple, dict, isinstance, type, range, sorted, callable,
               getattr, hasattr, iter, next}
# NumPy functions that flatten their operand without ``axis``, a number into a vector of one element
# (``np.cumsum(3)`` is ``array([3])``), which Numba's return as a number.
_FLATTENING = {np.cumsum, np.cumprod}
# Builtins and modules folded only when every argument is known.
_PURE = {min, max, abs, int, float, bool, round, sum, pow, divmod, str, complex, any, all, repr, format}
# NumPy functions that Numba wants a tuple of arrays for.
_TUPLE_ARGS = {np.concatenate, np.stack, np.hstack, np.vstack, np.dstack, np.column_stack}
# NumPy functions whose positional operands here are vectors: a list or tuple display is made an array first, so
# that the runtime helper and the derivative rules see one (``np.polyval([a, 1.0], x)``); another ndim is refused.
_VECTOR_OPERANDS = {np.polyval: (0,), np.interp: (1, 2), np.convolve: (0, 1)}
# NumPy functions that make a bool or integer operand float64 first (``np.linalg.norm``: ``x.astype(float)``;
# ``np.sinc``: ``np.where(x == 0, 1.0e-20, x)``), which Numba's do not (its sinc of integers is integers).
_FLOATED_OPERANDS = {np.linalg.norm: (0,), np.sinc: (0,)}
# NumPy functions whose result is complex for some real inputs, and the helpers that say so at the user's line.
_REAL_EIG = {np.linalg.eig: "rt.eig", np.linalg.eigvals: "rt.eigvals"}
# Conversions that Numba applies to numbers only.
_NUMBER_TYPES = {float, int, bool, complex}
# A Python type passed to NumPy as a dtype, as NumPy reads it (``dtype=float``: float64); Numba has no dtype for
# one (``np.full(n, 1, dtype=bool)`` compiled to a float64 array, most such calls failed to compile)
_NUMPY_TYPES = {bool: np.bool_, int: np.dtype(int).type, float: np.float64, complex: np.complex128}
# Constructors of arrays -> where the value of a 0-d result comes from: the argument that holds it (position,
# name), or the value itself. Compiled code holds a 0-d array as a number (numbax.runtime.boundary).
_ZERO_D_CONSTRUCTORS = {np.array: (0, "object"), np.asarray: (0, "a"), np.ascontiguousarray: (0, "a"),
                        np.copy: (0, "a"), np.full: (1, "fill_value"), np.full_like: (1, "fill_value"),
                        np.zeros: 0.0, np.zeros_like: 0.0, np.empty: 0.0, np.empty_like: 0.0, np.ones: 1.0,
                        np.ones_like: 1.0}
# NumPy functions that wrap or call Python callables at run time
_PYTHON_CALLABLES = {np.frompyfunc, np.vectorize, np.apply_along_axis, np.apply_over_axes, np.piecewise}
_MUTATING = {"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
             "sort", "reverse"}


def as_numpy_types(args: List[Any], kwargs: Dict[str, Any]):
    """The arguments of a call of NumPy or of an array's method, a Python type among them as the NumPy type
    NumPy reads it as (``np.zeros(n, dtype=int)`` is ``np.zeros(n, dtype=np.int64)``), and so a dtype named
    by a string (``dtype="int32"``, which Numba's ``np.arange`` and ``np.sum`` do not take)."""
    def numpy(value: Any) -> Any:
        return _NUMPY_TYPES[value] if isinstance(value, type) and value in _NUMPY_TYPES else value

    def dtype(value: Any) -> Any:
        try:
            return np.dtype(value).type if isinstance(value, str) else numpy(value)
        except TypeError:  # not a dtype's name: NumPy's error, raised where it is probed
            return value

    return [numpy(a) for a in args], {k: dtype(v) if k == "dtype" else numpy(v) for k, v in kwargs.items()}


def callee_name(func: Any) -> str:
    """How the user would spell a NumPy or SciPy callable (``np.linalg.norm``), for messages."""
    reference = resolve.canonical_reference(func)
    if reference is None:
        return getattr(func, "__qualname__", repr(func))
    return reference[1].replace("rt.", "scipy.special.")


def _is_pytree_type(func: Any) -> bool:
    return isinstance(func, type) and (
        (issubclass(func, tuple) and hasattr(func, "_fields")) or dataclasses.is_dataclass(func))


def _copied_by_wraps(func: Any, lowering: Any) -> bool:
    """Whether ``func``'s ``_numbax_specialize`` is the one of the function it wraps, copied with its
    ``__dict__`` by ``functools.wraps``: that hook specializes the other function, not ``func``."""
    wrapped = getattr(func, "__wrapped__", None)
    return wrapped is not None and getattr(wrapped, "_numbax_specialize", None) is lowering


def own_function(func: types.FunctionType) -> bool:
    """Whether ``func`` is numbax's own (a composite, an ``.at`` update, a Jacobian's sweep), not the user's."""
    return func.__code__.co_filename.startswith(source_files.root() + os.sep)


class CallsMixin:
    """Call evaluation for the ``Specializer``."""

    def eval_Call(self, node):
        func = self.eval(node.func)
        args = []
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                args.extend(self.unpacked(arg))
            else:
                args.append(self.eval(arg))
        kwargs = {k.arg: self.eval(k.value) for k in node.keywords}
        if None in kwargs:
            self.fail(node, "`**` unpacking in calls is not supported")
        return self.call_value(node, func, args, kwargs)

    def unpacked(self, node: gast.Starred) -> list:
        """The elements ``f(*xs)`` passes: ``xs`` must be a container whose length is known when compiling."""
        value = self.eval(node.value)
        if not isinstance(value, (tuple, list)):
            self.fail(node, "`*` in a call unpacks tuples and lists (whose lengths are known when compiling), "
                      f"not a {'run-time array or number' if isinstance(value, Dyn) else type(value).__name__}",
                      hint="pass the elements one by one, or pass the tuple itself.")
        return list(value)

    def call_value(self, node, func: Any, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        """Call the compile-time value ``func`` on evaluated arguments, at the user's ``node``.

        An object with a ``_numbax_specialize(specializer, node, args, kwargs)`` attribute
        (``numbax.lax``, ``numbax.tree_util``) specializes its own calls.
        """
        lowering = getattr(func, "_numbax_specialize", None)
        if lowering is not None and not _copied_by_wraps(func, lowering):
            return lowering(self, node, args, kwargs)
        if isinstance(func, Dyn):
            if not isinstance(func.node, gast.Attribute):
                self.fail(node, "calling a value computed at run time (the result of a call, or a variable "
                          "holding one) is not supported",
                          hint="call a function known when compiling: a NumPy function or a Python function.")
            self.check_method_keywords(node, func, kwargs)
            function = getattr(np, func.node.attr, None)
            if isinstance(func, Method) and registry.keyword_composite(function, kwargs) is not None:
                receiver = Dyn(func.node.value, func.receiver)  # x.sum(where=m) as np.sum(x, where=m)
                return self.call_value(node, function, [receiver] + list(args), kwargs)
            args, kwargs = keywords.positional(func.node.attr, *as_numpy_types(args, kwargs))
            out = self.emit_call(node, func.expr(), args, kwargs)
            self.check(node, out, checks.method(func.node.attr, args, kwargs))
            if not isinstance(func, Method):
                return out
            out.aval = self.probed(node, f"`.{func.node.attr}()`",
                                   lambda: dtypes.method_call(func.receiver, func.node.attr, args, kwargs))
            return self.in_numpys_dtype(getattr(np, func.node.attr, None), out)
        if isinstance(func, (functools.partial, Partial)):
            while isinstance(func, (functools.partial, Partial)):
                owner = getattr(func, "owner", None)  # a Partial's bound values are its maker's variables
                func, args, kwargs = func.func, list(self.import_value(func.args, owner)) + args, \
                    {**self.import_value(func.keywords, owner), **kwargs}
            return self.call_value(node, func, args, kwargs)  # what it binds may specialize its own calls
        if isinstance(func, LocalFunction):
            return self.call_user(node, func.node, func.name, func.namespace or self.namespace, func.env,
                                  self.import_value(func.defaults, func.owner), args, kwargs, key=id(func.node),
                                  kw_defaults=self.import_value(func.kw_defaults, func.owner),
                                  closure_owner=func.owner)
        wrapped = getattr(func, "_numbax_fun", None) or getattr(func, "__numbax_primitive__", None)
        if wrapped is not None:
            func = wrapped
        if func is dataclasses.replace:  # a new pytree of the same class, made now (its source unpacks **changes)
            return self.fold(node, func, *[self.snapshot(a) for a in args],
                             **{k: self.snapshot(v) for k, v in kwargs.items()})
        if resolve.is_user_function(func):
            return self.call_python_function(node, func, args, kwargs)
        if any(isinstance(a, RunTimeList) for a in list(args) + list(kwargs.values())):
            return self.list_call(node, func, args, kwargs)
        return self.call_static(node, func, args, kwargs)

    def call_static(self, node, func, args: List[Any], kwargs: Dict[str, Any]) -> Any:
        """A call of a known object that is not a user function."""
        func = special.scipy_ufunc(func)
        direct = list(args) + list(kwargs.values())
        if func is functools.partial and args:
            return Partial(args[0], tuple(self.snapshot(a) for a in args[1:]),
                           {k: self.snapshot(v) for k, v in kwargs.items()}, owner=self)
        if func in _STRUCTURAL and not any(isinstance(a, (Dyn, np.ndarray)) for a in direct):
            return self.fold(node, func, *args, **kwargs)
        if (func in _PURE or self._is_math(func)) and not any(contains_dyn(a) for a in direct) \
                and not any(isinstance(a, np.ndarray) for a in direct):
            return self.fold(node, func, *args, **kwargs)
        if func is sum and args and isinstance(args[0], (list, tuple)):
            return self.call_sum(node, *args, **kwargs)
        owner = getattr(func, "__self__", None)
        if isinstance(func, types.BuiltinMethodType) and isinstance(owner, (list, dict)):
            return self.call_container_method(node, func, args, kwargs)
        if resolve.canonical_reference(func) is None and _is_pytree_type(func):
            return self.fold(node, func, *[self.snapshot(a) for a in args],
                             **{k: self.snapshot(v) for k, v in kwargs.items()})
        if func is abs:
            func = np.abs  # Numba's abs() takes scalars only; np.abs takes both
        if func in _NUMBER_TYPES and len(args) == 1 and not kwargs:
            args = [self.scalar_of(args[0])]
        if func in _PYTHON_CALLABLES:
            self.fail(node, f"`{callee_name(func)}` calls Python functions element by element, which compiled "
                      "code cannot do", hint="write the loop over the elements, or call a NumPy ufunc or a "
                      "Python function of numbers that numbax compiles.")
        try:
            callee = self.materializer.reference(func)
        except Exception:
            self.fail(node, f"cannot call {getattr(func, '__qualname__', repr(func))} in compiled code",
                      hint="call NumPy, math or builtin functions, or Python functions numbax can read.")
        reference = resolve.canonical_reference(func)[1]
        if reference in keywords.POSITIONS and args:
            after, kwargs = keywords.positional(reference, args[1:], kwargs)
            args = args[:1] + after
        self.check_keywords(node, func, kwargs)
        if reference.startswith("np."):  # a Python type passed as a dtype: NumPy's
            args, kwargs = as_numpy_types(args, kwargs)
        written = registry.composite(func, kwargs)
        if written is not None:  # its keywords not passed on are at NumPy's defaults (``check_keywords``)
            if isinstance(func, np.ufunc) and "out" in kwargs:  # which only ufuncs compiled as such implement
                self.fail(node, keywords.message(callee_name(func), "out"), hint=keywords.HINT)
            self.check_composite(node, func, args)
            if registry.elementwise_ufunc(func):  # its operands in the dtype of NumPy's loop, as the ufunc casts them
                args = self.loop_operands(node, func, args)
            accepted = inspect.signature(written).parameters
            dropped = keywords.not_taken(func, kwargs, accepted)
            if dropped is not None:
                self.fail(node, keywords.message(callee_name(func), dropped), hint=keywords.HINT)
            return self.call_composite(node, func, written, args, {k: v for k, v in kwargs.items() if k in accepted})
        if isinstance(func, np.ufunc):
            return self.call_ufunc(node, func, args, kwargs.get("out"))
        if func in (np.array, np.asarray) and len(args) == 1 and not kwargs and isinstance(args[0], (list, tuple)) \
                and args[0] and all(checks.is_array(dtypes.aval_of(a)) for a in args[0]):
            return self.call_value(node, np.stack, [tuple(args[0])], {})  # Numba's np.array takes no arrays
        if func in (np.array, np.asarray) and len(args) == 1 and set(kwargs) == {"dtype"} and \
                isinstance(args[0], Dyn) and checks.is_array(args[0].aval) and args[0].aval.ndim > 0:
            return self.cast_array(node, func, args[0], kwargs["dtype"])
        if func in _TUPLE_ARGS and args and isinstance(args[0], list):
            args = [tuple(args[0])] + list(args[1:])
        args = [self.vector_operand(node, func, i, a) if i in _VECTOR_OPERANDS.get(func, ()) else a
                for i, a in enumerate(args)]
        args = [self.floated_operand(a) if i in _FLOATED_OPERANDS.get(func, ()) else a for i, a in enumerate(args)]
        if func in _FLATTENING and len(args) == 1 and kwargs.get("axis") is None:
            args = [self.vector_of_a_number(args[0])]
        aval = self.representable(node, self.probed(node, f"`{callee_name(func)}`",
                                                    lambda: dtypes.numpy_call(func, args, kwargs)),
                                  f"`{callee_name(func)}`")
        if func in _ZERO_D_CONSTRUCTORS and aval is not None and aval.ndim == 0 and not aval.weak:
            return self.zero_d_array(func, args, kwargs, aval)
        args = self.promoted_operands(func, args, aval)
        if func in _REAL_EIG and not kwargs and len(args) == 1 and checks.is_real_array(args[0]) and \
                self.origin(node) is not None:  # Numba's result is real: an error at the user's line where it is not
            callee, args = resolve.reference_node(_REAL_EIG[func]), [args[0], self.origin(node).position()]
        call = self.emit_call(node, callee, args, kwargs)
        call.aval = aval
        self.check(node, call, checks.call(func, args, kwargs))
        if len(args) == 2 and not kwargs:
            self.check(node, call, checks.power(func, *args))
        items = None if aval is not None else dtypes.numpy_call_items(func, args, kwargs)
        if items is not None:  # several results: each keeps its abstract value when unpacked
            return Items(call.node, items)
        return self.in_numpys_dtype(func, call)

    def zero_d_array(self, func, args: List[Any], kwargs: Dict[str, Any], aval) -> Dyn:
        """A constructor's 0-d array as the number of its dtype that compiled code holds it as: ``np.array(0.0)``,
        ``np.zeros(())``, ``np.full((), v)`` are ``np.float64(0.0)``, ``np.float64(v)``."""
        source = _ZERO_D_CONSTRUCTORS[func]
        if isinstance(source, tuple):
            position, name = source
            value = args[position] if len(args) > position else kwargs[name]  # NumPy's binding: one is there
        else:
            value = source
        return Dyn(gast.Call(func=self.materializer.reference(aval.dtype.type), args=[self.materialize(value)],
                             keywords=[]), aval)

    def vector_of_a_number(self, value: Any) -> Any:
        """A 0-d run-time operand of ``_FLATTENING`` as the vector of its one element (``np.atleast_1d``)."""
        if is_static_scalar(value):
            return np.atleast_1d(value)
        aval = dtypes.aval_of(value)
        if not isinstance(value, Dyn) or aval is None or aval.ndim != 0:
            return value
        return Dyn(gast.Call(func=resolve.reference_node("np.atleast_1d"), args=[value.expr()], keywords=[]),
                   AVal(aval.dtype, 1))  # a Python number's: int64, float64 (NumPy's too)

    def floated_operand(self, value: Any) -> Any:
        """An operand of ``_FLOATED_OPERANDS``: a bool or integer array as float64, as NumPy makes it."""
        aval = dtypes.aval_of(value)
        if not checks.is_array(aval) or aval.dtype.kind not in "biu":
            return value
        return self.operand_in(value, AVal(np.dtype(np.float64), aval.ndim))

    def vector_operand(self, node, func, position: int, value: Any) -> Any:
        """Operand ``position`` of ``func`` (``_VECTOR_OPERANDS``) as a vector: a list or tuple made an array, an
        array of another ndim refused at the user's line (its runtime helper and rules take vectors only)."""
        if isinstance(value, (list, tuple)):
            value = self.call_value(node, np.array, [value], {})
        aval = dtypes.aval_of(value)
        if aval is not None and aval.ndim != 1:
            self.fail(node, f"`{callee_name(func)}` takes a 1-D array as its operand {position + 1} here, not a "
                      f"{aval.ndim}-D one", hint="pass a vector (np.ravel(...), or a row of the array).")
        return value

    def in_numpys_dtype(self, func, call: Dyn) -> Dyn:
        """A reduction's result in NumPy's dtype where Numba accumulates in another (``np.sum`` of float32 is
        float32 in NumPy, float64 in Numba; of uint8, uint64 and int64): cast unless it is a widest dtype.
        Not in code a transformation differentiates: reverse mode accumulates in float64 and returns gradients
        in their parameters' dtypes, forward mode gives the tangents its outputs' dtypes."""
        aval = call.aval
        if func not in dtypes.ACCUMULATING or aval is None or aval.dtype in dtypes.WIDEST or \
                self.builder.differentiated:
            return call
        if aval.ndim == 0:
            return Dyn(gast.Call(func=self.materializer.reference(aval.dtype.type), args=[call.node], keywords=[]),
                       aval)
        astype = gast.Attribute(value=call.node, attr="astype", ctx=gast.Load())
        return Dyn(gast.Call(func=astype, args=[self.materializer.reference(aval.dtype.type)], keywords=[]), aval)

    def promoted_operands(self, func, args: List[Any], result) -> List[Any]:
        """The arguments of a function that NumPy computes in its result's dtype (``np.clip``, ``np.where``),
        each in that dtype: Numba keeps the first array's dtype or widens a weak number (see ``dtypes``)."""
        positions = dtypes.PROMOTED.get(func, ())
        if result is None or not positions:
            return args
        beyond = "clamp" if func is np.clip else "wrap"
        return [self.operand_in(a, result, beyond) if i in positions else a for i, a in enumerate(args)]

    def operand_in(self, value: Any, result, beyond: str = "raise") -> Any:
        """``value`` spelled in ``result``'s dtype where NumPy computes it there but Numba would not; a Python
        int outside an integer dtype's range as ``dtypes.weak_int`` takes it (``beyond``)."""
        aval = dtypes.aval_of(value)
        if aval is None:
            return value
        if aval.weak and not isinstance(value, Dyn):
            return dtypes.weak_int(value, result.dtype, beyond) if result.dtype.kind in "iu" and \
                isinstance(value, int) else result.dtype.type(value)
        if aval.dtype == result.dtype:
            return value
        if isinstance(value, np.ndarray):
            return value.astype(result.dtype)
        if aval.ndim == 0:
            return Dyn(gast.Call(func=self.materializer.reference(result.dtype.type), args=[self.materialize(value)],
                                 keywords=[]), AVal(result.dtype, 0))
        astype = gast.Attribute(value=self.materialize(value), attr="astype", ctx=gast.Load())
        return Dyn(gast.Call(func=astype, args=[self.materializer.reference(result.dtype.type)], keywords=[]),
                   AVal(result.dtype, aval.ndim))

    def call_sum(self, node, items, start=0) -> Any:
        """Builtin ``sum`` of a list or tuple: ``start + items[0] + items[1] + ...``, as Python adds them."""
        total = start
        for item in items:
            total = self.binop(node, gast.Add(), total, item)
        return total

    @staticmethod
    def scalar_of(value: Any) -> Any:
        """``float(x)`` of a 0-d array: Numba's ``float`` takes numbers only, so read ``x.item()`` first."""
        aval = value.aval if isinstance(value, Dyn) else None
        if aval is None or aval.ndim != 0 or aval.weak:
            return value
        item = gast.Call(func=gast.Attribute(value=value.expr(), attr="item", ctx=gast.Load()), args=[], keywords=[])
        return Dyn(item, aval)

    def check_keywords(self, node, func, kwargs: Dict[str, Any]) -> None:
        """Refuse, at the user's line, a keyword of a NumPy or SciPy call that numbax does not implement."""
        keyword = keywords.refused(func, kwargs)
        if keyword is not None:
            self.fail(node, keywords.message(callee_name(func), keyword), hint=keywords.HINT)

    def cast_array(self, node, func, array: Dyn, dtype: Any) -> Any:
        """``np.array(x, dtype=d)`` of an array ``x`` as ``x.astype(d)`` (a copy, as NumPy's, which every
        transformation has rules for); ``np.asarray`` the same where ``d`` is not ``x``'s dtype, and ``x`` itself
        (NumPy returns it) where it is."""
        try:
            wanted = np.dtype(dtype)
        except TypeError:
            self.fail(node, f"`{callee_name(func)}` with dtype={dtype!r}, which is not a NumPy dtype known when "
                      "compiling", hint="pass a NumPy type (np.float64, np.int32) or its name.")
        if func is np.asarray and wanted == array.aval.dtype:
            return array
        astype = Method(gast.Attribute(value=array.expr(), attr="astype", ctx=gast.Load()), array.aval)
        return self.call_value(node, astype, [wanted.type], {})

    def probed(self, node, what: str, probe):
        """``probe()``, an abstract value found by calling NumPy on probes; an axis the operands' ranks rule out
        refused at the user's line as NumPy and JAX refuse it (a ``ValueError``)."""
        try:
            return probe()
        except dtypes.AxisOutOfBounds as exc:
            origin = self.origin(node)
            raise NumbaxShapeError(f"{what}: {exc}", origin.position() if origin is not None else "") from None

    def check_composite(self, node, func, args: List[Any]) -> None:
        """Refuse, at the user's line, a call of a composite whose operands its Python does not cover (the
        entry's ``refuse``, given the call as written and its operands' ``(kind, ndim)``)."""
        app = Application(func, callee_name(func), list(node.args), {k.arg: k.value for k in node.keywords})
        avals = [dtypes.aval_of(a) for a in args]
        refused = registry.refusal(func, app, [(a.dtype.kind, a.ndim) if a is not None else None for a in avals])
        if refused is not None:
            self.fail(node, f"numbax has no rule for {callee_name(func)} {refused}",
                      hint="compute it in NumPy code of the cases numbax has (numbax.coverage() lists them).")

    def loop_operands(self, node, func: np.ufunc, args: List[Any]) -> List[Any]:
        """The operands of a ufunc written as a composite (``np.deg2rad``, ``np.heaviside``), each in the dtype of
        NumPy's result, which its loops compute in (``np.deg2rad`` of int16 in float32); float16 refused, and
        dtypes NumPy has no loop for (``np.deg2rad`` of complex numbers: its TypeError)."""
        if len(args) != func.nin:
            return args
        avals = [dtypes.aval_of(a) for a in args]
        self.refuse_numpys_refusal(node, func, avals, f"`{callee_name(func)}`")
        result = self.representable(node, dtypes.ufunc_call(func, avals), f"`{callee_name(func)}`")
        if result is None or result.dtype.kind not in "fc":
            return args
        return [self.fold(node, self.operand_in, a, result) for a in args]

    def call_composite(self, node, func, written: types.FunctionType, args: List[Any], kwargs: Dict[str, Any]):
        """The composite ``written`` of ``func`` specialized at the call; an error raised at one of its lines (an
        operand its Python cannot take, ``np.nan_to_num`` of a number reading ``x.dtype``) is reported at the
        user's call, which is what the user can change."""
        try:
            return self.call_python_function(node, written, args, kwargs)
        except NumbaxError as error:
            if error.origin is None or error.origin.filename != written.__code__.co_filename:
                raise
            raise error.moved(self.origin(node), f"{callee_name(func)} of these operands: {error.message}") from None

    def check_method_keywords(self, node, method: Dyn, kwargs: Dict[str, Any]) -> None:
        """Refuse a keyword of an array method (``x.sum(out=y)``) that numbax does not implement."""
        if kwargs and isinstance(method.node, gast.Attribute):
            keyword = keywords.refused_method(method.node.attr, kwargs)
            if keyword is not None:
                self.fail(node, keywords.message(f".{method.node.attr}()", keyword), hint=keywords.HINT)

    def call_ufunc(self, node, func: np.ufunc, args, out: Any = None) -> Dyn:
        """A NumPy ufunc: its abstract value inferred, weak numbers kept weak (see ``dtypes``).

        ``out``, given by keyword or as the argument after the operands, receives the result
        (``out[:] = np.add(x1, x2)``) and is what the call returns, as in NumPy.
        """
        if len(args) == func.nin + 1 and out is None:
            args, out = args[:-1], args[-1]
        if isinstance(out, tuple) and len(out) == 1:
            out = out[0]
        if len(args) != func.nin or (out is not None and func.nout != 1):
            self.fail(node, f"`np.{func.__name__}` takes {func.nin} operands"
                      f"{' and `out=`' if func.nout == 1 else ''}, got {len(args)}" + (" and `out=`" * (out is not None)))
        avals = [dtypes.aval_of(a) for a in args]
        self.refuse_numpys_refusal(node, func, avals, f"`np.{func.__name__}`")  # np.sign of bools: no loop
        result = self.representable(node, dtypes.ufunc_call(func, avals), f"`np.{func.__name__}`")
        if func in dtypes.ORDERING_UFUNCS and any(a is not None and a.dtype.kind == "c" for a in avals):
            self.refuse_dtype(node, f"`np.{func.__name__}` of complex numbers",
                              "compare np.real(z) or np.abs(z) instead (NumPy's lexicographic order of "
                              "complex numbers is not compiled)")
        narrowed = dtypes.narrowed_operands(func, avals, result)
        args = [self.fold(node, self.operand_in, a, result) if k in narrowed else a for k, a in enumerate(args)]
        kept = func.__name__ not in legalize.VECTORIZED  # (numbax's own loops widen next to an integer literal)
        operands = [self.weak_operand(node, a, aval, result, kept) for a, aval in zip(args, avals)]
        call = gast.Call(func=self.materializer.reference(func), args=operands, keywords=[])
        value = Dyn(call, result)
        self.check(node, value, checks.call(func, args, {}))
        if len(args) == 2:
            self.check(node, value, checks.power(func, *args))
            self.check(node, value, checks.shift(func, *args))
        return value if out is None else self.store_out(node, func, value, out)

    def store_out(self, node, func: np.ufunc, result: Dyn, out: Any) -> Dyn:
        """``out[:] = result`` for a ufunc's ``out=`` array, refused where NumPy's casting refuses it."""
        if not isinstance(out, Dyn) or (out.aval is not None and out.aval.ndim == 0):
            self.fail(node, f"`out=` of `np.{func.__name__}` must be an array of the compiled function",
                      hint="pass an array (np.empty_like(x)), or assign the result instead.")
        if result.aval is not None and out.aval is not None and not np.can_cast(result.aval.dtype, out.aval.dtype, "same_kind"):
            self.fail(node, f"`np.{func.__name__}` gives {result.aval.dtype}, which `out=` of dtype "
                      f"{out.aval.dtype} cannot hold (NumPy's casting='same_kind')",
                      hint="pass an `out=` array of the result's dtype.")
        whole = gast.Slice(lower=None, upper=None, step=None)  # ``out[:]``: Numba does not read ``a[...]``
        target = gast.Subscript(value=out.expr(), slice=whole, ctx=gast.Store())
        self.emit(gast.Assign(targets=[target], value=result.expr()))
        return Dyn(out.expr(), out.aval)

    @staticmethod
    def _is_math(func: Any) -> bool:
        return getattr(func, "__module__", None) == "math" or (
            isinstance(func, np.ufunc) and func.nin >= 1)

    def call_container_method(self, node, method, args, kwargs):
        """``params.append(x)`` on a compile-time list: done now, so not inside run-time control flow."""
        if method.__name__ in _MUTATING:
            self.refuse_writes_into_foreign(node, method.__self__, f"`{method.__name__}`", (args, kwargs))
        if method.__name__ in _MUTATING and self.runtime_depth > 0:
            self.fail(node, f"`{method.__name__}` on a list or dict inside run-time control flow",
                      hint="a list grows in a loop that runs when called only by one `append` per iteration at the "
                      "top level of a `for` loop's body (not under `if`, not in a `while`): preallocate the "
                      "result and write its rows "
                      "(out = np.zeros((n,) + shape); out[i] = ...), or write the loop as lax.scan, whose stacked "
                      "outputs are that array.")
        args = [self.snapshot(a) for a in args]
        return self.fold(node, method, *args, **kwargs)

    def emit_call(self, node, callee: gast.expr, args, kwargs) -> Dyn:
        """A call left to generated code."""
        call = gast.Call(func=callee, args=[self.materialize(a) for a in args],
                         keywords=[gast.keyword(arg=k, value=self.materialize(v)) for k, v in kwargs.items()])
        return self.dyn(call)

    def call_python_function(self, node, func: types.FunctionType, args, kwargs, owner: Any = None):
        """Specialize a user function for these arguments and call the result. ``owner`` tells apart calls
        of one function of numbax's own for different objects (a Jacobian's sweep for each Jacobian, so that
        ``jacrev(jacrev(f))`` is not taken for recursion)."""
        fdef, namespace = self.builder.parsed.get(func) or self._parse(func)
        key = resolve.function_key(func) + (() if owner is None else (id(owner),))
        call_site = (self.call_site or self.origin(node)) if own_function(func) else None
        return self.call_user(node, fdef, func.__name__, namespace, {}, list(func.__defaults__ or ()),
                              args, kwargs, key=key, kw_defaults=dict(func.__kwdefaults__ or {}), call_site=call_site)

    def _parse(self, func: types.FunctionType):
        """Parse and fence a user function once per compilation (specializing never changes the tree)."""
        from numbax.ast_passes import fence
        from numbax.ast_passes.parse import parse_function

        parsed = parse_function(func)
        fence.check(parsed.node)
        self.builder.parsed[func] = parsed.node, resolve.Namespace(parsed.closure, parsed.globals)
        return self.builder.parsed[func]

    def bind_arguments(self, node, fdef: gast.FunctionDef, defaults, args, kwargs,
                       kw_defaults: Dict[str, Any]) -> Dict[str, Any]:
        """Match call arguments to parameters as Python does, raising at the call's line; ``defaults`` and
        ``kw_defaults`` are the values the function's defaults took when it was defined."""
        params = [a.id for a in fdef.args.posonlyargs + fdef.args.args]
        kwonly = [a.id for a in fdef.args.kwonlyargs]
        variadic, keywords = fdef.args.vararg, fdef.args.kwarg
        if len(args) > len(params) and variadic is None:
            self.fail(node, f"`{fdef.name}` takes {len(params)} positional arguments but {len(args)} were given")
        bound = dict(zip(params, args))
        if variadic is not None:  # ``*args``: a tuple of the rest, known in length, as Python binds it
            bound[variadic.id] = tuple(args[len(params):])
        extra = {}
        for key, value in kwargs.items():
            if key in bound or key in (p.id for p in fdef.args.posonlyargs) or \
                    (key not in params + kwonly and keywords is None):
                self.fail(node, f"`{fdef.name}` got an unexpected or repeated argument `{key}`")
            if key in params + kwonly:
                bound[key] = value
            else:
                extra[key] = value
        if keywords is not None:  # ``**kwargs``: a dict of the other keywords
            bound[keywords.id] = extra
        for name, default in zip(params[len(params) - len(defaults):], defaults):
            bound.setdefault(name, default)
        for name, default in kw_defaults.items():
            bound.setdefault(name, default)
        missing = [p for p in params + kwonly if p not in bound]
        if missing:
            self.fail(node, f"`{fdef.name}` is missing arguments: {', '.join(missing)}")
        return bound

    def call_user(self, node, fdef, name, namespace, closure_env, defaults, args, kwargs, key,
                  kw_defaults=None, closure_owner=None, call_site=None):
        """Specialize ``fdef`` into a helper of the module and emit a call to it; ``closure_owner`` is the
        specializer whose variables ``closure_env``'s run-time values are; ``call_site``, the user's line its
        statements carry (for a function of numbax's own)."""
        if key in self.builder.stack:
            from numbax.errors import NumbaxRecursionError

            raise NumbaxRecursionError(f"`{name}` calls itself (recursion is not supported)",
                                       self.origin(node),
                                       hint="rewrite the recursion as a loop.")
        bound = self.bind_arguments(node, fdef, defaults, args, kwargs, kw_defaults or {})
        child = self.child(fdef, namespace, closure_env, key, closure_owner)
        child.call_site = call_site
        helper = child.specialize_helper(bound)
        return self.call_helper(helper)

    def snapshot(self, value: Any) -> Any:
        """Pin run-time leaves to fresh temporaries, so later reassignments do not change them."""
        if isinstance(value, Dyn):
            if isinstance(value.node, gast.Constant):
                return value
            temp = self.builder.namer.temp()
            self.emit_assign(temp, value)
            return Dyn(name_node(temp), value.aval)
        if isinstance(value, (list, tuple)) and contains_dyn(value):
            items = [self.snapshot(v) for v in value]
            return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
        if isinstance(value, dict) and contains_dyn(value):
            return {k: self.snapshot(v) for k, v in value.items()}
        return value

