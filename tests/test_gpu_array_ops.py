"""Array operations the corpora brought to the GPU backend, in Numba's CUDA simulator, against NumPy (float64,
rtol 1e-12; benchmarks/gpu_corpus_status.py runs the whole corpora against the CPU backend): loops over arrays'
rows, tuple stores, concatenate and stack, np.diag, norms of other orders, reshapes of strided views (a view
exactly where NumPy's is one), ravel, moveaxis, ptp, inner, and the cotangents of cumulative sums and products,
products and slices among index arrays (by hand: the CPU backend's gradient would cost its compilation),
in-place ``fill`` and ``sort``. Each program is compiled once."""
import numpy as np
import pytest

import numbax

M = np.array([[1.0, -2.0, 3.5, 0.25], [0.5, 4.0, -1.0, 2.0], [3.0, 0.5, -0.75, 1.5]])
V = np.array([0.5, -3.0, 2.0])
IDX = np.array([2, 0, 2])


def host_programs(m, v):
    total = 0.0
    for i, (row, w) in enumerate(zip(m, v)):
        total = total + np.sum(row * row) * w * i
    scaled = v
    for w in scaled:  # the loop goes over the array scaled held when it began
        scaled = scaled * 2.0
        total = total + w
    m[0], m[-1] = m[-1], m[0]  # rows as views, as NumPy's tuple holds them: both rows end as the old last
    v[0], v[-1] = v[-1], v[0]
    return total, scaled, m, v


def array_programs(m, v):
    strided = m[:, ::2].reshape(3, 2, 1)  # a view in NumPy: a write through it shows in m
    strided[0, 0, 0] = 7.0
    diagonal = np.diag(m)
    return (np.concatenate((v, v[::-1] * 2.0)), np.stack([m, m], axis=-1), np.concatenate((m, m[:, :1]), axis=1),
            diagonal * 1.0, np.diag(v), np.linalg.norm(m, 1), np.linalg.norm(m, np.inf, axis=1, keepdims=True),
            np.linalg.norm(v, 3), np.linalg.norm(m, "fro"), m.T.reshape(-1), np.ravel(m[::2]), m,
            np.moveaxis(m.reshape(3, 2, 2), 0, -1), np.ptp(m, axis=0), np.inner(m, m[:2]), np.inner(v, v))


W = np.linspace(-1.0, 2.0, M.size).reshape(M.shape)
C = np.array([0.5, -1.0, 2.0, 1.5])


def cotangents(m):
    return (np.sum(np.cumsum(m, axis=1) * W) + np.sum(np.prod(m, axis=0) * C) + np.sum(m[1:, IDX] ** 2) +
            np.sum(np.cumprod(m, axis=1) * W))


def _expected_cotangent(m):
    """``cotangents``' gradient by hand: sums of ``W`` from each row's end, ``C`` times the products of the other
    rows, twice ``m`` at each position ``m[1:, IDX]`` reads, as often as it reads it, and for each element
    ``m[r, k]`` of a running product the weights ``W[r, i]`` (``i >= k``) times the others in ``m[r, :i + 1]``."""
    others = np.stack([np.prod(np.delete(m, i, axis=0), axis=0) for i in range(m.shape[0])])
    indexed = np.zeros_like(m)
    np.add.at(indexed[1:], (slice(None), IDX), 2.0 * m[1:, IDX])
    running = np.array([[sum(W[r, i] * np.prod(np.delete(m[r, :i + 1], k)) for i in range(k, m.shape[1]))
                         for k in range(m.shape[1])] for r in range(m.shape[0])])
    return np.cumsum(W[:, ::-1], axis=1)[:, ::-1] + C * others + indexed + running


@pytest.fixture(scope="module")
def compiled(gpu):
    return {f.__name__: numbax.jit(f, backend="gpu") for f in (host_programs, array_programs)}


def _agree(got, expected):
    assert len(got) == len(expected)
    for e, g in zip(expected, numbax.device_get(got)):
        assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype
        np.testing.assert_allclose(g, e, rtol=1e-12)


@pytest.mark.parametrize("name", ["host_programs", "array_programs"])
def test_array_operations_agree_with_numpy(compiled, name):
    program = {"host_programs": host_programs, "array_programs": array_programs}[name]
    _agree(compiled[name](M.copy(), V.copy()), program(M.copy(), V.copy()))


def test_cotangents_of_cumulative_sums_products_and_gathers_agree_with_numpy(gpu):
    got = numbax.device_get(numbax.grad(cotangents, backend="gpu")(M))
    np.testing.assert_allclose(got, _expected_cotangent(M), rtol=1e-12)


def joins_ranks(v, m):
    return np.concatenate((v, m))


def test_joining_arrays_of_other_ranks_is_numpys_error_at_the_users_line(gpu):
    with pytest.raises(numbax.NumbaxShapeError, match="must have same number of dimensions") as info:
        numbax.jit(joins_ranks, backend="gpu")(V, M)
    assert "np.concatenate((v, m))" in info.value.origin.line


def filled_and_sorted(m, v, k):
    filled = m * 1.0
    filled.fill(k)
    rows = m * 1.0
    rows.sort()
    line = v * 1.0
    line.sort()
    counts = (m * 10.0).astype(np.int64)
    counts.fill(k)
    return filled, rows, line, counts


def test_fill_and_sort_in_place_agree_with_numpy(gpu):
    """``x.fill(v)`` and ``x.sort()`` (found refused by the differential tester on the GPU backend): stores into
    every element, casting as the methods do (``fill(2.7)`` of integers is 2)."""
    got = numbax.device_get(numbax.jit(filled_and_sorted, backend="gpu")(M, V, 2.7))
    for g, e in zip(got, filled_and_sorted(M.copy(), V.copy(), 2.7)):
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g, e)


def fill_by_an_array(m, v):
    filled = m * 1.0
    filled.fill(v)
    return filled


def test_fill_by_an_array_is_refused_at_the_users_line(gpu):
    """NumPy's ``fill`` takes a number: an array is not broadcast into the store, it is refused."""
    with pytest.raises(numbax.NumbaxDeviceError, match="not supported by the GPU backend yet") as info:
        numbax.jit(fill_by_an_array, backend="gpu")(M, V[:3])
    assert "filled.fill(v)" in str(info.value)
