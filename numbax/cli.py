"""cli: the ``numbax`` command: ``show`` prints the code numbax generates, ``export`` writes it to a file.

    numbax show model.py:loss --args '[(f64[10,20], f64[20])]' f64[5,10] --pass anf
    numbax show model.py:loss --args '[(f64[10,20], f64[20])]' f64[32,5,10] --transform vmap --in-axes '(None, 0)'
    numbax show model.py:loss --args '[(f64[10,20], f64[20])]' f64[5,10] --backend gpu
    numbax export model.py:loss --args '[(f64[10,20], f64[20])]' f64[5,10] -o loss_jit.py

Every user error ends the command with status 2 and one line on stderr that
starts with ``numbax: error:`` (a ``NumbaxError`` from the compiler keeps its
multi-line message: the user's line and a caret). No traceback is shown unless
``--traceback`` asks for one.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import difflib
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import pathlib
import re
import sys
import traceback
import types
from typing import Any, Dict, Iterator, Optional, Sequence, TextIO, Tuple

from numbax import display, generated_source
from numbax.arg_spec import ArgSpecError, parse_spec
from numbax.ast_passes import pipeline
from numbax.errors import NumbaxError

__all__ = ["CliError", "Target", "build_parser", "load_target", "main", "want_color"]

PROG = "numbax"


class CliError(Exception):
    """A user error on the command line; its message is printed after ``numbax: error:``."""


@dataclasses.dataclass(frozen=True)
class Target:
    """The function named by ``FILE.py:FUNCTION``, unwrapped from a numbax decorator."""

    fun: types.FunctionType
    static_argnums: Tuple[int, ...] = ()
    static_argnames: Tuple[str, ...] = ()


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors become one ``numbax: error:`` line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{message} (see '{self.prog} --help')")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``numbax`` command.

    Args:
        argv: the arguments after the program name; ``sys.argv[1:]`` by default.

    Returns:
        The exit status: 0 on success, 2 for a user error, 1 for a bug in numbax.
    """
    parser = build_parser()
    try:
        ns = parser.parse_args(argv)
        return ns.handler(ns)
    except SystemExit as exc:  # argparse's --help and --version
        return exc.code if isinstance(exc.code, int) else 0
    except (CliError, ArgSpecError, NumbaxError) as exc:
        return _fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug in numbax, reported without a traceback
        if _wants_traceback(argv):
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} (a bug in numbax; "
                     "rerun with --traceback and please report it)", status=1)


def _wants_traceback(argv: Optional[Sequence[str]]) -> bool:
    """Whether ``--traceback`` is on the command line (checked even when parsing failed)."""
    return "--traceback" in (sys.argv[1:] if argv is None else argv)


def _fail(message: str, status: int = 2) -> int:
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return status


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for ``numbax`` and its subcommands ``show`` and ``export``."""
    from numbax import __version__

    parser = _Parser(prog=PROG, description="Show or export the Python code numbax generates.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(title="commands", dest="command", metavar="COMMAND",
                                     parser_class=_Parser)
    commands.required = True
    show = commands.add_parser(
        "show", help="print the generated code of a function",
        usage="%(prog)s FILE.py:FUNCTION [--args SPEC ...] [options]\n"
              "       %(prog)s --list-passes | --list-transforms",
        description="Print the code numbax generates for FILE.py:FUNCTION.")
    _add_target_arguments(show, required=False)
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="highlight the code (auto: when stdout is a terminal and NO_COLOR is unset)")
    show.add_argument("--list-passes", action="store_true", help="print the names --pass accepts")
    show.add_argument("--list-transforms", action="store_true",
                      help="print the names --transform accepts")
    show.set_defaults(handler=_run_show)
    export = commands.add_parser(
        "export", help="write the generated code of a function to a file",
        usage="%(prog)s FILE.py:FUNCTION [--args SPEC ...] -o OUT.py [options]",
        description="Write one Python module that needs only numpy and numba: the code numbax generates "
                    "for FILE.py:FUNCTION, with the runtime helpers it calls copied in.")
    _add_target_arguments(export, required=True)
    export.add_argument("-o", "--output", required=True, metavar="OUT.py", help="the file to write")
    export.set_defaults(handler=_run_export)
    return parser


def _add_target_arguments(parser: argparse.ArgumentParser, required: bool) -> None:
    parser.add_argument("target", nargs=None if required else "?", metavar="FILE.py:FUNCTION",
                        help="the file and the name of the function in it")
    parser.add_argument("--args", nargs="*", default=[], metavar="SPEC",
                        help="one example per positional argument: f64[3], i32[2,2], f64[] (0-d), "
                             "literals for static arguments, nested: '[(f64[10,20], f64[20])]'")
    parser.add_argument("--kwargs", nargs="*", default=[], metavar="NAME=SPEC",
                        help="examples of keyword arguments")
    parser.add_argument("--static-argnums", nargs="*", type=int, metavar="N",
                        help="positions of static arguments (default: the decorator's)")
    parser.add_argument("--static-argnames", nargs="*", metavar="NAME",
                        help="names of static arguments (default: the decorator's)")
    parser.add_argument("--transform", default="jit", help="the transformation (default: jit)")
    parser.add_argument("--in-axes", default="0", metavar="AXES",
                        help="with --transform vmap or pmap: in_axes as a Python literal, e.g. '(None, 0)' "
                             "(default: 0)")
    parser.add_argument("--out-axes", default="0", metavar="AXES",
                        help="with --transform vmap or pmap: out_axes as a Python literal (default: 0)")
    parser.add_argument("--axis-name", metavar="NAME",
                        help="with --transform vmap or pmap: the name of the mapped axis, which the function's "
                             "collectives (lax.psum, ...) use")
    parser.add_argument("--backend", choices=("cpu", "gpu"), default="cpu",
                        help="the backend whose code to show: gpu prints the kernels and their host driver "
                             "(default: cpu)")
    parser.add_argument("--pass", dest="after_pass", metavar="NAME",
                        help="show the code right after this pass instead of the final code")
    parser.add_argument("--traceback", action="store_true",
                        help="show the Python traceback of an internal error")


def _run_show(ns: argparse.Namespace) -> int:
    if ns.list_passes or ns.list_transforms:
        names = list(pipeline.PASS_NAMES) if ns.list_passes else []
        names += list(generated_source.TRANSFORMS) if ns.list_transforms else []
        print("\n".join(names))
        return 0
    if ns.target is None:
        raise CliError("show needs FILE.py:FUNCTION, given before --args "
                       "(or --list-passes, --list-transforms)")
    source = _ensure_newline(generate(ns))
    sys.stdout.write(display.highlight_terminal(source) if want_color(ns.color) else source)
    return 0


def _run_export(ns: argparse.Namespace) -> int:
    """Write the module ``numbax.export`` makes: the generated code with the runtime it calls, standalone."""
    from numbax.standalone import export

    if ns.after_pass is not None:
        raise CliError("--pass goes with show: export writes the final code")
    if ns.backend != "cpu":
        raise CliError("--backend gpu goes with show: export writes the CPU backend's code")
    if ns.kwargs:
        raise CliError("export takes its examples by position: give every argument with --args")
    target = load_target(ns.target)
    transform = _check_name("transform", ns.transform, generated_source.TRANSFORMS)
    args = tuple(parse_spec(spec) for spec in ns.args)
    _check_call(target.fun, args, {})
    jitted = generated_source.transformed(
        target.fun, transform,
        target.static_argnums if ns.static_argnums is None else tuple(ns.static_argnums),
        target.static_argnames if ns.static_argnames is None else tuple(ns.static_argnames),
        backend="cpu", **_vmap_axes(ns, transform))
    source = export(jitted, *args)
    try:
        pathlib.Path(ns.output).write_text(source, encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot write {ns.output}: {exc.strerror or exc}") from None
    return 0


def _ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def want_color(choice: str, stream: Optional[TextIO] = None) -> bool:
    """Whether to highlight: ``always``, ``never``, or ``auto`` (a terminal, and NO_COLOR unset).

    Args:
        choice: the value of ``--color``.
        stream: where the code goes; ``sys.stdout`` by default.

    Returns:
        True to print ANSI colours.
    """
    if choice != "auto":
        return choice == "always"
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and not os.environ.get("NO_COLOR")


def generate(ns: argparse.Namespace) -> str:
    """The generated source for the parsed command line of ``show`` or ``export``.

    Args:
        ns: the parsed arguments (target, specs, static arguments, transform, pass).

    Returns:
        The source text from ``numbax.generated_source.source_for``.

    Raises:
        CliError: the file, function, spec, transform or pass is wrong.
        NumbaxError: numbax cannot compile the function.
    """
    target = load_target(ns.target)
    static_argnums = target.static_argnums if ns.static_argnums is None else tuple(ns.static_argnums)
    static_argnames = target.static_argnames if ns.static_argnames is None else tuple(ns.static_argnames)
    transform = _check_name("transform", ns.transform, generated_source.TRANSFORMS)
    after_pass = None if ns.after_pass is None else _check_name("pass", ns.after_pass,
                                                                pipeline.PASS_NAMES)
    args = tuple(parse_spec(spec) for spec in ns.args)
    kwargs = _parse_kwargs(ns.kwargs)
    _check_call(target.fun, args, kwargs)
    axes = _vmap_axes(ns, transform)
    try:
        return generated_source.source_for(target.fun, args, kwargs, transform=transform,
                              static_argnums=static_argnums, static_argnames=static_argnames,
                              after_pass=after_pass, backend=ns.backend, **axes)
    except (ValueError, TypeError) as exc:  # JAX's errors for axes that do not fit the specs
        if not axes or isinstance(exc, NumbaxError):
            raise
        raise CliError(" ".join(str(exc).split())) from None


def _vmap_axes(ns: argparse.Namespace, transform: str) -> Dict[str, Any]:
    """``--in-axes``, ``--out-axes`` and ``--axis-name`` as Python values (only ``--transform vmap`` and
    ``--transform pmap`` read them)."""
    given = {"in_axes": ns.in_axes, "out_axes": ns.out_axes}
    if transform not in ("vmap", "pmap"):
        if any(text != "0" for text in given.values()) or ns.axis_name is not None:
            raise CliError("--in-axes, --out-axes and --axis-name go with --transform vmap or pmap")
        return {}
    axes: Dict[str, Any] = {"axis_name": ns.axis_name}
    for name, text in given.items():
        try:
            axes[name] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            raise CliError(f"--{name.replace('_', '-')} expects a Python literal such as 0 or '(None, 0)', "
                           f"got {text!r}") from None
    return axes


def _check_name(kind: str, name: str, valid: Sequence[str]) -> str:
    if name not in valid:
        raise CliError(f"unknown {kind} {name!r} (valid: {', '.join(valid)})")
    return name


def _parse_kwargs(items: Sequence[str]) -> Dict[str, Any]:
    kwargs: Dict[str, Any] = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name.isidentifier():
            raise CliError(f"--kwargs expects NAME=SPEC, got {item!r}")
        if name in kwargs:
            raise CliError(f"--kwargs gives {name!r} twice")
        kwargs[name] = parse_spec(spec)
    return kwargs


def _check_call(fun: types.FunctionType, args: tuple, kwargs: Dict[str, Any]) -> None:
    """Fail early, in the user's terms, when the specs do not fit the function's parameters."""
    signature = inspect.signature(fun)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise CliError(f"{fun.__name__}{signature} cannot take these --args/--kwargs: {exc}") from None


def load_target(target: str) -> Target:
    """Import ``FILE.py`` and find ``FUNCTION`` in it, unwrapping a numbax decorator.

    Args:
        target: ``FILE.py:FUNCTION``; the function name may be dotted
            (``Model.forward``).

    Returns:
        The plain function, with the static arguments its decorator declared.

    Raises:
        CliError: the target is malformed, the file is missing or does not
            import, or the name is missing or not a function.
    """
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise CliError(f"expected FILE.py:FUNCTION, got {target!r}")
    module = load_module(path)
    return _unwrap(_lookup(module, path, name), f"{path}:{name}")


def load_module(path: str) -> types.ModuleType:
    """Import a Python file as a module registered in ``sys.modules`` (so its source can be found).

    The file's directory is on ``sys.path`` while it loads, so that it can
    import its neighbours. The module name is derived from the file's absolute
    path: loading the same file again replaces the earlier module.

    Args:
        path: the file.

    Returns:
        The executed module.

    Raises:
        CliError: the file is missing, is a directory, has a syntax error or
            raises while it is imported.
    """
    file = pathlib.Path(path)
    if not file.exists():
        raise CliError(f"no such file: {path}")
    if file.is_dir():
        raise CliError(f"{path} is a directory, not a Python file")
    name = _module_name(file)
    loader = importlib.machinery.SourceFileLoader(name, str(file))
    spec = importlib.util.spec_from_file_location(name, str(file), loader=loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with _on_sys_path(str(file.parent.resolve())):
            loader.exec_module(module)
    except BaseException as exc:
        del sys.modules[name]
        _reraise_import_error(exc, str(file))
    return module


def _module_name(file: pathlib.Path) -> str:
    stem = re.sub(r"\W", "_", file.stem)
    digest = hashlib.sha1(str(file.resolve()).encode()).hexdigest()[:10]
    return f"_numbax_cli_{stem}_{digest}"


@contextlib.contextmanager
def _on_sys_path(directory: str) -> Iterator[None]:
    sys.path.insert(0, directory)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(directory)


def _reraise_import_error(exc: BaseException, file: str) -> None:
    if isinstance(exc, SyntaxError):
        raise CliError(f"{exc.filename}:{exc.lineno}: syntax error: {exc.msg}") from None
    if not isinstance(exc, (Exception, SystemExit)):
        raise exc
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == file]
    where = f"{file}:{frames[-1].lineno}" if frames else file
    raise CliError(f"{where}: importing the file raised {type(exc).__name__}: {exc}") from None


def _lookup(module: types.ModuleType, path: str, dotted: str) -> Any:
    obj: Any = module
    for part in dotted.split("."):
        if not hasattr(obj, part):
            raise CliError(f"{path} has no function {dotted!r}{_suggest(module, dotted)}")
        obj = getattr(obj, part)
    return obj


def _suggest(module: types.ModuleType, name: str) -> str:
    """``; did you mean 'x'?`` or the list of the file's functions, or nothing."""
    functions = [key for key, value in vars(module).items()
                 if callable(value) and getattr(value, "__module__", None) == module.__name__]
    close = difflib.get_close_matches(name, functions, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f" (it defines: {', '.join(functions)})" if functions else ""


def _unwrap(obj: Any, label: str) -> Target:
    inner = getattr(obj, "fun", None)
    if inspect.isfunction(inner):
        return Target(inner, _as_tuple(getattr(obj, "static_argnums", ())),
                      _as_tuple(getattr(obj, "static_argnames", ())))
    if not inspect.isfunction(obj):
        raise CliError(f"{label} is {_a(type(obj).__name__)}, not a function")
    return Target(obj)


def _as_tuple(value: Any) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _a(noun: str) -> str:
    return f"an {noun}" if noun[:1].lower() in "aeiou" else f"a {noun}"
