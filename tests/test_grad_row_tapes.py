"""Row tables: a 1-D float64 array of one length saved in a loop goes in a table of its own, a row per iteration.

Each program's gradient is compared with JAX's in float64 (float32 for the float32 program), on both
backends, and its generated source is checked for the tape it uses: ``rt.save_row`` into ``*_rows`` for
arrays of one length in float64 programs (``for``, ``while`` and nested loops), a list tape for float32
programs, arrays whose length changes between iterations and arrays written into; a loop's numbers (the parts of
``np.array([a, b])``) go in a float table, and rows whose length is a dim of a name assigned once before the
loop in a table made where the loop starts.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax

jax.config.update("jax_enable_x64", True)


def rows_for(w, n):
    total = 0.0
    h = w
    for i in range(n):
        h = np.tanh(h * w + 0.1 * i)
        total = total + np.sum(h * h)
    return total


def rows_while(w, steps):
    total = 0.0
    h = w
    k = 0
    while k < steps:  # more iterations than the table's first 16 rows: it grows
        h = np.sin(h) * w + 0.5
        total = total + np.sum(h)
        k = k + 1
    return total


def rows_nested(w, n, m):
    total = 0.0
    h = w
    for i in range(n):
        for j in range(m):
            h = np.cos(h) * w
        total = total + np.sum(h * h)
    return total


def shrinking(x, n):
    total = 0.0
    for i in range(n):
        x = np.sin(x[1:])
        total = total + np.sum(x * x)
    return total


def written_into(w, n):
    total = 0.0
    for i in range(n):
        h = np.sin(w * (i + 1.0))
        h[0] = 2.0
        total = total + np.sum(h * h)
    return total


def array_literal(p, n):
    z = np.array([1.0, 0.5])
    total = 0.0
    for i in range(n):
        k = np.array([z[1], -p[0] * z[1] - p[1] * z[0]])  # a 1-D array of two floats: a float table saves its parts
        z = z + 0.1 * k
        total = total + z[0] * z[0]
    return total


def row_of_local(w, n):
    m = w.reshape(-1, 1) * w  # assigned once: its rows' length, m.shape[1], is known where the loop starts
    total = 0.0
    for i in range(n):
        h = np.sin(m[i]) * 2.0
        total = total + np.sum(h * h)
    return total


def _jax_written_into(w, n):
    total = 0.0
    for i in range(n):
        h = jnp.sin(w * (i + 1.0)).at[0].set(2.0)
        total = total + jnp.sum(h * h)
    return total


_W = np.linspace(-0.9, 0.8, 7)
_ROWS = ("rt.save_row(", "_rows = np.empty((", ", w.shape[0]))")
_LIST = (".append(", ".pop()")
CASES = {  # name -> (function, JAX's, arguments, what the source holds, what it does not)
    "for": (rows_for, rows_for, (_W, 5), _ROWS, _LIST),
    "while": (rows_while, rows_while, (_W, 40), _ROWS + ("rt.grow_rows(",), _LIST),
    "nested": (rows_nested, rows_nested, (_W, 3, 4), _ROWS, _LIST),
    "float32": (rows_for, rows_for, (_W.astype(np.float32), 5), _LIST, ("save_row",)),
    "shrinking": (shrinking, shrinking, (_W, 4), _LIST, ("save_row",)),
    "array_literal": (array_literal, array_literal, (np.array([0.3, 4.0]), 6), ("tape[row, ",), _LIST),
    "row_of_local": (row_of_local, row_of_local, (_W, 5), ("rt.save_row(h_rows", ", m.shape[1]))"), _LIST),
    "written_into": (written_into, _jax_written_into, (_W, 3), ("h_tape.append(h)", "h_1 = h_tape.pop()"),
                     ("save_row(h", "save_row(h_")),
}


def _jax_version(fn):
    """``fn`` with JAX's NumPy in place of NumPy (the programs call only ``np.*`` functions)."""
    namespace = dict(fn.__globals__, np=jnp)
    return type(fn)(fn.__code__, namespace, fn.__name__)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("case", list(CASES))
def test_row_tables_give_jax_gradients(case, backend):
    fn, jax_fn, args, _, _ = CASES[case]
    got = numbax.grad(fn, backend=backend)(*args)
    assert got.dtype == args[0].dtype
    jax_fn = _jax_version(jax_fn) if jax_fn is fn else jax_fn
    tolerance = 1e-5 if args[0].dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, jax.grad(jax_fn)(*args), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("case", list(CASES))
def test_tape_kind_in_the_source(case):
    fn, _, args, present, absent = CASES[case]
    source = numbax.grad(fn).lower_source(*args)
    assert all(text in source for text in present), source
    assert not any(text in source for text in absent), source
