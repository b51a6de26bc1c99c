"""The extended grammar: ``grammar``'s programs plus the constructs added to numbax after it was written.

``extended_programs`` writes programs with everything ``grammar.Writer`` writes and also: the composites
(``np.diff``, ``np.take``, ``np.take_along_axis``, ``np.average``, ``np.cross``, ``np.kron``, ``np.nan_to_num``,
``np.heaviside``, ``np.float_power``, ``np.deg2rad``, ``np.vander``, ``np.linalg.matrix_power``) with their
keyword arguments, ``np.linalg.norm`` with ``ord`` (and ``axis``), in-place updates through views (``v = x[1:]``,
``v += e``: the update writes into ``x``), and closures (a nested ``def`` reading the program's variables, with
a default argument and keyword calls, called directly, from a loop, after a variable it reads was rebound,
returned by a maker function or passed on to another function). Its ``vmap`` batches stack ``x`` and ``y``
along other axes than 0 (``in_axes`` 1 or -1) and batch ``s`` too. A separate mode, so that the seeds of
``grammar.programs`` keep generating the programs they did (``test_fuzz`` pins them).
"""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np
from hypothesis import strategies as st

from .grammar import CONSTANTS, Writer, programs, signature

VECTOR_ORDS = ("1", "2", "np.inf", "-np.inf", "0", "3", "0.5", "-1")
MATRIX_ORDS = ("'fro'", "'nuc'", "1", "-1", "2", "-2", "np.inf", "-np.inf")
# views of a vector and of a matrix that an update writes through (``reshape`` of a non-contiguous matrix
# copies instead: NumPy's own rule, which numbax must follow too)
VIEWS_OF = {1: ("[1:]", "[::2]", "[::-1]", "[:3]", ".reshape(2, -1)", "[1:3]"),
            2: ("[1]", "[:, 0]", "[1:, ::2]", ".T", "[0:2]", ".reshape(-1)", "[::-1, 1:]")}
VIEW_UPDATES = ("{v} += {e}", "{v} *= {e}", "{v} -= {e}", "{v}[0] = {e}", "{v}.fill({c})", "{v}[...] = {e}")


class ExtendedWriter(Writer):
    """A ``Writer`` that also writes composites, norms, updates through views and closures."""

    def expression_forms(self) -> List[Callable]:
        return super().expression_forms() + [self.composite] * 4 + [self.norm]

    def statement_kinds(self) -> Tuple[Callable, ...]:
        return super().statement_kinds() + (self.view_update, self.view_update, self.closure, self.closure)

    @staticmethod
    def execute(lines: List[str], env: Dict[str, object]) -> None:
        """Run ``lines`` with the names as globals (a nested ``def`` reads them as a closure reads its maker's);
        the functions they define are left out of ``env``."""
        scope = {"np": np, **env}
        exec("\n".join(lines), scope)
        env.update({k: v for k, v in scope.items() if k not in ("np", "__builtins__") and not callable(v)})

    # -- composites -----------------------------------------------------------------------------------------
    def composite(self, depth):
        form = self.draw(st.sampled_from((
            self.diff, self.take, self.take_along_axis, self.average, self.cross, self.kron, self.nan_to_num,
            self.heaviside, self.matrix_power, self.small_composite)))
        return form(depth)

    def array(self, depth, ndim: Optional[int] = None):
        want = (lambda v: np.ndim(v) >= 1) if ndim is None else (lambda v: np.ndim(v) == ndim)
        text, value, tags = self.expr(depth - 1, want)
        return self.parenthesize(text), value, tags

    def axis_keyword(self, value, tags: set) -> str:
        if self.draw(st.booleans()):
            return ""
        tags.add("keyword")
        return f", axis={self.draw(st.sampled_from(range(-1, np.ndim(value))))}"

    def diff(self, depth):
        text, value, tags = self.array(depth)
        tags = set(tags) | {"diff", "composite"}
        n = self.draw(st.sampled_from(("", ", n=2", ", 2")))
        extra = self.axis_keyword(value, tags)
        if self.draw(st.integers(0, 2)) == 0:
            extra += f", {self.draw(st.sampled_from(('prepend', 'append')))}={self.draw(st.sampled_from(CONSTANTS))}"
            tags.add("keyword")
        return f"np.diff({text}{n}{extra})", tags

    def take(self, depth):
        text, value, tags = self.array(depth)
        indices = self.draw(st.sampled_from(("1", "-1", "np.array([0, 2])", "np.array([-1, 0, 0])",
                                             "np.array([[1, 0], [2, 2]])")))
        tags = set(tags) | {"take", "composite"}
        return f"np.take({text}, {indices}{self.axis_keyword(value, tags)})", tags

    def take_along_axis(self, depth):
        text, value, tags = self.array(depth)
        tags = set(tags) | {"take_along_axis", "composite"}
        shape = np.shape(value)
        axis = self.draw(st.sampled_from(range(-1, len(shape))))
        if self.draw(st.booleans()):
            return f"np.take_along_axis({text}, np.argsort({text}, axis={axis}), axis={axis})", tags
        along = shape[axis]
        rows = list(shape)
        rows[axis] = self.draw(st.integers(1, 3))
        flat = self.draw(st.lists(st.integers(-along, along - 1), min_size=int(np.prod(rows)),
                                  max_size=int(np.prod(rows))))
        indices = np.array(flat).reshape(rows).tolist()
        return f"np.take_along_axis({text}, np.array({indices}), axis={axis})", tags

    def average(self, depth):
        text, value, tags = self.array(depth)
        tags = set(tags) | {"average", "composite"}
        if self.draw(st.booleans()):
            axis = self.draw(st.sampled_from(range(-1, np.ndim(value))))
            length = np.shape(value)[axis]
            weights, _, wtags = self.expr(depth - 1, lambda v: np.shape(v) == (length,))
            return f"np.average({text}, axis={axis}, weights={weights})", tags | wtags | {"keyword"}
        return f"np.average({text}{self.axis_keyword(value, tags)})", tags

    def first_three(self, depth):
        """An array expression cut to 3 elements along its last axis (``np.cross``'s vectors)."""
        text, value, tags = self.expr(depth - 1, lambda v: np.ndim(v) >= 1 and np.shape(v)[-1] >= 3)
        text = self.parenthesize(text)
        return (f"{text}[:3]" if np.ndim(value) == 1 else f"{text}[:, :3]"), tags

    def cross(self, depth):
        a, ta = self.first_three(depth)
        b, tb = self.first_three(depth)
        return f"np.cross({a}, {b})", ta | tb | {"cross", "composite"}

    def kron(self, depth):
        a, value, ta = self.array(depth)
        b, _, tb = self.array(depth, np.ndim(value))
        return f"np.kron({a}, {b})", ta | tb | {"kron", "composite"}

    def nan_to_num(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        keywords = self.draw(st.sampled_from(("", ", nan=0.5", ", posinf=2.0, neginf=-3.0", ", nan=-1.0, posinf=1.0")))
        tags = ta | tb | {"nan_to_num", "composite"} | ({"keyword"} if keywords else set())
        return f"np.nan_to_num(({a}) / ({b}){keywords})", tags

    def heaviside(self, depth):
        a, _, ta = self.expr(depth - 1)
        b, _, tb = self.expr(depth - 1)
        return f"np.heaviside({a}, {b})", ta | tb | {"heaviside", "composite"}

    def matrix_power(self, depth):
        text, value, tags = self.array(depth, 2)
        k = min(np.shape(value))
        n = self.draw(st.sampled_from((0, 1, 2, 3, -1)))
        return f"np.linalg.matrix_power({text}[:{k}, :{k}], {n})", tags | {"matrix_power", "composite"}

    def small_composite(self, depth):
        text, value, tags = self.expr(depth - 1)
        form = self.draw(st.sampled_from(("np.deg2rad({})", "np.rad2deg({})", "np.float_power({}, 2)",
                                          "np.float_power({}, 0.5)", "np.vander({}, 3)",
                                          "np.vander({}, N=2, increasing=True)")))
        if "vander" in form and np.ndim(value) != 1:
            return None
        return form.format(text), tags | {"composite", form.split("(")[0].split(".")[-1]}

    def norm(self, depth):
        text, value, tags = self.array(depth)
        tags = set(tags) | {"norm"}
        if self.draw(st.integers(0, 3)) == 0:
            return f"np.linalg.norm({text})", tags
        if np.ndim(value) == 2 and self.draw(st.booleans()):
            return f"np.linalg.norm({text}, ord={self.draw(st.sampled_from(MATRIX_ORDS))})", tags | {"keyword"}
        order = self.draw(st.sampled_from(VECTOR_ORDS))
        axis = f", axis={self.draw(st.sampled_from((0, 1, -1)))}" if np.ndim(value) == 2 else ""
        return f"np.linalg.norm({text}, ord={order}{axis})", tags | {"keyword"}

    # -- statements -----------------------------------------------------------------------------------------
    def view_update(self) -> bool:
        """``v = base[view]``, an in-place update of ``v`` (which writes into ``base``), then a copy of ``base``
        (so that the program reads what the update wrote)."""
        base = self.target()
        if base is None:
            return False
        view = self.draw(st.sampled_from(VIEWS_OF[np.ndim(self.env[base])]))
        v, copied = self.fresh(), self.fresh()
        text, _, tags = self.expr(1)
        update = self.draw(st.sampled_from(VIEW_UPDATES)).format(v=v, e=text, c=self.draw(st.sampled_from(CONSTANTS)))
        return self.attempt([f"{v} = {base}{view}", update, f"{copied} = {base}.copy()"],
                            tags | {"view_update", "inplace"}, functional=False, updated=base)

    def closure(self) -> bool:
        """A nested ``def`` that reads the program's variables, called in one of several ways."""
        form = self.draw(st.sampled_from(("direct", "keyword", "loop", "rebound", "returned", "passed")))
        arg = self.pick(lambda v: np.ndim(v) >= 1 or isinstance(v, (np.generic, float)))
        if arg is None:
            return False
        name, result = f"f{self.count}", self.fresh()
        parameters = {"a": self.env[arg], "b": 0.5}
        want = (lambda v: signature(v) == signature(self.env[arg])) if form == "loop" else (lambda v: True)
        body, body_tags = self.in_scope(parameters, want)
        tags = body_tags | {"closure", f"closure_{form}"}
        define = [f"def {name}(a, b=0.5):", f"    return {body}"]
        if form == "direct":
            lines = define + [f"{result} = {name}({arg})"]
        elif form == "keyword":
            other = self.pick(lambda v: np.ndim(v) == 0)
            call = f"{name}(b={other}, a={arg})" if other is not None else f"{name}({arg}, b=2.0)"
            lines, tags = define + [f"{result} = {call}"], tags | {"keyword"}
        elif form == "loop":
            lines = define + [f"{result} = {arg}", "for i in range(3):", f"    {result} = {name}({result})"]
        elif form == "rebound":
            outer = [n for n in self.env if re.search(rf"\b{n}\b", body)]
            if not outer:
                return False
            rebound = self.draw(st.sampled_from(outer))
            lines = define + [f"{rebound} = {rebound} + {rebound}", f"{result} = {name}({arg})"]
        elif form == "returned":
            lines = [f"def make{name}(b):", f"    def {name}(a):", f"        return {body}", f"    return {name}",
                     f"g{name} = make{name}({self.draw(st.sampled_from(('0.5', '2.0', 's')))})",
                     f"{result} = g{name}({arg})"]
        else:
            lines = define + [f"def apply{name}(fn, a):", "    return fn(a) + fn(a)",
                              f"{result} = apply{name}({name}, {arg})"]
        return self.attempt(lines, tags)

    def in_scope(self, parameters: Dict[str, object], want: Callable):
        """An expression over the program's names and a function's ``parameters``."""
        saved = self.env
        self.env = {**self.env, **parameters}
        try:
            text, _, tags = self.expr(2, want)
        finally:
            self.env = saved
        return text, tags


def batch_along_axes(draw, examples: list):
    """A ``vmap`` batch with ``x`` and ``y`` stacked along a drawn axis (0, 1 or -1; ``y`` sometimes shared) and
    ``s`` batched or shared."""
    batch, in_axes = [], []
    for k in range(2):
        ndim = np.ndim(examples[0][k])
        axes = (0, -1) + tuple(range(1, ndim + 1)) + ((None,) if k == 1 else ())
        axis = draw(st.sampled_from(axes))
        in_axes.append(axis)
        batch.append(examples[0][k] if axis is None else np.stack([e[k] for e in examples], axis=axis))
    batched_s = draw(st.booleans())
    in_axes.append(0 if batched_s else None)
    batch.append(np.array([e[2] for e in examples]) if batched_s else examples[0][2])
    tags = {"in_axes_other"} if tuple(in_axes) != (0, 0, None) else set()
    return tuple(batch), tuple(in_axes), frozenset(tags)


def extended_programs(max_statements: int = 4):
    """Programs of the extended grammar (a hypothesis strategy)."""
    return programs(max_statements=max_statements, writer=ExtendedWriter, batching=batch_along_axes)
