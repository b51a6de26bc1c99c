"""The specializer: runs a user function's statements at compile time, emitting what cannot run."""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Set, Tuple

import gast
import numpy as np

from numbax import tree_util
from numbax.ast_passes import anno, resolve, run_time_checks, tree_copy
from numbax.ast_passes.naming import Namer, leaf_name
from numbax.ast_passes.specialize import checks, dtypes
from numbax.ast_passes.specialize.builder import DYNAMIC, Helper, ModuleBuilder, ReturnSpec
from numbax.ast_passes.specialize.calls import CallsMixin
from numbax.ast_passes.specialize.control_flow import ControlFlowMixin, unread_flags_dropped
from numbax.ast_passes.specialize.expressions import ExpressionsMixin
from numbax.ast_passes.specialize.materialize import Unrepresentable, name_node
from numbax.ast_passes.specialize.run_time_lists import RunTimeListsMixin
from numbax.ast_passes.specialize.values import AVal, Dyn, Imported, Items, Method, NeedStatic, Rows, RunTimeList, \
    contains_dyn, defining_scope, is_static_scalar
from numbax.ast_passes.unparse import unparse
from numbax.errors import NumbaxSpecializationError
from numbax.origin import Origin


def _is_dyn(x: Any) -> bool:
    return isinstance(x, Dyn)


def _path_part(key: Any) -> Any:
    for attr in ("idx", "key", "name"):
        if hasattr(key, attr):
            return getattr(key, attr)
    return key


def target_names(target: gast.expr) -> List[str]:
    """The names a tuple-or-name target binds; empty when it also stores into subscripts or attributes."""
    if isinstance(target, gast.Name):
        return [target.id]
    if isinstance(target, (gast.Tuple, gast.List)):
        names = [target_names(e) for e in target.elts]
        return [n for group in names for n in group] if all(names) else []
    return []


def assigned_names(stmts: List[gast.stmt]) -> set:
    """Names a block stores to (not counting nested function bodies)."""
    names = set()
    todo = list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (gast.FunctionDef, gast.Lambda)):
            if isinstance(node, gast.FunctionDef):
                names.add(node.name)
            continue
        if type(node) is gast.Name and type(node.ctx) is gast.Store:
            names.add(node.id)
        todo.extend(tree_copy.children(node))
    return names


class Specializer(ControlFlowMixin, CallsMixin, ExpressionsMixin, RunTimeListsMixin):
    """Specializes one user function (the entry point or a callee) to its arguments."""

    def __init__(self, builder: ModuleBuilder, fdef: gast.FunctionDef, namespace, closure_env=None, key=None,
                 parent: Optional["Specializer"] = None, closure_owner: Optional["Specializer"] = None):
        self.builder = builder
        self.key = key if key is not None else id(fdef)
        self.fdef = fdef
        self.namespace = namespace
        self.closure_env = closure_env or {}
        # the specializer whose code calls this one (None for the entry point), and the one that defined the
        # local function this one specializes: run-time values are expressions over one function's variables,
        # so a value of another function's reaches this one's code as a parameter (``import_value``)
        self.parent = parent
        self.closure_owner = closure_owner
        # where the user called the function of numbax's own this one specializes (a composite, an ``.at``
        # update, a Jacobian's sweep), or None: its statements carry that line, not numbax's (``own_function``)
        self.call_site: Optional[Origin] = None
        self._imports: Dict[Tuple[int, int], Tuple[Any, Any]] = {}
        self.materializer = builder.materializer
        self.env: Dict[str, Any] = {}
        names = builder.names_of.get(id(fdef))
        if names is None:  # the same tree is specialized once per call site: look at it once
            names = builder.names_of[id(fdef)] = (fdef, {n.id for n in tree_copy.names(fdef)},
                                                  frozenset(assigned_names(fdef.body) | {a.id for a in self._params()}))
        self.local_names = names[2]
        self.namer = Namer(names[1])
        self.namer.reserve(builder.function_names.used)
        self.block: List[gast.stmt] = []
        self.current: Optional[gast.stmt] = None
        self.runtime_depth = 0
        # per run-time loop: its environment on entry and the environments at its breaks
        self.break_envs: List[Tuple[Dict[str, Any], List[Dict[str, Any]]]] = []
        self.flags: Set[str] = set()  # the flags of variables assigned on some paths (``MaybeBound``)
        self.terminated = False
        self.returns: Optional[ReturnSpec] = None
        self.materialize_outputs = False
        self.is_entry = False
        self.params: List[str] = []
        self.arguments: List[Any] = []
        self._closure_params: Dict[str, Any] = {}
        self._path_names: Dict[tuple, str] = {}
        # containers this function did not make (id -> (the container, held so that its id stays its own,
        # whether it was rebuilt here)): a callee's arguments and the closure values holding run-time values are
        # rebuilt from the caller's leaves, so a write into one would not reach the caller's; closure values
        # without run-time values and module objects are the caller's own, where this function's run-time
        # values would be names the caller cannot read
        self._foreign: Dict[int, Tuple[Any, bool]] = {}

    def _params(self):
        a = self.fdef.args
        return a.posonlyargs + a.args + a.kwonlyargs

    # -- errors and emission -------------------------------------------------

    def origin(self, node):
        """The user's position of ``node``, or of the statement being specialized."""
        return anno.getanno(node, anno.Key.ORIGIN) or (
            anno.getanno(self.current, anno.Key.ORIGIN) if self.current is not None else None)

    def check_origin(self, node):
        """Where a run-time check of ``node`` reports: in numbax's own function (a composite) that checks its
        code, the user's call of it (an index out of bounds in ``np.take``'s Python is the user's call's error),
        else ``node``'s position."""
        origin = self.origin(node)
        return self.call_site if self.call_site is not None and run_time_checks.checked(origin) else origin

    def fail(self, node, message: str, hint: str = ""):
        """Raise a ``NumbaxSpecializationError`` at ``node``."""
        raise NumbaxSpecializationError(message, self.origin(node), hint=hint)

    def emit(self, stmt: gast.stmt) -> None:
        """Append a statement, tagged with the user line it comes from."""
        self.block.append(self.located(stmt))

    def located(self, stmt: gast.stmt) -> gast.stmt:
        """``stmt``, tagged with the user line it comes from (that of the statement being specialized)."""
        if self.current is not None:
            gast.copy_location(stmt, self.current)
            anno.copyanno(self.current, stmt)
        if self.call_site is not None:
            anno.setanno(stmt, anno.Key.ORIGIN, self.call_site)
        return stmt

    def materialize(self, value: Any) -> gast.expr:
        """An expression for ``value`` in generated code."""
        if isinstance(value, RunTimeList):
            self.fail(self.current, "a list made at run time used as a value (returned, or passed on)",
                      hint="a list whose length is known only at run time is held as the array of its items: "
                      "return or pass np.stack(items).")
        try:
            return self.materializer.node(value)
        except Unrepresentable as exc:
            self.fail(self.current, f"{exc} cannot be used as a run-time value in compiled code",
                      hint="use it only where its value is needed while compiling (a static argument, "
                      "a container length, a branch on a static value).")

    def emit_assign(self, name: str, value: Any) -> None:
        """``name = value``, unless that is ``name = name``."""
        if isinstance(value, Dyn) and value.name == name:
            return
        self.emit(gast.Assign(targets=[name_node(name, gast.Store())], value=self.materialize(value),
                              type_comment=None))

    # -- binding -------------------------------------------------------------

    def path_name(self, base: str, path: tuple) -> str:
        """The deterministic variable name of one leaf of a container bound to ``base``."""
        key = (base, path)
        if key not in self._path_names:
            self._path_names[key] = self.namer.new(leaf_name(base, path))
        return self._path_names[key]

    def leaves_with_paths(self, value: Any):
        """Leaves of a container, Dyn values counting as leaves."""
        pairs, treedef = tree_util.tree_flatten_with_path(value, is_leaf=_is_dyn)
        return [(tuple(_path_part(k) for k in path), leaf) for path, leaf in pairs], treedef

    def bind_container(self, name: str, value: Any, everything: bool = False) -> None:
        """Bind a container holding run-time leaves: each leaf gets a variable of its own."""
        pairs, treedef = self.leaves_with_paths(value)
        targets, values, leaves = [], [], []
        for path, leaf in pairs:
            if isinstance(leaf, Dyn) or (everything and is_static_scalar(leaf)):
                var = self.path_name(name, path)
                aval = leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf)
                if not (isinstance(leaf, Dyn) and leaf.name == var):
                    targets.append(var)
                    values.append(leaf)
                leaf = Dyn(name_node(var), aval)
            leaves.append(leaf)
        if len(targets) == 1:
            self.emit_assign(targets[0], values[0])
        elif targets:
            self.emit(gast.Assign(
                targets=[gast.Tuple(elts=[name_node(t, gast.Store()) for t in targets], ctx=gast.Store())],
                value=gast.Tuple(elts=[self.materialize(v) for v in values], ctx=gast.Load()),
                type_comment=None))
        self.env[name] = tree_util.tree_unflatten(treedef, leaves)

    def bind_name(self, name: str, value: Any) -> None:
        """Bind ``name``: run-time values are assigned, compile-time ones remembered."""
        if isinstance(value, Dyn):
            self.emit_assign(name, value)
            self.env[name] = Dyn(name_node(name), value.aval)
        elif contains_dyn(value):
            self.bind_container(name, value)
        else:
            self.env[name] = value

    def materialize_name(self, name: str) -> None:
        """Give a compile-time number, a constant array (or a container's numbers) a run-time variable.

        The variable of a constant array is a copy of it: run-time code may update it in place (``z += dz`` in
        a loop), which must not change the array a closure or a module holds."""
        value = self.env.get(name)
        if isinstance(value, np.ndarray) and value.ndim:
            copy = gast.Call(func=resolve.reference_node("np.copy"), args=[self.materialize(value)], keywords=[])
            self.emit(gast.Assign(targets=[name_node(name, gast.Store())], value=copy, type_comment=None))
            self.env[name] = Dyn(name_node(name), AVal.of(value))
        elif is_static_scalar(value) or isinstance(value, np.ndarray):  # a 0-d array: its number
            self.emit_assign(name, value[()] if isinstance(value, np.ndarray) else value)
            self.env[name] = Dyn(name_node(name), AVal.of(value))
        elif isinstance(value, (list, tuple, dict)) and value:
            self.bind_container(name, value, everything=True)

    def bind(self, target: gast.expr, value: Any) -> None:
        """Assign ``value`` to an assignment target."""
        if isinstance(target, gast.Name):
            self.bind_name(target.id, value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            self.bind_sequence(target, value)
        elif isinstance(target, gast.Subscript):
            self.bind_subscript(target, value)
        elif isinstance(target, gast.Attribute):
            self.bind_attribute(target, value)
        else:
            self.fail(target, f"assignment to {type(target).__name__.lower()} targets is not supported",
                      hint="assign to a local variable or into an array element.")

    def refuse_writes_into_foreign(self, node: gast.AST, container: Any, what: str, written: Any = ()) -> None:
        """Refuse ``what`` (a write of ``written``) into a container this function did not make where Python's
        write cannot be made: into one rebuilt from the caller's leaves (a callee's argument: the caller would not
        see it), or of run-time values into the caller's own (a module's list, a closure value: they would be
        names the caller cannot read). A compile-time value written into the caller's own container is written
        while compiling, as JAX writes while tracing (``trace_count.append(1)``)."""
        entry = self._foreign.get(id(container))
        if entry is None or not (entry[1] or contains_dyn(written)):
            return
        self.fail(node, f"{what} of a value the function did not make: an argument of a function that compiled "
                  "code calls, a value it closes over, or a module's (the caller would not see the change)",
                  hint="return the new value and assign it in the caller: state = step(state, dt).")

    def bind_attribute(self, target: gast.Attribute, value: Any) -> None:
        """``state.x = v`` on a pytree that holds run-time values (an argument, or one made in the function: never
        a module's object, which a write at compile time would change once, not at each call): done now, as
        Python does, so not inside run-time control flow. A caller's pytree is not changed, as in JAX."""
        base = self.eval(target.value)
        if isinstance(base, (Dyn, np.ndarray)) or tree_util.treedef_is_leaf(tree_util.tree_structure(base)) or \
                not contains_dyn(base):
            self.fail(target, f"assignment to an attribute of a {type(base).__name__}",
                      hint="assign to attributes of a dataclass pytree that holds the function's run-time "
                      "values (an argument, or one made in it), or use dataclasses.replace.")
        self.refuse_writes_into_foreign(target, base, "assignment to an attribute", value)
        if self.runtime_depth > 0:
            self.fail(target, "assigning to an attribute inside run-time control flow",
                      hint="carry the values in local variables through the loop or branch, and build the "
                      "pytree after it.")
        try:
            setattr(base, target.attr, self.snapshot(value))
        except Exception as exc:  # noqa: BLE001 - Python's own refusal (a frozen dataclass), at the user's line
            self.fail(target, f"{type(exc).__name__}: {exc}")

    def bind_sequence(self, target, value) -> None:
        """Tuple unpacking: at compile time for containers, in generated code for run-time tuples."""
        if isinstance(value, Dyn) and any(isinstance(e, gast.Starred) for e in target.elts):
            if not isinstance(value, Rows):
                self.fail(target, "starred unpacking of a run-time value, whose length is not known when compiling",
                          hint="unpack a tuple or list, or index the array (`x[0]`, `x[1:]`).")
            held = self.snapshot(value)
            row = AVal(value.aval.dtype, value.aval.ndim - 1) if value.aval is not None else None
            value = [Dyn(gast.Subscript(value=held.expr(), slice=gast.Constant(value=i, kind=None),
                                        ctx=gast.Load()), row) for i in range(value.rows)]
        if isinstance(value, Dyn):
            names = target_names(target)
            if not names:
                self.fail(target, "unpacking a run-time tuple into subscripts is not supported")
            store = tree_copy.copy_tree(target)
            self.emit(gast.Assign(targets=[store], value=value.expr(), type_comment=None))
            flat = isinstance(value, Items) and len(value.items) == len(target.elts) == len(names)
            for k, name in enumerate(names):
                self.env[name] = Dyn(name_node(name), value.items[k] if flat else None)
            return
        try:
            items = list(value)
        except NeedStatic:
            raise
        except TypeError:
            self.fail(target, f"cannot unpack a {type(value).__name__}")
        target, items = self.starred(target, items)
        if len(items) != len(target.elts):
            self.fail(target, f"cannot unpack {len(items)} values into {len(target.elts)} targets")
        simple = all(isinstance(e, (gast.Name, gast.Subscript)) for e in target.elts)
        if simple and any(isinstance(i, Dyn) for i in items) and all(
                isinstance(i, Dyn) or is_static_scalar(i) for i in items):
            self.parallel_assign(target, items)
            return
        for elt, item in zip(target.elts, items):
            self.bind(elt, item)

    def starred(self, target, items: list):
        """``head, *rest, last = items``: the target without its star and the items with the starred name's
        list among them (Python's rule: the others take one item each, the starred name what is left)."""
        stars = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if not stars:
            return target, items
        if len(stars) > 1:
            self.fail(target, "multiple starred expressions in assignment")
        star = stars[0]
        after = len(target.elts) - star - 1
        if len(items) < star + after:
            self.fail(target, f"not enough values to unpack (expected at least {star + after}, got {len(items)})")
        rest = list(items[star:len(items) - after])
        elts = list(target.elts)
        elts[star] = elts[star].value
        return gast.Tuple(elts=elts, ctx=gast.Store()), items[:star] + [rest] + items[len(items) - after:]

    def parallel_assign(self, target, items) -> None:
        """``a, b = b, a + b``: every value is read before any target is written, as Python does."""
        stores = []
        for elt in target.elts:
            if isinstance(elt, gast.Subscript):
                base = self.eval(elt.value)
                if not isinstance(base, Dyn):
                    self.fail(elt, "unpacking into an element of a list or tuple is not supported")
                stores.append(self.user_subscript(elt, base.expr(), self.eval(elt.slice), gast.Store()))
            else:
                stores.append(name_node(elt.id, gast.Store()))
        self.emit(gast.Assign(targets=[gast.Tuple(elts=stores, ctx=gast.Store())],
                              value=gast.Tuple(elts=[self.materialize(i) for i in items], ctx=gast.Load()),
                              type_comment=None))
        for elt, item in zip(target.elts, items):
            if isinstance(elt, gast.Name):
                self.env[elt.id] = Dyn(name_node(elt.id), item.aval if isinstance(item, Dyn) else AVal.of(item))

    def bind_subscript(self, target: gast.Subscript, value: Any) -> None:
        """``x[i] = v`` into an array, or into a compile-time list or dict."""
        base = self.eval(target.value)
        index = self.eval(target.slice)
        if isinstance(base, Dyn) and base.aval is not None and base.aval.ndim == 0:
            self.fail(target, "writing into a 0-d array (`b[()] = v`, `b[...] = v`)",
                      hint="compiled code holds a 0-d array as a number, which has no element to write: bind the "
                      "name to the new value instead (b = np.float64(v)); a 0-d argument is then not updated in "
                      "place, as JAX's arrays never are.")
        if isinstance(base, Dyn):
            store = self.user_subscript(target, base.expr(), index, gast.Store())
            if checks.is_array(dtypes.index(dtypes.aval_of(base), index)) and checks.is_array(dtypes.aval_of(value)):
                run_time_checks.mark(store, "check_store", self.check_origin(target))  # after its indices' checks
            self.emit(gast.Assign(targets=[store], value=self.materialize(value), type_comment=None))
        elif isinstance(base, (list, dict)):
            self.refuse_writes_into_foreign(target, base, "assignment into an element", value)
            if self.runtime_depth > 0:
                self.fail(target, "assigning into a list or dict inside run-time control flow",
                          hint="use an array, which generated code can update in place.")
            if isinstance(index, Dyn):
                raise NeedStatic("indexing a list with a run-time value")
            base[index] = self.snapshot(value)
        else:
            self.fail(target, f"cannot assign into a {type(base).__name__}",
                      hint="assign into arrays passed as arguments or created in the function.")

    def bind_static_target(self, target: gast.expr, value: Any) -> None:
        """Bind a comprehension or unrolled-loop target without generating code for the names."""
        if isinstance(target, gast.Name):
            self.env[target.id] = value
        elif isinstance(target, (gast.Tuple, gast.List)):
            items = list(value)
            if len(items) != len(target.elts):
                self.fail(target, f"cannot unpack {len(items)} values into {len(target.elts)} targets")
            for elt, item in zip(target.elts, items):
                self.bind_static_target(elt, item)
        else:
            self.fail(target, "comprehension targets must be names")

    # -- functions -------------------------------------------------------------

    def child(self, fdef, namespace, closure_env, key, closure_owner=None) -> "Specializer":
        """A specializer for a callee, sharing this compilation's module."""
        return Specializer(self.builder, fdef, namespace, closure_env, key, parent=self,
                           closure_owner=closure_owner)

    def import_value(self, value: Any, owner: Optional["Specializer"]) -> Any:
        """``value``, made by the function ``owner`` specializes, as this function's code can read it: each
        run-time leaf becomes a parameter of this function (and of each function between ``owner``'s code
        and this one's), which its caller passes. A free name left in an inlined callee would otherwise read
        whatever variable of that name the calling code holds (a parameter, a ``lax`` loop's ``i``)."""
        if owner is None or owner is self or not contains_dyn(value):
            return value
        return tree_util.tree_map(lambda leaf: self._import_leaf(leaf, owner) if isinstance(leaf, Dyn) else leaf,
                                  value, is_leaf=lambda leaf: isinstance(leaf, Dyn))

    def _import_leaf(self, leaf: Dyn, owner: "Specializer") -> Dyn:
        if isinstance(leaf.node, gast.Constant):
            return leaf
        found = self._imports.get((id(owner), id(leaf)))
        if found is not None:
            return found[1]
        caller = self.parent
        while caller is not None and caller is not owner:
            caller = caller.parent
        if caller is None:  # the function that made it has returned: its variables are gone
            self.fail(self.current, f"`{unparse(leaf.node)}`, a value `{owner.fdef.name}` computed at run time, is "
                      f"read here by a function `{owner.fdef.name}` made and returned",
                      hint="pass the value to the function as an argument instead of closing over it.")
        if isinstance(leaf, Method):
            self.fail(self.current, f"`{unparse(leaf.node)}`, a method of a run-time value of "
                      f"`{owner.fdef.name}`, called in another function",
                      hint="call the method where the value is, and pass its result.")
        var = self.namer.new(leaf.name or "captured")
        self.params.append(var)
        self.arguments.append(Imported(leaf, owner))
        local = copy.copy(leaf)
        local.node = name_node(var)
        self._imports[(id(owner), id(leaf))] = (leaf, local)
        return local


    def bind_parameter(self, name: str, value: Any) -> None:
        """A parameter: each run-time leaf of its value becomes a parameter of the generated function."""
        pairs, treedef = self.leaves_with_paths(value)
        leaves = []
        for path, leaf in pairs:
            if isinstance(leaf, Dyn):
                var = name if not path else self.path_name(name, path)
                self.params.append(var)
                self.arguments.append(leaf)
                leaf = Dyn(name_node(var), leaf.aval)
            leaves.append(leaf)
        self.env[name] = tree_util.tree_unflatten(treedef, leaves)
        if not self.is_entry:
            self.mark_foreign(self.env[name], rebuilt=True)

    def mark_foreign(self, value: Any, rebuilt: bool = False) -> Any:
        """Record the containers in ``value`` as ones this function did not make (``rebuilt`` here from the
        caller's leaves, or the caller's own); ``value``. A name read again is not walked again."""
        if id(value) not in self._foreign:
            def record(node: Any) -> bool:
                self._foreign.setdefault(id(node), (node, rebuilt))
                return False

            tree_util.tree_leaves(value, is_leaf=record)
        return value

    def lookup_free(self, name: str, node) -> Any:
        """Free names of a local function read its enclosing environment; run-time ones become parameters."""
        if name in self.closure_env:
            if name not in self._closure_params:
                value = self.closure_env[name]
                if contains_dyn(value):
                    start = len(self.arguments)
                    self.bind_parameter(name, value)
                    owner = defining_scope(self.closure_owner, name)  # the caller passes that one's variables
                    self.arguments[start:] = [Imported(a, owner) for a in self.arguments[start:]]
                    value = self.env.pop(name)
                self._closure_params[name] = self.mark_foreign(value)
            return self._closure_params[name]
        return self.mark_foreign(super().lookup_free(name, node))

    def run_body(self) -> None:
        """Specialize the function body into ``self.block``."""
        self.builder.stack.append(self.key)
        try:
            self.exec_block(self.fdef.body)
            if not self.terminated:
                self.current = None
                self.record_return(self.fdef, None, emit=False)
            self.block = unread_flags_dropped(self.block, self.flags)
        finally:
            self.builder.stack.pop()

    def function_def(self, name: str) -> gast.FunctionDef:
        """The generated function: flat parameters and the specialized body."""
        args = gast.arguments(args=[name_node(p, gast.Param()) for p in self.params], posonlyargs=[],
                              vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
        fdef = gast.FunctionDef(name=name, args=args, body=self.block or [gast.Pass()], decorator_list=[],
                                returns=None, type_comment=None, type_params=[])
        gast.copy_location(fdef, self.fdef)
        anno.copyanno(self.fdef, fdef)
        return fdef

    def specialize_helper(self, bound: Dict[str, Any]) -> Helper:
        """Specialize a callee to the values its call site binds to its parameters.

        Numbers a callee returns stay compile-time values unless some path returns a
        run-time value in their place; then the callee is specialized again with
        every number returned at run time.
        """
        for name, value in bound.items():
            self.bind_parameter(name, value)
        try:
            self.run_body()
        except _ConstantVersusRuntime:
            retry = Specializer(self.builder, self.fdef, self.namespace, self.closure_env, self.key,
                                parent=self.parent, closure_owner=self.closure_owner)
            retry.materialize_outputs = True
            return retry.specialize_helper(bound)
        fname = self.builder.function_names.new(self.fdef.name)
        helper = Helper(self.function_def(fname), list(self.arguments), self.returns)
        self.builder.helpers.append(helper.node)
        return helper

    def call_helper(self, helper: Helper) -> Any:
        """Emit the call of a specialized helper; return its value, structured as the callee returns it."""
        arguments = [self.import_value(a.leaf, a.owner) if isinstance(a, Imported) else a for a in helper.arguments]
        call = gast.Call(func=name_node(helper.node.name), args=[self.materialize(a) for a in arguments],
                         keywords=[])
        spec = helper.returns
        count = spec.num_dynamic if spec else 0
        temps = [self.builder.namer.temp() for _ in range(count)]
        if count == 0:
            self.emit(gast.Expr(value=call))
        elif count == 1:
            self.emit(gast.Assign(targets=[name_node(temps[0], gast.Store())], value=call, type_comment=None))
        else:
            self.emit(gast.Assign(
                targets=[gast.Tuple(elts=[name_node(t, gast.Store()) for t in temps], ctx=gast.Store())],
                value=call, type_comment=None))
        if spec is None:
            return None
        it, avals = iter(temps), iter(spec.avals)
        leaves = [Dyn(name_node(next(it)), next(avals, None)) if s is DYNAMIC else s for s in spec.statics]
        return tree_util.tree_unflatten(spec.treedef, leaves)

    # -- returns ---------------------------------------------------------------

    def record_return(self, node, value: Any, emit: bool = True) -> None:
        """Check that every return has one structure; emit the flat return statement."""
        leaves, treedef = tree_util.tree_flatten(value, is_leaf=_is_dyn)
        if any(isinstance(leaf, RunTimeList) for leaf in leaves):
            self.fail(node, "a list made at run time returned from a function",
                      hint="a list whose length is known only at run time is held as the array of its items: "
                      "return np.stack(items).")
        if self.materialize_outputs and self.is_entry:
            for leaf in leaves:
                if not (isinstance(leaf, Dyn) or is_static_scalar(leaf) or isinstance(leaf, np.ndarray)):
                    self.fail(node, f"a compiled function cannot return a {type(leaf).__name__}",
                              hint="return arrays, numbers, or containers of them.")
            statics = tuple(DYNAMIC for _ in leaves)
        elif self.materialize_outputs:
            statics = tuple(DYNAMIC if isinstance(leaf, Dyn) or is_static_scalar(leaf) else leaf for leaf in leaves)
        else:
            statics = tuple(DYNAMIC if isinstance(leaf, Dyn) else leaf for leaf in leaves)
        avals = tuple(leaf.aval if isinstance(leaf, Dyn) else AVal.of(leaf)
                      for leaf, s in zip(leaves, statics) if s is DYNAMIC)
        spec = ReturnSpec(treedef, statics, avals)
        if self.returns is None:
            self.returns = spec
        elif self._same_returns(self.returns, spec):
            self.returns.avals = tuple(a if a == b else None for a, b in zip(self.returns.avals, avals))
        else:
            if self.returns.treedef == spec.treedef and not self.materialize_outputs:
                raise _ConstantVersusRuntime()
            self.fail(node, "this return gives a value of a different structure than an earlier one "
                      f"({spec.treedef} vs {self.returns.treedef})",
                      hint="return the same structure (number of values, containers) on every path.")
        if emit:
            outs = [self.materialize(l) for l, s in zip(leaves, statics) if s is DYNAMIC]
            value_node = None if not outs else outs[0] if len(outs) == 1 else gast.Tuple(elts=outs, ctx=gast.Load())
            self.emit(gast.Return(value=value_node))

    @staticmethod
    def _same_returns(a: ReturnSpec, b: ReturnSpec) -> bool:
        if a.treedef != b.treedef or len(a.statics) != len(b.statics):
            return False
        for x, y in zip(a.statics, b.statics):
            if (x is DYNAMIC) != (y is DYNAMIC):
                return False
            if x is not DYNAMIC and not (x is y or (type(x) is type(y) and _safe_eq(x, y))):
                return False
        return True


class _ConstantVersusRuntime(Exception):
    """A callee returns a number known at compile time on one path and a run-time value on another."""


def _safe_eq(x: Any, y: Any) -> bool:
    try:
        return bool(x == y)
    except Exception:
        return False
