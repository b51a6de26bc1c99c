"""``numbax.backends.numba_cpu.array_expressions``: Numba fuses generated code's array expressions of two
operations or more into one loop, and lowers a single operation as its own operator, with the same bits as
Numba's rewrite of every expression (or NumPy's, where that rewrite's differ)."""
import numba
import numpy as np
import pytest

from numbax.backends.numba_cpu import pipeline


def _programs(a, b, c, n):
    """Array statements of each kind Numba's rewrite matches: operators, ufunc calls, comparisons, powers,
    broadcasting, each alone and nested."""
    single_sum = a + b
    single_scaled = 2.5 * a
    single_negated = -a
    single_ufunc = np.exp(b)
    single_compared = a > c
    single_power = a ** n
    nested = np.tanh(a * b + c) / (1.0 + a ** 2)
    nested_compared = (a - b) >= c * 0.5
    nested_ints = (n + n) * n - 3
    return (single_sum, single_scaled, single_negated, single_ufunc, single_compared, single_power, nested,
            nested_compared, nested_ints)


def _numbax():
    """``_programs`` compiled as numbax compiles generated code."""
    return numba.njit(error_model="numpy", pipeline_class=pipeline.Compiler)(_programs)


def _numba():
    """``_programs`` compiled as Numba compiles by default."""
    return numba.njit(error_model="numpy")(_programs)


# the position of ``single_power`` among the results
_POWER = 5
_INPUTS = [(np.linspace(-2.0, 3.0, 12).reshape(3, 4), np.linspace(0.5, 1.7, 4), 0.25, np.arange(12).reshape(3, 4)),
           (np.linspace(-1.0, 1.0, 6).reshape(6, 1), np.linspace(-3.0, 2.0, 30).reshape(6, 5), -1.5,
            np.arange(6).reshape(6, 1))]


def _array_expressions(dispatcher) -> int:
    """The ``arrayexpr`` assignments in the typed IR of ``dispatcher``'s one compiled signature."""
    [overload] = dispatcher.overloads.values()
    annotation = overload.type_annotation
    return sum(1 for block in annotation.blocks.values() for instr in block.body
               if getattr(getattr(instr, "value", None), "op", None) == "arrayexpr")


@pytest.mark.parametrize("inputs", _INPUTS, ids=["row_broadcast", "column_broadcast"])
def test_results_are_numbas_bit_for_bit(inputs):
    ours, numbas = _numbax()(*inputs), _numba()(*inputs)
    for position, (our, numba_result) in enumerate(zip(ours, numbas, strict=True)):
        expected = _programs(*inputs)[_POWER] if position == _POWER else numba_result
        np.testing.assert_array_equal(our, expected, strict=True)


def test_a_single_power_of_integers_is_numpys():
    """NumPy raises to an integer array's powers with ``pow``; Numba's rewrite multiplies by squaring."""
    a, _, _, n = _INPUTS[0]
    np.testing.assert_array_equal(_numbax()(*_INPUTS[0])[_POWER], a ** n, strict=True)


def test_only_expressions_of_two_operations_or_more_are_fused():
    ours, numbas = _numbax(), _numba()
    ours(*_INPUTS[0])
    numbas(*_INPUTS[0])
    assert _array_expressions(ours) == 3
    assert _array_expressions(numbas) == 9


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
