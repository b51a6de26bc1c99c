"""The reverse-mode corpus on the GPU backend, in Numba's CUDA simulator: ``grad`` of an array program runs
through the GPU lowering (kernels, reductions, products, control flow in the host driver). Every case it
compiles agrees with the CPU backend (structure, shapes, dtypes, values: rtol 1e-12) and leaves its result on
the device. Every case compiles now: a case added to the corpus that the GPU lowering refuses (with a
``NumbaxDeviceError`` at the user's line, never run with a wrong result) fails ``test_every_case_compiles`` until
it is listed, and its refusal tested (``tests/test_gpu_refusals.py``).

``SUPPORTED``: what the GPU lowering's first slice covered of reverse mode (70 of the corpus's 219 cases);
``ADDED``: what the next slices cover (all 219; ``SAMPLE`` of it runs here).
"""
import os
import sys

import pytest

import numbax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from gpu_agreement import agree_on_device  # noqa: E402
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
# compiled since (issue 15: reverse mode's sums of broadcasts, cotangents of reductions over axes, indexed
# updates, copies, the tapes of loops on the device): the whole corpus was run against the CPU backend by hand
# (the report of issue 15); a sample of them runs here, as the simulator is slow
ADDED = frozenset({
    "arithmetic.broadcast_column", "arithmetic.broadcast_row", "arithmetic.broadcast_three_d",
    "arithmetic.scalar_from_array_element", "branches.early_return_elif_else", "branches.early_return_elif_first",
    "branches.early_return_elif_second", "calls.closure_model_pytree", "calls.helper_in_loop",
    "calls.helper_with_several_arguments", "calls.power_static", "calls.power_static_negative_argnum",
    "calls.zeros_of_static_shape", "indexing.column_of_matrix_product", "indexing.index_of_computed_array",
    "indexing.negative_slices", "indexing.rows_and_columns", "indexing.runtime_integer_index",
    "indexing.scalar_indices", "indexing.slices", "indexing.strided_two_d", "indexing.submatrix_product",
    "inplace.aug_assign_element", "inplace.copy_then_modify", "loops.array_carried_through_loop",
    "loops.break_on_threshold", "loops.continue_on_negative", "loops.enumerate_and_zip",
    "loops.enumerate_zip_with_start_and_range", "loops.euler_decay", "loops.fibonacci_like", "loops.horner",
    "loops.inner_gradient_descent", "loops.over_elements", "loops.over_rows", "loops.running_max_selects",
    "loops.running_product", "loops.runtime_start_stop", "loops.scalar_recurrence", "loops.stepped_range",
    "loops.sum_over_runtime_range", "loops.zero_trip_loop", "numpy_functions.clip_and_where",
    "pytrees.dict_params", "pytrees.list_of_arrays", "pytrees.mixed_pytree_and_array", "pytrees.mlp_loss",
    "pytrees.mlp_loss_params_and_x", "pytrees.mlp_range_len", "pytrees.mlp_relu_enumerate",
    "pytrees.namedtuple_dynamics", "pytrees.namedtuple_params", "reductions.layer_norm",
    "reductions.mean_of_row_norms", "reductions.means", "reductions.sum_keepdims_normalize",
    "while_loops.babylonian_inverse", "while_loops.counted_while", "while_loops.fixed_point_cos",
    "while_loops.halving_steps", "while_loops.kepler", "while_loops.newton_sqrt", "while_loops.tolerance_and_cap",
    "while_loops.tolerance_and_cap_capped", "while_loops.while_true_break",
})
# compiled since (issue 15: gathers, boolean masks and their scatters, stores into arguments, list tapes,
# transposes and new axes as views, solve/inv/det, var/std, the adjoints of max and min, more elementwise
# functions): the whole corpus was run against the CPU backend by hand again
ADDED |= frozenset({
    "indexing.index_with_argmax",
    "arithmetic.broadcast_outer_reshape", "arithmetic.negation_and_abs", "arithmetic.transpose_property",
    "branches.boolean_operators_in_condition", "branches.not_condition", "calls.helper_returning_tuple",
    "calls.loss_with_dict_aux", "indexing.boolean_mask_constant", "indexing.boolean_mask_runtime",
    "indexing.ellipsis_index", "indexing.gather_rows", "indexing.integer_array_index",
    "indexing.integer_array_pairs", "indexing.mixed_basic_and_fancy", "indexing.newaxis_outer",
    "indexing.none_index", "inplace.column_accumulate", "inplace.cumulative_product_inplace", "inplace.differences",
    "inplace.fill_from_reductions", "inplace.normalize_rows_inplace", "inplace.overwrite_in_loop",
    "inplace.relu_by_mask_assignment", "inplace.row_update_on_input_copy", "inplace.scatter_add",
    "inplace.setitem_in_loop", "inplace.slice_assignment", "inplace.thomas_solve", "linalg.dot_of_vectors",
    "linalg.gaussian_log_likelihood", "linalg.gram_trace", "linalg.log_abs_det", "linalg.matvec_energy",
    "linalg.normalize_vector", "linalg.norms", "linalg.quadratic_form", "linalg.reshape_then_matmul",
    "linalg.ridge_regression_loss", "linalg.slogdet_logabs", "linalg.solve_matrix", "linalg.solve_vector",
    "linalg.trace_of_inverse", "loops.huber_loop", "loops.loop_with_reduction_inside", "loops.rnn",
    "numpy_functions.abs_times_sign", "numpy_functions.angle_and_radius", "numpy_functions.exponentials",
    "numpy_functions.gaussian_cdf", "numpy_functions.log_softmax_entry", "numpy_functions.logistic_loss",
    "numpy_functions.sinc_and_fmax", "numpy_functions.smooth_max", "numpy_functions.softplus",
    "reductions.amax_amin_keepdims", "reductions.logsumexp_rows", "reductions.max_minus_min",
    "reductions.negative_axis_reductions", "reductions.reduction_of_broadcast", "reductions.sample_std",
    "reductions.softmax_cross_entropy", "reductions.sum_over_axis", "reductions.variance_and_std",
    "reductions.weighted_average", "while_loops.newton_sqrt_array"
})
# compiled since (issue 15: rounding functions, cbrt, reciprocal, products and their derivative, inner products,
# power exponents of arrays, slices among index arrays in np.add.at, tapes reserved before nested loops):
# benchmarks/gpu_corpus_status.py runs the whole corpus against the CPU backend
ADDED |= frozenset({
    "linalg.outer_and_inner", "numpy_functions.floor_and_round_are_flat", "numpy_functions.power_of_arrays",
    "numpy_functions.roots", "numpy_functions.square_and_reciprocal", "reductions.products",
    "indexing.mixed_basic_and_fancy", "loops.nested_loops", "inplace.matmul_loops", "loops.nested_runtime_bounds",
    "linalg.transpose_axes", "reductions.cumulative_sum", "numpy_functions.log_sum_exp_scipy",
    "inplace.heat_equation", "reductions.cumulative_product", "linalg.batched_matmul",
    "linalg.einsum_contractions", "linalg.tensordot_axes", "linalg.cholesky_log_det",
})
SAMPLE = frozenset({"loops.nested_loops", "arithmetic.broadcast_row", "reductions.means", "indexing.slices",
                    "loops.euler_decay",
                    "while_loops.newton_sqrt", "inplace.copy_then_modify", "pytrees.mlp_loss",
                    "indexing.integer_array_pairs", "inplace.overwrite_in_loop", "numpy_functions.log_softmax_entry",
                    "linalg.normalize_vector", "linalg.batched_matmul",
                    "linalg.einsum_contractions", "linalg.tensordot_axes", "linalg.cholesky_log_det"})


def _grad(case, backend):
    kwargs = {"argnums": case.argnums, "has_aux": case.has_aux, "backend": backend}
    if case.static_argnums:
        kwargs["static_argnums"] = case.static_argnums
    return numbax.grad(case.fn, **kwargs)


def test_supported_names_exist():
    assert SUPPORTED | ADDED <= {case.id for case in CASES} and SAMPLE <= ADDED


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUPPORTED | SAMPLE], ids=lambda c: c.id)
def test_grad_on_the_gpu_agrees_with_the_cpu_backend(case, gpu):
    expected = _grad(case, "cpu")(*case.args_factory())
    agree_on_device(_grad(case, "gpu")(*case.args_factory()), expected)


def test_every_case_compiles():
    assert {case.id for case in CASES} == SUPPORTED | ADDED
