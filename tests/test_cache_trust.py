"""The disk cache loads only what it verified, from a directory that is the user's own.

Damaged, truncated, swapped or foreign entries (numbax's modules and pickles, Numba's index and data
files) are misses: the next process compiles again, gets the right numbers, and replaces them, so the
process after that starts warm again. A cache directory that someone else could write is refused with a
``NumbaxCacheError``; one that cannot hold a cache gives one ``NumbaxCacheWarning`` and an in-memory cache.
Tests run as root here: another owner is made with ``os.chown``, and a read-only directory is read-only by
its mode bits (which numbax reads, rather than waiting for the kernel to refuse root).
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import numbax

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = textwrap.dedent("""
    import numpy as np
    import numbax
    from numbax.ast_passes import pipeline
    from numbax.backends.numba_cpu import compile as numba_compile

    runs = []
    real = pipeline.run
    pipeline.run = lambda *a, **k: runs.append(1) or real(*a, **k)


    def f1(x):
        return np.sum(x * 2.0)


    def f2(x):
        return np.sum(x * 3.0) - 1.0


    x = np.array([0.3, -0.7, 1.1, 0.5])
    got = [float(numbax.jit(f)(x)) for f in (f1, f2)]
    hits = sum(sum(d.stats.cache_hits.values()) for d in numba_compile._DISPATCHERS.values())
    print(got == [float(f1(x)), float(f2(x))], len(runs), hits)
""")


def run(program: str, cache: str) -> tuple:
    """``(right numbers, numbax pipeline runs, Numba cache hits)`` of a new process using ``cache``."""
    env = dict(os.environ, NUMBAX_CACHE_DIR=cache, PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_CACHE_DIR", None)  # Numba's files in the cache's own __pycache__, where the tests damage them
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, program], env=env, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    right, runs, hits = out.stdout.split()
    return right == "True", int(runs), int(hits)


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """The program's path and a cache its first process filled (copied by each test: the key holds the path)."""
    folder = tmp_path_factory.mktemp("program")
    program = folder / "program.py"
    program.write_text(PROGRAM)
    assert run(str(program), str(folder / "numbax")) == (True, 2, 0)
    return str(program), folder / "numbax"


@pytest.fixture
def cache(warm_cache, tmp_path):
    """A copy of the warm cache for one test (modes and modification times kept, as Numba's index needs)."""
    shutil.copytree(warm_cache[1], tmp_path / "numbax", symlinks=True)
    return tmp_path / "numbax"


def _truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _garbage(path):
    path.write_bytes(b"def f1(x:\n\x00\x01 not a module, not a pickle")


def _swap(first, second):
    a, b = first.read_bytes(), second.read_bytes()
    first.write_bytes(b)
    second.write_bytes(a)


# (files, damage, (pipeline runs, Numba cache hits) in the next process)
DAMAGE = {
    "truncated module": ("numbax_generated_*.py", _truncate, (0, 2)),  # Numba's stamp: the file's content
    "garbage module": ("numbax_generated_*.py", _garbage, (0, 2)),
    "truncated entry": ("generated/*.pkl", _truncate, (2, 2)),
    "garbage entry": ("generated/*.pkl", _garbage, (2, 2)),
    "damaged Numba index": ("__pycache__/*.nbi", _garbage, (0, 0)),
    "truncated Numba data": ("__pycache__/*.nbc", _truncate, (0, 0)),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_file_is_compiled_again_and_replaced(warm_cache, cache, case):
    pattern, damage, expected = DAMAGE[case]
    files = sorted(cache.glob(pattern))
    assert len(files) == 2
    for path in files:
        damage(path)
    assert run(warm_cache[0], str(cache)) == (True,) + expected
    assert run(warm_cache[0], str(cache)) == (True, 0, 2)  # replaced: warm again


@pytest.mark.parametrize("pattern, expected", [("generated/*.pkl", (2, 2)), ("numbax_generated_*.py", (0, 2)),
                                               ("__pycache__/*.nbi", (0, 0))])
def test_swapped_entries_give_each_function_its_own_result(warm_cache, cache, pattern, expected):
    _swap(*sorted(cache.glob(pattern)))
    assert run(warm_cache[0], str(cache)) == (True,) + expected
    assert run(warm_cache[0], str(cache)) == (True, 0, 2)


def test_a_symlinked_entry_is_replaced_and_its_target_left_alone(warm_cache, cache, tmp_path):
    target = tmp_path / "elsewhere.py"
    target.write_text("raise SystemExit('the target of a link ran')\n")
    for path in cache.glob("numbax_generated_*.py"):
        path.unlink()
        path.symlink_to(target)
    assert run(warm_cache[0], str(cache)) == (True, 0, 2)
    assert target.read_text() == "raise SystemExit('the target of a link ran')\n"
    assert not any(p.is_symlink() for p in cache.glob("numbax_generated_*.py"))


# ---- the directory: the user's own, or refused; unusable, or warned about once ----------------------------


def _f(x):
    return np.sum(np.cos(x) * 2.0)


X = np.array([0.3, -0.7, 1.1, 0.5])


@pytest.fixture
def use_cache():
    """Point numbax's cache at a path for this test."""
    old = numbax.config.read("cache_dir")
    numbax.clear_caches()  # numbax.jit(_f) made anew, so that it compiles with this cache

    def use(path):
        numbax.config.update("cache_dir", str(path))
        numbax.clear_caches()

    yield use
    numbax.config.update("cache_dir", old)
    numbax.clear_caches()


def test_a_new_cache_directory_is_owner_only(tmp_path, use_cache):
    use_cache(tmp_path / "new" / "numbax")
    assert numbax.jit(_f)(X) == _f(X)
    for folder in ("", "generated", "__pycache__"):
        assert os.stat(tmp_path / "new" / "numbax" / folder).st_mode & 0o777 == 0o700


def test_a_directory_of_another_user_is_refused(tmp_path, use_cache):
    folder = tmp_path / "theirs"
    folder.mkdir(mode=0o700)
    os.chown(folder, 12345, -1)
    use_cache(folder)
    message = re.escape(f"{folder} belongs to another user (uid 12345")
    with pytest.raises(numbax.NumbaxCacheError, match=message) as info:
        numbax.jit(_f)(X)
    assert "NUMBAX_CACHE_DIR" in str(info.value)
    assert os.listdir(folder) == []


def test_a_directory_not_of_the_effective_user_is_refused(tmp_path, use_cache, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(tmp_path).st_uid + 1)
    use_cache(tmp_path / "mine")
    with pytest.raises(numbax.NumbaxCacheError, match="belongs to another user"):
        numbax.jit(_f)(X)


@pytest.mark.parametrize("mode, writers", [(0o770, "group"), (0o707, "others"), (0o777, "group and others")])
def test_a_directory_others_may_write_is_refused(tmp_path, use_cache, mode, writers):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    use_cache(folder)
    with pytest.raises(numbax.NumbaxCacheError, match=re.escape(f"{folder} can be written by {writers} ")) as info:
        numbax.jit(_f)(X)
    assert f"chmod go-w {folder}" in str(info.value)
    assert os.listdir(folder) == []


def _sinh_total(x):
    return np.sum(np.sinh(x))


def _tanh_total(x):
    return np.sum(np.tanh(x))


# A function per folder whose module no earlier test loaded (a loaded module is not looked up again).
@pytest.mark.parametrize("name, fn", [("generated", _sinh_total), ("__pycache__", _tanh_total)])
def test_a_symlinked_subfolder_is_refused(tmp_path, use_cache, name, fn):
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "numbax").mkdir(mode=0o700)
    (tmp_path / "numbax" / name).symlink_to(outside)
    use_cache(tmp_path / "numbax")
    with pytest.raises(numbax.NumbaxCacheError, match=re.escape(f"{tmp_path / 'numbax' / name} is a symbolic link")):
        numbax.jit(fn)(X)
    assert os.listdir(outside) == []


def _cube(x):
    return np.sum(x * x * x)


def test_a_read_only_directory_warns_once_and_keeps_code_in_memory(tmp_path, use_cache):
    folder = tmp_path / "read-only"
    folder.mkdir(mode=0o500)
    use_cache(folder)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert numbax.jit(_f)(X) == _f(X)
        assert numbax.jit(_cube)(X) == _cube(X)
        assert numbax.jit(_f)(X * 2.0) == _f(X * 2.0)
    assert [type(w.message) for w in caught] == [numbax.NumbaxCacheWarning]
    assert f"{folder}: it is read-only" in str(caught[0].message)
    assert os.listdir(folder) == []


@pytest.mark.parametrize("where, why", [("file", "it is not a directory"),
                                        ("file/numbax", "it cannot be created ([Errno 17] File exists")])
def test_an_unusable_path_warns_and_keeps_code_in_memory(tmp_path, use_cache, where, why):
    (tmp_path / "file").write_text("not a directory")
    use_cache(tmp_path / where)
    with pytest.warns(numbax.NumbaxCacheWarning, match=re.escape(f"{tmp_path / where}: {why}")):
        assert numbax.jit(_cube)(X) == _cube(X)
    assert (tmp_path / "file").read_text() == "not a directory"


def test_machine_code_is_keyed_by_the_runtimes_source(tmp_path, monkeypatch):
    # Numba stamps a cached function with its own file, not with the runtime functions compiled into it: a
    # numbax whose runtime changed must not load machine code compiled from the old one
    from numbax.backends.numba_cpu import compile as cpu

    source = "def plus_one(x):\n    return x + 1\n"
    before = cpu.compile_function(source, "plus_one", str(tmp_path))
    monkeypatch.setattr(cpu, "runtime_digest", lambda: "another runtime")
    after = cpu.compile_function(source, "plus_one", str(tmp_path))
    assert before.py_func.__module__ != after.py_func.__module__
    assert len(list(tmp_path.glob("numbax_generated_plus_one_*.py"))) == 2


def _first_user_function(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.prod(np.tanh(x))


def _second_user_function(x, y):
    return np.sum(np.tanh(x * y) ** 2) + np.sum(np.exp(0.3 * x))


def test_closures_numbax_makes_are_keyed_by_what_they_close_over(tmp_path):
    # test_util's f_vjp closes over the user's f: keyed by its name alone, the generated code of one f was
    # loaded for another (check_grads of order 2 gave another function's second derivatives)
    from numbax import generated_cache, test_util

    a, b = test_util._packed_vjp(_first_user_function), test_util._packed_vjp(_second_user_function)
    assert generated_cache.value(a) != generated_cache.value(b)
    assert generated_cache.value(a) == generated_cache.value(test_util._packed_vjp(_first_user_function))
    x, y = np.array([0.3, -1.2, 0.7]), np.array([1.1, 0.4, -0.6])
    before = numbax.config.read("cache_dir")
    numbax.config.update("cache_dir", str(tmp_path / "cache"))  # a cache of this test's own, empty
    try:
        for fn in (_second_user_function, _first_user_function):  # one cache, one after the other
            test_util.check_grads(fn, (x, y), 2, modes=("rev",))
    finally:
        numbax.config.update("cache_dir", before)
