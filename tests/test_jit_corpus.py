"""Behaviour corpus: ``numbax.jit(f)(*args)`` agrees with ``f(*args)`` on both backends.

For every case of ``tests/corpus`` and every backend this checks that the result has the same
pytree structure, the same values (rtol 1e-12, 1e-5 for float32) and the same dtypes as plain
NumPy; that arguments mutated in place end up the same; that a second call with fresh
arguments of the same shapes reuses the specialization; and that the generated source is
valid Python defining a function.
"""
import copy
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import all_cases  # noqa: E402

BACKENDS = ("python", "cpu")
CASES = all_cases()

# (case id, backend) -> numbax.jit wrapper, created once so Numba compiles are shared.
_JITTED = {}


def _jitted(case, backend):
    key = (case.id, backend)
    if key not in _JITTED:
        _JITTED[key] = numbax.jit(case.fn, static_argnums=case.static_argnums,
                                  static_argnames=case.static_argnames, backend=backend)
    return _JITTED[key]


def _params():
    for case in CASES:
        for backend in BACKENDS:
            reason = case.xfail_reason(backend)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(case, backend, marks=marks, id=f"{case.id}-{backend}")


def _kind(x):
    kind = np.asarray(x).dtype.kind
    return "i" if kind == "u" else kind


def _is_float32(x):
    return np.asarray(x).dtype == np.float32


def _assert_leaf(path, expected, got, case):
    where = tree_util.keystr(path) or "<root>"
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: expected an array, got {type(got).__name__} {got!r}"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype}, expected {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    else:
        assert np.ndim(got) == 0, f"{where}: expected a scalar, got shape {np.shape(got)}"
        # Numba boxes every float scalar (float32 included) as a Python float: compare the kind.
        assert _kind(got) == _kind(expected), f"{where}: {type(got).__name__} {got!r}, expected " \
                                              f"{type(expected).__name__} {expected!r}"
    if _kind(expected) in "bi":
        np.testing.assert_array_equal(got, expected, err_msg=where)
    else:
        rtol = case.rtol if case.rtol is not None else (1e-5 if _is_float32(expected) else 1e-12)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=case.atol, err_msg=where)


def _assert_tree_close(expected, got, case):
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected), \
        f"structure {tree_util.tree_structure(got)}, expected {tree_util.tree_structure(expected)}"
    expected_leaves = tree_util.tree_leaves_with_path(expected)
    got_leaves = tree_util.tree_leaves(got)
    for (path, e), g in zip(expected_leaves, got_leaves):
        _assert_leaf(path, e, g, case)


def _assert_same_arrays(expected_args, got_args, case):
    """Array arguments that the function mutates in place end up the same."""
    for (path, e), g in zip(tree_util.tree_leaves_with_path(expected_args), tree_util.tree_leaves(got_args)):
        if isinstance(e, np.ndarray):
            _assert_leaf(path, e, g, case)


def _call(fn, case):
    args = case.args_factory()
    kwargs = copy.deepcopy(case.kwargs or {})
    out = fn(*args, **kwargs)
    return out, args


@pytest.mark.parametrize("case, backend", list(_params()))
def test_jit_matches_numpy(case, backend):
    jitted = _jitted(case, backend)
    expected, expected_args = _call(case.fn, case)
    got, got_args = _call(jitted, case)
    _assert_tree_close(expected, got, case)
    _assert_same_arrays(expected_args, got_args, case)

    # A second call with fresh arguments of the same shapes reuses the specialization.
    n_specializations = len(jitted._cache)
    assert n_specializations >= 1
    again, _ = _call(jitted, case)
    assert len(jitted._cache) == n_specializations, "a second call with the same shapes recompiled"
    _assert_tree_close(expected, again, case)

    # The generated source is valid Python that defines a function.
    src = jitted.source
    assert isinstance(src, str) and "def " in src
    compile(src, "gen", "exec")


def test_corpus_size():
    assert len(CASES) >= 70
    assert len({c.fn for c in CASES}) >= 60
