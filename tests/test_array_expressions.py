"""``numbax.backends.numba_cpu.array_expressions``: Numba fuses generated code's array expressions of two
operations or more into one loop; a single operation calls its runtime helper (``numbax.runtime.elementwise``),
compiled once per machine; where the helpers are not used (``fastmath``, ``parallel``), a single operation of
the same bits either way is lowered as its own operator and the others keep the rewrite."""
import inspect
import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from numba.core import ir

from numbax.backends.numba_cpu import pipeline
from numbax.runtime import elementwise


def _programs(a, b, c, n, z):
    """Array statements of each kind Numba's rewrite matches: operators, ufunc calls, comparisons, powers,
    remainders, complex numbers, broadcasting, each alone and nested, operands in both orders."""
    single_sum = a + b
    single_scaled = 2.5 * a
    single_negated = -a
    single_ufunc = np.exp(b)
    single_compared = a > c
    single_quotient = n / n
    single_difference = b - a
    single_arctan2 = np.arctan2(b, a)
    single_absolute = np.abs(b)
    single_power = a ** n
    single_remainder = a % c
    single_floor_quotient = a // c
    single_complex_product = z * a
    nested = np.tanh(a * b + c) / (1.0 + a ** 2)
    nested_compared = (a - b) >= c * 0.5
    nested_ints = (n + n) * n - 3
    return (single_sum, single_scaled, single_negated, single_ufunc, single_compared, single_quotient,
            single_difference, single_arctan2, single_absolute, single_power, single_remainder, single_floor_quotient,
            single_complex_product, nested, nested_compared, nested_ints)


# the single operations that lower to the same bits on their own (the first nine of ``_programs``)
_UNFUSED = 9
_SINGLE = 13  # the single operations, each a helper's call
_ALL = 16


def _numbax(**options):
    """``_programs`` compiled as numbax compiles generated code."""
    return numba.njit(error_model="numpy", pipeline_class=pipeline.Compiler, **options)(_programs)


def _numba():
    """``_programs`` compiled as Numba compiles by default."""
    return numba.njit(error_model="numpy")(_programs)


_INPUTS = [(np.linspace(-2.0, 3.0, 12).reshape(3, 4), np.linspace(0.5, 1.7, 4), -1.0, np.arange(12).reshape(3, 4),
            np.complex128(1.5 - 2.0j)),
           (np.linspace(-1.0, 1.0, 6).reshape(6, 1), np.linspace(-3.0, 2.0, 30).reshape(6, 5), 0.25,
            np.arange(6).reshape(6, 1), np.complex128(-0.5j))]


def _assignments(dispatcher) -> list:
    """The values assigned in the typed IR of ``dispatcher``'s one compiled signature."""
    [overload] = dispatcher.overloads.values()
    return [instr.value for block in overload.type_annotation.blocks.values() for instr in block.body
            if isinstance(instr, ir.Assign)]


def _array_expressions(dispatcher) -> int:
    """The ``arrayexpr`` assignments in the typed IR of ``dispatcher``'s one compiled signature."""
    return sum(1 for value in _assignments(dispatcher) if getattr(value, "op", None) == "arrayexpr")


def _helpers(dispatcher) -> list:
    """The names of the elementwise helpers that ``dispatcher``'s one compiled signature calls."""
    return sorted(value.name for value in _assignments(dispatcher)
                  if isinstance(value, ir.Global) and value.value in elementwise.HELPERS.values())


@pytest.mark.parametrize("inputs", _INPUTS, ids=["row_broadcast", "column_broadcast"])
def test_results_are_numbas_bit_for_bit(inputs):
    for ours, numbas in zip(_numbax()(*inputs), _numba()(*inputs), strict=True):
        np.testing.assert_array_equal(ours, numbas, strict=True)
        assert np.iscomplexobj(ours) or np.array_equal(np.signbit(ours), np.signbit(numbas))


def test_a_remainders_zeros_keep_numpys_sign():
    """Numba's own ``np.remainder`` loop gives ``0.0`` for ``-2.0 % -1.0``; NumPy and the rewrite ``-0.0``."""
    a, _, c, _, _ = _INPUTS[0]
    remainder = _numbax()(*_INPUTS[0])[10]
    assert np.array_equal(np.signbit(remainder), np.signbit(a % c)) and np.signbit(remainder).any()


def test_single_operations_call_their_helper():
    ours, numbas = _numbax(), _numba()
    ours(*_INPUTS[0])
    numbas(*_INPUTS[0])
    assert _array_expressions(numbas) == _ALL
    assert _array_expressions(ours) == _ALL - _SINGLE
    assert _helpers(ours) == sorted(["operator_add", "operator_mul", "operator_neg", "ufunc_exp", "operator_gt",
                                     "operator_truediv", "operator_sub", "ufunc_arctan2", "ufunc_absolute",
                                     "operator_pow",
                                     "operator_mod", "operator_floordiv", "operator_mul"])


def test_every_helper_takes_its_operations_arguments():
    for operation, helper in elementwise.HELPERS.items():
        arity = operation.nin if isinstance(operation, np.ufunc) else 1 if operation in elementwise._UNARY else 2
        assert len(inspect.signature(helper).parameters) == arity, helper.__name__


def test_without_helpers_single_operations_of_the_same_bits_are_not_fused():
    """Under ``fastmath`` (the helpers are compiled without it) a single operation is lowered in the
    function."""
    ours = _numbax(fastmath=True)
    ours(*_INPUTS[0])
    assert _array_expressions(ours) == _ALL - _UNFUSED and _helpers(ours) == []


def _in_a_loop(a, b, k):
    outside = a * b
    squared = a ** 2
    for _ in range(k):
        outside = outside - b
    return outside, squared


def test_inside_a_loop_and_for_a_constant_power_the_operation_stays():
    """A call in a loop would cost its tens of nanoseconds each iteration; the rewrite folds a constant
    exponent into its loop."""
    ours = numba.njit(error_model="numpy", pipeline_class=pipeline.Compiler)(_in_a_loop)
    a, b = np.linspace(-1.0, 2.0, 6).reshape(2, 3), np.linspace(0.5, 1.0, 3)
    for got, want in zip(ours(a, b, 3), numba.njit(error_model="numpy")(_in_a_loop)(a, b, 3), strict=True):
        np.testing.assert_array_equal(got, want, strict=True)
    assert _helpers(ours) == ["operator_mul"] and _array_expressions(ours) == 1


_NEW_PROCESS = """
import numpy as np
import numbax

@numbax.jit
def f(a, b):
    return a * b, np.sqrt(a), -b

print([x.tolist() for x in f(np.arange(6.0).reshape(2, 3), np.array([0.5, -1.0, 2.0]))])
"""


def test_generated_code_loads_its_helpers_in_a_new_process(tmp_path):
    """The second process loads the generated code, which calls the helpers by symbol: it loads them first."""
    program = tmp_path / "program.py"
    program.write_text(_NEW_PROCESS)
    env = {**os.environ, "NUMBAX_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=600)
            for _ in range(2)]
    assert [run.returncode for run in runs] == [0, 0], runs[-1].stderr
    a, b = np.arange(6.0).reshape(2, 3), np.array([0.5, -1.0, 2.0])
    assert runs[0].stdout == runs[1].stdout == f"{[(a * b).tolist(), np.sqrt(a).tolist(), (-b).tolist()]}\n"


def test_numbas_other_rewrites_after_typing_still_run():
    from numba.core import rewrites
    from numba.np.ufunc.array_exprs import RewriteArrayExprs

    from numbax.backends.numba_cpu import array_expressions

    ours = array_expressions._after_typing().rewrites["after-inference"]
    numbas = rewrites.rewrite_registry.rewrites["after-inference"]
    assert [array_expressions.FusedArrayExprs if r is RewriteArrayExprs else r for r in numbas] == ours
    assert RewriteArrayExprs in numbas and RewriteArrayExprs not in ours


def test_generated_code_compiles_with_the_fusing_rewrites():
    compiled = _numbax()
    compiled(*_INPUTS[0])
    [overload] = compiled.overloads.values()
    [passes] = overload.metadata["pipeline_times"].values()
    names = [name.split("_", 1)[1] for name in passes]
    assert "numbax_fusing_rewrites" in names and "nopython_rewrites" not in names
