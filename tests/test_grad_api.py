"""The reverse-mode API: JAX's semantics for grad, value_and_grad and vjp, composition, and errors."""
import os
import sys

import numpy as np
import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fixtures import grad_api_programs as p  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 3))
W = RNG.normal(size=(3, 2))


def energy_grad(x, w):
    h = np.tanh(x @ w)
    g = 2.0 * h * (1.0 - h * h)
    return g @ w.T, x.T @ g


def test_argnums_tuple_gives_a_tuple_and_int_a_single_gradient():
    gx, gw = numbax.grad(p.energy, argnums=(0, 1))(X, W)
    ex, ew = energy_grad(X, W)
    np.testing.assert_allclose(gx, ex, rtol=1e-12)
    np.testing.assert_allclose(gw, ew, rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(p.energy, argnums=1)(X, W), ew, rtol=1e-12)
    np.testing.assert_allclose(numbax.grad(p.energy, argnums=-1)(X, W), ew, rtol=1e-12)


def test_value_and_grad_and_has_aux():
    value, g = numbax.value_and_grad(p.energy)(X, W)
    assert value == pytest.approx(p.energy(X, W), rel=1e-12)
    np.testing.assert_allclose(g, energy_grad(X, W)[0], rtol=1e-12)
    x = np.linspace(0.0, 1.0, 5)
    g, aux = numbax.grad(p.with_aux, has_aux=True)(x)
    np.testing.assert_allclose(g, np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(aux, np.sin(x), rtol=1e-12)
    (value, aux), g = numbax.value_and_grad(p.with_aux, has_aux=True)(x)
    assert value == pytest.approx(np.sum(np.sin(x)))


def test_gradient_of_a_pytree_has_its_structure():
    params = [(RNG.normal(size=(3, 4)), RNG.normal(size=4)), (RNG.normal(size=(4, 2)), RNG.normal(size=2))]
    g = numbax.grad(p.mlp_loss)(params, X)
    assert isinstance(g, list) and all(isinstance(t, tuple) and len(t) == 2 for t in g)
    assert [a.shape for t in g for a in t] == [(3, 4), (4,), (4, 2), (2,)]


def test_vjp_pulls_back_a_cotangent_per_primal():
    x = np.arange(3.0)
    out, pullback = numbax.vjp(p.scale, x)
    np.testing.assert_allclose(out, 2.0 * x)
    (ct,) = pullback(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(ct, [2.0, 20.0, 200.0])


@pytest.mark.parametrize("order", ["jit(grad)", "grad(jit)"])
def test_grad_and_jit_compose_with_static_arguments(order):
    x = np.array([1.0, 2.0, 3.0])
    if order == "jit(grad)":
        g = numbax.jit(numbax.grad(p.power_sum), static_argnums=(1,))
    else:
        g = numbax.grad(numbax.jit(p.power_sum, static_argnums=(1,)))
    np.testing.assert_allclose(g(x, 3), 3.0 * x ** 2)
    np.testing.assert_allclose(g(x, 2), 2.0 * x)


def test_python_backend_runs_the_same_generated_code():
    g = numbax.grad(p.energy, backend="python")
    np.testing.assert_allclose(g(X, W), energy_grad(X, W)[0], rtol=1e-12)
    assert "def grad_energy(x, w):" in g.source


def test_non_scalar_output_is_jax_s_type_error():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        numbax.grad(p.scale)(np.ones(3))


def constant_vector(x):
    return np.ones(3)


@pytest.mark.parametrize("backend", ["python", "cpu"])
def test_non_scalar_output_that_does_not_depend_on_the_input_is_a_type_error_too(backend):
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        numbax.grad(constant_vector, backend=backend)(np.ones(3))


NOT_SCALAR = r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"
VECTOR_OUTPUTS = {
    "grad": lambda b: numbax.grad(p.sin_twice, backend=b)(np.ones(3)),
    "value_and_grad": lambda b: numbax.value_and_grad(p.sin_twice, backend=b)(np.ones(3)),
    "has_aux": lambda b: numbax.grad(p.sin_twice_with_aux, has_aux=True, backend=b)(np.ones(3)),
    "value_and_grad_has_aux": lambda b: numbax.value_and_grad(p.sin_twice_with_aux, has_aux=True,
                                                              backend=b)(np.ones(3)),
    "argnums_tuple": lambda b: numbax.grad(p.sin_times, argnums=(0, 1), backend=b)(np.ones(3), 2.0),
    "jit": lambda b: numbax.jit(numbax.grad(p.sin_twice), backend=b)(np.ones(3)),
    "vmap": lambda b: numbax.vmap(numbax.grad(p.sin_twice), backend=b)(np.ones((2, 3))),
    "grad_of_grad": lambda b: numbax.grad(numbax.grad(p.sin_twice), backend=b)(np.ones(3)),
    "inside_grad": lambda b: numbax.grad(p.grad_of_sin_twice_inside, backend=b)(np.ones(3)),
}


@pytest.mark.parametrize("backend", ["python", "cpu", "gpu"])
@pytest.mark.parametrize("case", sorted(VECTOR_OUTPUTS))
def test_an_array_output_is_jax_s_type_error_on_every_backend(case, backend):
    """The check sees the output before fusion turns the seed into a store (once a Numba typing error)."""
    with pytest.raises(TypeError, match=NOT_SCALAR):
        VECTOR_OUTPUTS[case](backend)


@pytest.mark.parametrize("transform", [numbax.grad, numbax.value_and_grad])
@pytest.mark.parametrize("f", [p.two_sums, p.sum_in_a_dict])
def test_a_pytree_output_is_jax_s_type_error_not_the_gradient_of_its_first_leaf(f, transform):
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output was PyTreeDef"):
        transform(f, backend="python")(np.ones(3))


def test_has_aux_without_a_pair_is_jax_s_type_error():
    with pytest.raises(TypeError, match="expected function with aux output to return a two-element tuple"):
        numbax.grad(p.sum_without_aux, has_aux=True, backend="python")(np.ones(3))


def test_integer_inputs_need_allow_int():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        numbax.grad(p.power_sum)(np.arange(3), 2)
    g = numbax.grad(p.scaled_power_sum, allow_int=True, static_argnums=(1,))(np.arange(3), 2)
    assert g.dtype == numbax.transforms.grad.api.FLOAT0 and g.shape == (3,)
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* but got int64"):  # as JAX
        numbax.grad(p.power_sum, allow_int=True, static_argnums=(1,))(np.arange(3), 2)


def test_argnums_out_of_range():
    with pytest.raises(ValueError, match="argnums=5"):
        numbax.grad(p.energy, argnums=5)


def test_a_call_without_a_rule_names_the_function_and_the_line():
    with pytest.raises(numbax.NumbaxDifferentiationError) as info:
        numbax.grad(p.uses_fft)(np.ones(4))
    text = str(info.value)
    assert "np.fft.fft" in text and "grad_api_programs.py:21" in text and "numbax.coverage()" in text


def test_grad_of_grad_of_an_array_valued_gradient_is_jaxs_error():
    with pytest.raises(TypeError, match="scalar-output"):
        numbax.grad(numbax.grad(p.energy))(np.ones((2, 3)), np.ones((3, 2)))


def test_coverage_lists_the_rules():
    table = numbax.coverage()
    for name in ("numpy.tanh", "operator.mul", "operator.matmul", "numpy.linalg.solve", "numpy.sum", "operator.lt"):
        assert table[name]["grad"] is True
    assert "numpy.fft.fft" not in table


def _float32_sum_of_squares(x, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(x * x)  # numbax writes np.float32(total): a cast the derivative passes through
    return total


def test_float_casts_carry_the_derivative():
    x = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    g = numbax.grad(_float32_sum_of_squares, backend="python")(x, 3)
    np.testing.assert_allclose(g, 6.0 * x, rtol=1e-6)
