"""Golden source for vmap: the batched loop numbax writes for one representative program.

The expected function is the code ``numbax.vmap`` must generate, written out as a real function
(comments are not compared). The program lives in ``tests/fixtures/vmap_programs.py``: shared
weights, a mapped input, two outputs, one of them moved to axis 1.
"""
import inspect
import os
import sys
import textwrap

import numpy as np

import numbax
from numbax import runtime as rt  # noqa: F401  (the expected function reads like generated code)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import vmap_programs  # noqa: E402
from fixtures.golden import function_text  # noqa: E402

W, B, X = np.linspace(-1.0, 1.0, 6).reshape(3, 2), np.array([0.1, -0.2]), np.linspace(0.0, 2.0, 12).reshape(4, 3)


def expected_vmap_predict(w, b, x):
    batch = rt.batch_size(x.shape[0])
    for i in range(0, batch):
        x_2 = x[i]
        rt.check_matmul(x_2, w, 'vmap_programs.py:6:16')
        _t11 = rt.matmul(x_2, w)
        rt.check_broadcast(_t11, b, 'vmap_programs.py:6:16')
        h_1 = rt.tanh(_t11 + b)
        # vmap_programs.py:7: return h, np.sum(h ** 2)
        _t14 = np.sum(h_1 ** 2)
        if i == 0:
            out_0 = rt.stack_buffer(h_1, batch)
        out_0[i] = h_1
        if i == 0:
            out_1 = rt.stack_buffer(_t14, batch)
        out_1[i] = _t14
    return (np.moveaxis(out_0, 0, 1), out_1)


def _vmapped():
    return numbax.vmap(vmap_programs.predict, in_axes=(None, None, 0), out_axes=(1, 0), backend="python")


def test_generated_batched_source_matches_golden():
    source = _vmapped().lower_source(W, B, X)
    expected = textwrap.dedent(inspect.getsource(expected_vmap_predict))
    assert function_text(source, "f") == function_text(expected, "f")
    assert "# vmap_programs.py:6: h = np.tanh(x @ w + b)" in source


def test_golden_source_computes_the_batchedfunction_text():
    """The pinned code is also right: it agrees with the program on each example."""
    h, s = expected_vmap_predict(W, B, X)
    for i in range(X.shape[0]):
        want_h, want_s = vmap_programs.predict(W, B, X[i])
        np.testing.assert_allclose(h[:, i], want_h, rtol=1e-15)
        np.testing.assert_allclose(s[i], want_s, rtol=1e-15)
