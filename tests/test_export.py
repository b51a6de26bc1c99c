"""``numbax.export`` and ``numbax export``: one module that needs numpy and numba only, checked in a fresh
virtual environment without numbax against numbax's own results.

Programs come from the corpora (``tests/corpus`` under ``jit``, ``tests/grad_corpus`` under ``grad``),
every ``STRIDE``-th case, and a few under ``vmap``, ``jacfwd``, ``jacrev``, ``hessian``, ``value_and_grad``,
``jvp``, ``lax`` control flow and ``numbax.random``. All modules are exported here, then one process of the
fresh environment imports each, calls it with the example and compares with numbax's answer (and checks
that ``import numbax`` fails there).
"""
import copy
import json
import os
import pathlib
import pickle
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numbax
from numbax import tree_util

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from corpus import all_cases as jit_cases  # noqa: E402
from fixtures import export_programs as programs  # noqa: E402
from grad_corpus import all_cases as grad_cases  # noqa: E402

STRIDE = 7
ROOT = pathlib.Path(__file__).resolve().parent.parent


def _portable(value) -> bool:
    """Whether ``value`` unpickles without numbax or the tests (plain containers of arrays and numbers)."""
    blob = pickle.dumps(value)
    return b"numbax" not in blob and b"corpus" not in blob and b"fixtures" not in blob




def _examples():
    """``(label, transformed function, example arguments)`` of every program exported."""
    for i, case in enumerate(jit_cases()):
        if i % STRIDE == 0 and not case.kwargs and not case.xfail and not callable_static(case):
            yield f"jit_{case.id}", numbax.jit(case.fn, static_argnums=case.static_argnums,
                                                static_argnames=case.static_argnames), case.args_factory
    for i, case in enumerate(grad_cases()):
        if i % STRIDE == 0 and not case.xfail and not callable_static(case):
            yield f"grad_{case.id}", numbax.grad(case.fn, argnums=case.argnums, has_aux=case.has_aux,
                                                  static_argnums=case.static_argnums), case.args_factory
    yield from programs.TRANSFORMED


def callable_static(case) -> bool:
    """A static argument that is a function (exported modules check statics against literals)."""
    args = case.args_factory()
    return any(callable(args[i]) for i in case.static_argnums if i < len(args))


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory):
    """A virtual environment holding numpy, numba, llvmlite and SciPy from this one, and not numbax."""
    import numpy

    folder = tmp_path_factory.mktemp("fresh")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True)
    python = folder / "venv" / "bin" / "python"
    found = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           check=True, capture_output=True, text=True).stdout.strip()
    packages = folder / "packages"
    packages.mkdir()
    site = pathlib.Path(numpy.__file__).resolve().parent.parent
    for entry in site.iterdir():
        if not entry.name.lower().startswith(("numbax", "__editable__", "_numbax")) and entry.suffix != ".pth":
            (packages / entry.name).symlink_to(entry)
    pathlib.Path(found, "packages.pth").write_text(str(packages) + "\n")
    return python


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """label -> (status, detail): each program exported, with numbax's answer on its example."""
    folder = tmp_path_factory.mktemp("exported")
    records, failures = [], {}
    for label, fun, make_args in _examples():
        label = label.replace(".", "_")
        args = make_args()
        kept = copy.deepcopy(args)  # functions may update their arguments in place
        expected = fun(*args)
        try:
            numbax.export(fun, *copy.deepcopy(kept), path=str(folder / f"{label}.py"))
        except numbax.NumbaxError as exc:
            failures[label] = str(exc)
            continue
        assert _portable((kept, expected)), label
        records.append((label, kept, expected))
    with open(folder / "records.pkl", "wb") as file:
        pickle.dump(records, file)
    return folder, records, failures


def _environment():
    """The environment of a process of the fresh Python: nothing on its path but its own packages."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONWARNINGS": "ignore"}


CHECK = textwrap.dedent("""
    import importlib, json, pickle, sys
    import numpy as np
    folder = sys.argv[1]
    sys.path.insert(0, folder)
    try:
        import numbax
        has_numbax = True
    except ImportError:
        has_numbax = False

    def same(a, b):
        if type(a) in (tuple, list):
            return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if type(a) is dict:
            return type(b) is dict and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if a is None:
            return b is None
        if np.asarray(a).dtype != np.asarray(b).dtype or np.shape(a) != np.shape(b):
            return False
        return bool(np.allclose(a, b, rtol=1e-12, atol=1e-14, equal_nan=True))

    results = {}
    for label, args, expected in pickle.load(open(folder + "/records.pkl", "rb")):
        try:
            module = importlib.import_module(label)
            got = getattr(module, module.__all__[0])(*args)
            results[label] = "same" if same(expected, got) else f"differs: {expected!r} != {got!r}"
        except Exception as exc:
            results[label] = f"{type(exc).__name__}: {exc}"
    print(json.dumps({"numbax": has_numbax, "results": results}))
""")


@pytest.fixture(scope="module")
def outcome(fresh_python, exported):
    folder, records, _ = exported
    run = subprocess.run([str(fresh_python), "-c", CHECK, str(folder)], capture_output=True, text=True,
                         timeout=900, cwd=folder, env=_environment())
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_the_fresh_environment_has_no_numbax(outcome):
    assert outcome["numbax"] is False


def test_every_exported_module_gives_numbax_answer(outcome, exported):
    _, records, _ = exported
    assert len(records) >= 60
    wrong = {label: result for label, result in outcome["results"].items() if result != "same"}
    assert not wrong
    assert set(outcome["results"]) == {r[0] for r in records}


def test_only_the_documented_refusals(exported):
    """What is not exported is refused for a reason the exported module could not honour."""
    _, _, failures = exported
    allowed = ("a container export cannot check", "export cannot rebuild")
    assert all(any(reason in text for reason in allowed) for text in failures.values()), failures


def test_an_exported_module_reads_as_generated_code(tmp_path):
    source = numbax.export(numbax.grad(programs.tanh_loop), np.ones(5), 2.0)
    assert not re.search(r"^\s*(from|import) numbax", source, re.MULTILINE)
    tail = source[source.index("# ---- the exported function"):]
    assert (ROOT / "tests" / "fixtures" / "export_tail.txt").read_text() == tail[tail.index("@numba.njit"):]


def test_the_exported_function_checks_its_arguments(fresh_python, tmp_path):
    numbax.export(numbax.jit(programs.scaled_sum, static_argnums=2), {"w": np.ones(3)}, np.ones(3),
                  path=str(tmp_path / "scaled.py"))
    script = textwrap.dedent("""
        import numpy as np, scaled
        print(scaled.scaled_sum({"w": np.arange(3.0)}, np.ones(3)))
        calls = [lambda: scaled.scaled_sum({"w": np.arange(3.0)}, np.ones(3, np.float32)),
                 lambda: scaled.scaled_sum({"w": np.arange(3.0)}, np.ones((3, 1))),
                 lambda: scaled.scaled_sum({"v": np.arange(3.0)}, np.ones(3)),
                 lambda: scaled.scaled_sum({"w": np.arange(3.0)}, np.ones(3), 3),
                 lambda: scaled.scaled_sum({"w": np.arange(3.0)}, np.ones(3), 2, 1)]
        for call in calls:
            try:
                call()
                print("ran")
            except TypeError as exc:
                print(exc)
    """)
    run = subprocess.run([str(fresh_python), "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300, env=_environment())
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[0] == "{'a': array(13.5), 'b': (array(1.), array(1.))}"
    assert lines[1] == "argument x must be a float64 array of rank 1, as the example this module was exported " \
                       "for; got a float32 array of rank 1"
    assert lines[2].startswith("argument x must be a float64 array of rank 1") and "rank 2" in lines[2]
    assert lines[3].startswith("argument p must have the structure {'w': 0}")
    assert lines[4] == "argument n is static: this module was exported for n=2, got 3"
    assert lines[5] == "argument scale must be a Python float, as the example this module was exported for; got int"


@pytest.mark.parametrize("make, fragment", [
    (lambda: numbax.export(numbax.jit(programs.returns_point), np.ones(2)), "holds a Point, which export cannot"),
    (lambda: numbax.export(numbax.jit(programs.takes_point), programs.Point(np.ones(2), np.ones(2))),
     "holds a container export cannot check"),
    (lambda: numbax.export(numbax.jit(programs.apply, static_argnums=0), np.sin, np.ones(2)),
     "static argument fn is a ufunc"),
    (lambda: numbax.export(numbax.grad(programs.with_int, allow_int=True), np.ones(2), 3), "allow_int"),
])
def test_what_export_refuses(make, fragment):
    with pytest.raises(numbax.NumbaxError, match=fragment):
        make()


def test_numbax_export_on_the_command_line(tmp_path, fresh_python, capsys):
    from numbax import cli

    target = tmp_path / "grad_tanh_loop.py"
    status = cli.main(["export", f"{programs.__file__}:tanh_loop", "--transform", "grad", "--args", "f64[5]",
                       "f64", "-o", str(target)])
    assert status == 0, capsys.readouterr().err
    assert target.read_text() == numbax.export(numbax.grad(programs.tanh_loop), np.zeros(5), np.float64(0))
    jvp_target = tmp_path / "jvp_tanh_loop.py"
    assert cli.main(["export", f"{programs.__file__}:tanh_loop", "--transform", "jvp", "--args", "f64[5]",
                     "f64", "-o", str(jvp_target)]) == 0
    x = np.linspace(0.0, 1.0, 5)
    script = textwrap.dedent(f"""
        import numpy as np, grad_tanh_loop, jvp_tanh_loop
        x = np.linspace(0.0, 1.0, 5)
        print(repr(grad_tanh_loop.grad_tanh_loop(x, np.float64(2)).tolist()))
        print(repr(jvp_tanh_loop.jvp_tanh_loop((x, np.float64(2)), (np.ones(5), np.float64(0.5)))))
    """)
    run = subprocess.run([str(fresh_python), "-c", script], capture_output=True, text=True, cwd=tmp_path,
                         timeout=300, env=_environment())
    assert run.returncode == 0, run.stderr[-3000:]
    grads, pushed = run.stdout.splitlines()
    np.testing.assert_allclose(eval(grads), numbax.grad(programs.tanh_loop)(x, 2.0), rtol=1e-14)
    out, tangent = numbax.jvp(programs.tanh_loop, (x, np.float64(2)), (np.ones(5), np.float64(0.5)))
    assert pushed == repr((out, tangent))


@pytest.mark.parametrize("value", [np.float32(0.1), np.arange(6.0).reshape(2, 3), np.array(3, np.int8), 1e-300, 3,
                                   True, 1 + 2j])
def test_constants_are_written_exactly(value):
    import base64

    from numbax.standalone.module import _is_number, _literal

    rebuilt = eval(_literal(value), {"np": np, "base64": base64})  # noqa: S307 - the module's own text
    assert type(rebuilt) is type(value)
    np.testing.assert_array_equal(rebuilt, value)
    assert _is_number(value) == (type(value) in (bool, int, float, complex))
