"""runtime_copy: the definitions of ``numbax.runtime`` that some generated code calls, copied out as source.

``export`` writes a module that needs numpy and numba only, so the runtime helpers that generated code
calls (``rt.tanh``, ``rt.check_index``, ...) travel with it: their top-level statements, and those of
everything they use in turn (other helpers, ``numbax.errors``' exceptions), in an order that defines a
name before a top-level statement reads it. A statement is copied when it defines a name that is needed,
or when it acts on one: ``@overload(sort)`` registers the compiled form of ``sort``, and a call
``_overload_check(has_nan, ...)`` registers that of ``has_nan``.

Names are module-level in each source file and become module-level in one file: a name defined in two
files, or one that the generated code (or Python's builtins) already uses, is renamed in the copy, its
references with it; ``loops.compile_source`` (a module alias) becomes the copied function's own name.
Third-party imports (``numpy``, ``numba``) are kept; an import of any numbax module outside the runtime's
own dependencies means the runtime reached into the compiler, and ``ExportError`` says so.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import importlib
import inspect
from typing import Dict, Iterable, List, Optional, Set, Tuple

from numbax.errors import NumbaxError

# the numbax modules, besides numbax.runtime's, that the runtime may import (its exceptions)
STANDALONE = ("numbax.runtime", "numbax.errors", "numbax.error_text", "numbax.origin")
_FUTURE = "from __future__ import annotations"


class ExportError(NumbaxError):
    """What ``numbax.export`` cannot write as a module that stands alone."""


Ref = Tuple[str, str]  # (module, top-level name)


@dataclasses.dataclass
class _Source:
    """One parsed module: its top-level statements, what each defines, and what its imports bind."""

    name: str
    statements: List[ast.stmt]
    defines: List[Set[str]]
    internal: Dict[str, Ref]  # name -> the (module, name) it is imported from
    modules: Dict[str, str]  # alias -> an internal module imported whole
    external: Dict[str, str]  # name -> the import statement that binds it, as text

    def binders(self, name: str) -> List[int]:
        return [i for i, names in enumerate(self.defines) if name in names]


def _is_internal(module: str) -> bool:
    return module == "numbax" or module.startswith("numbax.")


def _check_standalone(module: str) -> str:
    if not module.startswith(STANDALONE):
        raise ExportError(f"the runtime imports {module}, which is not part of what an exported module can carry",
                          hint="this is a bug in numbax: the runtime must import no compiler code.")
    return module


@functools.lru_cache(maxsize=None)
def _parse(name: str) -> _Source:
    tree = ast.parse(inspect.getsource(importlib.import_module(name)))
    source = _Source(name, [], [], {}, {}, {})
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            continue
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _bind_import(source, stmt)
            continue
        if _is_docstring(stmt) or _assigns_all(stmt):
            continue
        source.statements.append(stmt)
        source.defines.append(_defined(stmt))
    return source


def _bind_import(source: _Source, stmt) -> None:
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if _is_internal(alias.name):
                raise ExportError(f"{source.name} imports {alias.name} whole; export copies names it imports "
                                  "with `from ... import ...`", hint="this is a bug in numbax's runtime.")
            bound = alias.asname or alias.name.split(".")[0]
            source.external[bound] = ast.unparse(ast.Import(names=[alias]))
        return
    module = stmt.module or ""
    for alias in stmt.names:
        bound = alias.asname or alias.name
        if not _is_internal(module):
            source.external[bound] = ast.unparse(ast.ImportFrom(module=module, names=[alias], level=0))
        elif _is_module(f"{module}.{alias.name}"):
            source.modules[bound] = _check_standalone(f"{module}.{alias.name}")
        else:
            source.internal[bound] = (_check_standalone(module), alias.name)


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _assigns_all(stmt: ast.stmt) -> bool:
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
    return isinstance(stmt, (ast.Assign, ast.AugAssign)) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in targets)


def _defined(stmt: ast.stmt) -> Set[str]:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets if not isinstance(t, (ast.Attribute, ast.Subscript))
                for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _read(stmt: ast.AST) -> Tuple[Set[str], Set[Tuple[str, str]]]:
    """The names ``stmt`` reads (anywhere in it, annotations aside), and its ``alias.attribute`` reads."""
    names, attributes = set(), set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            attributes.add((node.value.id, node.attr))
        elif isinstance(node, ast.ImportFrom) and _is_internal(node.module or ""):
            names.update(alias.asname or alias.name for alias in node.names)
    return names, attributes


def _acts_on(stmt: ast.stmt) -> Set[str]:
    """The names whose behaviour ``stmt`` changes without defining them: what its decorators or its call read."""
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
        return set().union(*(_read(d)[0] for d in stmt.decorator_list)) if stmt.decorator_list else set()
    if isinstance(stmt, (ast.Expr, ast.For)):  # a call, or a loop of calls, registering what it reads
        return _read(stmt)[0]
    return set()


def _local_imports(stmt: ast.stmt) -> Dict[str, Ref]:
    """What a function-level ``from numbax.runtime.X import y`` inside ``stmt`` binds."""
    found = {}
    for node in ast.walk(stmt):
        if isinstance(node, ast.ImportFrom) and _is_internal(node.module or ""):
            for alias in node.names:
                found[alias.asname or alias.name] = (_check_standalone(node.module), alias.name)
    return found


class _Closure:
    """The statements to copy, found from the names generated code calls."""

    def __init__(self):
        self.statements: Dict[str, Set[int]] = {}  # module -> indices of copied statements
        self.local: Dict[str, Dict[str, Ref]] = {}  # module -> names its functions import
        self.external: Dict[str, Dict[str, str]] = {}  # module -> external names it reads
        self.refs: Set[Ref] = set()  # every (module, name) a copied statement defines or reads
        self.edges: Set[Tuple[str, str]] = set()  # (module, one whose top level imports from it)

    def need(self, ref: Ref) -> None:
        """Copy what defines ``ref`` and, in turn, everything that reads or acts on what was copied."""
        work = [ref]
        while work:
            module, name = work.pop()
            source = _parse(module)
            self._enter(module)
            if name in source.internal:
                self._enter(source.internal[name][0])
                self.edges.add((source.internal[name][0], module))
                work.append(source.internal[name])
                self.refs.add((module, name))
            elif name in source.external:
                self.external[module][name] = source.external[name]
            elif name in self.local[module]:
                work.append(self.local[module][name])
            for index in source.binders(name):
                work.extend(self._copy(source, index))
            work.extend(self._acting_on(source))
            for actor, index in _foreign_actors().get((module, name), ()):  # @overload(_grad.trace_grad)
                self._enter(actor)
                work.extend(self._copy(_parse(actor), index))

    def _enter(self, module: str) -> None:
        if module not in self.statements:
            self.statements[module] = set()
            self.local[module] = {}
            self.external[module] = {}

    def _copy(self, source: _Source, index: int) -> Iterable[Ref]:
        copied = self.statements[source.name]
        if index in copied:
            return []
        copied.add(index)
        stmt = source.statements[index]
        self.refs.update((source.name, n) for n in source.defines[index])
        self.local[source.name].update(_local_imports(stmt))
        names, attributes = _read(stmt)
        needed = [(source.name, n) for n in names if not hasattr(builtins, n) or source.binders(n)
                  or n in source.internal or n in source.external]
        for alias, attr in attributes:
            if alias in source.modules:
                needed.append((source.modules[alias], attr))
                self._enter(source.modules[alias])
                self.edges.add((source.modules[alias], source.name))
        return needed

    def _acting_on(self, source: _Source) -> List[Ref]:
        defined = {n for i in self.statements[source.name] for n in source.defines[i]}
        found = []
        for index, stmt in enumerate(source.statements):
            if index not in self.statements[source.name] and _acts_on(stmt) & defined:
                found.extend(self._copy(source, index))
        return found

    def order(self) -> List[str]:
        """The modules copied, each after those its top level imports from (their names' order otherwise)."""
        done: List[str] = []
        visiting: Set[str] = set()

        def place(module: str) -> None:
            if module in done or module in visiting:
                return
            visiting.add(module)
            for first, then in sorted(self.edges):
                if then == module and first != module:
                    place(first)
            visiting.discard(module)
            done.append(module)

        for module in sorted(self.statements):
            place(module)
        return done


@functools.lru_cache(maxsize=None)
def _foreign_actors() -> Dict[Ref, List[Tuple[str, int]]]:
    """The statements of each runtime module that act on a name of another through its module alias
    (``arrays``' ``@overload(_grad.trace_grad)``), by that name: copied where the name is."""
    found: Dict[Ref, List[Tuple[str, int]]] = {}
    for module in _runtime_modules():
        source = _parse(module)
        for index, stmt in enumerate(source.statements):
            if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                parts = stmt.decorator_list
            else:
                parts = [stmt] if isinstance(stmt, (ast.Expr, ast.For)) else []
            for alias, attr in set().union(*(_read(part)[1] for part in parts)) if parts else ():
                if alias in source.modules:
                    found.setdefault((source.modules[alias], attr), []).append((module, index))
    return found


def runtime_ref(name: str) -> Ref:
    """The module and top-level name that define ``rt.<name>``, as generated code calls it."""
    import numbax.runtime as rt
    from numbax.runtime.random.kernels import KERNELS

    if name in KERNELS:
        target = getattr(KERNELS[name], "py_func", KERNELS[name])
        return target.__module__, target.__name__
    if not hasattr(rt, name):
        raise ExportError(f"generated code calls rt.{name}, which numbax.runtime does not define",
                          hint="this is a bug in numbax.")
    value = getattr(rt, name)
    for module in _runtime_modules():
        source = _parse(module)
        if (source.binders(name) or name in source.internal) and \
                getattr(importlib.import_module(module), name, None) is value:
            return module, name
    raise ExportError(f"rt.{name} is defined outside numbax.runtime's modules", hint="this is a bug in numbax.")


@functools.lru_cache(maxsize=None)
def _runtime_modules() -> Tuple[str, ...]:
    import numbax.runtime as rt

    tree = ast.parse(inspect.getsource(rt))
    return tuple(stmt.module for stmt in tree.body if isinstance(stmt, ast.ImportFrom))


@dataclasses.dataclass
class Copied:
    """The runtime's source for one exported module: its imports, its statements, and the names that
    generated code must call its ``rt.`` helpers by."""

    imports: List[str]
    body: List[Tuple[str, List[ast.stmt]]]  # (module, its copied statements), in the order to write them
    names: Dict[str, str]  # rt.<name> -> the copied definition's name


def copy_runtime(called: Iterable[str], reserved: Set[str], imported: Dict[str, str]) -> Copied:
    """The runtime definitions behind generated code's ``rt.<name>`` calls, with everything they use.

    ``reserved``: names the copy must not define (those of the generated code); ``imported``: the names the
    module's own imports bind -> those import statements.
    """
    closure = _Closure()
    entries = {name: runtime_ref(name) for name in sorted(set(called))}
    for ref in entries.values():
        closure.need(ref)
    order = closure.order()
    renamed = _names(closure, reserved)
    imports: Dict[str, str] = dict(imported)
    for module in order:
        for name, line in sorted(closure.external[module].items()):
            if imports.setdefault(name, line) != line or (name in reserved and name not in imported):
                raise ExportError(f"{module} binds {name!r} as {line!r}, which the module already binds otherwise",
                                  hint="this is a bug in numbax's runtime: give the import one name.")
    body = []
    for module in order:
        source = _parse(module)
        rename = _Renamer(_module_names(closure, source, renamed), _module_aliases(closure, source, renamed))
        statements = [rename.top_level(source.statements[i]) for i in sorted(closure.statements[module])]
        if statements:
            body.append((module, statements))
    return Copied(imports=[_FUTURE] + sorted(set(imports.values())), body=body,
                  names={name: renamed[_definition(closure, ref)] for name, ref in entries.items()})


def _definition(closure: _Closure, ref: Ref) -> Ref:
    """The (module, name) that defines ``ref``, following imports."""
    module, name = ref
    source = _parse(module)
    while name in source.internal or (name in closure.local.get(module, {}) and not source.binders(name)):
        module, name = source.internal.get(name) or closure.local[module][name]
        source = _parse(module)
    return module, name


def _names(closure: _Closure, reserved: Set[str]) -> Dict[Ref, str]:
    """Each copied definition's name in the exported module: its own, unless taken."""
    defined = sorted({(m, n) for m, indices in closure.statements.items() for i in indices
                      for n in _parse(m).defines[i]})
    counts: Dict[str, int] = {}
    for _, name in defined:
        counts[name] = counts.get(name, 0) + 1
    taken = set(reserved) | set(dir(builtins))
    for lines in closure.external.values():
        taken.update(lines)
    names = {}
    for module, name in defined:
        chosen = name
        if counts[name] > 1 or chosen in taken:
            chosen = f"{name}_{module.rsplit('.', 1)[1]}"
        suffix = 2
        while chosen in taken:
            chosen, suffix = f"{name}_{module.rsplit('.', 1)[1]}{suffix}", suffix + 1
        taken.add(chosen)
        names[(module, name)] = chosen
    return names


def _module_names(closure: _Closure, source: _Source, renamed: Dict[Ref, str]) -> Dict[str, str]:
    """Names read in ``source`` that refer to copied definitions -> their names in the export."""
    out = {}
    for name in set(source.internal) | set(closure.local[source.name]) | {
            n for i in closure.statements[source.name] for n in source.defines[i]}:
        target = _definition(closure, (source.name, name))
        if target in renamed:
            out[name] = renamed[target]
    return out


def _module_aliases(closure: _Closure, source: _Source, renamed: Dict[Ref, str]) -> Dict[str, Dict[str, str]]:
    return {alias: {name: renamed[_definition(closure, (module, name))]
                    for (m, name) in closure.refs if m == module and _definition(closure, (module, name)) in renamed}
            for alias, module in source.modules.items()}


class _Renamer(ast.NodeTransformer):
    """Renames a module's global names in its copied statements, minding the scopes that shadow them."""

    def __init__(self, names: Dict[str, str], aliases: Dict[str, Dict[str, str]]):
        self.names = names
        self.aliases = aliases
        self.scopes: List[Tuple[str, Set[str]]] = []

    def top_level(self, stmt: ast.stmt) -> ast.stmt:
        """A renamed copy of one top-level statement."""
        stmt = self.visit(_copy(stmt))
        return ast.fix_missing_locations(stmt)

    def _global(self, name: str) -> bool:
        """Whether ``name`` here is the module's: no enclosing function binds it, nor the class whose body
        this is (a method does not see its class's names, as Python scopes them)."""
        for depth, (kind, names) in enumerate(reversed(self.scopes)):
            if name in names and (kind == "function" or depth == 0):
                return False
        return True

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.aliases and self._global(node.id):
            raise ExportError(f"the runtime uses module {node.id} other than as `{node.id}.name`",
                              hint="this is a bug in numbax's runtime.")
        if node.id in self.names and self._global(node.id):
            node.id = self.names[node.id]
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.aliases and self._global(base.id):
            return ast.copy_location(ast.Name(id=self.aliases[base.id][node.attr], ctx=node.ctx), node)
        self.generic_visit(node)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Optional[ast.AST]:
        return None if _is_internal(node.module or "") else node  # the names it binds are the module's

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._visit_defaults(node.args)
        if not self.scopes and node.name in self.names:
            node.name = self.names[node.name]
        self.scopes.append(("function", _locals(node.args, node.body)))
        node.body = self._statements(node.body)
        self.scopes.pop()
        return node

    def _statements(self, body: List[ast.stmt]) -> List[ast.stmt]:
        """``body`` visited, the statements the visit removed left out (a ``pass`` if none is left)."""
        return [s for s in (self.visit(stmt) for stmt in body) if s is not None] or [ast.Pass()]

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        self._visit_defaults(node.args)
        self.scopes.append(("function", _locals(node.args, [])))
        node.body = self.visit(node.body)
        self.scopes.pop()
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        if not self.scopes and node.name in self.names:
            node.name = self.names[node.name]
        self.scopes.append(("class", _stored(node.body)))
        node.body = self._statements(node.body)
        self.scopes.pop()
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node  # annotations stay as written: ``from __future__ import annotations`` keeps them text

    def _visit_defaults(self, args: ast.arguments) -> None:
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]


def _copy(stmt: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(stmt)).body[0]


def _locals(args: ast.arguments, body: List[ast.stmt]) -> Set[str]:
    params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    params.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
    return params | _stored(body)


def _stored(body: List[ast.stmt]) -> Set[str]:
    """Names bound in ``body``'s own scope (not inside the functions and classes it defines)."""
    found, declared = set(), set()
    work = list(body)
    while work:
        node = work.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            work.extend(node.decorator_list)
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif isinstance(node, ast.alias) and not isinstance(node, ast.ImportFrom):
            found.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and _is_internal(node.module or ""):
            continue
        work.extend(ast.iter_child_nodes(node))
    return found - declared
