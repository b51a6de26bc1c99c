"""0-d arrays as values (issue 14): as arguments, loop carries (``fori_loop``, ``while_loop``, ``scan``, Python
loops), branch joins, pytree leaves, made by constructors, and returned, through jit, grad, value_and_grad, jvp,
vmap and hessian, against JAX (float64) and central differences. Every 0-d result is a 0-d array of its dtype."""
import functools
import inspect
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
import numbax.numpy as nnp
from numbax import lax as nlax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus.oracles import to_jax  # noqa: E402,F401  (turns on jax_enable_x64)

B = np.array(0.7)
X = np.array([0.3, -1.2, 0.8])
XS = np.array([[0.3, -1.2, 0.8], [1.1, 0.4, -0.5]])


def fori(m, lax):
    def f(b, x):
        return lax.fori_loop(0, 3, lambda i, c: c * 0.9 + m.sin(x[i]) * b, b)
    return f


def while_loop(m, lax):
    def f(b, x):
        return lax.while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, s[1] * b + x[s[0]]), (0, b))[1]
    return f


def scan(m, lax):
    def f(b, x):
        c, ys = lax.scan(lambda c, xi: (c * b + xi, c * xi), m.array(0.5), x)
        return c + m.sum(ys)
    return f


def python_for(m, lax):
    def f(b, x):
        acc = m.zeros(())
        for i in range(x.shape[0]):
            acc = acc + m.tanh(b * x[i])
        return acc
    return f


def python_while(m, lax):
    def f(b, x):
        acc = m.asarray(1.5)
        i = 0
        while i < x.shape[0]:
            acc = acc * b + x[i]
            i += 1
        return acc
    return f


def branch_join(m, lax):
    def f(b, x):
        y = m.full((), 0.5)
        for i in range(x.shape[0]):
            if x[i] > 0:
                y = y * b + x[i]
            else:
                y = m.array(2.0) * x[i]
        return y * b
    return f


def reduction_carry(m, lax):
    def f(b, x):
        s = (x * b).sum()
        for i in range(2):
            s = m.cos(s) * b
        return s
    return f


PROGRAMS = [fori, while_loop, scan, python_for, python_while, branch_join, reduction_carry]
IDS = [p.__name__ for p in PROGRAMS]


def _close(ours, theirs, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=rtol, atol=1e-14)


def _zero_d(value, dtype=np.float64):
    assert isinstance(value, np.ndarray) and value.shape == () and value.dtype == dtype, repr(value)


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_jit_returns_a_0d_array_of_jaxs_value(program):
    out = numbax.jit(program(nnp, nlax))(B, X)
    _zero_d(out)
    _close(out, program(jnp, jax.lax)(jnp.asarray(B), jnp.asarray(X)))
    _close(numbax.jit(program(nnp, nlax))(float(B), X), out)  # a number where the 0-d array was: the same


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_grad_and_value_and_grad_against_jax_and_differences(program):
    ours, theirs = program(nnp, nlax), program(jnp, jax.lax)
    gb, gx = numbax.grad(ours, argnums=(0, 1))(B, X)
    _zero_d(gb)
    jb, jx = jax.jacfwd(theirs, argnums=(0, 1))(jnp.asarray(B), jnp.asarray(X))  # JAX reverses no while_loop
    _close(gb, jb)
    _close(gx, jx)
    h = 1e-6
    central = (theirs(jnp.asarray(B + h), jnp.asarray(X)) - theirs(jnp.asarray(B - h), jnp.asarray(X))) / (2 * h)
    np.testing.assert_allclose(gb, central, rtol=1e-6)
    out, pull = numbax.vjp(ours, B, X)
    vb, vx = pull(np.array(2.0))
    _zero_d(out)
    _zero_d(vb)
    _close(vb, 2.0 * jb)
    _close(vx, 2.0 * jx)
    value, g = numbax.value_and_grad(ours)(B, X)
    _zero_d(value)
    _zero_d(g)
    _close(value, theirs(jnp.asarray(B), jnp.asarray(X)))
    _close(g, jb)


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_jvp_and_hessian_against_jax(program):
    ours, theirs = program(nnp, nlax), program(jnp, jax.lax)
    tb, tx = np.array(0.25), np.array([0.5, -1.0, 2.0])
    primal, tangent = numbax.jvp(ours, (B, X), (tb, tx))
    _zero_d(primal)
    _zero_d(tangent)
    jp, jt = jax.jvp(theirs, (jnp.asarray(B), jnp.asarray(X)), (jnp.asarray(tb), jnp.asarray(tx)))
    _close(primal, jp)
    _close(tangent, jt)
    second = jax.jacfwd(jax.jacfwd(theirs))(jnp.asarray(B), jnp.asarray(X))
    forward = numbax.jacfwd(numbax.grad(ours))(B, X)
    _zero_d(forward)
    _close(forward, second, rtol=1e-10)
    hb = numbax.hessian(ours)(B, X)
    _zero_d(hb)
    _close(hb, second, rtol=1e-10)


def test_scan_hessian_against_central_differences():
    """Forward over reverse of a scan (its gradient keeps the carries in a table, no list tape): the Hessian in
    both arguments against central differences of the gradient."""
    ours = scan(nnp, nlax)
    hessian = numbax.hessian(ours, argnums=(0, 1))(B, X)
    grad, h = numbax.grad(ours, argnums=(0, 1)), 1e-6
    steps = [(np.array(h), np.zeros(3))] + [(np.array(0.0), h * e) for e in np.eye(3)]
    columns = [[(np.asarray(a) - np.asarray(b)) / (2 * h) for a, b in zip(grad(B + db, X + dx), grad(B - db, X - dx))]
               for db, dx in steps]
    np.testing.assert_allclose(hessian[0][0], columns[0][0], rtol=1e-7)
    np.testing.assert_allclose(hessian[0][1], [c[0] for c in columns[1:]], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(hessian[1][1], np.array([c[1] for c in columns[1:]]).T, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("program", PROGRAMS, ids=IDS)
def test_vmap_over_rows_with_a_0d_argument(program):
    ours, theirs = program(nnp, nlax), program(jnp, jax.lax)
    out = numbax.vmap(ours, in_axes=(None, 0))(B, XS)
    assert out.shape == (2,) and out.dtype == np.float64
    _close(out, [theirs(jnp.asarray(B), jnp.asarray(row)) for row in XS])
    grads = numbax.vmap(numbax.grad(ours), in_axes=(None, 0))(B, XS)
    _close(grads, [jax.jacfwd(theirs)(jnp.asarray(B), jnp.asarray(row)) for row in XS])


def _loss(params, x):
    return jnp.sum(jnp.tanh(x * params["w"] + params["b"]) ** 2) + params["b"] * params["w"][0]


def _loss_numbax(params, x):
    return nnp.sum(nnp.tanh(x * params["w"] + params["b"]) ** 2) + params["b"] * params["w"][0]


def test_pytree_leaves_and_their_gradients_keep_0d_arrays():
    params = {"w": X.copy(), "b": np.array(-0.4)}
    value, grads = numbax.jit(numbax.value_and_grad(_loss_numbax))(params, X)
    jvalue, jgrads = jax.value_and_grad(_loss)(jax.tree.map(jnp.asarray, params), jnp.asarray(X))
    _zero_d(value)
    _zero_d(grads["b"])
    _close(value, jvalue)
    _close(grads["b"], jgrads["b"])
    _close(grads["w"], jgrads["w"])


def test_0d_results_keep_their_dtypes_and_act_as_arrays():
    out = numbax.jit(lambda x: (x.sum(), x.shape[0] + 0, x[0] > 0.0, nnp.zeros((), nnp.float32)))(X)
    for value, dtype in zip(out, (np.float64, np.int64, np.bool_, np.float32)):
        _zero_d(value, dtype)
    assert out[0].item() == X.sum() and out[0].ndim == 0 and out[0].size == 1 and float(out[0]) == out[0]
    assert out[0] == pytest.approx(X.sum())
    g32 = numbax.grad(lambda b: nnp.sin(b) * b)(np.array(0.5, np.float32))
    _zero_d(g32, np.float32)
    np.testing.assert_allclose(g32, np.sin(0.5) + 0.5 * np.cos(0.5), rtol=1e-6)
    primal, tangent = numbax.jvp(lambda b: nnp.sin(b) * b, (np.array(0.5, np.float32),), (np.array(1.0, np.float32),))
    _zero_d(primal, np.float32)
    _zero_d(tangent, np.float32)
    np.testing.assert_allclose(tangent, g32, rtol=1e-6)


def test_a_constant_0d_array_captured_is_a_number_inside():
    start = np.array(2.0)

    def f(x):
        acc = start
        for i in range(x.shape[0]):
            acc = acc * x[i]
        return acc

    _close(numbax.jit(f)(X), 2.0 * np.prod(X))
    _close(numbax.grad(f)(X), jax.grad(f)(jnp.asarray(X)))


def rows_appended(x, n):
    out = []
    for i in range(n):
        out.append(nnp.sin(x[i]) * x[i])
    return nnp.stack(out)


def items_summed(x, n):
    out = []
    i = 0
    while i < n:
        out.append(x[i] * x[i])
        i += 1
    return sum(out)


def summed_rows(x, n):
    return nnp.sum(rows_appended(x, n))


# each program -> the line it appends at, a scalar function of it (for grad and jvp)
APPENDING = {rows_appended: ("out.append(nnp.sin", summed_rows), items_summed: ("out.append(x[i]", items_summed)}
TRANSFORMS = {"jit": lambda fn, scalar: numbax.jit(fn)(X, 3),
              "grad": lambda fn, scalar: numbax.grad(scalar)(X, 3),
              "jvp": lambda fn, scalar: numbax.jvp(functools.partial(scalar, n=3), (X,), (np.ones(3),)),
              "vmap": lambda fn, scalar: numbax.vmap(fn, in_axes=(0, None))(XS, 3)}


@pytest.mark.parametrize("transform", list(TRANSFORMS))
def test_append_in_a_while_loop_is_refused_at_its_line(transform):
    line, scalar = APPENDING[items_summed]
    with pytest.raises(numbax.errors.NumbaxSpecializationError, match="lax.scan") as info:
        TRANSFORMS[transform](items_summed, scalar)
    lines, first = inspect.getsourcelines(items_summed)
    assert info.value.origin.lineno == first + next(k for k, text in enumerate(lines) if line in text)


def test_append_in_a_for_loop_over_a_run_time_length_gives_numpys_rows_and_jaxs_derivatives():
    """A list of run-time length is the array of its items (``run_time_lists``), under every transformation."""
    def reference(x, n):
        return jnp.stack([jnp.sin(x[i]) * x[i] for i in range(n)])

    np.testing.assert_allclose(TRANSFORMS["jit"](rows_appended, summed_rows), reference(jnp.asarray(X), 3),
                               rtol=1e-13)
    want = jax.grad(lambda x: jnp.sum(reference(x, 3)))(jnp.asarray(X))
    np.testing.assert_allclose(TRANSFORMS["grad"](rows_appended, summed_rows), want, rtol=1e-13)
    np.testing.assert_allclose(TRANSFORMS["jvp"](rows_appended, summed_rows)[1], np.sum(want), rtol=1e-13)
    np.testing.assert_allclose(TRANSFORMS["vmap"](rows_appended, summed_rows),
                               np.stack([np.asarray(reference(jnp.asarray(row), 3)) for row in XS]), rtol=1e-13)


def rows_by_scan(x, n, m, lax):
    _, rows = lax.scan(lambda c, xi: (c, m.sin(xi) * xi), 0.0, x[:n])
    return m.sum(rows ** 2)


def test_the_scan_that_the_refusal_suggests_gives_jaxs_gradient():
    ours = numbax.grad(lambda x: rows_by_scan(x, 3, nnp, nlax))(X)
    _close(ours, jax.grad(lambda x: rows_by_scan(x, 3, jnp, jax.lax))(jnp.asarray(X)))


def attributes(b):
    return nnp.zeros(b.shape) + b.ndim + b.size + nnp.zeros_like(b) + float(b)


def test_a_0d_arguments_shape_ndim_and_size_are_numpys():
    out = numbax.jit(attributes)(B)
    _zero_d(out)
    _close(out, 1.0 + B)  # 0 + 0 + 1 + 0 + b


def writes_into_an_argument(b, x):
    b[()] = x[0]
    return b


def writes_into_a_local(x):
    b = nnp.zeros(())
    b[...] = x[0]
    return b


@pytest.mark.parametrize("fn, args", [(writes_into_an_argument, (B.copy(), X)), (writes_into_a_local, (X,))])
def test_writing_into_a_0d_array_is_refused_at_its_line(fn, args):
    with pytest.raises(numbax.errors.NumbaxSpecializationError, match=r"writing into a 0-d array") as info:
        numbax.jit(fn)(*args)
    lines, first = inspect.getsourcelines(fn)
    assert info.value.origin.lineno == first + next(k for k, text in enumerate(lines) if "] = x[0]" in text)


def _count_then_floats(x):
    s = x.shape[0]
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def _int_or_float(x):
    s = 1
    if x[0] > 0:
        s = x[0] * 2.0
    return s, x


def test_a_returned_number_rebound_from_an_int_to_floats_is_a_float_array():
    # Numba types the return before joining `s`'s int and float: the code casts it to the join's dtype first
    x = np.array([0.5, 1.25, -0.25])
    got = numbax.jit(_count_then_floats)(x)
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.float64
    assert float(got) == _count_then_floats(x)
    first, _ = numbax.jit(_int_or_float)(x)
    assert first.shape == () and first.dtype == np.float64 and float(first) == 1.0
    second, _ = numbax.jit(_int_or_float)(-x)
    assert second.dtype == np.float64 and float(second) == 1.0



def _positions(x, m):
    return np.argmax(x), np.argmin(x), np.argmax(m, axis=-1), m.argmin(axis=0), np.argmax(m, axis=1, keepdims=True)


def _jax_positions(x, m):
    return jnp.argmax(x), jnp.argmin(x), jnp.argmax(m, axis=-1), m.argmin(axis=0), jnp.argmax(m, axis=1, keepdims=True)


def test_argmax_and_argmin_of_0d_arrays_and_along_axes_give_jaxs_positions():
    """They go to the runtime's helper (Numba's own along an axis took 1.3 s to compile, and of a 0-d array
    it failed inside Numba); NaN is the extremum, the first of equal values wins, as in NumPy and JAX."""
    m = np.array([[1.0, 5.0, np.nan], [2.0, 2.0, 0.5], [7.0, 7.0, 7.0]])
    for x in (B, np.array(-3), np.array([1.0, np.nan, 3.0, np.nan])):
        got, want, numpy = numbax.jit(_positions)(x, m), jax.jit(_jax_positions)(x, jnp.asarray(m)), _positions(x, m)
        for a, b, c in zip(got, want, numpy):
            assert np.asarray(a).shape == np.shape(b) == np.shape(c)
            assert np.array_equal(a, b) and np.array_equal(a, c) and np.asarray(a).dtype == np.asarray(c).dtype
