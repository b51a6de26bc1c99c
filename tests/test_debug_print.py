"""numbax.debug.print and callback: str.format output and calls from compiled code, under jit and grad."""
from __future__ import annotations

import numpy as np
import pytest

import numbax
from numbax import debug

BACKENDS = ("python", "cpu")
SEEN = []


def record(value, tag=""):
    SEEN.append((np.array(value), tag))


def loop_with_prints(x, n):
    total = 0.0
    for i in range(n):
        total = total + np.sum(x * i)
        debug.print("i={} total={total:.2f}", i, total=total)
    debug.callback(record, x, tag="end")
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_jit_prints_each_iteration_and_calls_back(backend, capsys):
    SEEN.clear()
    assert numbax.jit(loop_with_prints, backend=backend)(np.ones(2), 3) == 6.0
    assert capsys.readouterr().out.splitlines() == ["i=0 total=0.00", "i=1 total=2.00", "i=2 total=6.00"]
    assert len(SEEN) == 1 and SEEN[0][1] == "end" and np.array_equal(SEEN[0][0], [1.0, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_prints_during_the_forward_sweep(backend, capsys):
    SEEN.clear()
    g = numbax.grad(loop_with_prints, backend=backend)(np.ones(2), 2)
    assert np.allclose(g, [1.0, 1.0])
    assert capsys.readouterr().out.splitlines() == ["i=0 total=0.00", "i=1 total=2.00"]
    assert len(SEEN) == 1
    assert "rt.debug_print('i={} total={total:.2f}', (i,), ('total',), (total,))" in \
        numbax.source(numbax.grad(loop_with_prints), np.ones(2), 2)


def test_direct_calls_act_at_once(capsys):
    debug.print("{} and {b}", 1, b=np.arange(2))
    assert capsys.readouterr().out == "1 and [0 1]\n"


def with_runtime_format(x, fmt):
    debug.print(fmt, x)
    return x


def with_local_callback(x):
    debug.callback(lambda v: None, x)
    return x


def test_format_must_be_a_compile_time_string():
    with pytest.raises(numbax.NumbaxSpecializationError, match="format string known at compile time"):
        numbax.jit(with_runtime_format)(1.0, np.array([1.0]))


def test_callback_of_a_lambda_says_what_to_do():
    with pytest.raises(numbax.NumbaxSpecializationError, match="define the callback at module level"):
        numbax.jit(with_local_callback)(1.0)
