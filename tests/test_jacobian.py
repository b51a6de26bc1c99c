"""The Jacobian family: ``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian`` against JAX and the corpus.

Every case of ``tests/grad_corpus`` with real floating-point inputs and no static arguments goes through
``jacfwd`` and ``jacrev`` (a scalar output: the Jacobian is the gradient, in its structure); those whose
output numbax cannot type are refused at the user's ``def`` (listed, so that the count cannot grow
unseen). Then JAX's semantics on vector and pytree outputs, ``argnums``, ``has_aux`` and dtypes;
``hessian`` (forward mode over the reverse mode's generated code); forward over reverse (``jvp`` of
``grad``) and forward mode inside compiled code; the refusals.
"""
import copy
import os
import re
import sys

import numpy as np
import pytest
import scipy.special

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus import all_cases, oracles  # noqa: E402

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _real_inputs(case) -> bool:
    args = case.args_factory()
    nums = (case.argnums,) if isinstance(case.argnums, int) else tuple(case.argnums)
    return all(np.asarray(leaf).dtype.kind == "f" for k in nums for leaf in tree_util.tree_leaves(args[k]))


CASES = [c for c in all_cases() if not c.static_argnums and _real_inputs(c)]
# outputs whose dtype and rank numbax cannot tell while specializing (the sweep's basis must match them)
UNTYPED_OUTPUTS = {
    "numpy_functions.log_sum_exp_scipy", "branches.scalar_piecewise_low",
    "branches.scalar_piecewise_mid", "branches.scalar_piecewise_high",
    "loops.nested_loops", "loops.enumerate_and_zip", "loops.enumerate_zip_with_start_and_range",
    "inplace.matmul_loops",
}


def _params():
    """Every case in both modes on the python backend; every fourth on cpu (a Numba compile each)."""
    out = []
    for index, case in enumerate(CASES):
        for mode in ("jacfwd", "jacrev"):
            for backend in ("python", "cpu") if index % 4 == 0 else ("python",):
                out.append(pytest.param(case, mode, backend, id=f"{case.id}-{mode}-{backend}"))
    return out


@pytest.mark.parametrize("case, mode, backend", _params())
def test_the_jacobian_of_a_scalar_function_is_its_gradient(case, mode, backend):
    args = case.args_factory()
    transform = getattr(numbax, mode)(case.fn, case.argnums, has_aux=case.has_aux, backend=backend)
    if case.id in UNTYPED_OUTPUTS:
        with pytest.raises(numbax.NumbaxError, match="cannot tell the dtype and rank of"):
            transform(*copy.deepcopy(args))
        return
    got = transform(*copy.deepcopy(args))
    got = got[0] if case.has_aux else got
    want = oracles.case_grad(case)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(want)
    rtol = case.rtol or (1e-8 if case.oracle == "jax" else 1e-6)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=rtol, atol=case.atol or 1e-8)


# ---- JAX's semantics ---------------------------------------------------------------------------------


def layer(params, x):
    h = np.tanh(x @ params["w"] + params["b"])
    return {"h": h, "energy": np.sum(h * h) + 0.5 * np.sum(params["w"] ** 2)}


def coupled(x, y):
    return np.sin(x) * np.sum(y ** 2) + x[0] * y[:3], np.cumsum(x * y[1:])


def with_aux(x):
    y = np.exp(x) * x
    return y[::-1], {"max": np.max(y)}


def _close(got, want, rtol=1e-10):
    want = oracles.to_numpy(want)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(want)
    for g, w in zip(tree_util.tree_leaves(got), tree_util.tree_leaves(want)):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-12)


@pytest.fixture(scope="module")
def layer_args():
    rng = np.random.default_rng(0)
    return {"w": rng.normal(size=(3, 2)), "b": rng.normal(size=2)}, rng.normal(size=(4, 3))


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1)])
def test_pytree_inputs_and_outputs_follow_jax(mode, argnums, layer_args):
    got = getattr(numbax, mode)(layer, argnums)(*layer_args)
    _close(got, getattr(jax, mode)(oracles.to_jax(layer), argnums)(*layer_args))


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_tuple_outputs_and_argnums_follow_jax(mode, backend):
    x, y = np.array([0.3, -1.0, 2.0]), np.array([1.5, 0.5, -2.0, 0.25])
    got = getattr(numbax, mode)(coupled, (0, 1), backend=backend)(x, y)
    _close(got, getattr(jax, mode)(oracles.to_jax(coupled), (0, 1))(x, y))


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_has_aux_returns_the_aux_output(mode):
    x = np.array([0.1, -0.4, 0.7])
    jac, aux = getattr(numbax, mode)(with_aux, has_aux=True)(x)
    want, want_aux = getattr(jax, mode)(oracles.to_jax(with_aux), has_aux=True)(x)
    _close(jac, want)
    np.testing.assert_allclose(aux["max"], float(want_aux["max"]))


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_float32_jacobians_are_float32(mode):
    x = np.array([0.5, 1.0, -2.0], dtype=np.float32)
    got = getattr(numbax, mode)(lambda v: np.tanh(v) * v[0] * 3.0)(x)
    assert got.dtype == np.float32
    want = getattr(jax, mode)(lambda v: jnp.tanh(v) * v[0] * 3.0)(x)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-5)  # float32: an ulp or two apart


def returns_numbers(x):
    return {"constant": 2.0, "scaled": x * 3.0}


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_a_python_number_output_has_zero_rows_as_in_jax(mode, backend):
    # jacrev read `.ndim` of the Python float and refused with "float object has no attribute ndim"
    x = np.array([0.5, -1.0, 2.0])
    got = getattr(numbax, mode)(returns_numbers, backend=backend)(x)
    _close(got, getattr(jax, mode)(returns_numbers)(jnp.asarray(x)))
    assert not np.any(got["constant"]) and got["constant"].shape == (3,) * (2 if mode == "hessian" else 1)


def test_jacobian_is_jacrev():
    assert numbax.jacobian is numbax.jacrev


def test_one_compiled_function_sweeps_the_basis():
    for mode, comment in (("jacfwd", "# tangent of:"), ("jacrev", "# grad of:")):
        text = numbax.source(getattr(numbax, mode)(coupled, (0, 1)), np.ones(3), np.ones(4))
        assert text.count("def ") == 1 and comment in text
        assert re.search(r"for i\w* in range\(0, batch\w*\):", text)  # the basis, swept in the function


def _picks(x):
    return np.stack([x[0] * x[2], np.sin(x[1])])


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_the_sweeps_make_no_run_time_checks_and_the_users_code_keeps_its_own(mode):
    # the sweeps' indices, reshapes and rows hold by construction (``run_time_checks.unchecked_source``)
    x = np.array([0.3, -1.2, 0.8])
    text = numbax.source(getattr(numbax, mode)(_picks), x)
    checks = [line for line in text.splitlines() if "rt.check_" in line]
    assert checks and all("test_jacobian.py" in line for line in checks)  # the user's x[0], x[2], x[1]
    assert not any("sweeps.py" in line for line in checks)
    expected = np.asarray(getattr(jax, mode)(lambda v: jnp.stack([v[0] * v[2], jnp.sin(v[1])]))(x))
    np.testing.assert_allclose(getattr(numbax, mode)(_picks)(x), expected, rtol=1e-12)
    with pytest.raises(IndexError, match="index 2 is out of bounds for axis 0 with size 2"):
        getattr(numbax, mode)(_picks)(x[:2])  # the user's x[2], checked as before


def test_a_users_vmap_keeps_its_row_check():
    def ragged(x, n):
        return x[:n]

    text = numbax.source(numbax.vmap(ragged, in_axes=(None, 0)), np.ones(4), np.arange(3))
    assert "rt.check_row(" in text


# ---- hessian and forward over reverse -------------------------------------------------------------------


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def mlp_loss(w):
    h = np.tanh(np.linspace(-1.0, 1.0, 12).reshape(4, 3) @ w)
    return np.sum(h * h) + np.var(w)


def soft_energy(x):
    return np.sum(np.exp(-x) * x ** 3) + np.max(np.cos(x)) / (1.0 + np.sum(x * x))


def products(x):
    return np.sum(np.prod(np.tanh(x), axis=1)) + np.sum(np.cumprod(x, axis=1) ** 2) + np.prod(x)


SECOND_ORDER = [(rosenbrock, np.array([0.5, -1.2, 2.0, 0.3])),
                (products, np.array([[0.5, 1.2, -0.7], [0.3, -2.0, 1.1]])),
                (mlp_loss, np.linspace(-0.5, 0.5, 6).reshape(3, 2)),
                (soft_energy, np.array([0.2, 0.9, -0.4]))]


def test_the_seed_example_is_twice_the_identity():
    np.testing.assert_array_equal(numbax.hessian(lambda x: np.sum(x ** 2))(np.ones(3)), 2 * np.eye(3))


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fun, x", SECOND_ORDER, ids=lambda v: getattr(v, "__name__", ""))
def test_hessian_follows_jax(fun, x, backend):
    got = numbax.hessian(fun, backend=backend)(x)
    assert got.shape == x.shape + x.shape
    np.testing.assert_allclose(got, np.asarray(oracles.jit_or_eager(jax.hessian(oracles.to_jax(fun)))(x)), rtol=1e-9,
                               atol=1e-10)


@pytest.mark.parametrize("fun, x", SECOND_ORDER, ids=lambda v: getattr(v, "__name__", ""))
def test_forward_over_reverse_is_the_hessian_vector_product(fun, x):
    v = np.linspace(1.0, -1.0, x.size).reshape(x.shape)
    _, hvp = numbax.jvp(numbax.grad(fun), (x,), (v,))
    want = jax.jvp(jax.grad(oracles.to_jax(fun)), (x,), (v,))[1]
    np.testing.assert_allclose(hvp, np.asarray(want), rtol=1e-9, atol=1e-10)


def test_reverse_over_forward_is_the_hessian_vector_product():
    x, v = np.array([0.5, -1.2, 2.0, 0.3]), np.array([1.0, 0.0, -0.5, 2.0])
    got = numbax.grad(lambda x: numbax.jvp(rosenbrock, (x,), (v,))[1])(x)
    want = jax.grad(lambda x: jax.jvp(oracles.to_jax(rosenbrock), (x,), (v,))[1])(x)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-10)


def test_jvp_inside_compiled_code_and_its_dtype():
    @numbax.jit
    def directional(x, t):
        return numbax.jvp(coupled, (x, x + 1.0), (t, t + 1.0))

    x = np.array([0.3, -1.0, 2.0], dtype=np.float32)
    t = np.ones(3, np.float32)
    with pytest.raises(numbax.NumbaxError):  # coupled's y[1:] has 2 elements against x's 3
        directional(x, t)

    @numbax.jit
    def along(x, t):
        return numbax.jvp(with_aux, (x,), (t,), has_aux=True)

    out, tangent, aux = along(x, t)
    want = jax.jvp(lambda v: oracles.to_jax(with_aux)(v)[0], (x,), (t,))
    assert tangent.dtype == np.float32
    np.testing.assert_allclose(tangent, np.asarray(want[1]), rtol=1e-6)


# ---- refusals --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_integer_inputs_raise_jaxs_type_error(mode):
    with pytest.raises(TypeError, match=f"{mode} requires real-valued inputs"):
        getattr(numbax, mode)(lambda x: x * 2.0)(np.arange(3))


def test_integer_outputs_are_refused():
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs"):
        numbax.jacrev(lambda x: x > 0)(np.ones(3))
    with pytest.raises(numbax.NumbaxError, match="jacfwd of an output of dtype bool"):
        numbax.jacfwd(lambda x: x > 0)(np.ones(3))


def test_untyped_outputs_are_refused_at_the_users_def():
    def two_dtypes(x):
        if x[0] > 0:
            return np.sum(x * x)
        return np.sum(x).astype(np.float32)

    with pytest.raises(numbax.NumbaxError, match="cannot tell the dtype and rank") as info:
        numbax.jacrev(two_dtypes)(np.ones(3))
    assert f"{__file__}:" in str(info.value) and "def two_dtypes" in str(info.value)


def test_forward_over_reverse_without_a_rule_is_refused_at_the_users_line():
    def slope_sum(x):
        return np.sum(scipy.special.digamma(x * x + 1.0))

    with pytest.raises(numbax.NumbaxDifferentiationError, match="rt.trigamma, which has no derivative rule") \
            as info:
        numbax.jvp(numbax.grad(slope_sum), (np.ones(3),), (np.ones(3),))
    assert f"{__file__}:" in str(info.value) and "def slope_sum(x):" in str(info.value)


def test_forward_over_reverse_through_cholesky_is_jaxs():
    def factor_sum(a):
        return np.sum(np.sin(np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3))))

    def jax_factor_sum(a):
        return jnp.sum(jnp.sin(jnp.linalg.cholesky(a @ a.T + 3.0 * jnp.eye(3))))

    a, v = np.eye(3) + 0.1 * np.arange(9.0).reshape(3, 3), np.cos(np.arange(9.0)).reshape(3, 3)
    np.testing.assert_allclose(numbax.jvp(numbax.grad(factor_sum), (a,), (v,))[1],
                               jax.jvp(jax.grad(jax_factor_sum), (a,), (v,))[1], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(numbax.hessian(factor_sum)(a), jax.hessian(jax_factor_sum)(a), rtol=1e-9,
                               atol=1e-12)


def test_hessian_of_a_norm_is_jaxs():
    def length(x):
        return np.linalg.norm(np.cos(x))

    x = np.array([0.2, 0.9, -0.4])
    expected = jax.hessian(lambda x: jnp.linalg.norm(jnp.cos(x)))(x)
    np.testing.assert_allclose(numbax.hessian(length)(x), expected, rtol=1e-12, atol=1e-14)


def test_holomorphic_and_allow_int_are_not_implemented():
    with pytest.raises(NotImplementedError):
        numbax.jacfwd(np.sin, holomorphic=True)
    with pytest.raises(NotImplementedError):
        numbax.jacrev(np.sin, allow_int=True)


def test_grad_of_grad_of_a_vector_function_raises_jaxs_type_error():
    with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
        numbax.grad(numbax.grad(lambda x: np.sum(x ** 2)))(np.ones(3))


@pytest.mark.parametrize("transform, header", [("jacfwd", "def jacfwd_rotate(x, w):"),
                                               ("jacrev", "def jacrev_rotate(x, w):"),
                                               ("hessian", "def jacfwd_rotate(x, w):")])
def test_numbax_show_prints_the_sweep(tmp_path, transform, header):
    import subprocess

    path = tmp_path / "rot.py"
    path.write_text("import numpy as np\n\n\ndef rotate(x, w):\n    y = np.tanh(x @ w)\n    return np.sum(y * y)\n")
    out = subprocess.run([sys.executable, "-m", "numbax", "show", f"{path}:rotate", "--args", "f64[2,3]", "f64[3]",
                          "--transform", transform], capture_output=True, text=True, check=True).stdout
    assert header in out and ("# tangent of: y = np.tanh(x @ w)" in out or "# grad of: y = np.tanh(x @ w)" in out)
