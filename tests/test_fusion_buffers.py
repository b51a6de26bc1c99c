"""``fusion.buffers``: an array a loop makes in each iteration is made once before the loop, only where no
iteration's array outlives it. Golden output for the reuse; the refusals (a view, a read after the loop, a read
before the body assigns it, an array handed to a call) leave the code as it was, and the rewritten code
computes what the original does."""
import textwrap

import gast
import numpy as np
import pytest

from numbax.ast_passes.optimizations import fusion
from numbax.ast_passes.optimizations.fusion import buffers
from numbax.ast_passes.unparse import unparse
from test_fusion import run_tree

AVALS = {"x": ("f", 2), "n": ("i", 0)}


def _reused(source: str):
    fdef = gast.parse(textwrap.dedent(source)).body[0]
    facts = fusion.Facts(fdef, AVALS, {})
    changed = buffers.reuse(fdef, facts)
    gast.fix_missing_locations(fdef)
    return fdef, changed


REUSED = """
def f(x, n):
    total = 0.0
    for i in range(n):
        row = x[i]
        g = rt.zeros_like(row)
        g[i] += 1.0
        out = np.empty(x.shape[1])
        for j in range(x.shape[1]):
            out[j] = g[j] + row[j]
        g = out
        total = total + np.sum(g * row)
    return total
"""

REUSED_GOLDEN = """
def f(x, n):
    total = 0.0
    g_zeros = np.empty(x.shape[1])
    out = np.empty(x.shape[1])
    for i in range(n):
        row = x[i]
        for k in range(x.shape[1]):
            g_zeros[k] = 0.0
        g = g_zeros
        g[i] += 1.0
        for j in range(x.shape[1]):
            out[j] = g[j] + row[j]
        g = out
        total = total + np.sum(g * row)
    return total
"""


def test_arrays_made_per_iteration_are_made_once():
    x = np.arange(12.0).reshape(4, 3)
    original = run_tree(gast.parse(textwrap.dedent(REUSED)).body[0], x, 3)
    fdef, changed = _reused(REUSED)
    assert changed
    assert unparse(fdef).strip() == textwrap.dedent(REUSED_GOLDEN).strip()
    assert run_tree(fdef, x, 3) == original


REFUSED = {
    "a view outlives the iteration": """
def f(x, n):
    keep = x[0]
    for i in range(n):
        a = np.empty(x.shape[1])
        a[0] = 1.0 * i
        keep = a[0:1] if i == 0 else keep
    return keep[0]
""",
    "read after the loop": """
def f(x, n):
    a = x[0]
    for i in range(n):
        a = np.zeros(x.shape[1])
        a[0] = 1.0 * i
    return a[0]
""",
    "read before the body assigns it": """
def f(x, n):
    prev = np.zeros(x.shape[1])
    total = 0.0
    for i in range(n):
        total = total + prev[0]
        a = np.zeros(x.shape[1])
        a[0] = 1.0 * i
        prev = a
    return total
""",
    "handed to a call": """
def f(x, n):
    total = 0.0
    for i in range(n):
        a = np.zeros(x.shape[1])
        a[0] = 1.0 * i
        total = total + np.sum(a.T)
    return total
""",
    "a shape held in a name (its ndim unknown: a[i] may be a row)": """
def f(x, n):
    shape = x.shape
    keep = x[0]
    for i in range(n):
        a = np.zeros(shape)
        a[0, 0] = 1.0 * i
        keep = a[0] if i == 0 else keep
    return keep[0]
""",
    "a shape the loop changes": """
def f(x, n):
    total = 0.0
    for i in range(n):
        a = np.zeros(i + 1)
        a[0] = 1.0 * i
        total = total + a[0]
    return total
""",
}


@pytest.mark.parametrize("case", list(REFUSED), ids=list(REFUSED))
def test_arrays_that_may_outlive_an_iteration_stay_per_iteration(case):
    before = unparse(gast.parse(textwrap.dedent(REFUSED[case])).body[0])
    fdef, changed = _reused(REFUSED[case])
    assert not changed
    assert unparse(fdef) == before
