"""The differential tester's oracles: central differences decide only what rounding cannot move."""
import numpy as np

from tests.fuzz import classify, grammar, loader, references


def _tiny_powers(x, s):
    for _ in range(3):
        x = x * x.mean(keepdims=True)
    return np.sum(2.0 / x) + 0.0 * s


def test_differences_leave_undecided_what_the_values_rounding_could_move():
    # sum(2 / x) is 3e4 here: its differences along s, which it does not depend on, are off by about 1e-6;
    # along x, whose derivative is -8 * 3e4 / 0.3, the same rounding is small enough
    (dx, decided_x), (ds, decided_s) = references.central_differences(_tiny_powers, (np.array([[.3]]), -1.75),
                                                                      (0, 1))
    assert not decided_s and abs(ds) > 1e-7
    assert decided_x and abs(dx[0, 0] / (-16 / .3 ** 9) - 1) < 1e-6  # 2 x^-8 of the one element


def test_differences_decide_a_smooth_function_of_moderate_values():
    (dx, decided), = references.central_differences(lambda x: np.sum(np.sin(x) * x), (np.array([.3, -.7]),), (0,))
    assert decided.all()
    np.testing.assert_allclose(dx, np.sin([.3, -.7]) + np.array([.3, -.7]) * np.cos([.3, -.7]), rtol=1e-8)


def _rank_by_data(x, y):
    if np.sum(x) < 0.5:
        x = x + y
    return x


def test_a_batch_whose_examples_differ_in_shape_has_no_stacked_reference():
    batch = (np.array([[-2.0, 0.0], [1.0, 2.0]]), np.zeros((2, 1, 2)))
    reference = references.numpy_batch(_rank_by_data, batch, (0, 0))
    assert reference.value is None and "(1, 2), (2,)" in str(reference.error)



def _over_a_floor_division(x, y):
    v1 = np.prod(y, keepdims=True) / (x // (-1.5))
    return np.sum(v1 + v1)


def test_jax_decides_no_gradient_where_its_value_is_not_numpys():
    # NumPy: 0.0 // -1.5 is -0.0 and -0.5 // -1.5 is 0.0, so the sum meets inf and -inf (nan); JAX's floor
    # division of a traced value keeps other signs of zero, so its value is infinite: another function there
    x = np.array([[-1.5, -1.75, 1.5, 0.5], [-0.5, 0.0, -1.5, 0.5], [2.0, -2.0, -1.5, 0.5]], dtype=np.float32)
    y = np.array([-1.75, 2.0, -0.5, 1.25])
    value = _over_a_floor_division(x, y)
    assert np.isnan(value)
    assert references.jax_gradient(_over_a_floor_division, (x, y), (0, 1), value).value is None
    smooth = np.array([[1.5, 3.0, -2.0]], dtype=np.float32)
    reference = references.jax_gradient(_over_a_floor_division, (smooth, y), (0, 1),
                                        _over_a_floor_division(smooth, y))
    np.testing.assert_array_equal(reference.value[0], np.zeros((1, 3)))
    np.testing.assert_allclose(reference.value[1], 2 * np.sum(1 / (smooth // -1.5)) * np.prod(y) / y, rtol=1e-12)


POLE = '''
def prog(x, y, s):
    return (x.sum(keepdims=True) + s) / x


def prog_sum(x, y, s):
    return np.sum(prog(x, y, s))
'''


def test_no_gradient_is_a_reference_where_the_value_is_infinite():
    # 5 / 0.0 in the first element: JAX's gradient there is -inf or nan by the order of its products, and
    # neither is a derivative (JAX and NumPy agree on the value, so JAX alone would be asked)
    args = (np.array([0.0, 1.0, 2.0, 3.0]), np.zeros(2), -1.0)
    program = grammar.Program(POLE, args, args, (0, 0, 0), frozenset(), True)
    module = loader.load(POLE)
    assert np.isinf(module.prog_sum(*args))
    assert references.jax_gradient(module.prog_sum, args, (0, 2), module.prog_sum(*args)).value is not None
    reference, differences = classify.grad_reference(program, module, (0, 2))
    assert reference.value is None and reference.error is None
    assert not any(decided.any() for _, decided in differences)


TIE = '''
def prog(x, y, s):
    return 0.5 + np.minimum(np.abs(x), x ** 2)


def prog_sum(x, y, s):
    return np.sum(prog(x, y, s))
'''


def test_jaxs_convention_at_a_tie_is_right_where_differences_see_a_smooth_function():
    # np.minimum(np.abs(x), x ** 2) is x ** 2 around 0 (slope 0, which the differences decide), and JAX gives
    # each operand of the tie half (0.5 from abs): numbax follows JAX (found on cpu, seed 1004)
    args = (np.array([0.0, -2.0]), np.zeros(2), -1.0)
    program = grammar.Program(TIE, args, args, (0, 0, 0), frozenset(), True)
    module = loader.load(TIE)
    outcome = classify.check_grad(program, module, "python", module.__file__)
    assert outcome.kind == classify.RIGHT, outcome
    reference, differences = classify.grad_reference(program, module, (0,))
    (dx, decided), = differences
    assert decided[0] and abs(dx[0]) < 1e-8


SORT_TIE = '''
def prog(x, y, s):
    x.sort()
    v1 = np.square((x) ** 3)
    v2 = (np.array([v1, v1])).copy()
    v2.sort()
    v3 = (v2[:, 1:3]).copy()
    v3.sort()
    return v3.prod(keepdims=True)


def prog_sum(x, y, s):
    return np.sum(prog(x, y, s))
'''


def test_an_in_place_program_at_a_tie_is_checked_against_jax_on_its_functional_twin():
    # x holds 0.5 twice: sort's derivative there is a convention (the differences split it, JAX gives each
    # place of the sorted array its own element, and so does numbax); JAX runs the twin (found, seed 0)
    args = (np.array([-2.0, -0.75, 0.5, 0.5]), np.array(-2.0), -2.0)
    twin = SORT_TIE.replace("x.sort()", "x = np.sort(x)").replace("v2.sort()", "v2 = np.sort(v2)").replace(
        "v3.sort()", "v3 = np.sort(v3)")
    program = grammar.Program(SORT_TIE, args, args, (0, 0, 0), frozenset(), False, twin)
    module = loader.load(SORT_TIE)
    outcome = classify.check_grad(program, module, "python", module.__file__)
    assert outcome.kind == classify.RIGHT, outcome
    without_twin = grammar.Program(SORT_TIE, args, args, (0, 0, 0), frozenset(), False)
    assert classify.check_grad(without_twin, module, "python", module.__file__).kind == classify.WRONG


def test_the_functional_twin_computes_the_programs_function():
    # every generated in-place program that has a twin: the twin's value under JAX is the program's in NumPy
    import copy

    from hypothesis import HealthCheck, given, settings

    from grad_corpus import oracles

    checked = []

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(grammar.programs())
    def twin_agrees(program):
        if program.functional or program.jax_source is None or "raises" in program.tags:
            return
        module, twin = loader.load(program.source), loader.load(program.jax_source)
        try:
            got = references.numpy_call(module.prog, program.args)
            want = np.asarray(oracles.to_jax(twin.prog)(*copy.deepcopy(program.args)))
        finally:
            loader.unload(module)
            loader.unload(twin)
        checked.append(program)
        assert got.error is None
        np.testing.assert_allclose(want, np.asarray(got.value), rtol=1e-5, atol=1e-6, equal_nan=True)

    twin_agrees()
    assert len(checked) > 30
