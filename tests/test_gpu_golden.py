"""Golden sources of the GPU backend: a fused elementwise kernel, a reduction, and the host driver of a
``while`` loop on a reduced value, each the expected code written as real functions in
``fixtures/gpu_golden_expected.py`` and compared after unparsing (comments aside; the origin comments are
checked apart). Generating the source needs no GPU."""
import ast
import inspect
import os
import textwrap

import numpy as np
import pytest

import numbax
from fixtures import gpu_golden_expected as expected

HERE = os.path.abspath(__file__)


def softplus(x):
    return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)


def row_means(x):
    return np.mean(x * x, axis=1, keepdims=True)


def relax(x, tol):
    err = 1.0
    while err > tol:
        y = 0.5 * (x + np.cos(x))
        err = np.max(np.abs(y - x))
        x = y
    return x


def decay(y0, k, steps):
    y = y0
    for _ in range(steps):
        if y > 1.0:
            y = y - 0.1 * k * y
        else:
            y = y + 0.01 * np.sin(y)
    return y


def _generated(fn, *args, transform=numbax.jit, **options):
    source = numbax.source(transform(fn, backend="gpu", **options), *args)
    return source, {node.name: node for node in ast.parse(source.replace(HERE, os.path.basename(HERE))).body
                    if isinstance(node, ast.FunctionDef)}


def _text(node: ast.FunctionDef) -> str:
    return ast.unparse(node)


def _expected(fn) -> str:
    return ast.unparse(ast.parse(textwrap.dedent(inspect.getsource(fn))).body[0])


def _assert_same(generated: ast.FunctionDef, want, name: str, kernel: bool) -> None:
    decorators = [ast.unparse(d) for d in generated.decorator_list]
    assert decorators == (["cuda.jit"] if kernel else []), decorators
    generated.decorator_list = []
    generated.name = want.__name__
    assert _text(generated) == _expected(want), f"{name}:\n{_text(generated)}"


CASES = [
    (softplus, (np.ones((3, 4)),), {"_kernel_1": expected.softplus_kernel, "softplus": expected.softplus}),
    (row_means, (np.ones((3, 4), np.float32),), {"_reduce_1": expected.row_means_reduce,
                                                 "row_means": expected.row_means}),
    (relax, (np.ones(5), 1e-8), {"_kernel_1": expected.relax_kernel, "_reduce_1": expected.relax_reduce,
                                 "relax": expected.relax}),
]


@pytest.mark.parametrize("fn, args, functions", CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_golden_kernels_and_driver(fn, args, functions):
    source, generated = _generated(fn, *args)
    assert set(generated) == set(functions), sorted(generated)
    for name, want in functions.items():
        _assert_same(generated[name], want, name, kernel=name != fn.__name__)
    lines = range(inspect.getsourcelines(fn)[1], inspect.getsourcelines(fn)[1] + len(inspect.getsourcelines(fn)[0]))
    driver = source[source.index(f"def {fn.__name__}("):]
    for text in (source[:source.index(f"def {fn.__name__}(")], driver):  # kernels, driver: the user's lines
        cited = {int(line.split(":")[1]) for line in text.splitlines() if line.strip().startswith("# test_gpu_golden")}
        assert cited and cited <= set(lines), cited


def test_golden_per_thread_kernel_of_vmap():
    """vmap of a function of numbers: one kernel, each thread one example's whole body (its loop and branch),
    the unmapped number ``k`` and the trip count passed as they are."""
    source, generated = _generated(decay, np.ones(3), 0.5, 4, transform=numbax.vmap, in_axes=(0, None, None))
    assert set(generated) == {"_examples_1", "vmap_decay"}, sorted(generated)
    _assert_same(generated["_examples_1"], expected.decay_examples, "_examples_1", kernel=True)
    _assert_same(generated["vmap_decay"], expected.decay, "vmap_decay", kernel=False)
    kernel = source[:source.index("def vmap_decay(")]
    first = inspect.getsourcelines(decay)[1]
    cited = {int(line.split(":")[1]) for line in kernel.splitlines() if line.strip().startswith("# test_gpu_golden")}
    assert cited and cited <= set(range(first, first + 8)), cited


def test_golden_source_is_deterministic():
    assert _generated(relax, np.ones(5), 1e-8)[0] == _generated(relax, np.ones(5), 1e-8)[0]


def reused(x):
    y = x * 2.0
    return y * y + y


def test_a_temporary_read_twice_by_its_reader_is_a_local_of_one_kernel(gpu):
    source, generated = _generated(reused, np.ones(5))
    assert sorted(generated) == ["_kernel_1", "reused"], sorted(generated)
    kernel = _text(generated["_kernel_1"])
    assert "y_v = x_i * 2.0" in kernel and "out[i0] = y_v * y_v + y_v" in kernel, kernel
    x = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(numbax.device_get(numbax.jit(reused, backend="gpu")(x)), reused(x), rtol=1e-15)


def scaled_by_length(x):
    t = x / x.shape[0]
    return t + 1.0


def test_a_folded_array_reads_its_shape_on_the_host(gpu):
    source, generated = _generated(scaled_by_length, np.ones(4))
    assert sorted(generated) == ["_kernel_1", "scaled_by_length"], sorted(generated)
    x = np.arange(4.0)
    np.testing.assert_allclose(numbax.device_get(numbax.jit(scaled_by_length, backend="gpu")(x)), x / 4 + 1.0,
                               rtol=1e-15)
