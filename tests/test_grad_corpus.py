"""Reverse-mode corpus: ``numbax.grad(f)(*args)`` agrees with JAX or finite differences on both backends.

For every case of ``tests/grad_corpus`` and every backend this checks that the gradient has the
pytree structure of the differentiated arguments, leaf by leaf the argument's shape and a float
dtype, and the oracle's values (rtol 1e-8 against JAX, 1e-6 against finite differences, unless
the case says otherwise); that ``has_aux`` passes the auxiliary output through unchanged; and
that the arguments are left as they were. A subset also goes through ``value_and_grad``, and
another through ``jit(grad(f))`` on the cpu backend. ``test_oracles_agree_with_fd`` checks the oracles themselves:
it needs no numbax transform, so it runs whatever state reverse mode is in.

Each ``numbax.grad`` wrapper is created once per (case, backend) and each oracle gradient is
computed once per case, so Numba compiles and finite differences are shared between tests.
"""
import copy
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus import THEMES, all_cases, oracles  # noqa: E402

BACKENDS = ("python", "cpu")
CASES = all_cases()
CASES_BY_ID = {case.id: case for case in CASES}

DEFAULT_TOLERANCE = {"jax": (1e-8, 1e-11), "fd": (1e-6, 1e-8)}  # oracle -> (rtol, atol)

# value_and_grad: on the python backend every fourth case and every case with aux output or
# static arguments; on cpu (a Numba compile each) every twelfth case and the aux ones.
VALUE_AND_GRAD = [(c, "python") for i, c in enumerate(CASES) if i % 4 == 0 or c.has_aux or c.static_argnums] + \
                 [(c, "cpu") for i, c in enumerate(CASES) if i % 12 == 0 or c.has_aux]
# jit(grad(f)) on the cpu backend: every case with static arguments, and a few others.
JIT_OF_GRAD = [c for c in CASES if c.static_argnums] + [
    CASES_BY_ID[i] for i in ("arithmetic.broadcast_row", "branches.elif_chain_if", "loops.rnn",
                             "while_loops.kepler", "inplace.setitem_in_loop", "pytrees.mlp_loss",
                             "calls.loss_with_aux")]

# (transform, function, argnums, static_argnums, has_aux, backend) -> numbax wrapper, created
# once: cases that share a function and its options (branch variants) share its compiles.
_WRAPPERS = {}
_EXPECTED = {}  # case id -> the oracle's gradient, computed once


def _kwargs(case, backend):
    kwargs = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
    if case.static_argnums:
        kwargs["static_argnums"] = case.static_argnums
    return kwargs


def _wrapper(transform, case, backend):
    key = (transform, case.fn, case.argnums, case.static_argnums, case.has_aux, backend)
    if key not in _WRAPPERS:
        if transform == "jit_grad":
            inner = numbax.grad(case.fn, **_kwargs(case, backend))
            _WRAPPERS[key] = numbax.jit(inner, static_argnums=case.static_argnums, backend=backend)
        else:
            _WRAPPERS[key] = getattr(numbax, transform)(case.fn, **_kwargs(case, backend))
    return _WRAPPERS[key]


def _expected(case):
    if case.id not in _EXPECTED:
        _EXPECTED[case.id] = oracles.case_grad(case)
    return _EXPECTED[case.id]


def _tolerance(case, oracle=None):
    rtol, atol = DEFAULT_TOLERANCE[oracle or case.oracle]
    return (case.rtol if case.rtol is not None else rtol), (case.atol if case.atol is not None else atol)


def _params(pairs):
    for case, backend in pairs:
        reason = case.xfail_reason(backend)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        yield pytest.param(case, backend, marks=marks, id=f"{case.id}-{backend}")


def _differentiated(case, args):
    if isinstance(case.argnums, int):
        return args[case.argnums]
    return tuple(args[n] for n in case.argnums)


def assert_grads_close(expected, got, like, rtol, atol):
    """``got`` has ``expected``'s structure and, leaf by leaf, ``like``'s shapes and ``expected``'s values."""
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected), \
        f"structure {tree_util.tree_structure(got)}, expected {tree_util.tree_structure(expected)}"
    paths = tree_util.tree_leaves_with_path(expected)
    for (path, e), g, arg in zip(paths, tree_util.tree_leaves(got), tree_util.tree_leaves(like)):
        where = tree_util.keystr(path) or "<root>"
        if isinstance(arg, np.ndarray):
            assert isinstance(g, np.ndarray), f"{where}: expected an array, got {type(g).__name__} {g!r}"
        assert np.shape(g) == np.shape(arg), f"{where}: shape {np.shape(g)}, expected {np.shape(arg)}"
        assert np.asarray(g).dtype.kind == "f", f"{where}: dtype {np.asarray(g).dtype}, expected a float"
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, err_msg=where)


def assert_outputs_close(expected, got, rtol=1e-10):
    """Primal outputs (values, aux) match plain NumPy's, structure included."""
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected), \
        f"structure {tree_util.tree_structure(got)}, expected {tree_util.tree_structure(expected)}"
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-12)


def _assert_args_unchanged(case, args):
    for before, after in zip(tree_util.tree_leaves(case.args_factory()), tree_util.tree_leaves(args)):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(after, before, err_msg="numbax.grad changed its argument in place")


@pytest.mark.parametrize("case, backend", list(_params((c, b) for c in CASES for b in BACKENDS)))
def test_grad_matches_oracle(case, backend):
    expected = _expected(case)
    args = case.args_factory()
    got = _wrapper("grad", case, backend)(*args)
    if case.has_aux:
        assert isinstance(got, tuple) and len(got) == 2, "grad(has_aux=True) returns (grad, aux)"
        got, aux = got
        assert_outputs_close(case.fn(*case.args_factory())[1], aux)
    assert_grads_close(expected, got, _differentiated(case, case.args_factory()), *_tolerance(case))
    _assert_args_unchanged(case, args)


@pytest.mark.parametrize("case, backend", list(_params(VALUE_AND_GRAD)))
def test_value_and_grad_matches_oracle(case, backend):
    value, got = _wrapper("value_and_grad", case, backend)(*case.args_factory())
    assert_outputs_close(case.fn(*case.args_factory()), value)
    assert_grads_close(_expected(case), got, _differentiated(case, case.args_factory()), *_tolerance(case))


@pytest.mark.parametrize("case, backend", list(_params((c, "cpu") for c in JIT_OF_GRAD)))
def test_jit_of_grad_matches_oracle(case, backend):
    got = _wrapper("jit_grad", case, backend)(*case.args_factory())
    if case.has_aux:
        got, aux = got
        assert_outputs_close(case.fn(*case.args_factory())[1], aux)
    assert_grads_close(_expected(case), got, _differentiated(case, case.args_factory()), *_tolerance(case))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_oracles_agree_with_fd(case):
    """The oracle side alone: runs today, with or without numbax's reverse mode."""
    args = case.args_factory()
    out = case.fn(*copy.deepcopy(args))
    value = out[0] if case.has_aux else out
    assert np.ndim(value) == 0 and np.asarray(value).dtype.kind == "f", "a corpus function returns a float scalar"
    like = _differentiated(case, args)
    fd = oracles.case_grad(case, "fd")
    if case.oracle == "jax":
        # JAX runs the same program: same value, and its gradient agrees with finite differences.
        jax_out, jax_grad = oracles.case_value_and_grad(case)
        np.testing.assert_allclose(jax_out[0] if case.has_aux else jax_out, value, rtol=1e-12)
        assert_grads_close(fd, jax_grad, like, rtol=1e-6, atol=1e-8)
        _EXPECTED.setdefault(case.id, jax_grad)
    else:
        # No second oracle: finite differences at a quarter of the step agree (no kink nearby).
        finer = oracles.fd_grad(case.fn, args, case.argnums, case.static_argnums, case.has_aux,
                                step=oracles.FD_STEP / 4)
        assert_grads_close(fd, finer, like, rtol=1e-6, atol=1e-8)
        _EXPECTED.setdefault(case.id, fd)


def test_corpus_size():
    assert len(CASES) >= 120
    assert len({c.fn for c in CASES}) >= 120
    themes = {t: [c for c in CASES if c.id.startswith(t + ".")] for t in THEMES}
    assert all(len(cs) >= 8 for cs in themes.values()), {t: len(cs) for t, cs in themes.items()}
    assert {c.oracle for c in CASES} == {"jax", "fd"}
    assert any(c.has_aux for c in CASES) and any(c.static_argnums for c in CASES)
    assert any(isinstance(c.argnums, tuple) for c in CASES) and any(isinstance(c.argnums, int) for c in CASES)
