"""``optimizations.hoist_invariants``: a pure statement reading nothing a loop changes moves in front of it;
over a batch loop (vmap's examples 1, 2, ...) an invariant check leaves too, and a value the first example
already computed is read from there. An array the body writes into stays in the body, and a value whose array
something writes into is not shared. Golden output, and the rewritten code computes what the original does."""
import textwrap

import gast
import numpy as np
import pytest

from numbax.ast_passes import anno
from numbax.ast_passes.optimizations import hoist_invariants
from numbax.ast_passes.unparse import unparse
from test_fusion import run_tree


def _hoisted(source: str, batch: bool):
    fdef = gast.parse(textwrap.dedent(source)).body[0]
    for node in gast.walk(fdef):
        if isinstance(node, gast.For) and batch:
            anno.setanno(node, anno.Key.BATCH_LOOP, True)
    transform = hoist_invariants.transform_batch_loops if batch else hoist_invariants.transform
    fdef, changed = transform(fdef)
    gast.fix_missing_locations(fdef)
    return fdef, changed


def _code(fdef) -> str:
    return unparse(gast.Module(body=[fdef], type_ignores=[])).strip()


BATCH = """
def f(x, w, e):
    h = np.tanh(x @ w)
    rt.check_reshape(h, (3,), 'here')
    out = rt.stack_buffer(np.sum(h * e[0]), e.shape[0])
    out[0] = np.sum(h * e[0]) + np.sum(x)
    for i in range(1, e.shape[0]):
        h2 = np.tanh(x @ w)
        rt.check_reshape(h2, (3,), 'here')
        rt.check_reshape(x, (3,), 'there')
        y = x.copy()
        y[0] = e[i, 0]
        out[i] = np.sum(h2 * e[i]) + np.sum(y)
    return out
"""

BATCH_GOLDEN = """
def f(x, w, e):
    h = np.tanh(x @ w)
    rt.check_reshape(h, (3,), 'here')
    out = rt.stack_buffer(np.sum(h * e[0]), e.shape[0])
    out[0] = np.sum(h * e[0]) + np.sum(x)
    h2 = h
    rt.check_reshape(x, (3,), 'there')
    for i in range(1, e.shape[0]):
        rt.check_reshape(h2, (3,), 'here')
        y = x.copy()
        y[0] = e[i, 0]
        out[i] = np.sum(h2 * e[i]) + np.sum(y)
    return out
"""


def test_a_batch_loop_reads_what_its_first_example_computed():
    fdef, changed = _hoisted(BATCH, batch=True)
    assert changed
    assert _code(fdef) == BATCH_GOLDEN.strip()


def test_an_array_the_body_writes_into_stays_in_the_body():
    """Each iteration's ``x.copy()`` is its own array: made once before the loop, the second iteration would
    start from what the first wrote (the wrong Jacobian of ``copy_then_modify`` this once gave)."""
    source = """
    def f(x, n):
        total = 0.0
        for i in range(n):
            y = x.copy()
            y[0] = y[0] * 2.0 + i
            total = total + np.sum(y)
        return total
    """
    fdef, changed = _hoisted(source, batch=False)
    assert not changed
    x = np.array([1.0, 2.0, 3.0])
    assert run_tree(fdef, x, 3) == pytest.approx(sum(2.0 + i + 5.0 for i in range(3)))


def test_a_value_whose_array_is_written_into_is_not_shared():
    source = """
    def f(x, n):
        y = x * 2.0
        y[0] = 0.0
        out = np.empty(n)
        out[0] = np.sum(y)
        for i in range(1, n):
            z = x * 2.0
            out[i] = np.sum(z) + i
        return out
    """
    fdef, changed = _hoisted(source, batch=True)
    assert changed
    assert "z = x * 2.0" in _code(fdef)
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(run_tree(fdef, x, 3), [10.0, 13.0, 14.0])


def test_hoisted_code_computes_what_the_original_does():
    x, w, e = np.linspace(0.1, 0.9, 3), np.linspace(-1.0, 1.0, 9).reshape(3, 3), np.eye(3)
    original = gast.parse(textwrap.dedent(BATCH)).body[0]
    hoisted, _ = _hoisted(BATCH, batch=True)
    want = run_tree(original, x, w, e)
    assert want.shape == (3,)
    np.testing.assert_allclose(run_tree(hoisted, x, w, e), want, rtol=1e-15)
