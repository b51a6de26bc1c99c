"""The runtime's helpers are compiled once per machine (``numbax.runtime.cached``), and ``NUMBAX_TIMINGS`` says
where compile time goes."""
import dataclasses
import os
import subprocess
import sys

import numpy as np
import pytest
from llvmlite import binding as llvm_binding
from numba.core import types

import numbax
from numbax.backends.numba_cpu import compile as compile_numba
from numbax.runtime import cached, numpy_once

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PROGRAM = """
import sys
import numpy as np
from numba.core import event
import numbax

compiled = []  # the runtime's functions that Numba compiles (not loads) in this process

class Runtime(event.Listener):
    def on_start(self, ev):
        module = ev.data["dispatcher"].py_func.__module__
        if module.startswith("numbax.runtime"):
            compiled.append(module)

    def on_end(self, ev):
        pass

event.register("numba:compile", Runtime())

@numbax.jit
def f(a, b):
    return np.linalg.solve(a @ a.T + np.eye(3), b), np.tril(a), np.moveaxis(a, 0, -1), np.argmax(a - b, axis=1)

@numbax.jit
def g(a, b):
    return a @ b

@numbax.jit
def h(a, b):
    return a - b

x, y, z, k = f(np.arange(9.0).reshape(3, 3), np.ones(3))
print(repr(float(x.sum())), float(y.sum()), float(z[2, 0]), k.tolist())
try:
    g(np.ones(3), np.ones(4))
except ValueError as error:  # raised by rt.check_matmul, which the generated code calls by symbol
    print(type(error).__name__, str(error).splitlines()[0].split(": ", 1)[1])
try:  # the check of shapes, loaded from the cache in a later process, refuses as it did compiled
    h(np.ones((2, 3)), np.ones(4))
except numbax.errors.NumbaxShapeError as error:
    print(str(error).splitlines()[0].split(": ", 1)[1])
print("runtime compiled:", " ".join(compiled), file=sys.stderr)
"""


def _run(cache: str, timings: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBAX_CACHE_DIR=cache, PYTHONPATH=ROOT)
    env.pop("NUMBAX_TIMINGS", None)
    if timings:
        env["NUMBAX_TIMINGS"] = "1"
    program = os.path.join(os.path.dirname(cache), "program.py")
    with open(program, "w") as file:
        file.write(_PROGRAM)
    proc = subprocess.run([sys.executable, program], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def _compiled(proc: subprocess.CompletedProcess) -> str:
    return next(line for line in proc.stderr.splitlines() if line.startswith("runtime compiled:"))


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """A first process on an empty cache, with ``NUMBAX_TIMINGS``: its cache and what it printed. One cold
    process (ten seconds) serves both tests that read one."""
    cache = str(tmp_path_factory.mktemp("first") / "numbax")
    return cache, _run(cache)


def test_a_helper_is_compiled_once_and_loaded_by_the_next_process(first_run):
    cache, first = first_run
    folders = os.listdir(os.path.join(cache, "runtime"))
    assert len(folders) == 1  # one runtime digest
    entries = os.listdir(os.path.join(cache, "runtime", folders[0]))
    assert any(e.startswith("checks.") and e.endswith(".nbi") for e in entries), entries
    # compiled in the first process: the checks of shapes (``a - b``, ``a @ a.T``), and kernels: of argmax along
    # an axis, and the helpers that call np.linalg.solve, np.tril, np.moveaxis and np.eye
    for module in ("numbax.runtime.checks", "numbax.runtime.loops"):
        assert module in _compiled(first)
    for entry in os.listdir(cache):  # a new program: generated code gone, the runtime's helpers kept
        if entry != "runtime":
            subprocess.run(["rm", "-rf", os.path.join(cache, entry)], check=True)
    second = _run(cache)
    assert second.stdout == first.stdout
    assert first.stdout.splitlines()[1] == ("NumbaxShapeError matmul: Input operand 1 has a mismatch in its core "
                                            "dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) (size 4 is "
                                            "different from 3)")
    assert second.stdout.splitlines()[2] == "operands could not be broadcast together with shapes (2,3) (4,) "
    assert "Numba compiling f" in second.stderr  # the generated code compiled again ...
    compiled = _compiled(second)  # ... but not the helpers, nor the checks of shapes: loaded
    assert "numbax.runtime.loops" not in compiled and "numbax.runtime.checks" not in compiled
    a = np.arange(9.0).reshape(3, 3)
    assert float(first.stdout.split()[0]) == pytest.approx(np.linalg.solve(a @ a.T + np.eye(3), np.ones(3)).sum(),
                                                           rel=1e-12)
    # the generated code, loaded, calls the helpers by symbol: its reload_init loads them first
    assert _run(cache, timings=False).stdout == first.stdout


def test_generated_code_calls_its_cached_helpers_without_a_copy_of_their_code(tmp_path):
    # Numba would link each helper's IR into the generated function, to be optimized and emitted once more;
    # outside loops every cached helper is called (in a loop, see the next test)
    old = numbax.config.read("cache_dir")
    numbax.config.update("cache_dir", str(tmp_path / "cache"))  # compiled here, not loaded (no IR to read)
    try:
        numbax.jit(_solve)(*_ARGS["linalg.solve"])
        results = [cres for key, dispatcher in compile_numba._DISPATCHERS.items() if "__solve_" in key[0]
                   for cres in dispatcher.overloads.values()]
        assert len(results) == 1
        called = [h for h in results[0].reload_init if isinstance(h, cached.CalledHelper)]
        expected = [("numbax.runtime.checks", "check_matmul"), ("numbax.runtime.numpy_once", "solve"),
                    ("numbax.runtime.numpy_once", "eye"), ("numbax.runtime.checks", "check_index"),
                    ("numbax.runtime.elementwise", "operator_add"), ("numbax.runtime.checks", "check_broadcast"),
                    ("numbax.runtime.contractions", "matmul")]
        assert sorted(h.template[:2] for h in called) == sorted(expected)
        text = results[0].library.get_llvm_str()
        for helper in called:
            assert f"declare i32 @{helper.symbol}(" in text and f"define linkonce_odr i32 @{helper.symbol}(" not in text
        called = [h for h in called if h.template[0] == "numbax.runtime.numpy_once"]
        # a new process whose helper has another name (compiled again): the caller's symbol is mapped to it
        renamed = dataclasses.replace(called[0], symbol="numbax_test_renamed_helper")
        renamed()
    finally:
        numbax.config.update("cache_dir", old)
    loaded = cached._LOADED[renamed.symbol]
    address = loaded.library.get_pointer_to_function(loaded.fndesc.mangled_name)
    assert address and llvm_binding.address_of_symbol(renamed.symbol) == address


LINKED_ABOVE_LEVEL_ZERO = """
import sys
sys.path.insert(0, "tests")
import numpy as np
import numbax
from numbax.backends.numba_cpu import compile as compile_numba
from numbax.runtime import cached
import test_runtime_cache as t
a = np.arange(9.0).reshape(3, 3) / 10.0
print(np.allclose(numbax.jit(t._looped)(a, 4), t._looped(a, 4), rtol=1e-13))
(result,) = [cres for key, dispatcher in compile_numba._DISPATCHERS.items() if "__looped_" in key[0]
             for cres in dispatcher.overloads.values()]
print(sorted(".".join(h.template[:2]) for h in result.reload_init if isinstance(h, cached.CalledHelper)))
"""


def _looped(a, k):
    total = np.zeros(3)
    for _ in range(k):
        total = total + a @ a[0]
    return np.linalg.solve(a @ a.T + np.eye(3), total)


def test_above_level_zero_a_small_helper_called_in_a_loop_is_linked_in_to_be_inlined(tmp_path):
    # at level 1 (the suite runs at 0, which inlines nothing): in the loop, the check of the ``+`` and the
    # kernel of ``a @ a[0]`` are linked in; outside it, the same kinds of helper are called, as are the
    # products' checks, the ``+``, the solve and the check of ``a[0]``, hoisted (``called=True``), wherever they are
    env = {**os.environ, "NUMBA_OPT": "1", "NUMBAX_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", LINKED_ABOVE_LEVEL_ZERO], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", str(sorted(
        ["numbax.runtime.checks.check_broadcast", "numbax.runtime.checks.check_matmul",
         "numbax.runtime.checks.check_matmul", "numbax.runtime.checks.check_span", "numbax.runtime.contractions.matmul",
         "numbax.runtime.elementwise.operator_add", "numbax.runtime.numpy_once.eye",
         "numbax.runtime.numpy_once.solve", "numbax.runtime.numpy_once.zeros"]))]


def test_timings_name_each_pass_and_numbas_stages(first_run):
    err = first_run[1].stderr
    assert "numbax timings: jit of f (" in err and "program.py:21)" in err
    passes = next(line for line in err.splitlines() if line.startswith("  numbax passes"))
    for name in ("parse+specialize", "inline", "anf", "checks", "transform", "optimize", "fuse", "legalize"):
        assert f"{name} " in passes
    stages = next(line for line in err.splitlines() if line.startswith("  generated code"))
    for stage in ("typing", "lowering", "LLVM", "other"):
        assert f"{stage} " in stages
    from numbax import timings
    from numbax.backends.numba_cpu.helper_calls import CallerLowering

    assert timings._STAGES[CallerLowering._name] == "lowering"  # numbax's lowering pass counts as lowering


def test_without_the_variable_nothing_is_printed(tmp_path):
    assert "numbax timings" not in _run(str(tmp_path / "numbax"), timings=False).stderr


def test_np_diag_is_the_runtimes_view_of_a_diagonal():
    source = numbax.source(_diag, *_ARGS["diag"])
    assert "rt.diag(a)" in source
    a = np.arange(9.0).reshape(3, 3)
    assert np.shares_memory(numbax.jit(lambda m: np.diag(m), backend="python")(a), a)


def _square(a):
    return a @ a.T + np.eye(3)


def _moveaxis(a):
    return np.moveaxis(a, 0, 1)


def _tril(a):
    return np.tril(a)


def _triu(a):
    return np.triu(a, 1)


def _outer(a):
    return np.outer(a[0], a[1])


def _diag(a):
    return np.diag(a)


def _concatenate(a):
    return np.concatenate((a, a[:1] * 2.0), 0)


def _concat(a):
    return np.concat((a, a[:, 1:]), 1)


def _ascontiguousarray(a):
    return np.ascontiguousarray(a.T) + 1.0


def _solve(a):
    return np.linalg.solve(_square(a), a[0])


def _inv(a):
    return np.linalg.inv(_square(a))


def _cholesky(a):
    return np.linalg.cholesky(_square(a))


def _det(a):
    return np.linalg.det(a)


def _slogdet(a):
    return np.linalg.slogdet(_square(a))


def _eigh(a):
    return np.linalg.eigh(_square(a))


def _qr(a):
    return np.linalg.qr(a)


def _svd(a):
    return np.linalg.svd(a)


def _empty(a):
    out = np.empty(a.shape[0], a.dtype)
    out[:] = a[0]
    return out


def _empty_like(a):
    out = np.empty_like(a, dtype=np.float32)
    out[:] = a
    return out


def _zeros(a):
    return np.zeros((a.shape[0], 2), dtype=np.int32)


def _ones(a):
    return np.ones(a.shape[0]) + a[0]


def _full(a):
    return np.full(a.shape, 2.5)


def _arange(a):
    return np.arange(1, a.shape[0] * 2, 2, dtype=np.float64)


def _eye(a):
    return np.eye(a.shape[0], a.shape[0] + 1, 1)


def _identity(a):
    return np.identity(a.shape[0])


def _linspace(a):
    return np.linspace(0.0, a[0, 0], 5)


def _array(a):
    return np.array((a[0, 0], a[1, 1], 4.0))


def _array_of_a_list(a):
    return np.array([a[0, 0], a[1, 1], 4.0])


def _asarray(a):
    return np.asarray((a[0, 0], 1.0))


def _copy(a):
    return np.copy(a)


def _zeros_like(a):
    return np.zeros_like(a, dtype=np.int64)


def _ones_like(a):
    return np.ones_like(a)


def _full_like(a):
    return np.full_like(a, 3.0)


def _mean(a):
    return np.mean(a)


def _sum(a):
    return np.sum(a)


def _var(a):
    return np.var(a)


def _std(a):
    return np.std(a)


def _sort(a):
    return np.sort(a[0] * a[1])


def _argsort(a):
    return np.argsort(a[0] * a[1])


def _cumsum(a):
    return np.cumsum(a)


def _cumprod(a):
    return np.cumprod(a)


# each NumPy function that generated code calls through a helper compiled once (``numpy_once``), and np.diag,
# which ``legalize`` sends to ``rt.diag``, by name -> a function calling it
_CALLS = {"moveaxis": _moveaxis, "concatenate": _concatenate, "concat": _concat,
          "ascontiguousarray": _ascontiguousarray, "tril": _tril, "triu": _triu, "outer": _outer, "diag": _diag,
          "linalg.solve": _solve, "linalg.inv": _inv, "linalg.cholesky": _cholesky, "linalg.det": _det,
          "linalg.slogdet": _slogdet, "linalg.eigh": _eigh, "linalg.qr": _qr, "linalg.svd": _svd,
          "empty": _empty, "empty_like": _empty_like, "zeros": _zeros, "ones": _ones, "full": _full,
          "arange": _arange, "eye": _eye, "identity": _identity, "linspace": _linspace, "array": _array,
          "asarray": _asarray, "copy": _copy, "zeros_like": _zeros_like, "ones_like": _ones_like,
          "full_like": _full_like, "mean": _mean, "sum": _sum, "var": _var, "std": _std,
          "sort": _sort, "argsort": _argsort, "cumsum": _cumsum,
          "cumprod": _cumprod}
_ARGS = {name: (np.arange(9.0).reshape(3, 3) / 7.0 - 0.4,) for name in _CALLS}


def _numpy_function(name: str):
    function = np
    for part in name.split("."):
        function = getattr(function, part)
    return function


def test_every_helper_is_tested():
    assert {_numpy_function(name) for name in _CALLS} - {np.diag} == set(numpy_once.HELPERS)


def _canonical(name: str, result):
    """What a result determines whatever signs LAPACK picks: a decomposition's product."""
    if name == "linalg.eigh":
        return result[1] @ np.diag(result[0]) @ result[1].T
    if name == "linalg.qr":
        return result[0] @ result[1]
    if name == "linalg.svd":
        return result[0] @ np.diag(result[1]) @ result[2]
    return np.asarray(result)


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_the_helpers_compute_what_numpy_does_and_generated_code_calls_them(name):
    jitted = numbax.jit(_CALLS[name])
    got, want = jitted(*_ARGS[name]), _CALLS[name](*_ARGS[name])
    np.testing.assert_allclose(_canonical(name, got), _canonical(name, want), rtol=1e-12, atol=1e-13)
    assert _canonical(name, got).dtype == _canonical(name, want).dtype
    # the source still reads ``np.linalg.solve(...)`` (but ``rt.diag``); the compiled code calls the helper
    assert _numpy_function(name).__name__ in _numpy_once_called(jitted)
    assert "rt." + name.rsplit(".", 1)[-1] not in numbax.source(_CALLS[name], *_ARGS[name]) or name == "diag"


def _numpy_once_called(jitted) -> set:
    """The names of ``numpy_once``'s helpers that the one function ``jitted`` compiled calls."""
    (compiled,) = jitted._cache.values()
    (result,) = compiled.function.overloads.values()
    return {h.template[1] for h in result.reload_init
            if isinstance(h, cached.CalledHelper) and h.template[0] == "numbax.runtime.numpy_once"}


def test_np_array_of_a_list_display_stays_numbas():
    # Numba writes the items into the new array, with no list made; a helper would take a list
    jitted = numbax.jit(_array_of_a_list)
    a = _ARGS["array"][0]
    np.testing.assert_array_equal(jitted(a), _array_of_a_list(a))
    assert "array" not in _numpy_once_called(jitted)


def test_kernels_of_one_text_seeing_different_functions_are_told_apart():
    source = "def impl(x):\n    return step(x)\n"
    assert cached.describe_kernel(source, {"step": np.sin}) != cached.describe_kernel(source, {"step": np.cos})
    assert cached.describe_kernel(source, {"step": np.sin}) == cached.describe_kernel(source, {"step": np.sin})
    assert cached.describe_kernel(source, {"t": types.float32}) != cached.describe_kernel(source, {"t": types.float64})


def test_a_kernel_seeing_a_value_without_a_stable_name_is_refused():
    def local(x):
        return x

    with pytest.raises(TypeError, match="no name that is stable across processes"):
        cached.describe_kernel("def impl(x):\n    return step(x)\n", {"step": local})


def test_a_runtime_function_calling_another_by_name_can_be_cached_at_the_suites_level():
    # at NUMBA_OPT=0 the load of a called function's address (a "dynamic global") stays in the caller unless
    # tests/conftest.py's dead-code passes delete it, and Numba then keeps the caller out of its disk cache:
    # the random kernels were compiled again in every test process
    from numbax.runtime.random import continuous, threefry

    np.testing.assert_array_equal(threefry.split_kernel(np.array([0, 0], np.uint32), (2,)),
                                  [[1797259609, 2579123966], [928981903, 3453687069]])
    continuous.normal_kernel(np.array([0, 0], np.uint32), (3,), np.float64)
    for kernel in (threefry.split_kernel, continuous.normal_kernel):
        assert kernel.overloads and not any(c.library.has_dynamic_globals for c in kernel.overloads.values())
