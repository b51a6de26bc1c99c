"""A store of an array into a slice (``out[i] = row``, which ``vmap`` writes per example) compiles without
Numba's string formatting (``numbax.backends.numba_cpu.slice_store_error``), and a store of the wrong shape
still raises Numba's ``ValueError`` with its message."""
import numba
import numpy as np
import pytest
from numba.core import event

import numbax
from numbax.backends.numba_cpu.slice_store_error import SliceShapeError


@numba.njit
def _store_row(a, i, row):
    a[i] = row


def _rows(x):
    return np.tanh(x) * 2.0


class _Compiled(event.Listener):
    """The modules of the functions Numba compiles while it listens."""

    def __init__(self):
        self.modules = []

    def on_start(self, ev):
        self.modules.append(ev.data["module"])

    def on_end(self, ev):
        pass


def test_a_row_store_of_the_right_shape_writes_it():
    a = np.zeros((2, 3))
    _store_row(a, 1, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a, [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])


@pytest.mark.parametrize("row", [np.ones(2), np.ones(4)])
def test_a_row_store_of_another_shape_raises_numbas_value_error(row):
    with pytest.raises(ValueError, match=rf"^cannot assign slice of shape \(3,\) from input of shape "
                                         rf"\({row.size},\)$") as info:
        _store_row(np.zeros((2, 3)), 0, row)
    assert isinstance(info.value, SliceShapeError)


def test_vmap_of_rows_compiles_no_string_formatting():
    listener = _Compiled()
    event.register("numba:run_pass", listener)
    try:
        out = numbax.jit(numbax.vmap(_rows))(np.arange(6.0).reshape(3, 2))
    finally:
        event.unregister("numba:run_pass", listener)
    np.testing.assert_allclose(out, np.tanh(np.arange(6.0).reshape(3, 2)) * 2.0, rtol=1e-12)
    assert not [m for m in listener.modules if m.startswith("numba.cpython.unicode")]
