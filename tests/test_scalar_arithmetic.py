"""Arithmetic of NumPy scalars (0-d values) in NumPy's dtypes on every backend.

Numba's scalar arithmetic computes integers in int64 (uint64 when every operand is unsigned) and bools as
integers, where NumPy keeps ``int8 + int8`` an int8 that wraps and ``np.True_ + np.True_`` a bool; it
computes a signed integer with a uint64 as int64 (NumPy: float64) and a uint16 with a float32 in float64.
Each operator below is compiled over every pair of the dtypes numbax compiles (one function per left dtype),
with values that overflow the narrow types, and its results are compared with NumPy's, value and kind; a pair
NumPy refuses (``bool - bool``) is refused at the user's line.
"""
import itertools
import os
import warnings

import numpy as np
import pytest

import numbax
from numbax.errors import NumbaxDtypeError

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float32, np.float64, np.complex64, np.complex128]
# + - *: values that overflow each integer type; the rest: small values (no negative powers of integers,
# shift counts below 16, no zero divisors)
LARGE = [True, -100, -30000, -2 ** 31 + 5, -2 ** 62 - 7, 200, 60000, 2 ** 32 - 5, 2 ** 64 - 5, 1.5e30, -2.25,
         1.5e30 - 2j, -2.25 + 0.5j]
SMALL = [True, 7, 11, 13, 5, 9, 6, 4, 3, 1.5, 2.25, 1.5 - 0.5j, 2.25 + 0.5j]
OPERATORS = {"+": LARGE, "-": LARGE, "*": LARGE, "/": SMALL, "//": SMALL, "%": SMALL, "**": SMALL,
             "<<": SMALL, ">>": SMALL, "&": SMALL, "|": SMALL, "^": SMALL}
NAMES = [np.dtype(d).name for d in DTYPES]


def _scalars(values):
    """One 1-element array per dtype: the program reads ``a[0]``, a NumPy scalar."""
    return [np.array([v]).astype(d) if np.dtype(d).kind in "fc" or isinstance(v, bool)
            else np.array([v % 2 ** (8 * np.dtype(d).itemsize)]).astype(np.uint64).astype(d)
            for d, v in zip(DTYPES, values)]


def _numpy(op, a, b):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return eval(f"a {op} b")  # noqa: S307 - the operator's own NumPy semantics


def _pairs(op):
    """The dtype pairs NumPy computes ``op`` of (not ``bool - bool``, not ``uint64 << int64``)."""
    probes = _scalars(OPERATORS[op])
    pairs = []
    for i, j in itertools.product(range(len(DTYPES)), repeat=2):
        try:
            _numpy(op, probes[i][0], probes[j][0])
        except TypeError:
            continue
        pairs.append((i, j))
    return pairs


def _programs(op, folder):
    """``(pairs, function)`` per left dtype: a module with ``left_<dtype>(*scalars)``, ``op`` of each pair
    NumPy computes with that dtype on the left, as one tuple (one function of every pair, a tuple of 169
    values, took Numba twice as long to type)."""
    params = ", ".join(NAMES)
    programs = []
    for i in range(len(DTYPES)):
        pairs = [(a, j) for a, j in _pairs(op) if a == i]
        if not pairs:
            continue
        terms = ", ".join(f"{NAMES[a]}[0] {op} {NAMES[j]}[0]" for a, j in pairs)
        path = folder / f"left_{NAMES[i]}.py"
        path.write_text(f"def left_{NAMES[i]}({params}):\n    return ({terms},)\n")
        namespace = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 - numbax reads the file's source
        programs.append((pairs, namespace[f"left_{NAMES[i]}"]))
    return programs


def _same(got, want):
    """A 0-d array of NumPy's dtype (what every backend returns for a 0-d result) holding NumPy's value."""
    kind = np.asarray(want).dtype.kind
    if not (isinstance(got, np.ndarray) and got.shape == () and got.dtype == np.asarray(want).dtype):
        return False
    if kind in "biu":
        return np.asarray(got).item() == np.asarray(want).item()
    if np.isnan(want) or np.isinf(want):
        return np.array_equal(got, want, equal_nan=True)
    # float results to a few units in the last place of NumPy's dtype (libm's powers and complex
    # quotients are not NumPy's); computing in another precision is far outside
    return np.isclose(got, want, rtol=8 * np.finfo(np.asarray(want).dtype).eps, atol=0)


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("op", list(OPERATORS))
def test_scalar_operators_follow_numpy(op, backend, tmp_path):
    args = _scalars(OPERATORS[op])
    wrong = []
    for pairs, fn in _programs(op, tmp_path):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            got = numbax.jit(fn, backend=backend)(*args)
        want = [_numpy(op, args[i][0], args[j][0]) for i, j in pairs]
        assert len(got) == len(want)
        wrong += [f"{NAMES[i]} {op} {NAMES[j]}: {g!r}, NumPy {w!r}"
                  for (i, j), g, w in zip(pairs, got, want) if not _same(g, w)]
    assert not wrong, "\n".join(wrong)


def negate_all(scalars):
    return [-s[0] for s in scalars]


def invert_all(scalars):
    return [~s[0] for s in scalars]


UNARY = {negate_all: [d for d in DTYPES if d is not np.bool_],
         invert_all: [d for d in DTYPES if np.dtype(d).kind in "biu"]}


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn", list(UNARY), ids=lambda f: f.__name__)
def test_unary_operators_follow_numpy(fn, backend):
    dtypes = UNARY[fn]
    args = [a for a, d in zip(_scalars(LARGE), DTYPES) if d in dtypes]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = numbax.jit(fn, backend=backend)(args)
        want = fn(args)
    wrong = [f"{np.dtype(d).name}: {g!r}, NumPy {w!r}" for d, g, w in zip(dtypes, got, want)
             if not _same(g, w)]
    assert not wrong, "\n".join(wrong)


def bool_difference(b):
    return b[0] - b[1]


def bool_negative(b):
    return -b


def unsigned_shift(u, i):
    return u[0] << i[0]


def bool_update(b, c):
    b -= c
    return b


def bool_element_update(b, c):
    b[0] -= c[1]
    return b


def int8_update_by_a_float(x):
    x += 1.5
    return x


def int8_rows_update_by_a_float(x):
    x[1:] *= 0.5
    return x


BOOLS = (np.array([True, False]), np.array([True, True]))
REFUSED = [(bool_difference, (np.array([True, False]),), "`-` of bool and bool (NumPy raises TypeError: "),
           (bool_negative, (np.array([True, False]),), "unary `-` of bool (NumPy raises TypeError: "),
           (unsigned_shift, (np.array([3], np.uint64), np.array([1])),
            "`<<` of uint64 and int64 (NumPy raises TypeError: "),
           (bool_update, BOOLS, "`-=` of bool and bool (NumPy raises TypeError: "),
           (bool_element_update, BOOLS, "`-=` of bool and bool (NumPy raises TypeError: "),
           (int8_update_by_a_float, (np.arange(3, dtype=np.int8),),
            "`+=` into an array of int8 with a float64 result (NumPy raises UFuncTypeError: casting='same_kind'"),
           (int8_rows_update_by_a_float, (np.arange(3, dtype=np.int8),),
            "`*=` into an array of int8 with a float64 result (NumPy raises UFuncTypeError: casting='same_kind'")]


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn, args, what", REFUSED, ids=[r[0].__name__ for r in REFUSED])
def test_operators_numpy_refuses_are_refused_at_the_line(fn, args, what, backend):
    with pytest.raises(NumbaxDtypeError) as info:
        numbax.jit(fn, backend=backend)(*args)
    assert isinstance(info.value, TypeError)
    line = fn.__code__.co_firstlineno + 1
    assert f"{os.path.basename(__file__)}:{line}: {what}" in str(info.value)
    with pytest.raises(TypeError):
        fn(*[np.copy(a) for a in args])


def accumulate_bools(b):
    total = b[0]
    total += b[1]
    return total


def accumulate_int8(x):
    total = x[0]
    total += x[1]
    total *= x[1]
    return total


def count_matches(s):
    return (s == 1) + (s == 2)


def match_or_flag(b, s):
    return (1 == s) + b[1]  # found by the differential tester: a Python bool and a NumPy bool make a bool


@pytest.mark.parametrize("backend", ["python", "cpu"])
@pytest.mark.parametrize("fn, args", [(accumulate_bools, (np.array([True, True]),)),
                                      (accumulate_int8, (np.array([100, 100], np.int8),)),
                                      (count_matches, (1.0,)),
                                      (match_or_flag, (np.array([True, False]), 1.0))],
                         ids=["bools", "int8", "python_bools", "python_and_numpy_bool"])
def test_updates_and_python_bools_follow_numpy(fn, args, backend):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got, want = numbax.jit(fn, backend=backend)(*args), fn(*args)
    assert _same(got, want), (got, want)


def test_generated_code_casts_the_wide_result_to_numpys_dtype():
    source = numbax.source(numbax.jit(accumulate_int8), np.array([100, 100], np.int8))
    # ``x[1]``, read twice, is read (and checked) once
    assert "    _t1 = x[1]\n    total = np.int8(total + _t1)\n    # test_scalar_arithmetic.py" in source
    assert ("    total = np.int8(total * _t1)\n    # test_scalar_arithmetic.py:200: return total\n"
            "    return rt.arrays_out(total)") in source
    assert "np.bool(total + b[1])" in numbax.source(numbax.jit(accumulate_bools), np.array([True, True]))
