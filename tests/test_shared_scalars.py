"""``fusion.shared_scalars``: a pure scalar call computed again while its value is at hand is read instead;
never across an assignment of what it reads or of its name, never an array, never into a loop that
assigns its operands. The rewritten code computes what the original does."""
import textwrap

import gast
import numpy as np
import pytest

import numbax
from numbax.ast_passes.optimizations import fusion
from numbax.ast_passes.optimizations.fusion import shared_scalars
from numbax.ast_passes.unparse import unparse
from test_fusion import run_tree

AVALS = {"x": ("f", 0), "v": ("f", 1), "n": ("i", 0)}


def _shared(source: str):
    fdef = gast.parse(textwrap.dedent(source)).body[0]
    changed = shared_scalars.share(fdef, fusion.Facts(fdef, AVALS, {}))
    return fdef, changed


SHARED = """
def f(x, v, n):
    c = np.cos(x)
    s = np.sin(x)
    total = c * 2.0 + np.sin(x)
    for i in range(n):
        total = total + np.cos(x) * np.sin(x)
    a = np.sin(v)
    b = np.sin(v) * c
    x = x + 1.0
    total = total + np.cos(x) + np.sum(a + b)
    c = 0.5
    return total + np.sin(x) * c + s
"""

SHARED_GOLDEN = """
def f(x, v, n):
    c = np.cos(x)
    s = np.sin(x)
    total = c * 2.0 + s
    for i in range(n):
        total = total + c * s
    a = np.sin(v)
    b = np.sin(v) * c
    x = x + 1.0
    total = total + np.cos(x) + np.sum(a + b)
    c = 0.5
    return total + np.sin(x) * c + s
"""


def test_scalar_calls_are_computed_once_while_their_operands_stand():
    v = np.linspace(0.0, 1.0, 3)
    original = run_tree(gast.parse(textwrap.dedent(SHARED)).body[0], 0.3, v, 2)
    fdef, changed = _shared(SHARED)
    assert changed
    assert unparse(fdef).strip() == textwrap.dedent(SHARED_GOLDEN).strip()
    assert run_tree(fdef, 0.3, v, 2) == pytest.approx(original, rel=1e-15)


def test_a_loop_that_changes_an_operand_computes_it_anew():
    source = """
    def f(x, v, n):
        c = np.cos(x)
        for i in range(n):
            x = x * 0.5
            c = c + np.cos(x)
        return c
    """
    fdef, changed = _shared(source)
    assert not changed


def test_newtons_backward_step_calls_sin_and_cos_once():
    def kepler(e, m):
        big_e = m
        delta = 1.0
        while abs(delta) > 1e-12:
            delta = (big_e - e * np.sin(big_e) - m) / (1.0 - e * np.cos(big_e))
            big_e = big_e - delta
        return big_e

    grad = numbax.grad(kepler)
    source = grad.lower_source(0.7, 1.3)
    backward = source[source.index("for step in range(trips)"):]
    code = "\n".join(line for line in backward.splitlines() if not line.strip().startswith("#"))
    assert code.count("np.sin(") == 1 and code.count("np.cos(") == 1
    big_e = 1.3
    for _ in range(50):
        big_e -= (big_e - 0.7 * np.sin(big_e) - 1.3) / (1.0 - 0.7 * np.cos(big_e))
    assert grad(0.7, 1.3) == pytest.approx(np.sin(big_e) / (1.0 - 0.7 * np.cos(big_e)), rel=1e-12)
