"""The decorators: argument handling, the specialization cache, composition.

A ``Jitted`` is a Numba dispatcher at the C level: calling one runs Numba's type
dispatch in C, and a call whose argument types match a signature numbax
registered there (``_offer_fast_path``) runs the compiled code with no Python
frame of numbax's. Every other call misses that table, and Numba's C code calls
``_compile_for_args``: numbax's Python path (binding, pytrees, static arguments,
the specialization cache, ``config.disable_jit``).

``disable_jit`` is a thread-local setting that C dispatch cannot see, so while
any thread has it on, every ``Jitted``'s C table is emptied and all calls, in
every thread, take the Python path, which reads the setting; the tables are
refilled when the last thread turns it off (``config.on_disable_jit_change``).
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
from numba._dispatcher import Dispatcher as _CDispatcher
from numba.core import types as numba_types
from numba.core.dispatcher import OmittedArg
from numba.core.typeconv.rules import default_type_manager
from numba.core.typing.typeof import Purpose, typeof

from numbax import cache_files, config, generated_cache, transform_cache, tree_util
from numbax.ast_passes import pipeline, wrapper
from numbax.ast_passes.parse import function_of, source_of
from numbax.ast_passes.specialize.compile_time import built_at_compile_time
from numbax.backends import get_backend
from numbax.backends.cuda import lower_on_use as cuda_lower
from numbax.backends.cuda import placement
from numbax.backends.cuda.placement import is_device_array
from numbax.backends.numba_cpu.fast_path import FAST_LEAF_TYPES, eligible, entry_for
from numbax.call_signature import CallSignature, leaf_key, normalize_static
from numbax.compiled import Compiled
from numbax.errors import NumbaxDeviceError
from numbax.origin import Origin

_LIVE: "weakref.WeakSet[Jitted]" = weakref.WeakSet()  # Jitted objects with fast signatures
_FAST_LOCK = threading.Lock()
_UNSET = object()  # folded in by Numba's C code for a parameter the call did not pass
_UNSET_ID = id(_UNSET)
_GPU = ("gpu", "cuda")
_ON_GPU = (("backend", "gpu"),)  # in a call's form: part of the cache key, and the pipeline's backend
# Types whose values Numba's C dispatch never caches a type code for (no fingerprint): it asks
# ``typeof_pyval`` about each such argument (a dict, a dataclass) on every call. Their codes are
# never shared with other dispatchers and never match a signature numbax registers, so numbax
# answers ``pyobject`` for them without asking Numba's (slow) typeof.
_UNCACHED_TYPES: set = set()
_FINGERPRINTED = (type(None), bool, int, float, complex, tuple, bytes, bytearray, list, set, np.ndarray,
                  np.generic, np.dtype, OmittedArg)


def _numba_may_cache_type_of(value: Any) -> bool:
    """Whether Numba's C dispatch may cache the type code of ``value``: then only Numba's answer will do."""
    if isinstance(value, _FINGERPRINTED):
        return True
    try:
        memoryview(value)  # objects with the buffer protocol have fingerprints too
    except TypeError:
        _UNCACHED_TYPES.add(type(value))
        return False
    return True


def _rebuild(cls: type, state: Dict[str, Any]) -> "Jitted":
    """Unpickle a ``Jitted`` (its fast signatures are registered again by the calls that need them)."""
    jitted = cls.__new__(cls)
    jitted.__dict__.update(state)
    jitted._start_dispatch()
    return jitted


def _on_disable_jit_change(disabled: bool) -> None:
    with _FAST_LOCK:
        for jitted in list(_LIVE):
            jitted._clear()
            if not disabled:
                for codes, entry in jitted._fast_entries:
                    jitted._insert(list(codes), entry)


config.on_disable_jit_change(_on_disable_jit_change)


_arrays_on_gpu = False  # numbax has put arrays on a GPU or been given some: see note_arrays_on_gpu


def note_arrays_on_gpu() -> None:
    """Empty every ``Jitted``'s C table of signatures, and offer none with an array from now on.

    Numba's C dispatch types a ``numba.cuda`` device array as the host array it mirrors (its
    ``_numba_type_``), so a signature registered for host arrays would take device arrays too and fail to
    unbox them. Called when numbax first puts arrays on a GPU (``device_put``) or is given some (a call that
    runs on the GPU backend); a process that never does keeps its fast paths. Device arrays made by
    ``numba.cuda`` itself and passed to a function with a fast path before either happened would meet Numba's
    unboxing error: put them with ``numbax.device_put``, or jit with ``backend="gpu"``.
    """
    global _arrays_on_gpu
    if _arrays_on_gpu:
        return
    _arrays_on_gpu = True
    with _FAST_LOCK:
        for jitted in list(_LIVE):
            jitted._clear()
            jitted._fast_entries = []
            jitted._fast_codes = set()


class Jitted(_CDispatcher):
    """A function compiled on first call for each new signature; see ``jit``."""

    # makes the transformation of a function with *args or **kwargs per count of arguments at the call, or None
    # for any other function (numbax.transforms.arity sets it when numbax.transforms is imported)
    per_arity: Optional[Callable[..., Any]] = None

    def __new__(cls, fun: Any = None, *args, **kwargs):
        """A ``Jitted``; for a transformation other than ``jit`` of a function with ``*args`` or ``**kwargs``, an
        ``AtArity`` that makes this transformation for each count of arguments at the call, as JAX counts them
        (``jit`` binds ``*args`` as a tuple itself)."""
        made = Jitted.per_arity(cls, fun, args, kwargs) if cls is not Jitted and Jitted.per_arity else None
        return made if made is not None else super().__new__(cls)

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), backend: str = "cpu",
                 parallel: bool = False, fastmath: bool = False):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        fun = wrapper.around_primitive(fun)
        source_of(function_of(fun))
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._numbax_fun = fun
        self.static_argnums, self.static_argnames = normalize_static(fun, static_argnums, static_argnames)
        self.backend = backend
        self.options = {"parallel": parallel, "fastmath": fastmath}
        self._signature = CallSignature(fun, self.static_argnums)
        self._cache: Dict[Any, Compiled] = {}
        self._last: Optional[Compiled] = None
        self._nparams = self._signature.nparams
        if backend == "cpu":
            get_backend(backend).prepare()
        else:
            get_backend(backend)
        self._start_dispatch()

    def _start_dispatch(self) -> None:
        """Set up the C dispatcher (with an empty table of fast signatures)."""
        self._fast_entries: List[Tuple[Tuple[int, ...], Any]] = []  # owns the entry points the C table borrows
        self._fast_codes: set = set()
        self.__code__ = function_of(self.fun).__code__.replace()  # a copy: Numba's C code flips a flag on it under a profiler
        # Numba folds keyword arguments and defaults into positional ones in C when every parameter may be
        # passed either way and none is static: only then can a call's types be matched there. Parameters
        # without a default get ``_UNSET``, which matches no signature, so a call that leaves one out reaches
        # the Python path, which reports it as Python would.
        self._folds = self._folds_arguments()
        self._flat = tree_util.tree_structure([0] * self._nparams)  # one leaf per parameter
        defaults = self._signature.defaults(_UNSET) if self._folds else ()
        _CDispatcher.__init__(self, default_type_manager.get_pointer(), self._nparams, self._folds,
                              tuple(self._signature.params), defaults, True, False, False)

    def _folds_arguments(self) -> bool:
        """Whether Numba's C dispatch may fold keyword arguments and defaults into positional ones (then, and
        only then, can it serve calls from its table of signatures)."""
        return self._signature.foldable()

    def __reduce__(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("_fast_entries", "_fast_codes", "__code__")}
        return _rebuild, (type(self), state)

    # -- calls -----------------------------------------------------------------

    def _compile_for_args(self, *args, **kwargs):
        """Numba's C dispatcher found no signature for these arguments: numbax's path; returns what C calls."""
        if self._folds and _UNSET_ID in map(id, args):
            self._signature.raise_missing(args, _UNSET)
        out = self._call(args, kwargs)
        return lambda *_, **__: out

    def _call_tls_target(self, *args, **kwargs):
        """Numba's C dispatcher under a ``numba.core.target_extension.target_override``: numbax's path."""
        return self._compile_for_args(*args, **kwargs)()

    def typeof_pyval(self, value):
        """The Numba type of an argument, for C dispatch (Numba's own answer wherever Numba may cache it)."""
        if type(value) in _UNCACHED_TYPES or not _numba_may_cache_type_of(value):
            return numba_types.pyobject  # asked again on every call, and never a type numbax serves from C
        try:
            found = typeof(value, Purpose.argument)
        except ValueError:  # as Numba's own typeof_pyval (NumbaValueError is a ValueError)
            found = None
        return numba_types.pyobject if found is None else found

    def _call(self, args: tuple, kwargs: Dict[str, Any]):
        if config.state.disable_jit:
            return self.fun(*args, **kwargs)
        return self._compiled_call(args, kwargs)

    def _compiled_call(self, args: tuple, kwargs: Dict[str, Any]):
        """Run the compiled specialization for these arguments, compiling it first if needed."""
        values = self._signature.bind(args, kwargs)
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        if self._runs_on_gpu(values, leaves):
            return self._gpu_call(values, leaves, treedef, statics, args, kwargs)
        form = self._call_form(args, kwargs)
        compiled = self._specialization(values, leaves, treedef, statics, form)
        out = compiled(leaves)
        if self._folds and (not kwargs or self._keywords_fold()):
            self._offer_fast_path(compiled, treedef, leaves)
        return out

    def _keywords_fold(self) -> bool:
        """Whether keyword arguments mean what Numba's C dispatch makes of them, folded into positional ones."""
        return True

    # -- the GPU backend: computation follows data -------------------------------

    def _runs_on_gpu(self, values: List[Any], leaves: List[Any], others: Sequence[Tuple[str, Any]] = ()) -> bool:
        """Whether this call runs on the GPU backend (``backend="gpu"``, or a device array among the
        arguments, or among ``others``, the ``(name, leaf)`` pairs of what else the call takes: a jvp's
        tangents, a pullback's cotangents); raises ``NumbaxDeviceError`` for arrays on two devices."""
        if self.backend not in _GPU and not any(map(is_device_array, list(leaves) + [leaf for _, leaf in others])):
            return False
        named = [(param, leaf) for i, (param, value) in enumerate(zip(self._signature.params, values))
                 if i not in self._signature.static for leaf in tree_util.tree_leaves(value)]
        return placement.target(self.backend, named + list(others)) == "gpu"

    def _placed_on_gpu(self, values: List[Any], leaves: List[Any]) -> Tuple[List[Any], List[Any], List[Any]]:
        """For a call on the GPU backend: its values with host stand-ins of the device arrays (what the compiler
        reads), its leaves on the device, and the leaves' stand-ins."""
        self._check_gpu_support()
        leaves = placement.to_gpu(leaves)
        values = [v if i in self._signature.static else tree_util.tree_map(placement.stand_in, v)
                  for i, v in enumerate(values)]
        return values, leaves, [placement.stand_in(leaf) for leaf in leaves]

    def _gpu_call(self, values, leaves, treedef, statics, args: tuple, kwargs: Dict[str, Any]):
        """Run the GPU backend's specialization (compiled from host stand-ins of the device arrays)."""
        note_arrays_on_gpu()
        form = self._call_form(args, kwargs)
        values, on_device, stand_ins = self._placed_on_gpu(values, leaves)
        compiled = self._specialization(values, stand_ins, treedef, statics, form + _ON_GPU)
        written = getattr(compiled.function, "written", {})
        placement.check_writes(leaves, written)
        out = compiled(on_device)
        placement.write_back(leaves, on_device, written)  # host arguments written, as the CPU backend writes them
        return out

    def _specialization(self, values, leaves, treedef, statics, form: tuple) -> Compiled:
        """The compiled specialization for arguments of these leaves' kinds (compiled now if new)."""
        key = (treedef, statics, leaf_key(leaves), config.state.debug_nans, config.state.debug_infs) + form
        try:
            return self._cache[key]
        except KeyError:
            return self._compile(key, values, leaves, treedef, statics, form)
        except TypeError:
            self._signature.check_hashable(statics)
            raise

    def _check_gpu_support(self) -> None:
        """Refuse what the GPU backend does not compile yet: transformations other than jit, CPU options."""
        if not self._compiles_for_gpu():
            raise NumbaxDeviceError(f"{self!r} on the GPU backend is not implemented yet (jit, vmap, grad, jvp, "
                                    "vjp and the Jacobians are)",
                                    self.origin(),
                                    hint="run it on the CPU backend: NumPy arguments and backend='cpu' "
                                         "(numbax.device_get(x) brings device arrays back).")
        chosen = [name for name, value in self.options.items() if value]
        if chosen:
            raise NumbaxDeviceError(f"{', '.join(chosen)}=True is an option of the CPU backend (Numba's njit)",
                                    self.origin(), hint="leave it out for the GPU backend.")

    def _compiles_for_gpu(self) -> bool:
        """Whether this transformation's ``_run_pipeline`` takes ``backend="gpu"``: ``jit``'s does; a
        transformation that overrides it says so itself."""
        return type(self)._run_pipeline is Jitted._run_pipeline

    def _offer_fast_path(self, compiled: Compiled, treedef, leaves) -> None:
        """Let Numba's C dispatch serve later calls with these argument types, when that is exact."""
        if self.backend != "cpu" or len(leaves) != self._nparams:
            return
        if _arrays_on_gpu and any(isinstance(leaf, np.ndarray) for leaf in leaves):
            return  # Numba's C dispatch types a device array as the host array it mirrors (note_arrays_on_gpu)
        for leaf in leaves:
            if type(leaf) not in FAST_LEAF_TYPES:
                return
        if treedef != self._flat or not eligible(compiled):
            return
        entry = entry_for(compiled.function, leaves)
        if entry is None:
            return
        with _FAST_LOCK:
            if entry[0] in self._fast_codes:
                return
            self._fast_entries.append(entry)
            self._fast_codes.add(entry[0])
            _LIVE.add(self)
            if not config.jit_disabled_anywhere():
                self._insert(list(entry[0]), entry[1])

    # -- compiling -------------------------------------------------------------

    def _call_form(self, args: tuple, kwargs: Dict[str, Any]) -> tuple:
        """What the way a call passes its arguments decides besides their values, as ``(name, value)`` pairs:
        part of the cache key, and keyword arguments of ``_run_pipeline``. Nothing for ``jit``; ``vmap`` maps
        positional and keyword arguments differently."""
        return ()

    def _compile(self, key, values, leaves, treedef, statics, form: tuple = ()) -> Compiled:
        self._signature.check_hashable(statics)
        bound = self._signature.placeholders(values, leaves, treedef)
        cache_dir = cache_files.directory(config.read("cache_dir"))
        tag = self._generated_cache_tag()
        disk_key = generated_cache.key_for(self.fun, tag, key) if tag and cache_dir else None
        generated = generated_cache.load(cache_dir, disk_key, pipeline.Generated) if disk_key else None
        if generated is None:
            generated = pipeline.at_boundary(self._run_pipeline(bound, **dict(form)), leaves)
            if disk_key:
                generated_cache.store(cache_dir, disk_key, generated)
        name = dict(form).get("backend", self.backend)
        backend = get_backend(name)
        function = backend.compile_function(generated.source, generated.name, cache_dir, **self.options) \
            if name != "python" else backend.compile_function(generated.source, generated.name, cache_dir)
        errors = backend.typing_errors() if hasattr(backend, "typing_errors") else ()
        compiled = Compiled(generated, function, errors)
        if generated.assumes_shapes:  # where its entry check fails: code that takes no dims as equal
            general = (("general", True),)
            compiled.general = lambda: self._cache.get(key + general) or \
                self._compile(key + general, values, leaves, treedef, statics, form + general)
        if config.read("log_compiles"):
            self._log_compile(key)
        self._cache[key] = compiled
        self._last = compiled
        return compiled

    def _log_compile(self, key: tuple) -> None:
        """``log_compiles``: the specialization in words, and what changed since the nearest earlier one."""
        from numbax import cache_miss

        params = self._signature.params
        static = [params[i] for i in sorted(self._signature.static)]
        dynamic = [p for i, p in enumerate(params) if i not in self._signature.static]
        reason = "first call" if not self._cache else "cache miss: " + cache_miss.explain(
            key, list(self._cache), dynamic, static)
        print(f"numbax: compiling {function_of(self.fun).__qualname__} for {cache_miss.describe(key, static)} "
              f"({reason})", file=sys.stderr)

    def _generated_cache_tag(self) -> Optional[str]:
        """What the generated source depends on besides the function and the call; None: no disk cache.

        ``jit`` keeps the source of each specialization on disk (``numbax.generated_cache``) under "jit".
        A subclass that overrides ``_run_pipeline`` gets no disk cache unless it overrides this as well,
        returning a string that names its transformation and every option that changes what it generates.
        """
        return "jit" if type(self)._run_pipeline is Jitted._run_pipeline else None

    @property
    def source(self) -> Optional[str]:
        """The generated source of the most recent specialization (None before the first call)."""
        return self._last.generated.source if self._last else None

    def lower_source(self, *args, **kwargs) -> str:
        """The generated source for a call with these arguments, without compiling or running it."""
        return self.generate(args, kwargs).source

    def generate(self, args: tuple, kwargs: Dict[str, Any], after_pass: Optional[str] = None,
                 general: bool = False):
        """Run the middle end for a call with these arguments; the ``pipeline.Generated`` result (``general``:
        the code that takes no dims as equal, for a result whose ``assumes_shapes`` is set)."""
        values = [tree_util.tree_map(placement.stand_in, v) for v in self._signature.bind(args, kwargs)]
        form = self._call_form(args, kwargs) + ((("general", True),) if general else ()) + \
            (_ON_GPU if self.backend in _GPU else ())
        if self.backend in _GPU:
            self._check_gpu_support()
        statics, dynamic = self._signature.split(values)
        self._signature.check_hashable(statics)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        bound = self._signature.placeholders(values, leaves, treedef)
        generated = self._run_pipeline(bound, after_pass, **dict(form))
        return generated if after_pass is not None else pipeline.at_boundary(generated, leaves)

    def export_parameters(self, args: tuple) -> List[Tuple[str, Any, bool, bool]]:
        """``(name, example value, static, left to its default)`` of each parameter of the function that
        ``numbax.export`` writes for a call with ``args``: the dynamic leaves of these, in order, are the
        generated function's arguments. Runs the call once, for numbax's checks of it."""
        self(*args)
        values = self._signature.bind(args, {})
        return [(name, value, i in self._signature.static, i >= len(args))
                for i, (name, value) in enumerate(zip(self._signature.params, values))]

    def export_output(self, out: Any, returns) -> Any:
        """What the user receives, from the generated function's output ``out`` as its ``returns`` spec
        unflattens it (containers of placeholders, for ``numbax.export``)."""
        return out

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, backend: str = "cpu"):
        """The middle end for one specialization (for ``backend``: the GPU's is ``"gpu"``); transformations
        other than jit override this."""
        return pipeline.run(self.fun, bound, label="jit", after_pass=after_pass,
                            lower=cuda_lower.legalize if backend == "gpu" else None)

    def origin(self) -> Origin:
        """The ``def`` line of the user's function: where an error is reported that has no line of the user's
        closer to it (one raised at a call numbax wrote itself)."""
        return Origin.of_code(function_of(self.fun).__code__)

    def merged_static(self, static_argnums=(), static_argnames=()) -> Tuple[Tuple[int, ...], Tuple[str, ...]]:
        """This function's static arguments together with ``static_argnums`` and ``static_argnames`` (what
        ``jit`` of a transformation, or a transformation of a ``jit``, keeps: both)."""
        nums, names = normalize_static(self.fun, static_argnums, static_argnames)
        return (tuple(sorted(set(self.static_argnums) | set(nums))),
                tuple(sorted(set(self.static_argnames) | set(names))))

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "Jitted":
        """``jit`` of this function: ``jit(jit(f))`` is ``jit(f)``, with both's static arguments (and the
        backend ``jit`` names, where it names one other than the CPU). Transformations override it; one that
        does not is refused rather than compiled as its bare function."""
        if type(self) is not Jitted:
            from numbax.errors import NumbaxSpecializationError

            raise NumbaxSpecializationError(f"jit of {self!r} is not supported",
                                            hint="call it from a function that jit compiles instead.")
        nums, names = self.merged_static(static_argnums, static_argnames)
        return Jitted(self.fun, nums, names, self.backend if backend == "cpu" else backend, **self.options)

    def _repr_html_(self) -> str:
        from numbax.display import highlight_html

        text = self.source or inspect.getsource(self.fun)
        return highlight_html(text)

    def __repr__(self) -> str:
        return f"<numbax.jit of {function_of(self.fun).__qualname__}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


@transform_cache.reused
def jit(fun: Optional[Callable] = None, *, static_argnums: Union[int, Sequence[int]] = (),
        static_argnames: Union[str, Sequence[str]] = (), backend: str = "cpu", parallel: bool = False,
        fastmath: bool = False):
    """Compile ``fun`` with Numba, specialized to each call's static values and argument structure.

    Usable as ``@jit``, ``jit(f)`` and ``@jit(static_argnums=(1,))``.

    Args:
        fun: a Python function whose source numbax can read.
        static_argnums: positions of arguments whose values are compile-time constants (hashable).
        static_argnames: names of such arguments.
        backend: ``"cpu"`` (Numba), ``"gpu"`` (``numba.cuda`` kernels; host arguments are copied to the GPU)
            or ``"python"`` (run the generated code uncompiled, for debugging). Whatever it says, a call
            with device arrays runs on the GPU and returns device arrays (computation follows data).
        parallel: pass ``parallel=True`` to Numba.
        fastmath: pass ``fastmath=True`` to Numba.

    Returns:
        A callable with the signature of ``fun``; ``.source`` holds the last generated code. The same
        function with the same options gives the same object again (``numbax.transform_cache``).
    """
    if fun is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames,
                                 backend=backend, parallel=parallel, fastmath=fastmath)
    if isinstance(fun, Jitted):
        return fun.rejit(static_argnums, static_argnames, backend)
    return Jitted(fun, static_argnums, static_argnames, backend, parallel, fastmath)


built_at_compile_time(jit)
