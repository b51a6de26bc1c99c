"""What the GPU backend does not compile yet is refused at the user's line with a ``NumbaxDeviceError`` that
names the construct and says to use the CPU backend; ``numbax show --backend gpu`` prints kernels and driver."""
import inspect
import math
import os
import pathlib
import warnings

import numpy as np
import pytest

import numbax
from numbax import cli

HERE = os.path.abspath(__file__)


def loss(x):
    return np.sum(x * x)


def spread(x):
    return np.median(x)


def element(x, i):
    return x[i] * 2.0


def int_then_complex(x):
    s = 0
    for _ in range(3):
        s = s + x.sum() * 1j
    return s


def doubles_either(x, y, n):
    z = x
    for _ in range(n):  # z is x or y: the driver cannot tell which array it writes
        z = y
    z *= 2.0
    return z


def typed_sum(x):
    return np.sum(x, dtype=np.float32)


def unpacks_rows(x):
    t = 0.0
    for p, q in x:  # a row unpacked: not a host loop's
        t = t + p * q
    return t


def rounds_to_decimals(x):
    return np.round(x, 2)


def product_per_example(v):
    a = np.full(3, v)
    return np.prod(a)


def _line(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _refused(fn, *args, backend="gpu"):
    with pytest.raises(numbax.NumbaxDeviceError) as info:
        numbax.jit(fn, backend=backend)(*args)
    return info.value


@pytest.mark.parametrize("fn, args, line, construct", [
    (spread, (np.ones(3),), "np.median(x)", "`np.median(x)`"),
    (element, (np.ones(3), np.array([[0, 2]])), "x[i]", "indexing `x[i]` by other than 1-d integer arrays"),
    (int_then_complex, (np.ones(3),), "s = s + x.sum() * 1j", "`s`, which changes its dtype"),
    (doubles_either, (np.ones(3), np.ones(3), 1), "z *= 2.0", "neither the driver's own nor an argument's"),
    (typed_sum, (np.ones(3),), "np.sum", "`np.sum` with arguments other than axis and keepdims"),
    (unpacks_rows, (np.ones((3, 2)),), "for p, q in x", "in x:`, a row unpacked into names"),
    (rounds_to_decimals, (np.ones(3),), "np.round", "`np.round` with keyword arguments or 2 operands"),
], ids=lambda v: getattr(v, "__name__", None))
def test_unsupported_constructs_are_refused_at_the_users_line(gpu, fn, args, line, construct):
    error = _refused(fn, *args)
    assert error.origin is not None and error.origin.filename == HERE
    assert error.origin.lineno == _line(fn, line), error
    assert construct in error.message and "not supported by the GPU backend yet" in error.message
    assert "CPU backend" in error.hint


def test_a_product_of_an_array_per_example_is_refused_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="of an array per example") as info:
        numbax.vmap(product_per_example, backend="gpu")(np.ones(3))
    assert info.value.origin.filename == HERE and info.value.origin.lineno == _line(product_per_example, "np.prod")


class _CpuOnly(numbax.api.Jitted):
    """A transformation whose middle end takes no ``backend`` (every public one now compiles for the GPU)."""

    def _run_pipeline(self, bound, after_pass=None):
        return super()._run_pipeline(bound, after_pass)


def test_a_transformation_without_a_gpu_pipeline_is_refused_on_the_gpu(gpu):
    x = numbax.device_put(np.ones((1, 3)), gpu)
    with pytest.raises(numbax.NumbaxDeviceError, match="on the GPU backend is not implemented yet") as info:
        _CpuOnly(loss)(x)
    assert "CPU backend" in info.value.hint and info.value.origin.lineno == _line(loss, "def loss")


def test_cpu_options_are_refused_on_the_gpu(gpu):
    with pytest.raises(numbax.NumbaxDeviceError, match="parallel=True is an option of the CPU backend"):
        numbax.jit(loss, parallel=True)(numbax.device_put(np.ones(3), gpu))


def test_the_refusal_needs_no_gpu():
    """The lowering runs before anything touches numba.cuda: show and refusals work on any machine."""
    with pytest.raises(numbax.NumbaxDeviceError, match="`np.median\\(x\\)`"):
        numbax.source(numbax.jit(spread, backend="gpu"), np.ones(3))


def test_show_backend_gpu_prints_kernels_and_driver(capsys):
    status = cli.main(["show", f"{HERE}:loss", "--args", "f64[8]", "--backend", "gpu", "--color", "never"])
    out, err = capsys.readouterr()
    assert status == 0 and err == ""
    assert "@cuda.jit\ndef _reduce_1(partial, shape, parts, x):" in out and "def loss(x):" in out
    assert f"# {pathlib.Path(HERE).name}:{_line(loss, 'np.sum')}: return np.sum(x * x)" in out
    assert "gr.reduce(_reduce_1, gr.finish_sum, x.shape, (0,), False, np.float64, (x,)" in out


def test_show_backend_gpu_reports_a_refusal_as_a_user_error(capsys):
    status = cli.main(["show", f"{HERE}:spread", "--args", "f64[8]", "--backend", "gpu"])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and "`np.median(x)` is not supported by the GPU backend yet" in err


def test_export_backend_gpu_is_refused(capsys, tmp_path):
    status = cli.main(["export", f"{HERE}:loss", "--args", "f64[8]", "--backend", "gpu", "-o", str(tmp_path / "o.py")])
    assert status == 2 and "--backend gpu goes with show" in capsys.readouterr()[1]


def test_export_of_gpu_code_is_refused():
    with pytest.raises(numbax.NumbaxError, match="export of the GPU backend's kernels and driver"):
        numbax.export(numbax.jit(loss, backend="gpu"), np.ones(3))


def sqrt_of_difference(x, a, b):
    return x.sum() * math.sqrt(a - b)  # numbers: computed by the driver, on the host


def test_math_on_the_host_gives_nan_as_compiled_code_does(gpu):
    """``math.sqrt(-1.0)`` raises in Python; the driver computes numbers with NumPy, as the CPU backend does."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nor a warning of NumPy's: compiled code gives none
        got = numbax.device_get(numbax.jit(sqrt_of_difference, backend="gpu")(np.ones(2), 1.0, 2.0))
    expected = numbax.jit(sqrt_of_difference)(np.ones(2), 1.0, 2.0)
    assert np.isnan(got) and np.isnan(expected)
    assert float(numbax.device_get(numbax.jit(sqrt_of_difference, backend="gpu")(np.ones(2), 5.0, 1.0))) == 4.0
