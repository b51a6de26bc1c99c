"""templates: derivative rules written as short Python functions, parsed once and instantiated per call.

A rule is a template in Tangent's style::

    @defvjp(np.tanh)
    def tanh(g, ans, x):
        d[x] = g * (1.0 - ans * ans)

``g`` is the cotangent of the result, ``ans`` the result itself, and the other
parameters are the primitive's own, matched to a call's arguments by name and
position with the primitive's defaults. ``d[x] = e`` adds ``e`` to the adjoint
of whatever the call passed as ``x``; ``d[x] = None`` states that no derivative
flows to ``x`` (``np.where``'s condition); plain assignments introduce
temporaries. A differentiated value passed as a parameter the rule says neither
of is refused (``undifferentiated``). The templates live in the primitive
registry (``numbax.primitives``); this module parses and instantiates them.
"""
from __future__ import annotations

import copy
import dataclasses
import operator
import inspect
import textwrap
from typing import Any, Callable, Dict, List, Optional, Tuple

import gast

@dataclasses.dataclass
class Template:
    """A parsed rule: parameters (with defaults) and its statements."""

    params: List[str]
    defaults: Dict[str, gast.expr]
    body: List[gast.stmt]
    name: str
    differentiated: frozenset = frozenset()  # the parameters with a ``d[x] = e`` line
    no_derivative: frozenset = frozenset()   # the parameters with ``d[x] = None``


class Rule:
    """One registered template, a function or its source text, parsed lazily."""

    def __init__(self, fn: Optional[Callable] = None, source: Optional[str] = None):
        self.fn = fn
        self.source = source
        self._template: Optional[Template] = None

    @classmethod
    def from_source(cls, source: str) -> "Rule":
        """The rule whose template is the function ``source`` defines (written by a family's helper)."""
        return cls(source=source)

    @property
    def template(self) -> Template:
        """The parsed template (parsed on first use)."""
        if self._template is None:
            self._template = _parse_template(self.source or textwrap.dedent(inspect.getsource(self.fn)))
        return self._template


def _parse_template(source: str) -> Template:
    fdef = gast.parse(source).body[0]
    args = fdef.args
    names = [a.id for a in args.args]
    if names[:2] != ["g", "ans"]:
        raise ValueError(f"rule {fdef.name}: parameters must start with (g, ans, ...)")
    params = names[2:]
    defaults = dict(zip(names[len(names) - len(args.defaults):], args.defaults))
    body = [s for s in fdef.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    for stmt in body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
            raise ValueError(f"rule {fdef.name}: only `d[x] = ...` and `name = ...` statements are allowed")
    lines = {stmt.targets[0].slice.id: stmt.value for stmt in body if _is_adjoint_line(stmt)}
    none = frozenset(p for p, value in lines.items() if isinstance(value, gast.Constant) and value.value is None)
    body = [stmt for stmt in body if not (_is_adjoint_line(stmt) and stmt.targets[0].slice.id in none)]
    return Template(params=params, defaults=defaults, body=body, name=fdef.name,
                    differentiated=frozenset(lines) - none, no_derivative=none)


def _is_adjoint_line(stmt: gast.Assign) -> bool:
    """``d[x] = ...``."""
    target = stmt.targets[0]
    return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id == "d" \
        and isinstance(target.slice, gast.Name)


def undifferentiated(key: Any, template: Template, active_params) -> List[str]:
    """The parameters among ``active_params`` (given differentiated values) that the rule of ``key`` says
    nothing of: neither ``d[x] = e`` nor ``d[x] = None``. The rules of numbax's runtime helpers are left
    out: reverse mode writes their calls itself, and a parameter of theirs without a line is a value
    passed for its shape (``rt.unbroadcast(g, x)``)."""
    if getattr(key, "__module__", "").startswith("numbax.runtime"):
        return []
    return sorted(p for p in active_params if p not in template.differentiated | template.no_derivative)


def bind_arguments(template: Template, args: List[gast.expr], keywords: Dict[str, gast.expr]) -> Dict[str, gast.expr]:
    """Map the template's parameters to the call's argument atoms, defaults filling the rest."""
    bound: Dict[str, gast.expr] = {}
    if len(args) > len(template.params):
        raise TypeError(f"too many positional arguments for {template.name}")
    for name, arg in zip(template.params, args):
        bound[name] = arg
    for name, arg in keywords.items():
        if name not in template.params:
            raise TypeError(f"unexpected keyword argument {name!r} for {template.name}")
        bound[name] = arg
    for name in template.params:
        if name not in bound:
            if name not in template.defaults:
                raise TypeError(f"missing argument {name!r} for {template.name}")
            bound[name] = template.defaults[name]
    return bound


class FoldTests(gast.NodeTransformer):
    """A rule's ``a if p is None else b`` (or ``p == 1``, ``p in (None, 2)``) decided where ``p`` is a constant,
    or a tuple or list (never None); with ``names_hold_values``, also where ``p`` is a variable of generated
    code, which holds an array or a number (None is always written as the constant)."""

    def __init__(self, names_hold_values: bool = False):
        self.names_hold_values = names_hold_values

    def visit_IfExp(self, node):
        self.generic_visit(node)
        test = node.test
        if isinstance(test, gast.Constant):  # a flag passed as a constant (``np.angle(z, deg=True)``)
            return node.body if test.value else node.orelse
        if not (isinstance(test, gast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _COMPARISONS):
            return node
        op, left, right = type(test.ops[0]), _constant(test.left), _constant(test.comparators[0])
        never_none = (gast.Tuple, gast.List, gast.Name) if self.names_hold_values else (gast.Tuple, gast.List)
        if op in (gast.Is, gast.IsNot) and right is None and isinstance(test.left, never_none):
            left = ()  # a sequence, whatever it holds, is not None
        if left is _UNKNOWN or right is _UNKNOWN:
            return node
        return node.body if _COMPARISONS[op](left, right) else node.orelse


_UNKNOWN = object()
_COMPARISONS = {gast.Is: operator.is_, gast.IsNot: operator.is_not, gast.Eq: operator.eq, gast.NotEq: operator.ne,
                gast.In: lambda a, b: a in b, gast.NotIn: lambda a, b: a not in b}


def _constant(node: gast.expr) -> Any:
    """The value of a constant or a tuple of constants, else ``_UNKNOWN``."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        value = _constant(node.operand)  # a negative number (``-1.0``)
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return -value if isinstance(node.op, gast.USub) else value
        return _UNKNOWN
    if isinstance(node, gast.Tuple):
        values = tuple(_constant(e) for e in node.elts)
        return _UNKNOWN if any(v is _UNKNOWN for v in values) else values
    return _UNKNOWN


class _Substitute(FoldTests):
    def __init__(self, mapping: Dict[str, gast.expr]):
        super().__init__()
        self.mapping = mapping

    def visit_Name(self, node):
        if node.id in self.mapping and isinstance(node.ctx, gast.Load):
            return copy.deepcopy(self.mapping[node.id])
        return node


def instantiate(template: Template, mapping: Dict[str, gast.expr],
                fresh: Callable[[str], str]) -> Tuple[List[gast.stmt], List[Tuple[str, gast.expr]]]:
    """The template's temporaries as statements and its ``d[param] = expr`` lines with names substituted.

    ``mapping`` sends ``g``, ``ans`` and each parameter to an expression;
    temporaries get fresh names from ``fresh``. Returns ``(statements,
    [(param, expression), ...])``.
    """
    mapping = dict(mapping)
    statements: List[gast.stmt] = []
    contributions: List[Tuple[str, gast.expr]] = []
    for stmt in template.body:
        target = stmt.targets[0]
        value = _Substitute(mapping).visit(copy.deepcopy(stmt.value))
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id == "d":
            param = target.slice.id if isinstance(target.slice, gast.Name) else None
            if param not in template.params:
                raise ValueError(f"rule {template.name}: d[...] must name a parameter")
            contributions.append((param, value))
        elif isinstance(target, gast.Name):
            name = fresh(target.id)
            statements.append(gast.Assign(targets=[gast.Name(id=name, ctx=gast.Store(), annotation=None,
                                                             type_comment=None)], value=value))
            mapping[target.id] = gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
        else:
            raise ValueError(f"rule {template.name}: unsupported statement")
    return statements, contributions
