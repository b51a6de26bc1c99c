"""Each run-time check, compiled and run as Python, raises NumPy's own message: compiled code raises the numbers,
and the message is written in Python when the exception is built (``numbax.error_text``)."""
import pickle

import numba
import numpy as np
import pytest

from numbax.errors import NumbaxIndexError, NumbaxRunTimeError, NumbaxShapeError
from numbax.runtime import checks
from numbax.runtime.contractions import ContractionShapeError, check_contraction

WHERE = f"{__file__}:1:0"


def _numpy_message(exc_type, fn):
    """What NumPy raises running ``fn``."""
    with pytest.raises(exc_type) as info:
        fn()
    return str(info.value)


def _compiled(check):
    @numba.njit
    def call(*args):
        return check(*args)
    return call


def _store(x, y):
    x[0:2] = y


def _in_place(x, y):
    x += y


CASES = [
    (checks.check_index, (np.ones(4), 10, 0), IndexError, lambda: np.ones(4)[10]),
    (checks.check_index, (np.ones((2, 3)), -4, 1), IndexError, lambda: np.ones((2, 3))[:, -4]),
    (checks.check_span, (np.ones(4), 0, 6, 1, 0, 0), IndexError, lambda: np.ones(4)[4]),
    (checks.check_span, (np.ones(4), 0, 2, 1, -5, 0), IndexError, lambda: np.ones(4)[-5]),
    (checks.check_broadcast, (np.ones(4), np.ones((2, 3))), ValueError, lambda: np.ones(4) + np.ones((2, 3))),
    (checks.check_in_place, (np.ones((2, 3)), np.ones(4)), ValueError, lambda: _in_place(np.ones((2, 3)), np.ones(4))),
    (checks.check_in_place, (np.ones((2, 1)), np.ones(3)), ValueError, lambda: _in_place(np.ones((2, 1)), np.ones(3))),
    (checks.check_in_place, (np.ones(1), np.ones((2, 3))), ValueError, lambda: _in_place(np.ones(1), np.ones((2, 3)))),
    (checks.check_store, (np.ones(4)[0:2], np.ones(3)), ValueError, lambda: _store(np.ones(4), np.ones(3))),
    (checks.check_where, (np.ones(2) > 0, np.ones(3), 0.0), ValueError,
     lambda: np.where(np.ones(2) > 0, np.ones(3), 0.0)),
    (checks.check_concatenate, ((np.ones((2, 3)), np.ones(3)), 0), ValueError,
     lambda: np.concatenate((np.ones((2, 3)), np.ones(3)), 0)),
    (checks.check_concatenate, ((np.ones((2, 3)), np.ones((3, 4))), 0), ValueError,
     lambda: np.concatenate((np.ones((2, 3)), np.ones((3, 4))), 0)),
    (checks.check_hstack, ((np.ones((2, 3)), np.ones((3, 4))),), ValueError,
     lambda: np.hstack((np.ones((2, 3)), np.ones((3, 4))))),
    (checks.check_vstack, ((np.ones(3), np.ones(4)),), ValueError, lambda: np.vstack((np.ones(3), np.ones(4)))),
    (checks.check_stack, ((np.ones(3), np.ones(4)),), ValueError, lambda: np.stack((np.ones(3), np.ones(4)))),
    (checks.check_dot, (np.ones((2, 3)), np.ones(4)), ValueError, lambda: np.dot(np.ones((2, 3)), np.ones(4))),
    (checks.check_matmul, (np.ones((2, 3)), np.ones((4, 2))), ValueError, lambda: np.ones((2, 3)) @ np.ones((4, 2))),
    (checks.check_reshape, (np.ones(4), (3, 2)), ValueError, lambda: np.ones(4).reshape(3, 2)),
    (checks.check_reshape, (np.ones(4), (-1, 3)), ValueError, lambda: np.ones(4).reshape(-1, 3)),
    (checks.check_reshape, (np.ones(4), (3, -1)), ValueError, lambda: np.ones(4).reshape(3, -1)),
    (checks.check_reshape, (np.ones(4), (5,)), ValueError, lambda: np.ones(4).reshape(5)),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "cpu"])
@pytest.mark.parametrize("check, args, numpy_error, numpy_fn", CASES)
def test_each_check_raises_numpys_message(check, args, numpy_error, numpy_fn, compiled):
    message = _numpy_message(numpy_error, numpy_fn)
    with pytest.raises(NumbaxRunTimeError) as info:
        (_compiled(check) if compiled else check)(*args, WHERE)
    assert isinstance(info.value, numpy_error)
    assert info.value.message == message and info.value.where == WHERE
    assert str(info.value).splitlines()[0] == f"{__file__}:1: {message}"


def test_a_check_raised_from_compiled_code_pickles_with_its_message():
    with pytest.raises(NumbaxShapeError) as info:
        _compiled(checks.check_broadcast)(np.ones(4), np.ones((2, 3)), WHERE)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is NumbaxShapeError and again.where == WHERE
    assert str(again) == str(info.value) and again.message == info.value.message
    assert again.values == ((4,), (2, 3))


def test_a_message_written_out_keeps_its_braces():
    error = NumbaxIndexError("index {i} of a dict-like {}", WHERE)
    assert error.message == "index {i} of a dict-like {}"
    assert str(pickle.loads(pickle.dumps(error))) == str(error)


def _contract(a, b):
    check_contraction("f.py:3: @", "ij,j->i", "j", a, b)


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "cpu"])
def test_a_contraction_names_its_operands_shapes_as_python_writes_them(compiled):
    with pytest.raises(ContractionShapeError) as info:
        (numba.njit(_contract) if compiled else _contract)(np.ones((2, 3)), np.ones(4))
    assert str(info.value) == ("f.py:3: @ requires contracting dimensions to have the same size, got shapes "
                               "(2, 3) and (4,)")


def test_the_text_modules_example_holds():
    import doctest

    import numbax.error_text

    assert doctest.testmod(numbax.error_text).failed == 0
