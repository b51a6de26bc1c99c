"""Property tests of reverse mode: random small programs, ``numbax.grad`` against ``jax.grad``.

Hypothesis writes a program as source text: a few assignments of elementwise operations among
``+ - * /``, ``sin``, ``cos``, ``tanh``, ``exp`` (of a clipped argument) and ``square``; an
``if``/``else`` on a runtime comparison; a ``for i in range(n)`` loop with ``n`` a runtime
argument; and a ``while`` loop with a counter. The program goes into a temporary module (numbax
reads function source), and its gradient with respect to ``x``, ``y`` (arrays) and ``s`` (a
float) must match JAX's gradient of the same source with ``np`` bound to ``jax.numpy``, in
float64. Loop bodies go through ``sin``/``tanh`` and divisions through ``1 + b**2`` so values
stay bounded; names carried around loops or merged after branches are arrays on every path, so
the programs are type-stable as Numba requires. Examples are derandomized so that CI sees the same programs every run.
"""
import os
import re
import sys

import numpy as np
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures.source_modules import load_source  # noqa: E402
from grad_corpus import oracles  # noqa: E402

CONSTANTS = ("0.5", "1.5", "-0.7", "2.0", "0.3")
UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "np.exp(np.clip({}, -3.0, 3.0))", "np.square({})")
BINARY = ("({}) + ({})", "({}) - ({})", "({}) * ({})", "({}) / (1.0 + np.square({}))")
BOUNDED = ("np.sin({})", "np.tanh({})", "np.cos({})")

X = np.array([0.3, -1.1, 0.8])
Y = np.array([-0.4, 0.9, 1.7])
S = 0.6


@st.composite
def expressions(draw, names, depth=2):
    """An elementwise expression over ``names`` (and constants), at most ``depth`` operations deep."""
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return draw(st.sampled_from(CONSTANTS))
        return draw(st.sampled_from(names))
    if draw(st.booleans()):
        return draw(st.sampled_from(UNARY)).format(draw(expressions(names, depth - 1)))
    return draw(st.sampled_from(BINARY)).format(draw(expressions(names, depth - 1)),
                                                 draw(expressions(names, depth - 1)))


def _is_array(expr: str, arrays) -> bool:
    """Elementwise operations broadcast: an expression is an array iff it mentions an array."""
    return bool(set(re.findall(r"[A-Za-z_]\w*", expr)) & set(arrays))


@st.composite
def array_expressions(draw, names, arrays, depth=2):
    """An expression that is an array, so that loop-carried and branch-merged names keep one type."""
    expr = draw(expressions(names, depth))
    return expr if _is_array(expr, arrays) else f"{draw(st.sampled_from(arrays))} * ({expr})"


@st.composite
def programs(draw):
    """The source of ``def prog(x, y, s, n)`` returning a float."""
    names, arrays = ["x", "y", "s"], ["x", "y"]
    body = []

    def define(name, expr):
        names.append(name)
        if _is_array(expr, arrays):
            arrays.append(name)

    for k in range(draw(st.integers(1, 3))):
        expr = draw(expressions(names))
        body.append(f"v{k} = {expr}")
        define(f"v{k}", expr)
    if draw(st.booleans()):
        cond = f"np.sum({draw(st.sampled_from(names))}) {draw(st.sampled_from(['>', '<']))} " \
               f"{draw(st.sampled_from(['0.0', '0.5', '-0.5']))}"
        body += [f"if {cond}:", f"    b = {draw(array_expressions(names, arrays))}",
                 "else:", f"    b = {draw(array_expressions(names, arrays))}"]
        define("b", "x")
    if draw(st.booleans()):
        update = f"acc * {draw(st.sampled_from(CONSTANTS))} + {draw(expressions(names, 1))}"
        body += [f"acc = {draw(array_expressions(names, arrays, 1))}",
                 "for i in range(n):",
                 f"    acc = {draw(st.sampled_from(BOUNDED)).format(update)}"
                 + (" + 0.1 * i" if draw(st.booleans()) else "")]
        define("acc", "x")
    if draw(st.booleans()):
        body += [f"w = {draw(array_expressions(names, arrays, 1))}", "j = 0",
                 f"while j < {draw(st.sampled_from(['n', '2', 'n + 1']))}:",
                 f"    w = {draw(st.sampled_from(BOUNDED)).format('w')} * {draw(st.sampled_from(CONSTANTS))} + "
                 f"{draw(expressions(names, 1))}",
                 "    j += 1"]
        define("w", "x")
    first, last = names[3], names[-1]
    body.append(f"return np.sum(({last}) * W) + 0.5 * np.sum({first})")
    return "\n".join(["def prog(x, y, s, n):"] + ["    " + line for line in body])


def _load(source: str):
    """Write the program into a fresh module file and import it."""
    return load_source("import numpy as np\n\nW = np.array([0.3, -1.1, 0.8])\n\n\n" + source + "\n",
                       "grad_property").prog


def _check(source: str, n: int, backend: str):
    note(source)
    prog = _load(source)
    args = (X.copy(), Y.copy(), S, n)
    value = prog(*args)
    if not np.isfinite(value):
        return
    expected = oracles.jax_grad(prog, args, argnums=(0, 1, 2))
    got = numbax.grad(prog, argnums=(0, 1, 2), backend=backend)(*args)
    assert isinstance(got, tuple) and len(got) == 3
    for name, e, g, like in zip("xys", expected, got, args):
        assert np.shape(g) == np.shape(like), f"d{name}: shape {np.shape(g)}"
        np.testing.assert_allclose(g, e, rtol=1e-7, atol=1e-9, err_msg=f"d{name}")


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 4))
def test_random_programs_python_backend(source, n):
    _check(source, n, "python")


# No shrinking on cpu: each shrink step is a Numba compile (seconds); the python backend's test
# shrinks the same programs cheaply.
@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.generate])
@given(programs(), st.integers(0, 4))
def test_random_programs_cpu_backend(source, n):
    _check(source, n, "cpu")


def test_generated_programs_run_under_jax():
    """The generator's programs are valid NumPy that JAX differentiates (no numbax needed)."""
    @settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(programs(), st.integers(0, 4))
    def run(source, n):
        prog = _load(source)
        args = (X.copy(), Y.copy(), S, n)
        value = prog(*args)
        assert np.ndim(value) == 0
        grads = oracles.jax_grad(prog, args, argnums=(0, 1, 2))
        assert [np.shape(g) for g in grads] == [(3,), (3,), ()]
        if np.isfinite(value):
            # Spot-check JAX itself against finite differences on the float argument.
            fd = oracles.fd_grad(prog, args, argnums=2)
            np.testing.assert_allclose(grads[2], fd, rtol=1e-5, atol=1e-7)
    run()
