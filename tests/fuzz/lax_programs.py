"""The generator of ``numbax.lax`` programs: ``def prog(x, y, s)`` whose control flow is JAX's structured kind.

Each program draws a few statements: elementwise and reducing expressions over 3-vectors and numbers, and
``lax.fori_loop`` (a tuple carry and a vector one), ``lax.scan`` (numbers and vectors carried, ``reverse``),
``lax.cond``, ``lax.switch`` and ``lax.while_loop`` whose bodies are local functions that read the enclosing
function's variables (closures, nested loops among them) and may name their own variables as the lowering
names its own (``i``, ``val``, ``y``, ``operand_0``...). The JAX twin is the same source with ``numbax.lax``
bound to ``jax.lax`` (``grad_corpus.oracles.to_jax``). A ``random.Random(seed)`` draws each program, so a
seed names one program for good.
"""
from __future__ import annotations

import random
from typing import Dict, List, Set, Tuple

VECTOR_UNARY = ("np.sin({})", "np.tanh({})", "np.cos({})", "np.exp(0.1 * {})", "np.sqrt(np.abs({}) + 1.0)",
                "{}[::-1]", "np.cumsum({})", "np.square({})", "-{}", "np.sort({})", "np.roll({}, 1)")
VECTOR_BINARY = ("{} + {}", "{} - {}", "{} * {}", "np.maximum({}, {})", "np.minimum({}, {})",
                 "np.where({0} > 0.0, {0}, {1})", "lax.select({0} > {1}, {0}, {1})", "{} / (1.5 + np.abs({}))")
NUMBER_UNARY = ("np.sin({})", "np.tanh({})", "np.exp(0.1 * {})", "({0} * {0})", "np.abs({})")
NUMBER_OF_VECTOR = ("np.sum({})", "np.mean({})", "np.max({})", "np.min({})", "{}[0]", "{}[-1]", "np.prod({})",
                    "np.dot({0}, {0})")
FLOWS = ("fori", "fori_vector", "scan", "scan_vector", "cond", "switch", "while_loop")


class _Writer:
    """Writes one program's lines; ``env`` maps each name in scope to ``"v"`` (a 3-vector) or ``"s"``."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.count = 0
        self.lines: List[str] = []
        self.tags: Set[str] = set()

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def vector(self, env: Dict[str, str], depth: int = 2) -> str:
        rng = self.rng
        if depth <= 0 or rng.random() < 0.3:
            return rng.choice([n for n, k in env.items() if k == "v"])
        draw = rng.random()
        if draw < 0.35:
            return rng.choice(VECTOR_UNARY).format(self.vector(env, depth - 1))
        if draw < 0.7:
            return "(" + rng.choice(VECTOR_BINARY).format(self.vector(env, depth - 1), self.vector(env, depth - 1)) + ")"
        return f"({self.vector(env, depth - 1)} * {self.number(env, depth - 1)})"

    def number(self, env: Dict[str, str], depth: int = 2) -> str:
        rng = self.rng
        numbers = [n for n, k in env.items() if k == "s"]
        if depth <= 0 or rng.random() < 0.3:
            return rng.choice(numbers) if numbers and rng.random() < 0.7 else rng.choice(("0.5", "1.25", "-0.75"))
        draw = rng.random()
        if draw < 0.5:
            return rng.choice(NUMBER_OF_VECTOR).format(self.vector(env, depth - 1))
        if draw < 0.75:
            return rng.choice(NUMBER_UNARY).format(self.number(env, depth - 1))
        return f"({self.number(env, depth - 1)} + {self.number(env, depth - 1)})"

    def statement(self, env: Dict[str, str], indent: int, flow: bool = True) -> None:
        pad = " " * indent
        if not flow or self.rng.random() < 0.25:
            if self.rng.random() < 0.6:
                name = self.fresh("v")
                self.lines.append(f"{pad}{name} = {self.vector(env)}")
                env[name] = "v"
            else:
                name = self.fresh("t")
                self.lines.append(f"{pad}{name} = {self.number(env)}")
                env[name] = "s"
            return
        kind = self.rng.choice(FLOWS)
        self.tags.add(kind)
        getattr(self, kind)(env, indent)

    def body(self, env: Dict[str, str], indent: int, count: int) -> None:
        for _ in range(count):
            self.statement(env, indent, flow=self.rng.random() < 0.25)

    def fori(self, env, indent):
        pad, rng = " " * indent, self.rng
        fn, vector, number = self.fresh("body"), self.fresh("v"), self.fresh("t")
        start = rng.choice((0, 0, 1))
        inner = dict(env, a="v", b="s")
        self.lines += [f"{pad}def {fn}(i, carry):", f"{pad}    a, b = carry"]
        self.body(inner, indent + 4, rng.randint(0, 2))
        uses_i = rng.choice(("x[i % 3]", "a[i % 3]", "0.1 * i", "1.0"))
        self.lines += [f"{pad}    a = {self.vector(inner)} * {uses_i}", f"{pad}    b = {self.number(inner)}",
                       f"{pad}    return (a, b)",
                       f"{pad}{vector}, {number} = lax.fori_loop({start}, {start + rng.randint(1, 4)}, {fn}, "
                       f"({self.vector(env, 1)}, {self.number(env, 1)}))"]
        env[vector], env[number] = "v", "s"

    def fori_vector(self, env, indent):
        pad = " " * indent
        fn, out = self.fresh("body"), self.fresh("v")
        inner = dict(env, val="v")
        self.lines.append(f"{pad}def {fn}(i, val):")
        self.body(inner, indent + 4, self.rng.randint(0, 2))
        self.lines += [f"{pad}    return {self.vector(inner)}",
                       f"{pad}{out} = lax.fori_loop(0, {self.rng.randint(1, 3)}, {fn}, {self.vector(env, 1)})"]
        env[out] = "v"

    def scan(self, env, indent):
        pad = " " * indent
        fn, carry, ys = self.fresh("step"), self.fresh("t"), self.fresh("v")
        inner = dict(env, c="s", xi="s")
        self.lines.append(f"{pad}def {fn}(c, xi):")
        self.body(inner, indent + 4, self.rng.randint(0, 1))
        reverse = ", reverse=True" if self.rng.random() < 0.3 else ""
        self.lines += [f"{pad}    c = {self.number(inner)} + xi * {self.number(inner, 1)}",
                       f"{pad}    return c, {self.number(inner)}",
                       f"{pad}{carry}, {ys} = lax.scan({fn}, {self.number(env, 1)}, {self.vector(env, 1)}{reverse})"]
        env[carry], env[ys] = "s", "v"

    def scan_vector(self, env, indent):
        pad = " " * indent
        fn, carry, total = self.fresh("step"), self.fresh("v"), self.fresh("t")
        inner = dict(env, c="v", xi="s")
        self.lines += [f"{pad}def {fn}(c, xi):", f"{pad}    c = {self.vector(inner)} * xi + c",
                       f"{pad}    return c, np.sum(c)",
                       f"{pad}{carry}, {total}s = lax.scan({fn}, {self.vector(env, 1)}, {self.vector(env, 1)})",
                       f"{pad}{total} = np.sum({total}s)"]
        env[carry], env[total] = "v", "s"

    def cond(self, env, indent):
        pad = " " * indent
        yes, no, out = self.fresh("yes"), self.fresh("no"), self.fresh("v")
        for fn in (yes, no):
            inner = dict(env, a="v", operand_0="s")
            self.lines.append(f"{pad}def {fn}(a, operand_0):")
            self.body(inner, indent + 4, self.rng.randint(0, 1))
            self.lines.append(f"{pad}    return {self.vector(inner)}")
        self.lines.append(f"{pad}{out} = lax.cond({self.number(env, 1)} > 0.0, {yes}, {no}, {self.vector(env, 1)}, "
                          f"{self.number(env, 1)})")
        env[out] = "v"

    def switch(self, env, indent):
        pad = " " * indent
        names, out = [self.fresh("branch") for _ in range(3)], self.fresh("v")
        for fn in names:
            self.lines += [f"{pad}def {fn}(a):", f"{pad}    return {self.vector(dict(env, a='v'))}"]
        index = f"({self.number(env, 1)} > 0.0) * 1 + ({self.number(env, 1)} > 0.5) * 1"
        self.lines.append(f"{pad}{out} = lax.switch({index}, [{', '.join(names)}], {self.vector(env, 1)})")
        env[out] = "v"

    def while_loop(self, env, indent):
        pad = " " * indent
        more, step, out = self.fresh("more"), self.fresh("step"), self.fresh("v")
        self.lines += [f"{pad}def {more}(state):", f"{pad}    k, a = state",
                       f"{pad}    return k < {self.rng.randint(1, 3)}",
                       f"{pad}def {step}(state):", f"{pad}    k, a = state",
                       f"{pad}    return (k + 1, {self.vector(dict(env, a='v'))})",
                       f"{pad}_, {out} = lax.while_loop({more}, {step}, (0, {self.vector(env, 1)}))"]
        env[out] = "v"


def lax_program(seed: int) -> Tuple[str, Set[str]]:
    """The source of program ``seed`` (``prog`` and ``prog_sum``, the sum ``grad`` takes) and its constructs."""
    rng = random.Random(seed)
    writer = _Writer(rng)
    env = {"x": "v", "y": "v", "s": "s"}
    for _ in range(rng.randint(2, 4)):
        writer.statement(env, 4)
    result = writer.vector(env) if rng.random() < 0.7 else writer.number(env)
    source = ("from numbax import lax\n\n\ndef prog(x, y, s):\n" + "\n".join(writer.lines) +
              f"\n    return {result}\n\n\ndef prog_sum(x, y, s):\n    return np.sum(prog(x, y, s))\n")
    return source, writer.tags
