"""SciPy's BLAS and LAPACK for Numba, loaded without importing ``scipy.linalg``.

Numba's compiled ``@``, ``np.dot`` and ``np.linalg`` call BLAS and LAPACK through the function
pointers that the extension modules ``scipy.linalg.cython_blas`` and ``cython_lapack`` export.
Numba looks each pointer up the first time it is called, by importing those modules, and that
import first runs the package ``scipy.linalg`` (about 100 ms: most of a warm start from the disk
cache). The two modules need nothing from the package. ``preload`` loads them from their files
and registers them under their names, so Numba's lookup finds them, and binds them as attributes
of ``scipy.linalg`` when the package is imported later, as a normal import would have.

If anything about the installed SciPy differs (no such files, a load that fails), ``preload``
leaves things as they were and Numba imports the modules itself: slower, never wrong.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import re
import sys
_PACKAGE = "scipy.linalg"
_MODULES = ("cython_blas", "cython_lapack")
# What in generated source calls BLAS or LAPACK through Numba: a miss only costs the slower import.
_CALLS = re.compile(r" @ |\bnp\.(dot|vdot|inner|matmul|linalg)\b|\brt\.(matmul|solve|inv|cholesky|det|slogdet|eigh|qr|svd)\b")


def uses_blas(source: str) -> bool:
    """Whether generated ``source`` may call BLAS or LAPACK."""
    return bool(_CALLS.search(source))


def preload() -> None:
    """Register ``scipy.linalg.cython_blas`` and ``cython_lapack``, loaded from their files; see the module
    docstring. Does nothing once they are there, or once ``scipy.linalg`` is imported."""
    if _PACKAGE in sys.modules or all(f"{_PACKAGE}.{m}" in sys.modules for m in _MODULES):
        return
    try:
        spec = importlib.util.find_spec("scipy")
        folder = os.path.join(spec.submodule_search_locations[0], "linalg")
        loaded = [_load(folder, short) for short in _MODULES]
    except Exception:  # noqa: BLE001 -- an unusual SciPy: Numba imports the modules itself
        return
    for short, module in zip(_MODULES, loaded):
        sys.modules[f"{_PACKAGE}.{short}"] = module
    sys.meta_path.insert(0, _BindOnImport())


def _load(folder: str, short: str):
    name = f"{_PACKAGE}.{short}"
    path = next(p for p in (os.path.join(folder, short + s) for s in importlib.machinery.EXTENSION_SUFFIXES)
                if os.path.exists(p))
    spec = importlib.util.spec_from_file_location(name, path,
                                                  loader=importlib.machinery.ExtensionFileLoader(name, path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _BindOnImport:
    """A finder that, when ``scipy.linalg`` is imported, lets the usual finders find it and then binds the
    preloaded modules as its attributes (``scipy.linalg.cython_blas``); it removes itself."""

    def find_spec(self, fullname: str, path, target=None):
        """The usual spec of ``scipy.linalg``, with a loader that binds the preloaded modules after it runs."""
        if fullname != _PACKAGE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Binding(spec.loader)
        return spec


class _Binding:
    """A loader that runs another, then sets the preloaded submodules on the module it made."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        """The wrapped loader's module."""
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        """Run the package, then bind the preloaded submodules."""
        self.loader.exec_module(module)
        for short in _MODULES:
            if f"{_PACKAGE}.{short}" in sys.modules:
                setattr(module, short, sys.modules[f"{_PACKAGE}.{short}"])

    def __getattr__(self, name: str):
        return getattr(self.loader, name)  # resource readers and the rest: the wrapped loader's
