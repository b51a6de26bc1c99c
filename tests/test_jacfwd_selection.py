"""The two optimizations that bring ``hessian`` near hand-written Numba: ``common_subexpressions`` (a pure call
computed again from the same values reads the first result) and ``one_hot_products`` (a product by rows of an
identity, ``jacfwd``'s basis, as a selection of rows: ``rt.one_hot_product``). Golden rewrites and the cases
each must leave alone; the helper against the product it replaces, infinities and nans included; Jacobians
and Hessians against JAX (float64)."""
import doctest
import os
import sys
import textwrap

import jax
import numba
import numpy as np
import pytest

import numbax
from numbax import runtime as rt
from numbax.ast_passes.optimizations import common_subexpressions, one_hot_products
from numbax.ast_passes.unparse import unparse
from numbax.runtime import one_hot

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)


def _rewritten(optimization, source: str):
    import gast

    fdef, changed = optimization.transform(gast.parse(textwrap.dedent(source)).body[0])
    return unparse(gast.Module(body=[fdef], type_ignores=[])).strip(), changed


@pytest.mark.parametrize("module", [common_subexpressions, one_hot_products, one_hot])
def test_doctests(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# -- common_subexpressions ---------------------------------------------------------------------------------

def test_a_repeated_pure_call_reads_the_first_result_in_its_block_and_inner_ones():
    code, changed = _rewritten(common_subexpressions, """
        def f(a, x, n):
            z = a @ x
            y = np.exp(z)
            for i in range(n):
                w = a @ x
                u = np.exp(z)
            return y + w + u
        """)
    assert changed
    assert "w = z" in code and "u = y" in code


def test_a_repeated_element_read_at_constant_indices_reads_the_first():
    # each inlined copy of a helper reads ``params[0]``; reads at a loop's index stay, folded where they are used
    code, changed = _rewritten(common_subexpressions, """
        def f(params, x, n):
            a = params[0]
            b = params[1, 2]
            for i in range(n):
                c = params[0]
                d = params[1, 2]
                e = x[i]
                g = x[i]
            return a + b + c + d + e + g
        """)
    assert changed
    assert "c = a" in code and "d = b" in code and "g = x[i]" in code


@pytest.mark.parametrize("source", [
    # an element read of an array written into, or assigned again, in between
    "def f(a):\n    u = a[0]\n    a[0] = 2.0\n    v = a[0]\n    return u + v",
    "def f(a):\n    u = a[0]\n    a = a + 1.0\n    v = a[0]\n    return u + v",
    "def f(a):\n    u = a[0]\n    b = a[1:]\n    b[0] = 2.0\n    v = a[0]\n    return u + v",
    # calls with effects, or of memory not initialized
    "def f(n):\n    a = np.random.rand(n)\n    b = np.random.rand(n)\n    return a + b",
    "def f(n):\n    a = np.empty(n)\n    b = np.empty(n)\n    return a + b",
    "def f(a, b, c):\n    t = np.add(a, b, out=c)\n    u = np.add(a, b, out=c)\n    return t + u",
    # an operand assigned again in between (a parameter counts as assigned)
    "def f(a, x):\n    z = a @ x\n    x = x + 1.0\n    w = a @ x\n    return z + w",
    # the first result, or an operand, written into
    "def f(a, x):\n    z = a @ x\n    z[0] = 1.0\n    w = a @ x\n    return z + w",
    "def f(a, x):\n    z = a @ x\n    b = a[0]\n    b[0] = 2.0\n    w = a @ x\n    return z + w",
    # in a loop that assigns an operand, the value of an earlier iteration
    "def f(a, x, n):\n    z = a @ x\n    for i in range(n):\n        w = a @ x\n        x = w\n    return z",
    # in another branch: the first is not computed on the second's path
    "def f(a, x, c):\n    if c:\n        z = a @ x\n    else:\n        z = a @ x\n    return z",
])
def test_what_common_subexpressions_leaves_alone(source):
    code, changed = _rewritten(common_subexpressions, source)
    assert not changed and code == textwrap.dedent(source).strip()


def _reused(a, x):
    z = a @ x
    w = a @ x
    w[0] = 5.0  # written into: not merged with z
    return z + np.exp(a @ x) + w


def test_merged_and_unmerged_values_are_numpys():
    a, x = np.arange(6.0).reshape(2, 3) / 7, np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(numbax.jit(_reused)(a, x), _reused(a, x), rtol=1e-14, atol=0)


# -- one_hot_products ----------------------------------------------------------------------------------------

_SWEEP = textwrap.dedent("""
    def f(i, a, m, n):
        e = np.zeros((m, n))
        for k in range(m):
            e[k, i[k]] = 1.0
        v = e[:, 2:n]
        t = v.reshape((m, n - 2)).astype(np.float64)
        d = t @ a
        return d
    """)


def test_a_product_by_rows_of_an_identity_selects_rows():
    code, changed = _rewritten(one_hot_products, _SWEEP)
    assert changed and "d = rt.one_hot_product(t, a, i, n, 2)" in code


@pytest.mark.parametrize("old, new", [
    ("e[k, i[k]] = 1.0", "e[k, i[k]] = 2.0"),                      # not ones
    ("for k in range(m):", "for k in range(m - 1):"),             # not every row
    ("    v = e", "    e[0, 1] = 1.0\n    v = e"),                 # a second one in a row
    ("    d = t", "    i = i + 1\n    d = t"),                     # another index since
    ("    d = t", "    t[0, 0] = 3.0\n    d = t"),                 # written into since
    ("astype(np.float64)", "astype(np.int64)"),                  # not a float
    ("reshape((m, n - 2))", "reshape((n - 2, m))"),                # other rows
    ("e[:, 2:n]", "e[:, 2:n:2]"),                                # a step
    ("d = t @ a", "d = a @ t"),                                  # the basis on the right
    ("def f(i, a, m, n):", "def f(i, a, m, n, rt):"),              # ``rt`` the function's own name
])
def test_what_one_hot_products_leaves_alone(old, new):
    assert old in _SWEEP
    code, changed = _rewritten(one_hot_products, _SWEEP.replace(old, new))
    assert not changed and "one_hot_product" not in code


@numba.njit(error_model="numpy")
def _selected(basis, b, index, n, start):
    return rt.one_hot_product(basis, b, index, n, start)


def _basis(index, n, start):
    return np.ascontiguousarray(np.eye(n)[index][:, start:])


@pytest.mark.parametrize("start", [0, 1, -5, 4])
def test_the_selection_is_the_product(start):
    rng = np.random.default_rng(0)
    index, n = np.array([3, -1, 0, 5, 1]), 6
    basis = _basis(index, n, start)
    b = rng.normal(size=(basis.shape[1], 4))
    b[0, 1] = -0.0
    for operand in (b, np.asfortranarray(b), b[:, 0].copy()):
        np.testing.assert_array_equal(_selected(basis, operand, index, n, start), basis @ operand)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_infinities_and_nans_give_the_products_nans(bad):
    index, n = np.array([1, 0, 2]), 3
    basis = _basis(index, n, 0)
    b = np.arange(6.0).reshape(3, 2)
    b[2, 1] = bad
    with np.errstate(invalid="ignore"):
        expected = basis @ b
    assert np.isnan(expected).any()
    np.testing.assert_array_equal(_selected(basis, b, index, n, 0), expected)


def test_factors_that_disagree_raise_the_products_error():
    with pytest.raises(ValueError):
        _selected(np.eye(3), np.ones((4, 2)), np.arange(3), 3, 0)


# -- Jacobians and Hessians against JAX ----------------------------------------------------------------------

def logistic(x, a, y):
    z = a @ x
    return np.mean(np.log1p(np.exp(-y * z))) + 0.05 * np.sum(x * x)


def matrix_input(w, x):
    return np.sum(np.sin(w @ x))


HESSIAN = numbax.hessian(logistic)
HESSIAN_MATRIX = numbax.hessian(matrix_input)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    return rng.normal(size=4) * 0.3, rng.normal(size=(6, 4)), np.sign(rng.normal(size=6))


def test_hessian_selects_rows_and_agrees_with_jax(data):
    assert "rt.one_hot_product(" in numbax.source(HESSIAN, *data)
    np.testing.assert_allclose(HESSIAN(*data), jax.hessian(to_jax(logistic))(*data), rtol=1e-12, atol=1e-14)


def test_a_basis_of_matrices_is_multiplied(data):
    """A matrix input's tangent, one of its elements one: no rows of an identity, no selection."""
    assert "one_hot_product" not in numbax.source(HESSIAN_MATRIX, data[1][:3, :], data[0])
