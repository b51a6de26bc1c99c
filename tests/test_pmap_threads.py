"""``pmap`` over 2 CPU devices runs each shard on a thread of its own (``transforms.pmap.thread_shards``): the
same bits as the same ``pmap`` run one shard after the other (inside ``jit``, the batch transport), every
collective; a shard's error reaches the caller as the numbax error the sequential run raises."""
import os
import re
import threading

import numpy as np
import pytest
from numba.core.runtime import _nrt_python, rtsys

import numbax
from numbax import cli, lax
from numbax.errors import NumbaxIndexError, NumbaxShapeError

X = np.array([[0.3, -1.2, 2.0], [1.5, 0.7, -0.4]])
FINE = (np.array([0, 2]), np.array([1, 0]), np.array([3, 3]))  # each shard's i, j, n


def program(x, i, j, n):
    y = np.sin(x) * x[i]
    total = lax.psum(y, "s")
    return (total[j] + lax.psum(x[:n], "s"), lax.pmean(y * y, "s"), lax.pmax(y, "s"), lax.pmin(y, "s"),
            lax.all_gather(y, "s", axis=1), lax.all_gather(y, "s", tiled=True), lax.ppermute(y, "s", [(0, 1)]),
            lax.psum_scatter(np.stack([y, 2.0 * y]), "s"), lax.axis_index("s") + 0.0 * y, total)


threaded = numbax.pmap(program, "s")


@numbax.jit
def sequential(x, i, j, n):
    return threaded(x, i, j, n)


def rounds(x, w):
    for _ in range(5):
        x = lax.psum(np.sin(x) + w, "s")  # a temporary each round: the two sets of slots in turn
    return x, lax.pmean(w, "s")


looped = numbax.pmap(rounds, "s", in_axes=(0, None))


@numbax.jit
def looped_sequential(x, w):
    return looped(x, w)


@pytest.fixture(scope="module")
def two_devices():
    numbax.config.update("cpu_device_count", 2)
    yield
    numbax.config.update("cpu_device_count", 1)


def same_bits(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes()


def test_threads_give_the_sequential_bits(two_devices):
    got = threaded(X, *FINE)
    assert "rt.shard_gather(shards" in threaded.source and threaded._last.function.targetoptions["nogil"]
    same_bits(got, sequential(X, *FINE))
    np.testing.assert_allclose(got[-1][0], np.sum(np.sin(X) * X[[0, 1], [0, 2]][:, None], axis=0), rtol=1e-15)


def test_calls_from_two_threads_at_once(two_devices):
    want = threaded(X, *FINE)
    results = [None, None]

    def call(k):
        numbax.config.update("cpu_device_count", 2)  # numbax's settings are per thread, as JAX's
        results[k] = threaded(X * 1.0, *FINE)

    workers = [threading.Thread(target=call, args=(k,)) for k in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    for got in results:
        same_bits(got, want)


@pytest.mark.parametrize("bad", [
    (np.array([0, 7]), FINE[1], FINE[2]),  # shard 1 fails before the collective; shard 0 waits for it
    (FINE[0], np.array([0, 5]), FINE[2]),  # shard 1 fails after it, shard 0 finishes
])
def test_a_shards_error_reaches_the_caller(two_devices, bad):
    with pytest.raises(NumbaxIndexError) as sequential_error:
        sequential(X, *bad)
    with pytest.raises(NumbaxIndexError, match=r"test_pmap_threads\.py:\d+") as threads_error:
        threaded(X, *bad)
    assert str(threads_error.value) == str(sequential_error.value)
    same_bits(threaded(X, *FINE), sequential(X, *FINE))  # the exchange of the next call starts afresh


def test_show_prints_a_shards_code_with_its_exchange(two_devices, capsys):
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "cli_module.py")
    assert cli.main(["show", f"{fixture}:normalized", "--args", "f64[2,3]", "--transform", "pmap", "--axis-name",
                     "devices"]) == 0
    out = capsys.readouterr().out
    compile(out, "<generated>", "exec")
    assert "def pmap_normalized(x, shards):" in out and "rt.check_devices(batch, 1, True" in out
    assert re.search(r"(\w+)_gathered = rt\.shard_gather\(shards, \w+_rows\[0\], '.*cli_module\.py:\d+:\d+'\)\n"
                     r"\s+\1 = rt\.sum\(\1_gathered, 0\)", out), out


def test_operands_of_different_shapes_are_refused(two_devices):
    with pytest.raises(NumbaxShapeError, match=r"test_pmap_threads\.py:\d+: pmap's shards passed operands of "
                                               r"different shapes to a collective"):
        threaded(X, FINE[0], FINE[1], np.array([3, 2]))


def _live_meminfos() -> int:
    stats = rtsys.get_allocation_stats()
    return stats.mi_alloc - stats.mi_free


def test_collectives_in_a_loop_keep_their_operands_alive_and_release_them(two_devices):
    w = np.array([0.5, -0.25, 1.0])
    got = looped(X, w)
    same_bits(got, looped_sequential(X, w))
    _nrt_python.memsys_enable_stats()  # Numba's count of its memory blocks: the exchange leaves none behind
    try:
        live = _live_meminfos()
        for _ in range(3):
            same_bits(looped(X, w), got)
        assert _live_meminfos() == live
    finally:
        _nrt_python.memsys_disable_stats()


def prefix(x, n):
    return x[:n] * 2.0


def test_outputs_of_different_shapes_are_refused(two_devices):
    with pytest.raises(NumbaxShapeError, match=r"test_pmap_threads\.py:\d+: pmap's shards returned outputs of "
                                               r"different shapes, which do not stack: output 0 of shard 0 has "
                                               r"shape \(1, 1\), of shard 1 shape \(1, 2\)"):
        numbax.pmap(prefix)(X, np.array([1, 2]))
