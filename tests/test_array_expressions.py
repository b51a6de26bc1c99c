"""``numbax.backends.numba_cpu.array_expressions``: Numba fuses generated code's array expressions of two
operations or more into one loop, lowers a single operation of the same bits either way as its own
operator, and keeps the rewrite for the single operations whose own loop computes other bits."""
import numba
import numpy as np
import pytest

from numbax.backends.numba_cpu import pipeline


def _programs(a, b, c, n, z):
    """Array statements of each kind Numba's rewrite matches: operators, ufunc calls, comparisons, powers,
    remainders, complex numbers, broadcasting, each alone and nested."""
    single_sum = a + b
    single_scaled = 2.5 * a
    single_negated = -a
    single_ufunc = np.exp(b)
    single_compared = a > c
    single_quotient = n / n
    single_power = a ** n
    single_remainder = a % c
    single_floor_quotient = a // c
    single_complex_product = z * a
    nested = np.tanh(a * b + c) / (1.0 + a ** 2)
    nested_compared = (a - b) >= c * 0.5
    nested_ints = (n + n) * n - 3
    return (single_sum, single_scaled, single_negated, single_ufunc, single_compared, single_quotient,
            single_power, single_remainder, single_floor_quotient, single_complex_product, nested,
            nested_compared, nested_ints)


# the single operations that lower to the same bits on their own (the first six of ``_programs``)
_UNFUSED = 6


def _numbax():
    """``_programs`` compiled as numbax compiles generated code."""
    return numba.njit(error_model="numpy", pipeline_class=pipeline.Compiler)(_programs)


def _numba():
    """``_programs`` compiled as Numba compiles by default."""
    return numba.njit(error_model="numpy")(_programs)


_INPUTS = [(np.linspace(-2.0, 3.0, 12).reshape(3, 4), np.linspace(0.5, 1.7, 4), -1.0, np.arange(12).reshape(3, 4),
            np.complex128(1.5 - 2.0j)),
           (np.linspace(-1.0, 1.0, 6).reshape(6, 1), np.linspace(-3.0, 2.0, 30).reshape(6, 5), 0.25,
            np.arange(6).reshape(6, 1), np.complex128(-0.5j))]


def _array_expressions(dispatcher) -> int:
    """The ``arrayexpr`` assignments in the typed IR of ``dispatcher``'s one compiled signature."""
    [overload] = dispatcher.overloads.values()
    annotation = overload.type_annotation
    return sum(1 for block in annotation.blocks.values() for instr in block.body
               if getattr(getattr(instr, "value", None), "op", None) == "arrayexpr")


@pytest.mark.parametrize("inputs", _INPUTS, ids=["row_broadcast", "column_broadcast"])
def test_results_are_numbas_bit_for_bit(inputs):
    for ours, numbas in zip(_numbax()(*inputs), _numba()(*inputs), strict=True):
        np.testing.assert_array_equal(ours, numbas, strict=True)
        assert np.iscomplexobj(ours) or np.array_equal(np.signbit(ours), np.signbit(numbas))


def test_a_remainders_zeros_keep_numpys_sign():
    """Numba's own ``np.remainder`` loop gives ``0.0`` for ``-2.0 % -1.0``; NumPy and the rewrite ``-0.0``."""
    a, _, c, _, _ = _INPUTS[0]
    remainder = _numbax()(*_INPUTS[0])[7]
    assert np.array_equal(np.signbit(remainder), np.signbit(a % c)) and np.signbit(remainder).any()


def test_single_operations_of_the_same_bits_are_not_fused():
    ours, numbas = _numbax(), _numba()
    ours(*_INPUTS[0])
    numbas(*_INPUTS[0])
    assert _array_expressions(numbas) == 13
    assert _array_expressions(ours) == 13 - _UNFUSED


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
