"""Golden-source tests for ``legalize``: reductions Numba lacks become ``numbax.runtime`` calls, the rest stay NumPy.

Each input is a real function; its expected output is another, compared after unparsing. The pass
applied a second time changes nothing.
"""
import inspect
import textwrap

import gast
import numpy as np

import numbax
from numbax import runtime as rt
from numbax.ast_passes import legalize
from numbax.ast_passes.unparse import unparse
from test_passes_golden import code_of


def legalized(fn):
    module = gast.parse(textwrap.dedent(inspect.getsource(fn)))
    return legalize.transform(module)


def assert_golden(fn, expected):
    once = legalized(fn)
    assert unparse(once.body[0]) == code_of(expected, fn.__name__)
    assert unparse(legalize.transform(once).body[0]) == unparse(once.body[0])


def functions(x):
    a = np.mean(x, axis=1, keepdims=True)
    b = np.max(x, 1) + np.min(x, axis=-1) + np.amax(x, axis=(0, 1))
    c = np.var(x, axis=0, ddof=1) + np.std(x, ddof=1)
    d = np.argmax(x, axis=1, keepdims=True) + np.any(x > 0, axis=0) + np.all(x > 0, 1, None, True)
    return a, b, c, d, np.cumprod(x, axis=0), np.prod(x, axis=1), np.ptp(x, 0)


def expected_functions(x):
    a = rt.mean(x, 1, True)
    b = rt.max(x, 1) + rt.min(x, -1) + rt.amax(x, (0, 1))
    c = rt.var(x, 0, 1) + rt.std(x, None, 1)
    d = rt.argmax(x, 1, True) + rt.any(x > 0, 0) + rt.all(x > 0, 1, True)
    return (a, b, c, d, rt.cumprod(x, 0), rt.prod(x, 1), rt.ptp(x, 0))


def test_function_forms_go_to_helpers_with_positional_arguments():
    assert_golden(functions, expected_functions)


def methods(x):
    return x.mean(axis=1), x.max(0, keepdims=True), x.std(ddof=1), x.T.sum(axis=0, keepdims=True).min(1)


def expected_methods(x):
    return (rt.mean(x, 1), rt.max(x, 0, True), rt.std(x, None, 1), rt.min(rt.sum(x.T, 0, True), 1))


def test_method_forms_go_to_helpers():
    assert_golden(methods, expected_methods)


def norms(x):
    return np.linalg.norm(x, axis=0), np.linalg.norm(x, 'fro'), np.linalg.norm(x, ord=np.inf, keepdims=True)


def expected_norms(x):
    return (rt.norm(x, None, 0), rt.norm(x, 'fro'), rt.norm(x, np.inf, None, True))


def test_norm_over_axes_or_by_name_goes_to_the_helper():
    assert_golden(norms, expected_norms)


def native(x, k):
    a = np.sum(x) + np.sum(x, axis=1) + np.sum(x, 1) + np.sum(x, axis=k) + x.sum(axis=0) + x.mean() + np.max(x)
    b = np.argmax(x, axis=1) + x.argmin(0) + np.cumsum(x, axis=1) + np.linalg.norm(x) + np.linalg.norm(x, 2)
    c = np.sum(x, axis=1, dtype=np.float32) + np.mean(x, axis=1, dtype=np.float32) + x.max(out=None, axis=1, initial=0)
    return a + b + c + np.prod(x, axis=(0, 1)).sum() + np.sum(x, axis=(0, 1))


def expected_native(x, k):
    a = np.sum(x) + rt.sum(x, 1) + rt.sum(x, 1) + np.sum(x, axis=k) + rt.sum(x, 0) + x.mean() + rt.max(x)
    b = rt.argmax(x, 1) + rt.argmin(x, 0) + np.cumsum(x, axis=1) + rt.norm(x) + rt.norm(x, 2)
    c = np.sum(x, axis=1, dtype=np.float32) + np.mean(x, axis=1, dtype=np.float32) + x.max(out=None, axis=1, initial=0)
    return a + b + c + rt.prod(x, (0, 1)).sum() + rt.sum(x, (0, 1))


def test_calls_numba_compiles_and_calls_no_helper_takes_stay_numpy():
    """``dtype=``, ``initial=``: no helper takes them, so Numba reports what it lacks, at the user's line.
    A whole-array ``max``/``min`` is the helper's anyway: it compiles and runs faster than Numba's; so is a
    sum over constant axes (Numba's refuses axis 0 of a 0-d array, which NumPy takes), and an ``argmax`` or
    ``argmin`` along an axis (Numba's took 1.3 s of a cold start to compile; the helper is compiled once per
    machine), and every ``np.linalg.norm`` (Numba's of float32 is float64, but a vector's 2-norm)."""
    assert_golden(native, expected_native)


def defaults(x):
    return np.prod(x, axis=None), np.mean(x, keepdims=False), np.var(x, ddof=0), x.sum(None), np.cumsum(x, axis=None)


def expected_defaults(x):
    return (np.prod(x), np.mean(x), np.var(x), x.sum(), np.cumsum(x))


def extrema(x):
    return np.max(x, axis=None), x.min(), np.amax(x, keepdims=False)


def expected_extrema(x):
    return (rt.max(x), rt.min(x), rt.amax(x))


def test_whole_array_extrema_go_to_the_helper():
    """Numba's own walks an nditer with a branch per element: slower to compile and to run."""
    assert_golden(extrema, expected_extrema)


def vectorized(x, out):
    np.exp(x, out=out)
    return np.exp(x) + np.tanh(x - 1.0) + np.exp(x, dtype=np.float64) + np.sinh(x)


def expected_vectorized(x, out):
    np.exp(x, out=out)
    return rt.exp(x) + rt.tanh(x - 1.0) + np.exp(x, dtype=np.float64) + np.sinh(x)


def test_exp_and_tanh_go_to_the_vectorizing_helpers():
    """Numba calls the C library per element; ``out=`` and ``dtype=`` stay NumPy's."""
    assert_golden(vectorized, expected_vectorized)


def test_arguments_at_their_defaults_are_dropped_where_numba_rejects_them():
    assert_golden(defaults, expected_defaults)


def shadows(x):
    rt = x * 2.0
    return np.mean(rt, axis=0)


def expected_shadows(x):
    rt = x * 2.0
    return rt_1.mean(rt, 0)  # noqa: F821 (the runtime's alias in generated code)


def test_a_user_variable_named_rt_moves_the_runtime_alias():
    assert_golden(shadows, expected_shadows)
    assert legalize.imports(legalized(shadows)) == ["from numbax import runtime as rt_1"]


def test_imports_only_when_a_helper_is_called():
    assert legalize.imports(legalized(defaults)) == []
    assert legalize.imports(legalized(methods)) == ["from numbax import runtime as rt"]


def keepdims_normalize(x):
    return x / np.sum(x, axis=1, keepdims=True) - x.max(axis=0)


def test_generated_source_imports_the_runtime_and_both_backends_agree():
    x = np.random.default_rng(0).uniform(0.5, 1.5, size=(3, 4))
    source = numbax.source(keepdims_normalize, x)
    assert "from numbax import runtime as rt" in source
    assert "_t1 = rt.sum(x, 1, True)" in source and "_t3 = rt.max(x, 0)" in source
    assert "return _t2 - _t3" in source  # checked first: x.max's result has an abstract value
    expected = keepdims_normalize(x)
    for backend in ("python", "cpu"):
        np.testing.assert_allclose(numbax.jit(keepdims_normalize, backend=backend)(x), expected, rtol=1e-14)


def contractions(a, b, g):
    c = np.einsum('ij, jk', a, b) + np.einsum('ij,jk->ik', a, b) + np.inner(a, b) + np.matmul(a, b)
    d = np.tensordot(a, b) + np.tensordot(a, b, axes=1) + np.tensordot(a, b, axes=([1, 2], [0, 1]))
    e = rt.einsum_vjp(g, 0, 'ii->', a, None, None) + rt.tensordot_vjp(g, 1, a, b, ([0], [1]))
    return c, d, e, rt.matmul_grad_a(g, a, b), a @ b, np.einsum(a, [0, 1])


def expected_contractions(a, b, g):
    c = rt.einsum('ij,jk->ik', a, b) + rt.einsum('ij,jk->ik', a, b) + rt.inner(a, b) + rt.matmul(a, b)
    d = rt.tensordot(a, b) + rt.tensordot(a, b, 1) + rt.tensordot(a, b, (1, 2), (0, 1))
    e = rt.einsum_vjp(g, 0, 'ii->', a) + rt.tensordot_vjp(g, 1, a, b, (0,), (1,))
    return (c, d, e, rt.matmul_vjp(g, 0, a, b), rt.matmul(a, b), np.einsum(a, [0, 1]))


def test_contractions_go_to_helpers_with_literal_subscripts_and_flat_axes():
    """An einsum's output is spelled out; tensordot's pair of axes becomes two flat tuples (Numba keeps their
    values); a matmul adjoint the simplifier left (ndims unknown) takes the helper of any ndim; ``@`` goes to
    ``rt.matmul``, whose compiled form is cached once per machine."""
    assert_golden(contractions, expected_contractions)


def shapes(x, k):
    a = np.diagonal(x, 1, axis1=1, axis2=2) + x.diagonal() + x.trace() + np.trace(x, axis1=0, axis2=2) + np.trace(x)
    b = np.squeeze(x, axis=1) + x.squeeze() + np.atleast_1d(k) + np.atleast_2d(k) + np.tile(x, (2, 1))
    c = np.pad(x, [[1, 2], [0, 1]], constant_values=0.5) + np.pad(x, 1, 'constant') + np.pad(x, 1, mode='edge')
    d = np.repeat(x, 2, axis=1) + x.repeat(2, 0) + np.repeat(x, 2) + np.flip(x, axis=(0, 1)) + np.flip(x)
    e = np.roll(x, -1, axis=0) + np.roll(x, k) + np.moveaxis(x, [0, 1], [1, 0]) + x.swapaxes(0, 1)
    return a, b, c, d, e, x.T.reshape(2, -1), np.reshape(x, (6,)), x.reshape(-1), x.reshape(3, 2, order='F')


def expected_shapes(x, k):
    a = rt.diagonal(x, 1, 1, 2) + rt.diagonal(x) + rt.trace(x) + rt.trace(x, 0, 0, 2) + np.trace(x)
    b = rt.squeeze(x, 1) + rt.squeeze(x) + rt.atleast_1d(k) + rt.atleast_2d(k) + rt.tile(x, (2, 1))
    c = rt.pad(x, ((1, 2), (0, 1)), 'constant', 0.5) + rt.pad(x, 1) + rt.pad(x, 1, 'edge')
    d = rt.repeat(x, 2, 1) + rt.repeat(x, 2, 0) + np.repeat(x, 2) + rt.flip(x, (0, 1)) + np.flip(x)
    e = rt.roll(x, -1, 0) + np.roll(x, k) + np.moveaxis(x, (0, 1), (1, 0)) + np.swapaxes(x, 0, 1)
    return (a, b, c, d, e, rt.reshape(x.T, (2, -1)), rt.reshape(x, (6,)), rt.reshape(x, -1),
            x.reshape(3, 2, order='F'))


def test_shape_functions_numba_lacks_go_to_helpers():
    """Axis arguments Numba lacks route the call; Numba's own forms (``np.flip(x)``, ``np.trace(x)``) stay."""
    assert_golden(shapes, expected_shapes)
