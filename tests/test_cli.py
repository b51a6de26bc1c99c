"""Tests for the ``numbax`` command line (``show``, ``export``) and for numbax.display."""
import configparser
import importlib
import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

from numbax import cli, display, generated_source
from numbax.ast_passes import pipeline

ROOT = pathlib.Path(__file__).resolve().parents[1]
MODULE = str(ROOT / "tests" / "fixtures" / "cli_module.py")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(capsys, *argv):
    """``main(argv)`` in-process: (status, stdout, stderr)."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def assert_user_error(status, out, err, *fragments):
    """Status 2, nothing on stdout, one ``numbax: error:`` line with each fragment, no traceback."""
    assert status == 2
    assert out == ""
    assert err.startswith("numbax: error: ")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err


def assert_is_source_of(out, name):
    assert "def " in out
    assert name in out
    compile(out, "<generated>", "exec")


# --- listing names ---------------------------------------------------------------------------


def test_list_passes(capsys):
    status, out, err = run(capsys, "show", "--list-passes")
    assert status == 0 and err == ""
    assert out.split() == list(pipeline.PASS_NAMES)


def test_list_transforms(capsys):
    status, out, _ = run(capsys, "show", "--list-transforms")
    assert status == 0
    assert out.split() == list(generated_source.TRANSFORMS)
    assert "jit" in out.split()


# --- show and export, end to end through the compiler ----------------------------------------


def test_show_prints_plain_source_when_piped(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]")
    assert status == 0, err
    assert not ANSI.search(out)
    assert_is_source_of(out, "add")


def test_show_color_always_highlights_the_same_source(capsys):
    _, plain, _ = run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]")
    status, colored, _ = run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]",
                             "--color", "always")
    assert status == 0
    assert ANSI.search(colored)
    assert ANSI.sub("", colored) == plain


def test_show_a_nested_pytree_argument(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:predict",
                           "--args", "[(f64[10,20], f64[20]), (f64[20,1], f64[1])]", "f64[5,10]")
    assert status == 0, err
    assert_is_source_of(out, "predict")


def test_show_takes_static_argnums_from_the_decorator(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:pick_jit", "--args", "(f64[3], f64[4])", "1")
    assert status == 0, err
    assert_is_source_of(out, "pick")


def test_show_static_argnums_on_the_command_line(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:pick", "--args", "(f64[3], f64[4])", "1",
                           "--static-argnums", "1")
    assert status == 0, err
    assert_is_source_of(out, "pick")


def test_show_static_argnames_on_the_command_line(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:pick", "--args", "(f64[3], f64[4])",
                           "--kwargs", "i=0", "--static-argnames", "i")
    assert status == 0, err
    assert_is_source_of(out, "pick")


def test_show_keyword_arguments(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:scaled", "--args", "f64[3]",
                           "--kwargs", "factor=f64[]")
    assert status == 0, err
    assert_is_source_of(out, "scaled")


def test_show_the_batched_source_of_vmap(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:predict", "--args", "[(f64[3,4], f64[4])]", "f64[5,3]",
                           "--transform", "vmap", "--in-axes", "(None, 0)")
    assert status == 0, err
    assert_is_source_of(out, "def vmap_predict(params_0_0, params_0_1, inputs):")
    assert "batch = rt.batch_size(inputs.shape[0])" in out and "for i in range(0, batch):" in out


def test_show_vmap_with_keyword_only_arguments_and_out_axes(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:scaled", "--args", "f64[5,3]", "--kwargs", "factor=f64[5]",
                           "--transform", "vmap", "--out-axes", "-1")
    assert status == 0, err
    assert "factor_2 = factor[i]" in out and "np.moveaxis(out, 0, -1)" in out


def test_show_pmap_prints_each_shards_code_and_its_collectives(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:normalized", "--args", "f64[2,3]", "--transform", "pmap",
                           "--axis-name", "devices")
    assert status == 0, err
    assert_is_source_of(out, "def pmap_normalized(x):")
    assert "rt.check_devices(batch, 1, False" in out
    assert re.search(r"\w+ = rt\.sum\(\w+_rows, 0\)", out), out  # psum over the shards, between stages
    assert "rt.collective_" not in out


@pytest.mark.parametrize("argv, fragment", [
    (("--in-axes", "1"), "--in-axes, --out-axes and --axis-name go with --transform vmap or pmap"),
    (("--axis-name", "i"), "--in-axes, --out-axes and --axis-name go with --transform vmap or pmap"),
    (("--transform", "vmap", "--in-axes", "(0"), "--in-axes expects a Python literal"),
    (("--transform", "vmap", "--out-axes", "x"), "--out-axes expects a Python literal"),
    (("--transform", "vmap", "--in-axes", "(0, 1)"), "vmap was requested to map its argument along axis 1"),
    (("--transform", "vmap", "--in-axes", "0.5"), "vmap in_axes must be an int, None, or a tuple"),
])
def test_vmap_axes_on_the_command_line_are_checked(capsys, argv, fragment):
    assert_user_error(*run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]", *argv), fragment)


@pytest.mark.parametrize("name", pipeline.PASS_NAMES)
def test_show_after_each_pass(capsys, name):
    status, out, err = run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]",
                           "--pass", name)
    assert status == 0, err
    assert "def " in out
    compile(out, "<generated>", "exec")


def test_show_a_relative_path(capsys, monkeypatch):
    monkeypatch.chdir(ROOT / "tests")
    status, out, err = run(capsys, "show", "fixtures/cli_module.py:add", "--args", "f64[3]", "f64[3]")
    assert status == 0, err
    assert_is_source_of(out, "add")


def test_export_writes_a_standalone_module(capsys, tmp_path):
    """The shown code, compiled under its name with an underscore, and no import of numbax
    (tests/test_export.py runs exported modules without numbax)."""
    target = tmp_path / "add_jit.py"
    status, out, err = run(capsys, "export", f"{MODULE}:add", "--args", "f64[3]", "f64[3]",
                           "-o", target)
    assert (status, out, err) == (0, "", "")
    _, shown, _ = run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]")
    written = target.read_text()
    body = shown[shown.index("def add("):].replace("def add(", "def _add(").replace("rt.", "")
    assert '@numba.njit(error_model="numpy")\n' + body in written
    assert not re.search(r"^\s*(from|import) numbax", written, re.MULTILINE)
    assert_is_source_of(written, "add")


def test_export_refuses_what_show_alone_takes(capsys, tmp_path):
    target = tmp_path / "add_jit.py"
    assert_user_error(*run(capsys, "export", f"{MODULE}:add", "--args", "f64[3]", "f64[3]", "--pass", "anf",
                           "-o", target), "--pass goes with show")
    assert_user_error(*run(capsys, "export", f"{MODULE}:add", "--args", "f64[3]", "--kwargs", "y=f64[3]",
                           "-o", target), "by position")


def test_a_compiler_error_reaches_the_user_without_a_traceback(capsys):
    status, out, err = run(capsys, "show", f"{MODULE}:uses_try", "--args", "f64[3]")
    assert status == 2 and out == ""
    assert err.startswith("numbax: error: ")
    assert "try" in err and "cli_module.py" in err
    assert "Traceback" not in err


def test_a_container_index_that_is_not_static_is_a_compiler_error(capsys):
    status, _, err = run(capsys, "show", f"{MODULE}:pick", "--args", "(f64[3], f64[4])", "1")
    assert status == 2
    assert err.startswith("numbax: error: ") and "Traceback" not in err


def test_the_console_script_entry_point(tmp_path):
    """``python -m numbax`` in a fresh process, and the console script setup.cfg declares."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-m", "numbax", "show", f"{MODULE}:add",
                           "--args", "f64[3]", "f64[3]"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not ANSI.search(done.stdout)
    assert_is_source_of(done.stdout, "add")
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    script = config["options.entry_points"]["console_scripts"].strip()
    name, _, target = (part.strip() for part in script.partition("="))
    module, _, attr = target.partition(":")
    assert name == "numbax"
    assert getattr(importlib.import_module(module), attr) is cli.main


# --- loading the file and finding the function (no compiler needed) --------------------------


def test_load_target_unwraps_a_numbax_decorator():
    target = cli.load_target(f"{MODULE}:pick_jit")
    assert target.fun.__name__ == "pick"
    assert target.static_argnums == (1,)
    assert target.static_argnames == ('i',)  # completed from static_argnums, as JAX does


def test_load_target_of_a_plain_function():
    target = cli.load_target(f"{MODULE}:add")
    assert target.fun.__name__ == "add"
    assert (target.static_argnums, target.static_argnames) == ((), ())


def test_the_loaded_module_is_registered_so_its_source_can_be_read():
    fun = cli.load_target(f"{MODULE}:add").fun
    assert fun.__module__ in sys.modules
    assert "return x + y" in inspect.getsource(fun)


def test_load_target_with_a_dotted_name(tmp_path):
    (tmp_path / "model.py").write_text(
        "class Model:\n    @staticmethod\n    def forward(x):\n        return x * 2\n")
    assert cli.load_target(f"{tmp_path / 'model.py'}:Model.forward").fun.__name__ == "forward"


def test_a_file_can_import_its_neighbours(tmp_path):
    (tmp_path / "helpers_for_cli_test.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "main_mod.py").write_text("from helpers_for_cli_test import double\n"
                                          "def f(x):\n    return double(x)\n")
    assert cli.load_target(f"{tmp_path / 'main_mod.py'}:f").fun.__name__ == "f"
    assert str(tmp_path) not in sys.path


def test_a_file_without_the_py_suffix_loads(tmp_path):
    (tmp_path / "script").write_text("def f(x):\n    return x\n")
    assert cli.load_target(f"{tmp_path / 'script'}:f").fun.__name__ == "f"


# --- user errors: one line, status 2 ---------------------------------------------------------


def test_missing_file(capsys, tmp_path):
    missing = tmp_path / "nope.py"
    assert_user_error(*run(capsys, "show", f"{missing}:f", "--args", "f64[3]"),
                      f"no such file: {missing}")


def test_a_directory_is_not_a_file(capsys, tmp_path):
    assert_user_error(*run(capsys, "show", f"{tmp_path}:f"), "is a directory")


def test_syntax_error_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\n\ndef f(x:\n    return x\n")
    assert_user_error(*run(capsys, "show", f"{bad}:f", "--args", "f64[3]"),
                      f"{bad}:3: syntax error")


def test_an_exception_while_importing_names_file_and_line(capsys, tmp_path):
    bad = tmp_path / "raises.py"
    bad.write_text("x = 1\nraise RuntimeError('no data')\n")
    assert_user_error(*run(capsys, "show", f"{bad}:f"),
                      f"{bad}:2: importing the file raised RuntimeError: no data")
    assert not any(name.startswith("_numbax_cli_raises_") for name in sys.modules)


def test_sys_exit_while_importing_is_reported(capsys, tmp_path):
    bad = tmp_path / "exits.py"
    bad.write_text("import sys\nsys.exit(3)\n")
    assert_user_error(*run(capsys, "show", f"{bad}:f"), "raised SystemExit")


def test_missing_function_suggests_a_close_name(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:ad", "--args", "f64[3]"),
                      "has no function 'ad'; did you mean 'add'?")


def test_missing_function_lists_the_functions(capsys, tmp_path):
    path = tmp_path / "one.py"
    path.write_text("def only(x):\n    return x\n")
    assert_user_error(*run(capsys, "show", f"{path}:zzz"), "has no function 'zzz' (it defines: only)")


def test_not_a_function(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:SCALE", "--args", "f64[3]"),
                      f"{MODULE}:SCALE is a float, not a function")


def test_a_module_is_not_a_function(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:np"), "is a module, not a function")


@pytest.mark.parametrize("target", ["cli_module.py", "cli_module.py:", ":add"])
def test_malformed_target(capsys, target):
    assert_user_error(*run(capsys, "show", target), "expected FILE.py:FUNCTION")


def test_bad_spec(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:add", "--args", "f65[3]", "f64[3]"),
                      "bad argument spec 'f65[3]': unknown dtype 'f65'")


def test_bad_kwargs_spec(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:scaled", "--args", "f64[3]",
                           "--kwargs", "factor=f64[n]"), "dimension 'n'")


@pytest.mark.parametrize("item", ["factor", "=f64[]", "2x=f64[]"])
def test_malformed_kwargs(capsys, item):
    assert_user_error(*run(capsys, "show", f"{MODULE}:scaled", "--args", "f64[3]", "--kwargs", item),
                      f"--kwargs expects NAME=SPEC, got {item!r}")


def test_repeated_kwargs(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:scaled", "--args", "f64[3]",
                           "--kwargs", "factor=1.0", "factor=2.0"), "'factor' twice")


def test_specs_that_do_not_fit_the_parameters(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]"),
                      "add(x, y) cannot take these --args/--kwargs: missing a required argument: 'y'")


def test_unknown_transform_lists_the_valid_ones(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]",
                           "--transform", "nope"),
                      "unknown transform 'nope' (valid: " + ", ".join(generated_source.TRANSFORMS) + ")")


def test_unknown_pass_lists_the_valid_ones(capsys):
    assert_user_error(*run(capsys, "show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]",
                           "--pass", "nope"),
                      "unknown pass 'nope' (valid: " + ", ".join(pipeline.PASS_NAMES) + ")")


def test_show_without_a_target(capsys):
    assert_user_error(*run(capsys, "show"), "show needs FILE.py:FUNCTION")


def test_a_target_after_the_specs_is_explained(capsys):
    assert_user_error(*run(capsys, "show", "--args", "f64[3]", f"{MODULE}:add"),
                      "given before --args")


def test_export_without_output(capsys):
    assert_user_error(*run(capsys, "export", f"{MODULE}:add", "--args", "f64[3]", "f64[3]"),
                      "the following arguments are required: -o/--output")


def test_export_into_a_missing_directory(capsys, tmp_path):
    out = tmp_path / "no" / "such" / "dir.py"
    assert_user_error(*run(capsys, "export", f"{MODULE}:add", "--args", "f64[3]", "f64[3]", "-o", out),
                      f"cannot write {out}")


@pytest.mark.parametrize("argv, fragment", [
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["show", "--bogus"], "unrecognized arguments: --bogus"),
    (["show", "--color", "sometimes"], "invalid choice: 'sometimes'"),
    (["show", "--static-argnums", "x"], "invalid int value: 'x'"),
])
def test_usage_errors_are_one_line(capsys, argv, fragment):
    assert_user_error(*run(capsys, *argv), fragment, "--help")


def test_version(capsys):
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.startswith("numbax ")


def test_help_exits_zero(capsys):
    status, out, _ = run(capsys, "show", "--help")
    assert status == 0
    assert "FILE.py:FUNCTION" in out and "--args" in out


def test_an_internal_error_is_one_line_unless_traceback_is_asked_for(capsys, monkeypatch):
    def broken(ns):
        raise KeyError("oops")

    monkeypatch.setattr(cli, "generate", broken)
    argv = ["show", f"{MODULE}:add", "--args", "f64[3]", "f64[3]"]
    status, _, err = run(capsys, *argv)
    assert status == 1
    assert err.startswith("numbax: error: internal error: KeyError") and err.count("\n") == 1
    with pytest.raises(KeyError):
        cli.main(argv + ["--traceback"])


# --- colour choice and highlighting ----------------------------------------------------------


class _Stream:
    def __init__(self, tty):
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("choice, tty, no_color, expected", [
    ("always", False, False, True), ("never", True, False, False),
    ("auto", True, False, True), ("auto", False, False, False), ("auto", True, True, False),
])
def test_want_color(monkeypatch, choice, tty, no_color, expected):
    monkeypatch.delenv("NO_COLOR", raising=False)
    if no_color:
        monkeypatch.setenv("NO_COLOR", "1")
    assert cli.want_color(choice, _Stream(tty)) is expected


def test_want_color_of_a_stream_without_isatty():
    assert cli.want_color("auto", object()) is False


SOURCE = "def f(x):\n    return x < 1  # small\n"


def test_highlight_terminal():
    text = display.highlight_terminal(SOURCE)
    assert ANSI.search(text)
    assert ANSI.sub("", text) == SOURCE


def test_highlight_html_uses_inline_styles():
    text = display.highlight_html(SOURCE)
    assert text.startswith("<div") and 'style="' in text
    assert "<span" in text and "class=\"k\"" not in text
    assert "&lt;" in text


def test_without_pygments_the_text_comes_back_plain(monkeypatch):
    for name in [m for m in sys.modules if m == "pygments" or m.startswith("pygments.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pygments", None)
    assert display.highlight_terminal(SOURCE) == SOURCE
    assert display.highlight_html(SOURCE) == "<pre>def f(x):\n    return x &lt; 1  # small\n</pre>"
