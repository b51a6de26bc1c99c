"""The jit corpus on the GPU backend, in Numba's CUDA simulator: every case compiles and agrees with the CPU
backend (structure, dtypes, values: rtol 1e-12, 1e-5 for float32).

``SUPPORTED`` is what the first slice of the backend compiles, ``ADDED`` what the next compile (``SAMPLE`` of it
runs here; ``benchmarks/gpu_corpus_status.py`` runs them all).
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

CASES = all_cases()
SUPPORTED = frozenset({
    "basics.float32_tanh", "basics.clipped_sqrt", "basics.float32_const", "basics.float32_python_scalar",
    "basics.const_tuple_scales", "basics.astype_and_float32_of_scalar", "basics.float32_module_constant",
    "basics.float32_ufunc_with_float", "basics.float32_times_weak_argument", "basics.int32_plus_literal",
    "basics.tanh_layer", "basics.softplus", "basics.leaky_relu", "basics.sin_pi", "basics.math_sqrt_scalar",
    "basics.power_and_abs", "basics.row_sums", "basics.col_means", "basics.standardize", "basics.softmax",
    "basics.matvec_gram", "basics.zeros_from_shape", "basics.gram_transpose", "basics.ndim_dispatch_1d",
    "basics.ndim_dispatch_2d", "basics.len_mean", "basics.int_arithmetic", "basics.int_sum",
    "basics.bool_mask_count", "basics.zero_d_array", "basics.zero_d_reduce", "basics.const_array_affine",
    "basics.builtin_min_max_abs", "basics.conditional_expression_pos", "basics.conditional_expression_neg",
    "basics.keepdims_normalize", "basics.method_axis", "basics.math_module", "basics.int_true_division",
    "basics.vector_dot_matmul", "basics.chained_comparison", "basics.abs_of_array", "basics.annotated",
    "basics.static_assert", "basics.rebinding_after_use", "basics.loop_variable_after_loop",
    "basics.int_array_times_float", "basics.shape_comparison", "basics.gram_transpose_noncontiguous",
    "basics.row_sums_fortran", "basics.softmax_rows", "basics.static_axis", "basics.static_axis_tuple",
    "control_flow.sign_branch_if", "control_flow.sign_branch_elif", "control_flow.sign_branch_else",
    "control_flow.early_return_first", "control_flow.early_return_fallthrough", "control_flow.newton_sqrt",
    "control_flow.bisection_cube_root", "control_flow.while_and_condition", "control_flow.euler_decay",
    "control_flow.return_inside_while", "control_flow.defined_in_branch", "control_flow.runtime_bool",
    "control_flow.array_ternary", "control_flow.int_elif_chain", "control_flow.logistic_regression_gd",
    "control_flow.clip_scalar_negative", "control_flow.clip_scalar_positive",
    "control_flow.dict_return_in_branches_if", "control_flow.dict_return_in_branches_else",
    "control_flow.while_else_break", "control_flow.while_else_exhausted", "control_flow.for_else_nested_primes",
    "pytrees.mlp_forward", "pytrees.mlp_range_len", "pytrees.mlp_enumerate", "pytrees.dict_affine",
    "pytrees.dict_out", "pytrees.tuple_out", "pytrees.namedtuple_step", "pytrees.namedtuple_out",
    "pytrees.nested_dict_of_lists", "pytrees.len_of_list", "pytrees.none_leaf", "pytrees.list_out",
    "pytrees.nested_tuple_out", "pytrees.constant_indexing", "pytrees.sgd_comprehension", "pytrees.sgd_loop",
    "pytrees.dict_items", "pytrees.dict_update_out", "pytrees.tuple_of_arrays_in", "pytrees.passthrough",
    "pytrees.registered_dataclass", "pytrees.constant_output", "pytrees.shape_output",
    "pytrees.empty_list_params", "pytrees.reversed_and_sliced", "pytrees.loop_over_string_keys",
    "pytrees.keys_values", "pytrees.local_dict_built", "pytrees.builtin_sum_of_list", "pytrees.isinstance_dict",
    "pytrees.isinstance_tuple", "pytrees.optional_bias_none", "pytrees.optional_bias_array",
    "pytrees.scalar_leaves", "pytrees.zip_params_range", "pytrees.break_in_unrolled_loop",
    "pytrees.continue_in_unrolled_loop", "pytrees.return_in_unrolled_loop", "pytrees.return_params_unchanged",
    "pytrees.namedtuples_in_list", "pytrees.break_keeps_loop_target", "pytrees.unrolled_for_else_done",
    "pytrees.unrolled_for_else_broke", "pytrees.break_under_static_condition", "pytrees.sum_with_start",
    "calls.layer", "calls.keyword_defaults", "calls.helper_early_return", "calls.nested_def",
    "calls.nested_def_closure", "calls.lambda_activation", "calls.dense_relu", "calls.dense_tanh",
    "calls.dense_linear", "calls.helper_chain", "calls.helper_taking_pytree", "calls.helper_scalar_and_array",
    "calls.static_callable", "calls.dynamic_scalars", "calls.static_flag_false", "calls.imported_helper",
    "calls.helper_with_array_kwargs", "calls.helper_name_collision", "calls.helper_default_constant",
    "calls.higher_order_helper", "calls.closure_assigned_after_def", "calls.lambda_closure_local",
    "calls.module_attribute_helper", "calls.calls_jitted_helper", "calls.keyword_only",
    "calls.negative_static_argnum", "calls.static_range_unrolled", "calls.default_dynamic_tolerance",
    "calls.helper_in_conditional_expression", "calls.helper_with_nested_def", "calls.lambda_default",
    "calls.partial_helper", "calls.helper_rebinds_param", "calls.helper_return_in_while",
    "calls.partial_keywords_local",
    # basic indexing: elements read on the host, slices and rows as views, stores (issue 15)
    "basics.ones_rows", "basics.empty_then_fill", "basics.reversed_and_strided",
    "basics.float32_compared_with_python_floats", "basics.negative_index_and_size",
    "basics.float32_scalar_times_float", "control_flow.first_above", "control_flow.sum_positive",
    "control_flow.find_negative_found", "control_flow.find_negative_missing", "control_flow.stepped_range",
    "control_flow.differences", "control_flow.huber_loop", "control_flow.forward_substitution",
    "control_flow.nested_break_continue", "control_flow.while_true_break", "control_flow.for_else_found",
    "control_flow.for_else_missing", "control_flow.return_in_nested_loops", "control_flow.back_substitution",
    "control_flow.guarded_index", "control_flow.continue_after_constant", "control_flow.break_after_constant_hit",
    "control_flow.break_after_constant_miss", "pytrees.unrolled_break_with_inner_loop",
    "calls.helper_return_in_loop", "calls.helper_in_loop", "calls.helper_return_in_nested_loops",
    "calls.helper_return_in_loop_called_in_loop", "calls.partial_of_numpy_and_constants",
})
# compiled since (issue 15: tuple unpacking, indexed updates, reshapes, np.arange and np.eye, np.zeros_like and
# the like, np.linalg.norm): the whole corpus was run against the CPU backend by hand (the report of issue 15);
# a sample of them runs here, as the simulator is slow
ADDED = frozenset({
    "basics.arange_weights", "basics.column_update", "basics.creation_from_runtime_n", "basics.dtype_keywords",
    "basics.identity_shift", "basics.reshape_flatten", "basics.shape_unpack", "calls.helper_early_return_twice",
    "calls.helper_in_while_condition", "calls.nested_def_calls_helper", "calls.power",
    "control_flow.array_swap_loop", "control_flow.aug_assign_subscripts", "control_flow.cumulative_product",
    "control_flow.fibonacci", "control_flow.gcd", "control_flow.matmul_loops", "control_flow.newton_sqrt_array",
    "control_flow.running_max", "control_flow.while_in_for", "pytrees.horner", "pytrees.zip_lists",
    "basics.zeros_like_accumulate", "basics.reshape_varargs", "calls.zeros_of_static_shape",
    "basics.imported_names", "basics.norms", "basics.row_norms", "basics.normalize_in_loop",
    "control_flow.power_iteration", "calls.helper_early_return_array", "calls.static_flag_default",
})
# compiled since (issue 15: gathers, boolean masks and their scatters, stores into arguments, list tapes,
# transposes and new axes as views, solve/inv/det, var/std, the adjoints of max and min, more elementwise
# functions, cumsum and cumprod): the whole corpus was run against the CPU backend by hand again
ADDED |= frozenset({
    "basics.cumulative_axes", "basics.float32_axis_reductions", "basics.running_total",
    "basics.running_total_strided_view",
    "basics.alias_aug_assign", "basics.array_from_scalars", "basics.bool_ops", "basics.boolean_mask_assign",
    "basics.dot_vectors", "basics.ellipsis_and_newaxis", "basics.fancy_index", "basics.int_slice_fill",
    "basics.linalg_solve", "basics.logsumexp_rows", "basics.methods_chain", "basics.module_constants_misc",
    "basics.newaxis_broadcast", "basics.outer_product", "basics.param_in_place", "basics.row_and_column_assign",
    "basics.scalar_read_then_write", "basics.slice_zero", "basics.standardize_columns", "calls.helper_mutates",
    "calls.helper_returning_tuple", "control_flow.bubble_sort", "control_flow.clamp_in_place",
    "control_flow.for_else_no_break", "pytrees.no_return_mutates"
})
# compiled since (issue 15: loops over arrays' rows, enumerate and zip of them; x.item(); np.prod, any and all;
# np.ptp; norms of other orders; np.diag; tuple assignments into arrays; concatenate and stack; argmax over
# axes): benchmarks/gpu_corpus_status.py runs the whole corpus against the CPU backend
ADDED |= frozenset({
    "basics.array_methods", "basics.extremes_3d", "basics.int_axis_reductions", "basics.int_bool_of_zero_d",
    "basics.int_float_conversions", "basics.zero_d_to_scalar", "control_flow.enumerate_array",
    "control_flow.enumerate_zip_runtime", "control_flow.iterate_rows", "control_flow.zip_arrays",
    "basics.swap_elements", "control_flow.jacobi", "basics.norms_over_axes", "basics.stack_concat",
    "basics.stack_list", "basics.argmax_argmin_axes", "basics.argmax_sort",
    "basics.batched_matrix_norms", "basics.complex_magnitude", "control_flow.int_then_float_accumulator",
})
SAMPLE = frozenset({"control_flow.enumerate_zip_runtime", "basics.swap_elements", "basics.reshape_flatten",
                    "basics.identity_shift", "control_flow.array_swap_loop",
                    "control_flow.aug_assign_subscripts", "control_flow.matmul_loops", "basics.row_norms",
                    "basics.fancy_index", "basics.slice_zero", "basics.argmax_sort",
                    "basics.batched_matrix_norms", "basics.complex_magnitude",
                    "control_flow.int_then_float_accumulator"})


def _jit(case, backend):
    return numbax.jit(case.fn, static_argnums=case.static_argnums, static_argnames=case.static_argnames,
                      backend=backend)


def _call(fn, case):
    return fn(*case.args_factory(), **copy.deepcopy(case.kwargs or {}))


def _assert_leaf(expected, got):
    expected, got = np.asarray(expected), np.asarray(got)
    assert got.shape == expected.shape
    # the CPU backend gives a float32 number as a Python float (Numba boxes it so): compare the kind there
    assert got.dtype == expected.dtype if expected.ndim else got.dtype.kind == expected.dtype.kind, \
        (got.dtype, expected.dtype)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5 if np.float32 in (got.dtype, expected.dtype)
                                   else 1e-12)


def test_supported_names_exist():
    assert SUPPORTED | ADDED <= {case.id for case in CASES} and SAMPLE <= ADDED


@pytest.mark.parametrize("case", [c for c in CASES if c.id in SUPPORTED | SAMPLE], ids=lambda c: c.id)
def test_gpu_backend_agrees_with_the_cpu_backend(case, gpu):
    expected = _call(_jit(case, "cpu"), case)
    out = _call(_jit(case, "gpu"), case)
    for leaf in tree_util.tree_leaves(out):
        assert not isinstance(leaf, np.ndarray), f"a result on the host: {leaf!r}"
    got = numbax.device_get(out)
    assert tree_util.tree_structure(got) == tree_util.tree_structure(expected)
    for e, g in zip(tree_util.tree_leaves(expected), tree_util.tree_leaves(got)):
        _assert_leaf(e, g)


def test_every_case_compiles():
    """Every case runs on the GPU backend (the last, an accumulator ``s = 0`` that a loop makes a float, since the
    loop is lowered again in the joined dtype); a case added that it refuses fails here until it is listed."""
    assert {case.id for case in CASES} == SUPPORTED | ADDED


def nested_accumulator(x):
    s = 0
    for i in range(x.shape[0]):
        for j in range(2):
            s = s + x[i] * j
    return s


def while_accumulator(x):
    s = 0
    while s < 3:
        s = s + np.sum(x) * 0.25
    return s


def no_trips(x):
    s = 0
    for i in range(x.shape[0] - x.shape[0]):
        s = s + x[i]
    return s


def complex_accumulator(x):
    s = 0
    for i in range(2):
        s = s + 1j
    return s


@pytest.mark.parametrize("fn", [nested_accumulator, while_accumulator, no_trips], ids=lambda f: f.__name__)
def test_a_number_a_loop_widens_from_integers_to_floats_is_a_float_throughout(fn, gpu):
    """``s = 0`` before ``s = s + x[i]``: the loop is lowered again with ``s`` a float from its start, as the CPU
    backend's Numba unifies it (a float after no iteration too); a change to complex numbers is refused."""
    x = np.arange(5.0)
    expected = numbax.jit(fn)(x)
    got = numbax.device_get(numbax.jit(fn, backend="gpu")(x))
    assert np.asarray(got).dtype == np.asarray(expected).dtype == np.float64
    np.testing.assert_array_equal(got, expected)


def test_a_number_a_loop_makes_complex_is_refused(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="`s`, which changes its dtype"):
        numbax.jit(complex_accumulator, backend="gpu")(np.arange(5.0))
