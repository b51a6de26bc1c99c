"""The reverse-mode corpus on the GPU backend, in Numba's CUDA simulator: ``grad`` of an array program runs
through the GPU lowering (kernels, reductions, products, control flow in the host driver). Every case it
compiles agrees with the CPU backend (structure, shapes, dtypes, values: rtol 1e-12) and leaves its result on
the device; every other case is refused with a ``NumbaxDeviceError`` at the user's line, never run with a wrong
result.

``SUPPORTED``: what the GPU lowering covers of reverse mode today (70 of the corpus's 219 cases); a case that
starts to compile moves there (the refusal test fails until it does).
"""
import inspect
import os
import sys

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grad_corpus import all_cases  # noqa: E402

CASES = all_cases()
SUPPORTED = frozenset({
    "arithmetic.augmented_assignment", "arithmetic.center_and_scale", "arithmetic.constant_multiplicative_chain",
    "arithmetic.difference_of_sums", "arithmetic.division_chain", "arithmetic.mixed_int_float",
    "arithmetic.polynomial", "arithmetic.python_scalars", "arithmetic.python_scalars_argnum1",
    "arithmetic.rational", "arithmetic.rebind_name", "arithmetic.reuse_intermediate",
    "arithmetic.scalar_times_array", "arithmetic.unused_argument", "branches.branch_on_int_argument",
    "branches.branch_on_int_argument_else", "branches.branch_only_in_one_arm_uses_input",
    "branches.early_return_fallthrough", "branches.early_return_taken", "branches.elif_chain_elif",
    "branches.elif_chain_else", "branches.elif_chain_if", "branches.if_else_on_sum_false",
    "branches.if_else_on_sum_true", "branches.nested_if", "branches.nested_if_outer_else",
    "branches.scalar_piecewise_high", "branches.scalar_piecewise_low", "branches.scalar_piecewise_mid",
    "calls.chain_of_helpers", "calls.closure_over_array", "calls.closure_over_constants",
    "calls.closure_over_user_functions", "calls.dense_static_activation", "calls.dense_static_relu",
    "calls.helper_call", "calls.helper_with_early_return_clipped", "calls.helper_with_early_return_kept",
    "calls.higher_order_helper", "calls.keyword_arguments", "calls.lambda_helper", "calls.loss_with_aux",
    "calls.nested_def", "calls.nested_def_closing_over_argument", "calls.static_callable", "calls.static_flag",
    "calls.static_flag_false", "linalg.matmul_chain", "numpy_functions.elementwise_max_min",
    "numpy_functions.gelu_tanh", "numpy_functions.hyperbolic", "numpy_functions.inverse_hyperbolic",
    "numpy_functions.inverse_trig", "numpy_functions.logarithms", "numpy_functions.tanh_and_sigmoid",
    "numpy_functions.trig_mix", "pytrees.dict_items_loop", "pytrees.nested_dict_of_lists", "pytrees.nested_tuples",
    "pytrees.none_leaf", "pytrees.scalar_leaf_in_dict", "pytrees.tuple_of_arrays", "pytrees.zip_two_lists",
    "while_loops.damped_gradient_descent", "while_loops.grow_until_large",
    # basic indexing (issue 15): their run-time index checks read device arrays' shapes
    "branches.conditional_expression", "branches.branches_assign_different_names", "branches.branches_assign_other",
    # the exponent of a power's derivative computed on the host (issue 15)
    "arithmetic.integer_powers", "arithmetic.float_power",
})


def _grad(case, backend):
    kwargs = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
    if case.static_argnums:
        kwargs["static_argnums"] = case.static_argnums
    return numbax.grad(case.fn, **kwargs)


def test_supported_names_exist():
    assert SUPPORTED <= {case.id for case in CASES}


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUPPORTED], ids=lambda c: c.id)
def test_grad_on_the_gpu_agrees_with_the_cpu_backend(case, gpu):
    expected = _grad(case, "cpu")(*case.args_factory())
    out = _grad(case, "gpu")(*case.args_factory())
    for leaf in tree_util.tree_leaves(out):
        assert not isinstance(leaf, np.ndarray) or leaf.ndim == 0, f"an array on the host: {leaf!r}"
    got = numbax.device_get(out)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        e, g = np.asarray(e), np.asarray(g)
        assert g.shape == e.shape and g.dtype.kind == e.dtype.kind, (g.shape, g.dtype, e.shape, e.dtype)
        np.testing.assert_allclose(g, e, rtol=1e-5 if np.float32 in (g.dtype, e.dtype) else 1e-12, atol=1e-300)


@pytest.mark.parametrize("case", [c for c in CASES if c.id not in SUPPORTED], ids=lambda c: c.id)
def test_the_rest_of_the_corpus_is_refused_at_the_users_line(case, gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        _grad(case, "gpu")(*case.args_factory())
    assert info.value.origin is not None and info.value.origin.filename == inspect.getsourcefile(case.fn)
    assert "CPU backend" in str(info.value)
