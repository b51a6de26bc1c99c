"""Tests for numbax.arg_spec: argument specs such as ``[(f64[10,20], f64[20])]`` become example values."""
import numpy as np
import pytest

from numbax.arg_spec import DTYPES, ArgSpecError, example_array, parse_spec

SPELLINGS = [
    ("bool", np.bool_), ("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64),
    ("u8", np.uint8), ("u16", np.uint16), ("u32", np.uint32), ("u64", np.uint64),
    ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
    ("c64", np.complex64), ("c128", np.complex128),
    ("float64", np.float64), ("int32", np.int32), ("uint8", np.uint8), ("complex128", np.complex128),
]


@pytest.mark.parametrize("name, dtype", SPELLINGS)
def test_every_dtype_spelling_gives_an_array_of_that_dtype(name, dtype):
    value = parse_spec(f"{name}[3]")
    assert isinstance(value, np.ndarray)
    assert value.dtype == np.dtype(dtype)
    assert value.shape == (3,)


@pytest.mark.parametrize("name, dtype", SPELLINGS)
def test_a_bare_dtype_is_a_numpy_scalar(name, dtype):
    value = parse_spec(name)
    assert isinstance(value, np.generic) and not isinstance(value, np.ndarray)
    assert value.dtype == np.dtype(dtype)


@pytest.mark.parametrize("spec, shape", [
    ("f64[3]", (3,)), ("f32[10,20]", (10, 20)), ("f64[2, 3, 4]", (2, 3, 4)), ("f64[0]", (0,)),
    ("f64[]", ()), ("f64[ ]", ()), ("f64[()]", ()), ("i64[5]", (5,)), ("f64[(2, 3)]", (2, 3)),
])
def test_shapes(spec, shape):
    assert parse_spec(spec).shape == shape


def test_values_are_deterministic_and_never_zero():
    for name in DTYPES:
        value = parse_spec(f"{name}[4, 5]")
        if value.dtype != np.bool_:
            assert np.all(value != 0), name
        np.testing.assert_array_equal(value, parse_spec(f"{name}[4, 5]"))


def test_fill_patterns():
    np.testing.assert_allclose(parse_spec("f64[4]"), [0.1, 0.4, 0.7, 1.0])
    np.testing.assert_array_equal(parse_spec("i32[2, 2]"), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(parse_spec("bool[3]"), [True, False, True])
    np.testing.assert_allclose(parse_spec("c128[2]"), [0.1 + 1.0j, 1.0 + 0.1j])
    assert parse_spec("f64[]") == pytest.approx(0.1)
    assert parse_spec("i8[300]").max() <= 127


def test_example_array_of_a_0d_shape():
    assert example_array(np.dtype(np.float32), ()).ndim == 0


def test_nesting_keeps_the_containers():
    value = parse_spec("[(f64[10,20], f64[20]), (f64[20,1], f64[1])]")
    assert isinstance(value, list) and len(value) == 2
    assert all(isinstance(layer, tuple) for layer in value)
    assert [[leaf.shape for leaf in layer] for layer in value] == [[(10, 20), (20,)], [(20, 1), (1,)]]


def test_dicts_and_sets():
    value = parse_spec("{'w': f32[2, 2], 'meta': {'act': 'relu', 'n': 3}, 'tags': {1, 2}}")
    assert value["w"].dtype == np.float32
    assert value["meta"] == {"act": "relu", "n": 3}
    assert value["tags"] == {1, 2}


@pytest.mark.parametrize("spec, value", [
    ("3", 3), ("-3", -3), ("+2.5", 2.5), ("2.5", 2.5), ("1e-3", 1e-3), ("True", True), ("None", None),
    ("'relu'", "relu"), ("b'x'", b"x"), ("1+2j", 1 + 2j), ("-1-2j", -1 - 2j), ("(1, 'a')", (1, "a")),
    ("[]", []), ("()", ()), ("{}", {}), ("'f64[]'", "f64[]"), ("  7  ", 7),
])
def test_plain_python_values_stay_as_they_are(spec, value):
    result = parse_spec(spec)
    assert result == value and type(result) is type(value)


def test_a_scalar_static_argument_beside_arrays():
    x, n = parse_spec("(f64[3], 4)")
    assert x.shape == (3,) and n == 4


@pytest.mark.parametrize("spec, message", [
    ("f65[3]", "unknown dtype 'f65' (expected one of bool, c128, c64, f16, f32, f64"),
    ("float[3]", "unknown dtype 'float'"),
    ("x", "unknown dtype 'x'"),
    ("f64[3.0]", "dimension '3.0' is not a non-negative integer"),
    ("f64[n]", "dimension 'n' is not a non-negative integer"),
    ("f64[-1]", "dimension '-1' is not a non-negative integer"),
    ("f64[True]", "dimension 'True' is not a non-negative integer"),
    ("f64[2, '3']", "dimension \"'3'\" is not a non-negative integer"),
    ("f64[1:3]", "dimension '1:3' is not a non-negative integer"),
    ("np.ones(3)", "calls are not allowed ('np.ones(3)')"),
    ("[f64[2], zeros(3)]", "calls are not allowed ('zeros(3)')"),
    ("np.float64", "attributes are not allowed ('np.float64')"),
    ("f64[3] * 2", "operators are not allowed ('f64[3] * 2')"),
    ("-f64[3]", "operators are not allowed ('-f64[3]')"),
    ("not 1", "operators are not allowed ('not 1')"),
    ("(1, 2)[0]", "'(1, 2)[0]' is not dtype[shape]"),
    ("lambda: 1", "Lambda expressions are not allowed ('lambda: 1')"),
    ("[i for i in x]", "ListComp expressions are not allowed"),
    ("{f64[2]: 1}", "'f64[2]' cannot be a dict key or set element"),
    ("{**d}", "`**` unpacking is not allowed in '{**d}'"),
    ("f64[3", "invalid syntax ('[' was never closed)"),
    ("x = 1", "invalid syntax"),
])
def test_errors_name_the_bad_part(spec, message):
    with pytest.raises(ArgSpecError) as info:
        parse_spec(spec)
    text = str(info.value)
    assert text.startswith(f"bad argument spec {spec!r}: ")
    assert message in text
    assert "\n" not in text


@pytest.mark.parametrize("spec", ["", "   "])
def test_an_empty_spec_is_an_error(spec):
    with pytest.raises(ArgSpecError, match="empty argument spec"):
        parse_spec(spec)


def test_arg_spec_error_is_a_value_error():
    assert issubclass(ArgSpecError, ValueError)


def test_a_multiline_spec_is_reported_on_one_line():
    with pytest.raises(ArgSpecError) as info:
        parse_spec("(f64[3],\n f65[2])")
    assert "\n" not in str(info.value) and "'f65'" in str(info.value)


def test_no_code_is_executed():
    with pytest.raises(ArgSpecError, match="calls are not allowed"):
        parse_spec("__import__('os').system('false')")
