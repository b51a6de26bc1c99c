"""Compile every kernel ``record`` noted for a real GPU, without one: ``python -m tests.ptx.check DIR``.

Run in a process without ``NUMBA_ENABLE_CUDASIM``: numba.cuda's own compiler types and lowers each kernel for
the recorded argument types, NVVM writes PTX for the compute capability given (``--cc 9.0``, an H100's, by
default) and nvJitLink assembles it into the GPU's machine code (ptxas: registers, spills), as a launch on that
GPU would. Kernels of the same text (up to the names they bind) and types compile once. Prints each failure (the
kernel, its types, the compiler's message), then the registers and spills, and exits 1 if any kernel failed.
"""
from __future__ import annotations

import argparse
import ast
import glob
import importlib
import multiprocessing
import pickle
import re
import sys
import time
import types as pytypes
from typing import Dict, List, Optional, Tuple

Kernel = Tuple[str, str, tuple]  # module, name, argument types


def main(argv: Optional[List[str]] = None) -> int:
    """The command line: compile the kernels recorded in DIR, report failures."""
    parser = argparse.ArgumentParser(prog="python -m tests.ptx.check", description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", help="the folder NUMBAX_RECORD_KERNELS named")
    parser.add_argument("--cc", default="9.0", help="compute capability, major.minor (default 9.0)")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="processes compiling (default 2)")
    args = parser.parse_args(argv)
    kernels = recorded(args.folder)
    if not kernels:
        print(f"no kernels recorded in {args.folder}: run the GPU tests with NUMBAX_RECORD_KERNELS={args.folder}")
        return 1
    cc = tuple(int(part) for part in args.cc.split("."))
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(args.jobs, _prepare, (cc,)) as pool:
        results = list(pool.imap_unordered(_compile_one, kernels.items(), chunksize=8))
    failures = [failure for _, failure, _, _ in results if failure]
    _report(results, failures, f"sm_{cc[0]}{cc[1]}", time.perf_counter() - started)
    return 1 if failures else 0


def _report(results: List[Tuple[str, str, int, int]], failures: List[str], arch: str, seconds: float) -> None:
    """Print each failure, the count, and the registers and spills of the kernels that compiled."""
    for failure in failures:
        print(failure, end="\n\n")
    print(f"{len(results)} distinct kernels compiled for {arch} in {seconds:.0f} s: {len(failures)} failed")
    built = [(registers, spilled, label) for label, failure, registers, spilled in results if not failure]
    if built:
        spilling = sorted((item for item in built if item[1]), key=lambda item: -item[1])
        most = max(built)
        print(f"registers per thread: at most {most[0]} ({most[2]}); {len(spilling)} kernels spill registers to "
              "local memory" + "".join(f"\n  {label}: {spilled} bytes" for _, spilled, label in spilling[:10]))


def recorded(folder: str) -> Dict[Kernel, str]:
    """The kernels of every ``kernels-*.pickle`` in ``folder``: one of each text and argument types."""
    kernels: Dict[Kernel, str] = {}
    seen = set()
    for path in sorted(glob.glob(f"{folder}/kernels-*.pickle")):
        with open(path, "rb") as file:
            for (module, name, argtypes), source in pickle.load(file).items():
                generated = module.startswith("numbax_generated_")
                identity = (_text(source, name), argtypes) if generated else (module, name, argtypes)
                if identity not in seen:
                    seen.add(identity)
                    kernels[(module, name, argtypes)] = source
    return kernels


def _text(source: str, name: str) -> str:
    """A generated kernel's text without comments, with the module's imports (all else it may name: the
    GPU backend generates no device functions), up to the names of the kernel and of what it binds.

    Programs' kernels differ mostly in those names (``_t3`` here, ``_t5`` there, the function's name), which
    numba.cuda's compilation does not depend on: renamed in order of appearance, the 1,662 kernels of a whole
    ``make test`` are 675 to compile. Free names (imports, built-ins) keep theirs.
    """
    tree = ast.parse(source)
    kernel = next(stmt for stmt in tree.body if isinstance(stmt, ast.FunctionDef) and stmt.name == name)
    kept = [stmt for stmt in tree.body if isinstance(stmt, (ast.Import, ast.ImportFrom))] + [kernel]
    bound = {arg.arg for arg in kernel.args.args} | {
        node.id for node in ast.walk(kernel) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    renamed: Dict[str, str] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.arg) and node.arg in bound:
            node.arg = renamed.setdefault(node.arg, f"_v{len(renamed)}")
        elif isinstance(node, ast.Name) and node.id in bound:
            node.id = renamed.setdefault(node.id, f"_v{len(renamed)}")
    kernel.name = "kernel"
    return ast.unparse(ast.Module(body=kept, type_ignores=[]))


def _prepare(cc: Tuple[int, int]) -> None:
    """Make numba.cuda compile without a driver: device functions ask the current device for its compute
    capability, and numbax's GPU runtime asks numba.cuda whether a GPU is there before it defines its kernels."""
    from numba import cuda
    import numba.cuda.dispatcher as dispatcher

    from numbax.backends.cuda import availability

    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=cc)
    availability._cuda_or_reason = lambda: (cuda, "")
    globals()["_CC"] = cc


_MODULES: Dict[str, pytypes.ModuleType] = {}


def _module(name: str, source: str) -> pytypes.ModuleType:
    if name not in _MODULES:
        if name.startswith("numbax_generated_"):
            module = pytypes.ModuleType(name)
            sys.modules[name] = module
            exec(compile(source, f"<{name}>", "exec"), module.__dict__)  # noqa: S102 - numbax's generated code
        else:
            module = importlib.import_module(name)
        _MODULES[name] = module
    return _MODULES[name]


def _compile_one(item: Tuple[Kernel, str]) -> Tuple[str, str, int, int]:
    """The kernel's name, why it failed to compile ('' if it did not), its registers per thread and the bytes
    of registers it spills."""
    from cuda.core import Linker, LinkerOptions, ObjectCode
    from numba import cuda

    (module, name, argtypes), source = item
    label = f"{module}.{name}"
    untypable = [t for t in argtypes if isinstance(t, str)]
    if untypable:
        return label, f"{label}: numba.cuda has no type for an argument of Python type {untypable[0]}", 0, 0
    try:
        kernel = getattr(_module(module, source), name)
        ptx, _ = cuda.compile_ptx(kernel.py_func, argtypes, cc=_CC,
                                  fastmath=kernel.targetoptions.get("fastmath", False))
        linker = Linker(ObjectCode.from_ptx(ptx.encode()), options=LinkerOptions(arch=f"sm_{_CC[0]}{_CC[1]}",
                                                                                  verbose=True))
        linker.link("cubin")
        log = linker.get_info_log()
    except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the others
        text = str(exc).strip().splitlines()
        return label, f"{label}{argtypes}:\n  {type(exc).__name__}: " + "\n  ".join(text[:12]), 0, 0
    registers = max((int(n) for n in re.findall(r"Used (\d+) registers", log)), default=0)
    spilled = sum(int(n) for n in re.findall(r"(\d+) bytes spill stores", log))
    return label, "", registers, spilled


if __name__ == "__main__":
    sys.exit(main())
