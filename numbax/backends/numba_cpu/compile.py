"""Compile generated source with Numba's ``njit``, its disk cache on.

Numba's cache loads machine code in a fraction of the time compiling takes, but
before loading it refreshes the whole target context (importing every lowering
registry, and SciPy with them: about 200 ms in a new process) and, before
that, scans the installed packages' entry points for Numba extensions. Neither
is needed to load and run code from the cache: compiling needs them, and
compiling still gets them (Numba's compiler refreshes the contexts itself, and
a cache miss here loads the extensions first). ``NumbaxDispatcher`` defers both
to a cache miss.

Loading also rebuilds the environment of every function linked into the
cached code, importing the module each was defined in: for ``np.sum`` that is
``numba.np.arraymath``, whose import checks for BLAS by importing
``scipy.linalg`` (tens of milliseconds). Compiled nopython code reads only the
constants of its environment, never the module's globals (object mode does), so
while loading, an environment of a Numba module not yet imported gets its
constants and the module's name without the import.

Code that calls BLAS or LAPACK would import ``scipy.linalg`` on its first call
(about 100 ms) for Numba to find their functions; ``scipy_blas`` loads the two
modules that hold them without the package.

Numba stamps a cached function with its own file only, not with the functions it calls, which it compiles
into the same machine code: generated code calls numbax's runtime, so each module file's name hashes the
runtime's source too (``runtime_digest``), and a numbax whose runtime changed never loads machine code
compiled from another.

Numba's index and data files are sealed like numbax's own entries
(``numbax.cache_files``): a damaged, swapped or foreign one reads as missing,
so the function compiles again and the files are replaced; the folder that
holds them is checked as the cache directory is.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import os
import pickle
import sys
import warnings
from typing import Callable, Dict, Iterator, Optional, Tuple

from numba.core import config as numba_config
from numba.core import entrypoints, environment
from numba.core import errors as numba_errors
from numba.core.caching import FunctionCache, IndexDataCacheFile
from numba.core.errors import NumbaPerformanceWarning
from numba.core.registry import CPUDispatcher
from numba.core.runtime import rtsys

from numbax import cache_files, config, source_files, timings
from numbax.backends.module_cache import module_for
from numbax.backends.numba_cpu import pipeline, scipy_blas, shared_overloads, slice_store_error
from numbax.runtime import cached

_DISPATCHERS: Dict[Tuple, Callable] = {}
shared_overloads.share()


@contextlib.contextmanager
def _environments_without_imports() -> Iterator[None]:
    """While unpickling cached code: environments of Numba's own modules not yet imported, without importing."""
    rebuild = environment._rebuild_env

    def rebuild_lazily(modname, consts, env_name):
        if modname in sys.modules or not str(modname).startswith("numba."):
            return rebuild(modname, consts, env_name)
        env = environment.lookup_environment(env_name)
        if env is None:
            env = environment.Environment({"__name__": modname})
            env.consts[:] = consts
            env.env_name = env_name
            environment.Environment._memo[env_name] = env
        return env

    environment._rebuild_env = rebuild_lazily
    try:
        yield
    finally:
        environment._rebuild_env = rebuild


class _SealedCacheFile(IndexDataCacheFile):
    """Numba's index and data files, each sealed with its name and sha256, read without following a link."""

    def _load_index(self):
        payload = cache_files.read_sealed(self._index_path)
        if payload is None:
            return {}
        stream = io.BytesIO(payload)
        if pickle.load(stream) != self._version:  # another Numba's classes may not unpickle: stop before them
            return {}
        stamp, overloads = pickle.loads(stream.read())
        return overloads if stamp == self._source_stamp else {}

    def save(self, key, data):
        """Numba's save, unless numbax's source changed under this process (``numbax.source_files``)."""
        if not source_files.changed():
            super().save(key, data)

    def _save_index(self, overloads):
        version = pickle.dumps(self._version, protocol=-1)
        cache_files.write_sealed(self._index_path, version + self._dump((self._source_stamp, overloads)))

    def _load_data(self, name):
        payload = cache_files.read_sealed(self._data_path(name))
        return None if payload is None else pickle.loads(payload)

    def _save_data(self, name, data):
        cache_files.write_sealed(self._data_path(name), self._dump(data))


class _LoadFirstCache(FunctionCache):
    """Numba's ``FunctionCache``, loading without the refresh that only compiling needs, from sealed files in a
    checked folder (caching is off where that folder cannot hold files)."""

    def __init__(self, py_func):
        root = os.path.dirname(py_func.__code__.co_filename)
        if not numba_config.CACHE_DIR:  # made owner-only before Numba's locator makes it with the umask's mode
            cache_files.subdirectory(root, "__pycache__")
        super().__init__(py_func)
        self._cache_file = _SealedCacheFile(self._cache_path, self._impl.filename_base,
                                            self._cache_file._source_stamp)
        if _checked_folder(root, self._cache_path) is None:
            self.disable()

    def load_overload(self, sig, target_context):
        rtsys.initialize(target_context)  # the runtime that loaded code links against
        with self._guard_against_spurious_io_errors(), _environments_without_imports():
            result = self._load_overload(sig, target_context)
        if result is None:  # Numba compiles next: let its extensions register first
            entrypoints.init_all()
            slice_store_error.install()
        return result


def _checked_folder(root: str, path: str) -> Optional[str]:
    """Numba's cache folder, checked as a subfolder of the module's (no link) or as a directory of its own."""
    if os.path.dirname(path) == root:
        return cache_files.subdirectory(root, os.path.basename(path))
    return cache_files.directory(path)


class NumbaxDispatcher(CPUDispatcher):
    """``njit``'s dispatcher, with the extension scan deferred to a disk-cache miss."""

    def enable_caching(self):
        self._cache = _LoadFirstCache(self.py_func)

    def _compilation_chain_init_hook(self):
        """Numba loads its extensions here, before typing the arguments; ``_LoadFirstCache`` does on a miss."""

    def compile(self, sig):
        """Numba's compile, without its performance warnings: they name lines of generated code (``'@' is
        faster on contiguous arrays``) that the user did not write and cannot change."""
        if source_files.changed() and self._cache is not None:  # what it links may be of two versions
            self._cache.disable()
        if not isinstance(self._cache, _LoadFirstCache):  # compiles, with no cache to load from first
            slice_store_error.install()
        with warnings.catch_warnings(), timings.numba_compile(self.py_func.__name__):
            warnings.simplefilter("ignore", NumbaPerformanceWarning)
            try:
                return super().compile(sig)
            except numba_errors.NumbaError:
                raise
            except Exception as exc:  # noqa: BLE001 - Numba's own failure (an assertion in its lowering)
                raise numba_errors.TypingError(f"{type(exc).__name__} inside Numba: {exc}",
                                               loc=_generated_line(exc.__traceback__)) from exc


def _generated_line(trace):
    """The innermost location in generated code that a traceback through Numba's compiler passes (the
    instruction it was typing or lowering), or None."""
    found = None
    while trace is not None:
        for value in (trace.tb_frame.f_locals.get("inst"), trace.tb_frame.f_locals.get("self")):
            loc = getattr(value, "loc", None)
            if "numbax_generated_" in str(getattr(loc, "filename", "")):
                found = loc
        trace = trace.tb_next
    return found


def prepare() -> None:
    """Start Numba's CPU target (LLVM and its JIT) now, as ``numba.njit`` does when it decorates a function."""
    from numba.core.registry import cpu_target

    cpu_target.target_context  # noqa: B018 - created on first access


_LINKED_PACKAGES = ("runtime", os.path.join("backends", "numba_cpu"))  # what compiled code links in


@functools.lru_cache(maxsize=None)
def runtime_digest() -> str:
    """A hash of the source of what compiled code links in: ``numbax.runtime`` and this backend's overloads
    (their content, not their files' times: every checkout of one commit has one digest). Taken from the files
    as they are, which are the modules this process loads only while they are as numbax was imported: after
    that, caching is off (``numbax.source_files``)."""
    root = source_files.root()
    digest = hashlib.sha256()
    for path in source_files.paths(_LINKED_PACKAGES):
        digest.update(os.path.relpath(path, root).encode() + b"\0")
        with open(path, "rb") as file:
            digest.update(file.read() + b"\0")
    source_files.changed(_LINKED_PACKAGES)
    return digest.hexdigest()[:16]


def _runtime_folder() -> Optional[str]:
    """Where the runtime's helpers are cached (``numbax.runtime.cached``): a checked folder per runtime digest
    in the cache directory; None where it cannot hold one, or once numbax's source changed under this process."""
    digest = runtime_digest()
    if source_files.changed(_LINKED_PACKAGES):
        return None
    root = cache_files.directory(config.read("cache_dir"))
    folder = root and cache_files.subdirectory(root, "runtime")
    return folder and cache_files.subdirectory(folder, digest)


cached.use_folder(_runtime_folder)


# code that calls MPI (pmap across processes) links numba-mpi's ctypes pointers, which Numba cannot cache
_CALLS_MPI = "from numbax.distributed import collectives as mpi"


def compile_function(source: str, name: str, cache_dir: Optional[str], parallel: bool = False,
                     fastmath: bool = False, nogil: bool = False) -> Callable:
    """A Numba dispatcher for the generated function (shared by identical sources and options).

    Floating-point division by zero gives ``inf``/``nan`` as in NumPy and JAX (Numba's
    ``error_model="numpy"``), not Python's ``ZeroDivisionError``. Numba's disk cache does
    not tell these options apart, nor runtimes, so each combination gets a module file of its own. Without a cache
    directory (``None``), or one that refuses the module file, nothing is cached on disk; nor is code that
    calls MPI. ``nogil``: the code releases the GIL (``pmap``'s, whose shards run on threads). Python calls it
    through its CPython wrapper, nothing through a C function pointer: Numba makes no C wrapper.
    """
    variant = f"error_model=numpy,parallel={parallel},fastmath={fastmath},runtime={runtime_digest()}" + \
        (",nogil=True" if nogil else "")
    if scipy_blas.uses_blas(source):
        scipy_blas.preload()
    module = module_for(source, name, cache_dir, variant)
    key = (module.__name__, parallel, fastmath, nogil)
    dispatcher = _DISPATCHERS.get(key)
    if dispatcher is None:
        function = getattr(module, name)
        if numba_config.DISABLE_JIT:
            return function
        dispatcher = NumbaxDispatcher(function, targetoptions={"nopython": True, "boundscheck": None,
                                                               "error_model": "numpy", "parallel": parallel,
                                                               "fastmath": fastmath, "nogil": nogil,
                                                               "no_cfunc_wrapper": True},
                                      pipeline_class=pipeline.Compiler)
        if getattr(module, "__file__", None) and _CALLS_MPI not in source and \
                not source_files.changed(look=False):
            dispatcher.enable_caching()
        _DISPATCHERS[key] = dispatcher
    return dispatcher


def typing_errors() -> tuple:
    """The Numba exception classes that mean generated code failed to compile."""
    from numba.core import errors

    return (errors.TypingError, errors.UnsupportedError, errors.LoweringError, errors.NumbaError)
