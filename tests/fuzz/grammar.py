"""The program generator: hypothesis strategies that write the source of ``def prog(x, y, s)`` over NumPy.

A program is a few statements drawn from a small grammar (elementwise operations and ufuncs between
broadcast shapes, slices with positive and negative steps, integer indexing, array literals from scalars
and from arrays, ``np.stack``, reductions with ``axis``/``keepdims``, integer-array indices (repeated
positions too), views (``.T``, ``reshape``, ``ravel``, ``np.diag``), ``@``/``np.dot``/``np.outer``,
``cumsum``/``cumprod``/``concatenate`` along an axis, augmented assignments, subscript writes (through
integer arrays too), ``sort``/``fill``, ``if``/``else`` on a reduced value, ``for`` over ``range`` and over rows,
bounded ``while`` loops) and a ``return``. Every candidate expression or statement is run with NumPy on
the program's own first example before it is kept, so the program is valid NumPy whose names keep one
shape and dtype from start to end (what Numba's typing needs); a few programs end in a ``return`` that
NumPy itself refuses (an index out of bounds, a bad axis, a broadcast error, ``// 0``), and numbax must
refuse those too. Each program is tagged with the constructs it uses, and says whether it is functional
(no in-place update), which is when JAX can run the same source.
"""
from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, List, Optional, Tuple

import numpy as np
from hypothesis import strategies as st

from .inputs import DTYPES, X_SHAPES, Y_SHAPES, arrays, scalars

PARAMS = ("x", "y", "s")
CONSTANTS = ("0.5", "2.0", "-1.5", "0.25", "3", "1")
UNARY = ("sin", "cos", "tanh", "exp", "abs", "square", "negative", "sqrt", "sort")
BINARY = ("+", "-", "*", "/", "//", "%")
COMPARE = (">", "<", ">=", "==")
REDUCTIONS = ("sum", "mean", "max", "min", "prod")
SLICES = {1: ("[::2]", "[::-1]", "[1:]", "[:-1]", "[::-2]", "[1::2]", "[3:0:-1]", "[-2::-1]", "[1:3]"),
          2: ("[::-1]", "[:, ::-1]", "[1:, ::2]", "[::2, 1:]", "[:, 1:3]", "[-1:, :]", "[::-1, ::-2]")}
INDICES = {1: ("[0]", "[-1]", "[1]", "[2]"), 2: ("[1]", "[:, 0]", "[0, 1]", "[-1, -1]", "[:, -1]", "[0, ::-1]")}
# integer-array indices (NumPy's advanced indexing), repeated positions among them; the unique ones are also
# written through (a repeated position written twice keeps NumPy's last write, which JAX leaves undefined)
# (arrays: JAX refuses a list as an index, which NumPy and numbax take: one form of each)
GATHERS = {1: ("[[0, 2]]", "[np.array([1, 1, 0])]", "[np.array([-1, 0])]", "[np.array([3, 1])]"),
           2: ("[np.array([0, 2])]", "[:, np.array([1, 0])]", "[np.array([0, 1]), np.array([1, 0])]",
               "[np.array([1, 1]), :]", "[-1, np.array([0, 0, 2])]", "[1:, [3, 0]]")}
REPEATED = frozenset({"[np.array([1, 1, 0])]", "[np.array([1, 1]), :]", "[-1, np.array([0, 0, 2])]"})
VIEWS = ("{}.T", "np.transpose({})", "{}.reshape(-1)", "np.ravel({})", "np.diag({})", "{}.reshape(1, -1)")
PRODUCTS = ("({}) @ ({})", "np.dot({}, {})", "np.outer({}, {})")
SCANS = ("np.cumsum({}, axis={})", "np.cumprod({}, axis={})", "np.concatenate([{0}, {0}], axis={1})")
LOOP_UPDATES = ("{acc} + {e}", "{acc} * {e}", "np.tanh({acc}) + {e}", "np.sin({acc} * {e})",
                "np.maximum({acc}, {e})", "{acc} - ({e}) * 0.5")
MAX_SIZE = 36
_AT = {"=": "set", "+=": "add", "*=": "multiply"}  # a subscript update as JAX's functional x.at[...] method
OUTPUT_KINDS = {"b": "bool", "i": "integer", "f": "float", "c": "complex"}


@dataclass(frozen=True)
class Program:
    """A generated program: its source (``prog`` and ``prog_sum``, the scalar version ``grad`` takes), its
    example arguments, a batch of three examples for ``vmap``, the constructs it uses (``raises`` when
    it was built to make NumPy raise), whether it is functional (JAX can run it), and ``jax_source``: the
    same function as JAX can run it (``source`` itself where it is functional, else with each in-place
    update written as a new value, ``x = np.sort(x)``, ``x = np.asarray(x).at[1:].set(e)``: JAX's
    functional update, on a JAX array even where ``x`` was passed as NumPy's), or None where an updated
    array shared memory with another name's (the update would change both, its twin only one)."""

    source: str
    args: tuple
    batch: tuple
    in_axes: tuple
    tags: FrozenSet[str]
    functional: bool
    jax_source: Optional[str] = None

    def __repr__(self) -> str:
        axes = f"\n# in_axes = {self.in_axes!r}" if self.in_axes != (0, 0, None) else ""
        return f"{self.source}\n# args = {self.args!r}{axes}\n# tags = {sorted(self.tags)}"


def slice_tags(text: str) -> FrozenSet[str]:
    """The tags of a subscript's text: ``slice_step`` for a step, ``slice_negative`` for a negative one."""
    tags = set()
    if text.count(":") > text.count("::") or "::" in text:
        tags.add("slice")
    if "::" in text:
        tags.add("slice_step")
    if "::-" in text or ":0:-" in text:
        tags.add("slice_negative")
    return frozenset(tags)


def acceptable(value) -> bool:
    """Whether a value may live in a program: a bool, int, float or complex scalar or array, small."""
    if not isinstance(value, (np.ndarray, np.generic, bool, int, float, complex)):
        return False
    array = np.asarray(value)
    return array.dtype.kind in "bifc" and array.ndim <= 2 and array.size <= MAX_SIZE


def signature(value) -> Tuple[Tuple[int, ...], str, str]:
    """What must not change when a name is rebound: shape, dtype, and Python type (array or scalar)."""
    return np.shape(value), str(np.asarray(value).dtype), type(value).__name__


def run_quietly(action: Callable):
    """Run ``action()`` with NumPy's floating-point warnings off (nan and inf are valid outcomes)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return action()


class Writer:
    """Writes one program's body, checking each piece on the example values in ``env``."""

    def __init__(self, draw, env: Dict[str, object]):
        self.draw = draw
        self.env = env
        self.lines: List[str] = []
        self.tags: set = set()
        self.functional = True
        self.twin: Optional[List[str]] = []  # the lines of jax_source, None once an update was aliased
        self.count = 0
        self.loop: Optional[Tuple[str, int]] = None  # (index name, trip count) inside a ``for ... range``
        # names whose arrays may share memory (``v = x.T``, a loop's ``row`` of ``y``), found when each statement
        # ran: ``attempt`` runs a statement on a deep copy of the values, which keeps no view of an earlier one
        self.shared: Dict[str, set] = {}

    # -- values ---------------------------------------------------------------------------------------------
    def evaluate(self, text: str, env=None):
        scope = dict(self.env if env is None else env)
        return run_quietly(lambda: eval(text, {"np": np}, scope))

    def names(self, want: Callable = lambda v: True) -> List[str]:
        return [n for n, v in self.env.items() if want(v)]

    def pick(self, want: Callable = lambda v: True) -> Optional[str]:
        names = self.names(want)
        if not names:
            return None
        recent = [n for n in names if n not in PARAMS]
        if recent and self.draw(st.booleans()):
            return recent[-1]
        return self.draw(st.sampled_from(names))

    def fresh(self) -> str:
        self.count += 1
        return f"v{self.count}"

    # -- expressions ----------------------------------------------------------------------------------------
    def expr(self, depth: int, want: Callable = lambda v: True) -> Tuple[str, object, FrozenSet[str]]:
        """An expression whose NumPy value is acceptable and satisfies ``want``, with its tags."""
        forms = [self.atom] if depth <= 0 else self.expression_forms()
        for _ in range(6):
            built = self.draw(st.sampled_from(forms))(depth)
            if built is None:
                continue
            text, tags = built
            try:
                value = self.evaluate(text)
            except Exception:  # noqa: BLE001 - NumPy refuses this candidate: draw another
                continue
            if acceptable(value) and want(value):
                return text, value, frozenset(tags)
        name = self.pick(want)
        if name is not None:
            return name, self.env[name], frozenset()
        raise _NoCandidate

    def expression_forms(self) -> List[Callable]:
        """The expression builders ``expr`` draws from above depth 0 (a subclass adds its own)."""
        return [self.atom, self.unary, self.binary, self.compare, self.maximum, self.where, self.subscript,
                self.subscript, self.reduction, self.reduction, self.literal, self.power, self.gather, self.view,
                self.product, self.scan]

    def atom(self, depth):
        if self.loop is not None and self.draw(st.integers(0, 3)) == 0:
            index, trips = self.loop
            wide = self.names(lambda v: np.ndim(v) >= 1 and np.shape(v)[0] > trips)
            if wide:
                name = self.draw(st.sampled_from(wide))
                if self.draw(st.booleans()):
                    return f"{name}[{index}]", {"for_index"}
                return f"{name}[{index}:{index} + 2]", {"for_slices"}
        if self.draw(st.integers(0, 4)) == 0:
            return self.draw(st.sampled_from(CONSTANTS)), set()
        return self.pick(), set()

    def unary(self, depth):
        text, _, tags = self.expr(depth - 1)
        fn = self.draw(st.sampled_from(UNARY))
        extra = {"abs"} if fn == "abs" else {"sort"} if fn == "sort" else set()
        return f"np.{fn}({text})", tags | {"ufunc"} | extra

    def power(self, depth):
        text, _, tags = self.expr(depth - 1)
        return f"({text}) ** {self.draw(st.sampled_from(('2', '3')))}", tags | {"power"}

    def binary(self, depth):
        a, va, ta = self.expr(depth - 1)
        b, vb, tb = self.expr(depth - 1)
        tags = ta | tb | {"binop"}
        if np.shape(va) != np.shape(vb) and np.ndim(va) and np.ndim(vb):
            tags |= {"broadcast"}
        if np.asarray(va).dtype != np.asarray(vb).dtype:
            tags |= {"mixed_dtype"}
        return f"({a}) {self.draw(st.sampled_from(BINARY))} ({b})", tags

    def compare(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        return f"({a}) {self.draw(st.sampled_from(COMPARE))} ({b})", ta | tb | {"compare"}

    def maximum(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        fn = self.draw(st.sampled_from(("maximum", "minimum")))
        return f"np.{fn}({a}, {b})", ta | tb | {"maximum"}

    def where(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        c, _, tc = self.expr(depth - 1)
        return f"np.where(({a}) > 0.25, {b}, {c})", ta | tb | tc | {"where"}

    def subscript(self, depth):
        text, value, tags = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        if self.draw(st.booleans()):
            sub = self.draw(st.sampled_from(SLICES[np.ndim(value)]))
            return f"{self.parenthesize(text)}{sub}", tags | slice_tags(sub)
        sub = self.draw(st.sampled_from(INDICES[np.ndim(value)]))
        return f"{self.parenthesize(text)}{sub}", tags | {"int_index"} | slice_tags(sub)

    def gather(self, depth):
        text, value, tags = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        sub = self.draw(st.sampled_from(GATHERS[np.ndim(value)]))
        return f"{self.parenthesize(text)}{sub}", tags | {"gather"} | slice_tags(sub)

    def view(self, depth):
        text, _, tags = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        form = self.draw(st.sampled_from(VIEWS))
        return form.format(self.parenthesize(text)), tags | {"view"}

    def product(self, depth):
        a, _, ta = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        b, _, tb = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        return self.draw(st.sampled_from(PRODUCTS)).format(a, b), ta | tb | {"product"}

    def scan(self, depth):
        text, value, tags = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        axis = self.draw(st.sampled_from(range(-1, np.ndim(value))))
        form = self.draw(st.sampled_from(SCANS))
        return form.format(text, axis), tags | {"concatenate" if "concatenate" in form else "scan"}

    @staticmethod
    def parenthesize(text: str) -> str:
        return text if text.isidentifier() else f"({text})"

    def reduction(self, depth):
        text, value, tags = self.expr(depth - 1)
        fn = self.draw(st.sampled_from(REDUCTIONS))
        keywords, tags = [], tags | {"reduction", fn}
        if np.ndim(value) >= 1 and self.draw(st.booleans()):
            keywords.append(f"axis={self.draw(st.sampled_from(range(-1, np.ndim(value))))}")
            tags |= {"axis"}
        if self.draw(st.integers(0, 2)) == 0:
            keywords.append("keepdims=True")
            tags |= {"keepdims"}
        if np.ndim(value) >= 1 and self.draw(st.integers(0, 2)) == 0:
            return f"{self.parenthesize(text)}.{fn}({', '.join(keywords)})", tags | {"method"}
        return f"np.{fn}({', '.join([text] + keywords)})", tags

    def literal(self, depth):
        form = self.draw(st.sampled_from(("scalars", "arrays", "stack")))
        if form == "scalars":
            parts = [self.expr(depth - 1, lambda v: np.ndim(v) == 0) for _ in range(self.draw(st.integers(2, 3)))]
            tags = frozenset().union(*(p[2] for p in parts)) | {"literal_scalars"}
            return f"np.array([{', '.join(p[0] for p in parts)}])", tags
        a, va, ta = self.expr(depth - 1, lambda v: np.ndim(v) >= 1)
        b, _, tb = self.expr(depth - 1, lambda v: np.shape(v) == np.shape(va))
        if form == "arrays":
            return f"np.array([{a}, {b}])", ta | tb | {"literal_arrays"}
        axis = self.draw(st.sampled_from(range(-1, np.ndim(va) + 1)))
        return f"np.stack([{a}, {b}], axis={axis})", ta | tb | {"stack"}

    # -- statements -----------------------------------------------------------------------------------------
    def attempt(self, lines: List[str], tags, functional: bool = True, twin: Optional[List[str]] = None,
                updated: Optional[str] = None) -> bool:
        """Keep ``lines`` if NumPy runs them on the example and every name keeps its shape and dtype.
        ``twin`` is their functional spelling where they update the array ``updated`` in place."""
        aliased = updated is not None and (bool(self.shared.get(updated)) or any(
            isinstance(v, np.ndarray) and np.shares_memory(v, self.env[updated])
            for n, v in self.env.items() if n != updated))
        env = copy.deepcopy(self.env)
        try:
            run_quietly(lambda: self.execute(lines, env))
        except Exception:  # noqa: BLE001 - NumPy refuses the statement: the caller draws another
            return False
        for name, value in env.items():
            if not acceptable(value):
                return False
            if name in self.env and signature(value) != signature(self.env[name]):
                return False
        arrays = [n for n, v in env.items() if isinstance(v, np.ndarray)]
        for a in arrays:
            for b in arrays:
                if a != b and np.shares_memory(env[a], env[b]):
                    self.shared.setdefault(a, set()).add(b)
        self.env, self.functional = env, self.functional and functional
        if self.twin is not None:
            self.twin = None if aliased or (not functional and twin is None) else self.twin + (twin or lines)
        self.lines += lines
        self.tags |= set(tags)
        return True

    @staticmethod
    def execute(lines: List[str], env: Dict[str, object]) -> None:
        """Run ``lines`` with NumPy, reading and binding names in ``env``."""
        exec("\n".join(lines), {"np": np}, env)

    def statement_kinds(self) -> Tuple[Callable, ...]:
        """The statement builders ``statement`` draws from (a subclass adds its own)."""
        return (self.assign, self.assign, self.augmented, self.subscript_write, self.method, self.branch,
                self.for_range, self.for_rows, self.while_loop)

    def statement(self) -> bool:
        return self.draw(st.sampled_from(self.statement_kinds()))()

    def assign(self) -> bool:
        text, _, tags = self.expr(2)
        return self.attempt([f"{self.fresh()} = {text}"], tags)

    def target(self) -> Optional[str]:
        """An array to update in place: often a fresh copy, sometimes an argument or an earlier name."""
        if self.draw(st.booleans()):
            text, _, tags = self.expr(1, lambda v: np.ndim(v) >= 1)
            name = self.fresh()
            if self.attempt([f"{name} = {self.parenthesize(text)}.copy()"], tags | {"copy"}):
                return name
        return self.pick(lambda v: np.ndim(v) >= 1)

    def augmented(self) -> bool:
        name = self.target()
        if name is None:
            return False
        text, _, tags = self.expr(1)
        op = self.draw(st.sampled_from(("+=", "-=", "*=", "/=")))
        return self.attempt([f"{name} {op} {text}"], tags | {"augassign"}, functional=False, updated=name,
                            twin=[f"{name} = ({name} {op[0]} ({text})).astype({name}.dtype)"])

    def subscript_write(self) -> bool:
        name = self.target()
        if name is None:
            return False
        ndim = np.ndim(self.env[name])
        sub = self.draw(st.sampled_from(SLICES[ndim] + INDICES[ndim] + GATHERS[ndim]))
        text, _, tags = self.expr(1)
        op = self.draw(st.sampled_from(("=", "+=", "*=")))
        tags = tags | {"subscript_write"} | slice_tags(sub) | ({"gather"} if sub in GATHERS[ndim] else set())
        # NumPy writes a repeated position once (``x[[1, 1]] += v`` adds v once); JAX's ``.at`` adds each
        twin = None if sub in REPEATED else [f"{name} = np.asarray({name}).at{sub}.{_AT[op]}({text})"]
        return self.attempt([f"{name}{sub} {op} {text}"], tags, functional=False, updated=name, twin=twin)

    def method(self) -> bool:
        name = self.target()
        if name is None:
            return False
        if self.draw(st.booleans()):
            return self.attempt([f"{name}.sort()"], {"sort", "inplace_method"}, functional=False, updated=name,
                                twin=[f"{name} = np.sort({name})"])
        constant = self.draw(st.sampled_from(CONSTANTS))
        return self.attempt([f"{name}.fill({constant})"], {"fill", "inplace_method"}, functional=False,
                            updated=name, twin=[f"{name} = np.full_like({name}, {constant})"])

    def condition(self) -> Tuple[str, FrozenSet[str]]:
        text, _, tags = self.expr(1, lambda v: np.asarray(v).dtype.kind != "c")
        fn = self.draw(st.sampled_from(("sum", "max", "mean")))
        return (f"np.{fn}({text}) {self.draw(st.sampled_from(COMPARE[:3]))} "
                f"{self.draw(st.sampled_from(CONSTANTS))}"), tags

    def branch(self) -> bool:
        cond, tags = self.condition()
        first, value, t1 = self.expr(2)
        same = lambda v: signature(v) == signature(value)  # noqa: E731
        if self.draw(st.booleans()):
            name = self.pick(same)
            if name is not None:
                return self.attempt([f"if {cond}:", f"    {name} = {first}"], tags | t1 | {"branch"})
        second, _, t2 = self.expr(2, same)
        name = self.fresh()
        return self.attempt([f"if {cond}:", f"    {name} = {first}", "else:", f"    {name} = {second}"],
                            tags | t1 | t2 | {"branch"})

    def accumulator(self) -> Optional[str]:
        """A name carried around a loop: a new one, or an earlier one."""
        if self.draw(st.booleans()):
            text, _, tags = self.expr(1)
            name = self.fresh()
            if self.attempt([f"{name} = {text}"], tags):
                return name
        return self.pick(lambda v: np.ndim(v) >= 1 or isinstance(v, (np.generic, float)))

    def update(self, acc: str, extra: Dict[str, object]) -> Tuple[str, FrozenSet[str]]:
        """``acc``'s next value in a loop body, with the loop's own names in scope."""
        saved = self.env
        self.env = {**self.env, **extra}
        try:
            text, _, tags = self.expr(1)
        finally:
            self.env = saved
        return self.draw(st.sampled_from(LOOP_UPDATES)).format(acc=acc, e=text), tags

    def for_range(self) -> bool:
        acc = self.accumulator()
        if acc is None:
            return False
        trips = self.draw(st.integers(0, 4))
        self.loop = ("i", trips)
        try:
            if np.ndim(self.env[acc]) == 1 and np.shape(self.env[acc])[0] >= trips and self.draw(st.booleans()):
                text, tags = self.update(f"{acc}[i]", {"i": 0})
                return self.attempt([f"for i in range({trips}):", f"    {acc}[i] = {text}"],
                                    tags | {"for_range", "subscript_write"}, functional=False, updated=acc,
                                    twin=[f"for i in range({trips}):",
                                          f"    {acc} = np.asarray({acc}).at[i].set({text})"])
            text, tags = self.update(acc, {"i": 0})
            return self.attempt([f"for i in range({trips}):", f"    {acc} = {text}"], tags | {"for_range"})
        finally:
            self.loop = None

    def for_rows(self) -> bool:
        acc = self.accumulator()
        rows = self.pick(lambda v: np.ndim(v) >= 1 and np.shape(v)[0] >= 1)
        if acc is None or rows is None:
            return False
        text, tags = self.update(acc, {"row": self.env[rows][0]})
        return self.attempt([f"for row in {rows}:", f"    {acc} = {text}"], tags | {"for_rows"})

    def while_loop(self) -> bool:
        acc = self.accumulator()
        if acc is None:
            return False
        counter = f"j{self.count}"
        bound = self.draw(st.integers(1, 4))
        cond, tags = f"{counter} < {bound}", {"while"}
        if self.draw(st.booleans()) and np.asarray(self.env[acc]).dtype.kind != "c":
            cond += f" and np.sum({acc}) < {self.draw(st.sampled_from(CONSTANTS))}"
            tags.add("while_data")
        text, body_tags = self.update(acc, {counter: 0})
        return self.attempt([f"{counter} = 0", f"while {cond}:", f"    {acc} = {text}", f"    {counter} += 1"],
                            tags | body_tags)

    # -- the end --------------------------------------------------------------------------------------------
    def result(self) -> Tuple[str, object, FrozenSet[str]]:
        """The returned expression, built on the last name the body defined (so the body matters)."""
        text, value, tags = self.expr(1)
        last = self.pick()
        if last is None or last in text:
            return text, value, tags
        for combined in (f"({text}) + {last}", last):
            try:
                value = self.evaluate(combined)
            except Exception:  # noqa: BLE001 - the shapes do not broadcast: return the name alone
                continue
            if acceptable(value):
                return combined, value, tags if combined != last else frozenset()
        return text, value, tags

    def failing_return(self) -> Optional[str]:
        """A ``return`` expression that NumPy refuses, or None if none fits this program."""
        name = self.pick(lambda v: np.ndim(v) >= 1)
        if name is None:
            return None
        shape = np.shape(self.env[name])
        text = self.draw(st.sampled_from((
            f"{name}[{shape[0]}]", f"{name}[{-shape[0] - 1}]", f"np.sum({name}, axis={len(shape)})",
            f"{name} + np.ones({shape[-1] + 1})", f"len({name}) // 0")))
        try:
            self.evaluate(text)
        except Exception:  # noqa: BLE001 - what we want: NumPy raises
            return text
        return None


class _NoCandidate(Exception):
    """No expression satisfying the constraint could be drawn (hypothesis rejects the example)."""


# How ``prog_sum`` makes a scalar of ``prog``'s output, by the output's dtype kind: as is (then ``grad`` of a
# bool, integer or complex output must be refused, as JAX refuses it), or made real and float first.
SCALAR_FORMS = {"b": ("{} * 1.0", "{}"), "i": ("{} * 1.0", "{}"), "f": ("{}",), "c": ("np.real({})", "{}")}


def _source(lines: List[str], result: str, scalar_form: str) -> str:
    body = "\n".join("    " + line for line in lines + [f"return {result}"])
    return (f"def prog(x, y, s):\n{body}\n\n\n"
            f"def prog_sum(x, y, s):\n    return np.sum({scalar_form.format('prog(x, y, s)')})\n")


def stacked_batch(draw, examples: list) -> Tuple[tuple, tuple, FrozenSet[str]]:
    """The default ``vmap`` batch: ``x`` and ``y`` stacked along axis 0, ``s`` shared (``in_axes=(0, 0, None)``)."""
    batch = tuple(np.stack([e[k] for e in examples]) if k < 2 else examples[0][k] for k in range(3))
    return batch, (0, 0, None), frozenset()


@st.composite
def programs(draw, max_statements: int = 4, writer: Callable = Writer, batching: Callable = stacked_batch) -> Program:
    """A generated program with its example arguments and a batch of three examples for ``vmap``; ``writer``
    (a ``Writer`` class) writes its body, ``batching(draw, examples)`` gives ``(batch, in_axes, tags)``."""
    kinds = [draw(st.sampled_from(DTYPES)), draw(st.sampled_from(DTYPES)), draw(st.sampled_from(("float", "int")))]
    shapes = [draw(st.sampled_from(X_SHAPES)), draw(st.sampled_from(Y_SHAPES))]
    examples = []
    for _ in range(3):
        examples.append((draw(arrays(kinds[0], shapes[0])), draw(arrays(kinds[1], shapes[1])),
                         draw(scalars(kinds[2]))))
    writer = writer(draw, dict(zip(PARAMS, copy.deepcopy(examples[0]))))
    tags = {f"dtype_{kinds[0]}", f"dtype_{kinds[1]}", f"scalar_{kinds[2]}"}
    try:
        for _ in range(draw(st.integers(1, max_statements))):
            writer.statement()
        result = writer.failing_return() if draw(st.sampled_from(range(12))) == 11 else None
        raises = result is not None
        if raises:
            tags.add("raises")
        else:
            result, value, result_tags = writer.result()
            tags |= result_tags | {f"output_{OUTPUT_KINDS[np.asarray(value).dtype.kind]}"}
    except _NoCandidate:
        from hypothesis import reject
        reject()
    scalar_form = "{}" if raises else draw(st.sampled_from(SCALAR_FORMS[np.asarray(value).dtype.kind]))
    batch, in_axes, batch_tags = batching(draw, examples)
    return Program(source=_source(writer.lines, result, scalar_form), args=examples[0], batch=batch,
                   in_axes=in_axes, tags=frozenset(writer.tags | tags | batch_tags), functional=writer.functional,
                   jax_source=None if writer.twin is None else _source(writer.twin, result, scalar_form))
