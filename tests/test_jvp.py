"""Forward mode: ``numbax.jvp`` against JAX's ``jax.jvp`` and against the reverse-mode corpus's oracles.

Every case of ``tests/grad_corpus`` without static arguments goes through ``numbax.jvp`` along a random
tangent of its differentiated arguments (zeros for its other inexact leaves, ``float0`` for integers):
the output's tangent must be the inner product of the oracle's gradient (JAX's, or central differences')
with that tangent, and the output the function's value (forward mode refuses none of them). Then JAX's semantics (results, structure, ``float0``, ``has_aux``, its errors),
the generated code, and the refusals at the user's line.
"""
import copy
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus import all_cases, oracles  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

CASES = [c for c in all_cases() if not c.static_argnums]


def _tangents(case, args):
    """A random tangent for the differentiated arguments' leaves, zeros for the other inexact leaves."""
    nums = (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)
    rng = np.random.default_rng(len(case.id))
    out = []
    for k, arg in enumerate(args):
        def leaf(x, differentiated=k in nums):
            x = np.asarray(x)
            if x.dtype.kind not in "fc":
                return np.zeros(x.shape, jax.dtypes.float0)
            t = rng.normal(size=x.shape).astype(x.dtype) if differentiated else np.zeros(x.shape, x.dtype)
            return t if np.ndim(t) else t[()]
        out.append(tree_util.tree_map(leaf, arg))
    return tuple(out)


def _expected(case, args, tangents):
    """``<gradient, tangent>`` from the corpus's oracle."""
    grads = oracles.case_grad(case)
    nums = (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)
    grads = (grads,) if isinstance(case.argnums, int) else grads
    total = 0.0
    for g, k in zip(grads, nums):
        for gl, tl in zip(tree_util.tree_leaves(g), tree_util.tree_leaves(tangents[k])):
            total += float(np.sum(np.asarray(gl) * np.asarray(tl)))
    return total


_RESULTS = {}


def _jvp(case, backend):
    if (case.id, backend) not in _RESULTS:
        args = case.args_factory()
        tangents = _tangents(case, args)
        got = numbax.jvp(case.fn, copy.deepcopy(args), tangents, has_aux=case.has_aux, backend=backend)
        _RESULTS[case.id, backend] = args, tangents, got
    return _RESULTS[case.id, backend]


def _params():
    """Every case on the python backend; every third on cpu (a Numba compile each)."""
    out = []
    for index, case in enumerate(CASES):
        for backend in ("python", "cpu") if index % 3 == 0 else ("python",):
            out.append(pytest.param(case, backend, id=f"{case.id}-{backend}"))
    return out


@pytest.mark.parametrize("case, backend", _params())
def test_jvp_is_the_gradient_along_the_tangent(case, backend):
    args, tangents, got = _jvp(case, backend)
    out, tangent = got[0], got[1]
    expected = _expected(case, args, tangents)
    value = case.fn(*copy.deepcopy(args))
    value = value[0] if case.has_aux else value
    np.testing.assert_allclose(np.asarray(out), np.asarray(value), rtol=1e-10, atol=1e-12)
    rtol = case.rtol or (1e-8 if case.oracle == "jax" else 1e-6)
    np.testing.assert_allclose(float(tangent), expected, rtol=rtol, atol=case.atol or 1e-8)


# ---- JAX's semantics, against jax.jvp -------------------------------------------------------------------


def mlp_layer(params, x):
    h = np.tanh(x @ params["w"] + params["b"])
    return {"out": h, "norm": np.sum(h * h)}


def counted_steps(x, n):
    total = np.zeros_like(x)
    k = 0
    while k < n:
        total = total + np.sin(x) * k
        k += 1
    return total, k


def scaled_with_aux(x):
    y = np.exp(x) * 2.0
    return np.sum(y), y.shape[0]


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_pytrees_follow_jax(backend):
    rng = np.random.default_rng(0)
    params = {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}
    x = rng.normal(size=(4, 3))
    tangents = ({"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}, rng.normal(size=(4, 3)))
    out, tangent = numbax.jvp(mlp_layer, (params, x), tangents, backend=backend)
    jax_out, jax_tangent = jax.jvp(oracles.to_jax(mlp_layer), (params, x), tangents)
    for got, want in ((out, jax_out), (tangent, jax_tangent)):
        assert tree_util.tree_structure(got) == tree_util.tree_structure(oracles.to_numpy(want))
        for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(oracles.to_numpy(want))):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_integer_arguments_take_float0_tangents_and_integer_outputs_give_them(backend):
    x = np.array([0.3, -1.2, 2.0])
    float0 = np.zeros((), jax.dtypes.float0)
    (total, k), (d_total, d_k) = numbax.jvp(counted_steps, (x, 3), (np.ones(3), float0), backend=backend)
    assert k == 3 and d_k.dtype == jax.dtypes.float0 and d_k.shape == ()
    np.testing.assert_allclose(total, 3 * np.sin(x))
    np.testing.assert_allclose(d_total, 3 * np.cos(x))


def test_has_aux_returns_the_aux_output_untouched():
    x = np.array([0.1, 0.2])
    out, tangent, aux = numbax.jvp(scaled_with_aux, (x,), (np.array([1.0, -1.0]),), has_aux=True)
    assert aux == 2
    np.testing.assert_allclose(tangent, 2 * np.exp(0.1) - 2 * np.exp(0.2))


def test_float32_stays_float32():
    x = np.array([0.5, 1.5], np.float32)
    out, tangent = numbax.jvp(lambda_free_tanh, (x,), (np.ones(2, np.float32),))
    assert tangent.dtype == np.float32
    np.testing.assert_allclose(tangent, 1 - np.tanh(x) ** 2, rtol=1e-6)


def lambda_free_tanh(x):
    return np.tanh(x)


def test_jaxs_errors_for_arguments_that_do_not_match():
    x = np.ones(3)
    with pytest.raises(TypeError, match="same tree structure"):
        numbax.jvp(lambda_free_tanh, (x,), (x, x))
    with pytest.raises(TypeError, match="dtypes must be equal"):
        numbax.jvp(lambda_free_tanh, (x,), (np.ones(3, np.float32),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        numbax.jvp(lambda_free_tanh, (x,), (np.ones(4),))
    with pytest.raises(TypeError, match="tuples or lists"):
        numbax.jvp(lambda_free_tanh, x, x)


def tanh_tangent(x, t):
    return numbax.jvp(lambda_free_tanh, (x,), (t,))[1]


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_inside_compiled_code_a_tangent_of_another_shape_is_jaxs_value_error(backend):
    """Not broadcast against its primal: a (1,) tangent of a (3,) primal would give a wrong number."""
    f = numbax.jit(tanh_tangent, backend=backend)
    x = np.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(f(x, np.ones(3)), 1.0 - np.tanh(x) ** 2, rtol=1e-12)
    for wrong in (np.ones(1), np.ones(4)):
        with pytest.raises(ValueError, match="different primal and tangent shapes"):
            f(x, wrong)
    with pytest.raises(numbax.NumbaxError, match="tangent arguments to jax.jvp do not match"):
        f(x, 1.0)


# ---- the generated code, and the refusals ----------------------------------------------------------------


def rotate(x, w):
    y = np.tanh(x @ w)
    return np.sum(y * y)


ROTATE_JVP = """def jvp_rotate(x, w, dx, dw):
    # test_jvp.py:{line}: y = np.tanh(x @ w)
    _t1 = rt.matmul(x, w)
    product = rt.matmul(dx, w)
    product_1 = rt.matmul(x, dw)
    _t3 = 0.0
    dt3 = 0.0
    for j in range(x.shape[0]):
        # tangent of: y = np.tanh(x @ w)
        dt1_j = product[j] + product_1[j]
        y_j = rt.tanh(_t1[j])
        dy_j = dt1_j * (1.0 - y_j * y_j)
        # test_jvp.py:{next}: return np.sum(y * y)
        t2_j = y_j * y_j
        # tangent of: return np.sum(y * y)
        dt2_j = dy_j * y_j + dy_j * y_j
        _t3 = rt.add_unordered(_t3, t2_j)
        dt3 = rt.add_unordered(dt3, dt2_j)
    return rt.arrays_out((_t3, dt3))
"""


def test_generated_code_interleaves_tangents_with_comments():
    from numbax.transforms.jvp.api import Pushforward

    text = Pushforward(rotate, backend="python").lower_source(np.ones((2, 3)), np.ones(3))
    line = rotate.__code__.co_firstlineno + 1
    assert text.split("\n\n", 1)[1].strip() == ROTATE_JVP.format(line=line, next=line + 1).strip()


def uses_fft(x):
    return np.fft.fft(x).real * 2.0


def uses_complex(x):
    z = x + 1j * x
    return np.abs(np.linalg.det(z[:, None] * z + np.eye(x.shape[0])))


def writes_a_view(x):
    y = x * 1.0
    row = y[1:]
    row[0] = x[0] * 3.0
    return np.sum(y)


def scales_a_slot_by_a_differentiated_value(x):
    y = x * 1.0
    y[0] *= x[1]
    return np.sum(y)


def returns_a_number_and_nothing(x):
    return np.sum(x), 3, None


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_update_by_a_differentiated_value_and_constant_outputs_follow_jax(backend):
    # y[0] *= x[1] is read, multiplied and written back (canonical form), so its tangent is the product's
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 1.0, 1.0])
    out, tangent = numbax.jvp(scales_a_slot_by_a_differentiated_value, (x,), (t,), backend=backend)
    # y = (x0 * x1, x1, x2): value 0.5 * -1 - 1 + 2, tangent (t0 * x1 + x0 * t1) + t1 + t2
    np.testing.assert_allclose((out, tangent), (0.5, -1.0 + 0.5 + 1.0 + 1.0), rtol=1e-15)
    (total, three, nothing), (d_total, d_three, d_nothing) = numbax.jvp(returns_a_number_and_nothing, (x,), (t,),
                                                                        backend=backend)
    assert (three, nothing, d_nothing) == (3, None, None) and d_three.dtype == jax.dtypes.float0
    np.testing.assert_allclose((total, d_total), (np.sum(x), 3.0))


def scales_then_steps(theta, z):
    z = z * theta  # the loop keeps the one name z: a constant argument, then a differentiated value
    for _ in range(4):
        z = z + 0.1 * np.tanh(theta * z)
    return z


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_argument_held_constant_then_assigned_a_differentiated_value_starts_with_a_zero_tangent(backend):
    # the tangent of z was read before it was assigned (NumbaxTypingError compiled, NameError in Python)
    theta, z = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25, -0.5])
    expected = np.asarray(jax.jacfwd(oracles.to_jax(scales_then_steps))(theta, z))
    np.testing.assert_allclose(numbax.jacfwd(scales_then_steps, backend=backend)(theta, z), expected, rtol=1e-13)
    np.testing.assert_allclose(numbax.jit(lambda t, y: numbax.jacfwd(scales_then_steps)(t, y), backend=backend)(
        theta, z), expected, rtol=1e-13)


@pytest.mark.parametrize("fn, message, line", [
    (uses_fft, "forward mode has no derivative rule for np.fft.fft", uses_fft.__code__.co_firstlineno + 1),
    (uses_complex, "no forward derivative of np.linalg.det for complex numbers", uses_complex.__code__.co_firstlineno + 2),
    (writes_a_view, "cannot follow writes through views", writes_a_view.__code__.co_firstlineno + 3),
])
def test_what_forward_mode_cannot_follow_is_refused_at_the_users_line(fn, message, line):
    with pytest.raises(numbax.NumbaxDifferentiationError) as info:
        numbax.jvp(fn, (np.array([0.5, -1.0, 2.0]),), (np.ones(3),), backend="python")
    assert message in str(info.value) and f"test_jvp.py:{line}" in str(info.value)


def test_coverage_has_a_forward_column():
    table = numbax.coverage()
    assert table["numpy.tanh"] == {"grad": True, "jvp": True}
    assert table["numpy.sign"]["jvp"] is True  # no derivative: covered in both modes
    assert table["numpy.median"] == {"grad": True, "jvp": True}


def test_forward_mode_of_a_gradient_is_the_hessian_vector_product():
    x, w = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]]), np.array([0.2, -0.5, 0.9])
    tangents = (np.full_like(x, 0.5), np.array([1.0, 0.0, -1.0]))
    got = numbax.jvp(numbax.grad(rotate, (0, 1)), (x, w), tangents)[1]
    want = jax.jvp(jax.grad(oracles.to_jax(rotate), (0, 1)), (x, w), tangents)[1]
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(v), rtol=1e-10, atol=1e-12)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_hvp(x, v):
    return numbax.jvp(numbax.grad(rosenbrock), (x,), (v,))[1]


ROSENBROCK_HVP_LOOP = """    ddx = rt.zeros_like(x)
    dt5_j = dt11 * 100.0
    t7_j = dt5_j * 2
    for j_1 in range(x.shape[0] - 1):
        dt8_1_j = -v[j_1]
        # grad of: return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
        ddt8_j = dt8_1_j * t6_j_1
        ddt7_j = -ddt8_j
        ddx[j_1] += ddt7_j
        dt4_j = t7_j * t4[j_1]
        ddt4_j = dt4_1[j_1] * t7_j
        dt3_j = -dt4_j
        ddt3_j = -ddt4_j
        t8_j_1 = dt3_j * 2
        dt8_2_j = ddt3_j * 2
        ddt2_j = dt8_2_j * x[j_1] + v[j_1] * t8_j_1
        ddx[j_1] += ddt2_j
        ddx[j_1 + 1] += ddt4_j
    # test_jvp.py:{line}: return numbax.jvp(numbax.grad(rosenbrock), (x,), (v,))[1]
    return ddx
"""


def test_a_hessian_vector_product_is_fused_and_makes_no_gradient():
    """Forward over reverse inside jit: the tangent statements fuse with the gradient's into loops, the
    sliced accumulations ``ddx[1:] += g`` included, and the gradient ``dx`` that nothing returns is not
    made (its zeros were the tangent's shape source)."""
    x, v = np.linspace(-1.2, 1.3, 7), np.linspace(1.0, -0.5, 7)
    hvp = numbax.jit(rosenbrock_hvp)
    text = hvp.lower_source(x, v)
    assert text.endswith(ROSENBROCK_HVP_LOOP.format(line=rosenbrock_hvp.__code__.co_firstlineno + 1)), text
    assert text.count("for ") == 2 and "dx" not in text.replace("ddx", "")
    want = jax.jvp(jax.grad(oracles.to_jax(rosenbrock)), (x,), (v,))[1]
    np.testing.assert_allclose(hvp(x, v), want, rtol=1e-12)


def test_numbax_show_prints_forward_mode_code(tmp_path):
    import subprocess

    path = tmp_path / "rot.py"
    path.write_text("import numpy as np\n\n\ndef rotate(x, w):\n    y = np.tanh(x @ w)\n    return np.sum(y * y)\n")
    out = subprocess.run([sys.executable, "-m", "numbax", "show", f"{path}:rotate", "--args", "f64[2,3]", "f64[3]",
                          "--transform", "jvp"], capture_output=True, text=True, check=True).stdout
    assert "def jvp_rotate(x, w, dx, dw):" in out and "# tangent of: y = np.tanh(x @ w)" in out


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_linearize_is_jaxs(backend):
    x, w = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]]), np.array([0.2, -0.5, 0.9])
    out, f_jvp = numbax.linearize(rotate, x, w, backend=backend)
    jax_out, jax_f_jvp = jax.linearize(oracles.to_jax(rotate), x, w)
    np.testing.assert_allclose(out, jax_out, rtol=1e-12)
    for k in range(3):
        tangents = (np.full_like(x, 0.1 * k), np.full_like(w, 1.0 - k))
        np.testing.assert_allclose(f_jvp(*tangents), jax_f_jvp(*tangents), rtol=1e-12, atol=1e-14)
    with pytest.raises(TypeError, match="same tree structure"):
        f_jvp(x)


def _array_of_numbers(x):
    a = x[0] * 2.0
    b = np.sin(x[1])
    v = np.asarray([a, b])
    w = np.array((b, a, a * b))
    return np.sum(v * v) + np.sum(w[1:] * w[:-1])


def test_an_array_made_of_numbers_has_the_array_of_their_tangents_as_jax():
    """``np.asarray([a, b])``'s tangent is ``np.asarray([da, db])`` (a list plus an array failed to compile)."""
    x, t = np.array([0.3, 0.7]), np.array([1.0, -0.5])
    out, tangent = numbax.jvp(_array_of_numbers, (x,), (t,))
    want_out, want_tangent = jax.jvp(oracles.to_jax(_array_of_numbers), (x,), (t,))
    np.testing.assert_allclose(out, want_out, rtol=1e-13)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-13)
    np.testing.assert_allclose(numbax.jacfwd(_array_of_numbers)(x), jax.jacfwd(oracles.to_jax(_array_of_numbers))(x),
                               rtol=1e-13)
    np.testing.assert_allclose(numbax.hessian(_array_of_numbers)(x), jax.hessian(oracles.to_jax(_array_of_numbers))(x),
                               rtol=1e-12)


def _items_of_constants(x):
    a, b = x[0], x[1]
    v = np.array([a * b, 0.3 * -1.09, -2.5, b])
    return np.sum(v * v) + v[0] * v[1]


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_an_item_of_constants_in_an_array_of_numbers_has_tangent_zero(backend):
    """``np.array([a * b, 0.3 * -1.09, ...])``: an item that reads no differentiated variable (an expression of
    constants, which forward mode refused) has tangent zero, as JAX's."""
    x, t = np.array([0.3, 0.7]), np.array([1.0, -0.5])
    out, tangent = numbax.jit(lambda x, t: numbax.jvp(_items_of_constants, (x,), (t,)), backend=backend)(x, t)
    want_out, want_tangent = jax.jvp(oracles.to_jax(_items_of_constants), (x,), (t,))
    np.testing.assert_allclose(out, want_out, rtol=1e-13)
    np.testing.assert_allclose(tangent, want_tangent, rtol=1e-13)
    np.testing.assert_allclose(numbax.jacfwd(_items_of_constants, backend=backend)(x),
                               jax.jacfwd(oracles.to_jax(_items_of_constants))(x), rtol=1e-13)


def _negative_constant(x):
    return -0.75


def _complex_constant(x):
    return -2j


def _tuple_with_a_negative_constant(x):
    return x * 2.0, -1.5


def _negative_integer(x):
    return -3


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn", [_negative_constant, _complex_constant, _tuple_with_a_negative_constant,
                                _negative_integer], ids=lambda f: f.__name__)
def test_the_tangent_of_a_constant_output_is_zero(fn, backend):
    """An output written as a constant expression (``-0.75`` is a negation of ``0.75``; ``-2j``) has a zero
    tangent of its kind, as JAX's (it was the constant itself); an integer's is float0."""
    x = np.array([1.0, 2.0])
    out, tangent = numbax.jvp(fn, (x,), (x,), backend=backend)
    want_out, want_tangent = jax.jvp(fn, (x,), (x,))
    for got, want in zip(tree_util.tree_leaves(tangent), jax.tree_util.tree_leaves(want_tangent)):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        if np.asarray(want).dtype != jax.dtypes.float0:
            np.testing.assert_array_equal(got, np.asarray(want))
    for got, want in zip(tree_util.tree_leaves(out), jax.tree_util.tree_leaves(want_out)):
        np.testing.assert_array_equal(got, np.asarray(want))


def euler_with_a_carried_state(theta, z):
    for _ in range(5):
        z = z + 0.1 * np.sin(theta * z)
    return z


def broadcast_by_an_operand_without_tangent(x, y):
    return x * 2.0 + y


def test_a_tangent_that_reads_every_operand_is_not_broadcast_again():
    """In a loop the state's shape is not known symbolically: the tangent of ``z + step``, which reads the
    tangents of both operands, has the result's shape without ``+ rt.zeros_like(...)``; where an operand
    without a tangent may broadcast the result (``x * 2.0 + y``, ``y`` not differentiated), it is broadcast."""
    from numbax.transforms.jvp.api import Pushforward

    theta, z = np.array([0.7, -1.3, 2.0]), np.array([0.2, 0.5, -0.4])
    text = Pushforward(euler_with_a_carried_state, backend="python").lower_source(theta, z)
    assert "zeros_like" not in text.split("for ", 1)[1]
    for direction in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -2.0, 1.0])):
        out, tangent = numbax.jvp(euler_with_a_carried_state, (theta, z), (direction, np.zeros(3)))
        want_out, want = jax.jvp(oracles.to_jax(euler_with_a_carried_state), (theta, z), (direction, np.zeros(3)))
        np.testing.assert_allclose(out, want_out, rtol=1e-13)
        np.testing.assert_allclose(tangent, want, rtol=1e-12)
    x, y = np.array([1.5]), np.array([1.0, 2.0, 3.0])
    out, tangent = numbax.jvp(lambda x: broadcast_by_an_operand_without_tangent(x, y), (x,), (np.ones(1),))
    assert tangent.shape == out.shape == (3,)
    np.testing.assert_array_equal(tangent, np.full(3, 2.0))
