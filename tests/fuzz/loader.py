"""Generated programs become real modules: numbax reads a function's source with ``inspect``."""
from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import tempfile
import types

_counter = itertools.count()
_folder: list = []

HEADER = "import numpy as np\n\n\n"


def folder() -> str:
    """This process's folder of generated modules (under the temporary directory, which the JAX oracle
    treats as user code)."""
    if not _folder:
        _folder.append(tempfile.mkdtemp(prefix="numbax_fuzz_"))
    return _folder[0]


def load(source: str) -> types.ModuleType:
    """Write ``source`` (after ``import numpy as np``) to a fresh file and import it."""
    name = f"numbax_fuzz_{os.getpid()}_{next(_counter)}"
    path = os.path.join(folder(), name + ".py")
    with open(path, "w") as f:
        f.write(HEADER + source + "\n")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def unload(module: types.ModuleType) -> None:
    """Forget a generated module (long runs import tens of thousands)."""
    sys.modules.pop(module.__name__, None)
