"""The differential tester's oracles: central differences decide only what rounding cannot move."""
import numpy as np

from tests.fuzz import references


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
