"""The decorators: argument handling, the specialization cache, composition."""
from __future__ import annotations

import functools
import inspect
import sys
from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

from numbax import config, tree_util
from numbax.ast_passes import pipeline
from numbax.ast_passes.parse import source_of
from numbax.backends import get_backend
from numbax.backends.numba_cpu.fast_path import FastPath, eligible, is_no_match
from numbax.call_signature import CallSignature, leaf_key, normalize_static
from numbax.compiled import Compiled

TRANSFORMS = ("jit",)


class Jitted:
    """A function compiled on first call for each new signature; see ``jit``."""

    def __init__(self, fun: Callable, static_argnums=(), static_argnames=(), backend: str = "cpu",
                 parallel: bool = False, fastmath: bool = False):
        if not callable(fun):
            raise TypeError(f"jit expects a callable, got {fun!r}")
        source_of(fun)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self._numbax_fun = fun
        self.static_argnums, self.static_argnames = normalize_static(fun, static_argnums, static_argnames)
        self.backend = backend
        self.options = {"parallel": parallel, "fastmath": fastmath}
        self._signature = CallSignature(fun, self.static_argnums)
        self._cache: Dict[Any, Compiled] = {}
        self._last: Optional[Compiled] = None
        self._fast_path: Optional[FastPath] = None
        self._fast: Optional[Callable] = None
        self._nparams = self._signature.nparams
        get_backend(backend)

    def __call__(self, *args, **kwargs):
        if config.state.disable_jit:
            return self.fun(*args, **kwargs)
        fast = self._fast
        if fast is not None and not kwargs and len(args) == self._nparams:
            try:
                return fast(*args)
            except TypeError as exc:
                if not is_no_match(exc):
                    raise
        values = self._signature.bind(args, kwargs)
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        key = (treedef, statics, leaf_key(leaves))
        try:
            compiled = self._cache[key]
        except KeyError:
            compiled = self._compile(key, values, leaves, treedef, statics)
            out = compiled(leaves)
            self._offer_fast_path(compiled, treedef, leaves)
            return out
        except TypeError:
            self._signature.check_hashable(statics)
            raise
        return compiled(leaves)

    def _offer_fast_path(self, compiled: Compiled, treedef, leaves) -> None:
        """Serve later calls of this signature from Numba's dispatch alone, when that is exact."""
        flat = not self._signature.static and treedef == tree_util.tree_structure([0] * len(leaves)) \
            and len(leaves) == self._signature.nparams and all(type(leaf) is np.ndarray for leaf in leaves)
        if self.backend != "cpu" or not eligible(compiled, flat):
            return
        if self._fast_path is None:
            self._fast_path = FastPath(compiled.function, self.options)
        if self._fast_path.source_module == compiled.function.py_func.__module__:
            self._fast_path.add(leaves)
            self._fast = self._fast_path.dispatcher

    def _compile(self, key, values, leaves, treedef, statics) -> Compiled:
        self._signature.check_hashable(statics)
        bound = self._signature.placeholders(values, leaves, treedef)
        generated = pipeline.run(self.fun, bound, label="jit")
        backend = get_backend(self.backend)
        cache_dir = config.read("cache_dir")
        function = backend.compile_function(generated.source, generated.name, cache_dir, **self.options) \
            if self.backend != "python" else backend.compile_function(generated.source, generated.name, cache_dir)
        errors = backend.typing_errors() if hasattr(backend, "typing_errors") else ()
        compiled = Compiled(generated, function, errors)
        if config.read("log_compiles"):
            reason = "first call" if not self._cache else "new argument structure, static values or dtypes"
            print(f"numbax: compiling {self.fun.__qualname__} for {key} ({reason})", file=sys.stderr)
        self._cache[key] = compiled
        self._last = compiled
        return compiled

    @property
    def source(self) -> Optional[str]:
        """The generated source of the most recent specialization (None before the first call)."""
        return self._last.generated.source if self._last else None

    def lower_source(self, *args, **kwargs) -> str:
        """The generated source for a call with these arguments, without compiling or running it."""
        return self.generate(args, kwargs).source

    def generate(self, args: tuple, kwargs: Dict[str, Any], after_pass: Optional[str] = None):
        """Run the middle end for a call with these arguments; the ``pipeline.Generated`` result."""
        values = self._signature.bind(args, kwargs)
        statics, dynamic = self._signature.split(values)
        self._signature.check_hashable(statics)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        bound = self._signature.placeholders(values, leaves, treedef)
        return pipeline.run(self.fun, bound, label="jit", after_pass=after_pass)

    def _repr_html_(self) -> str:
        from numbax.display import highlight_html

        text = self.source or inspect.getsource(self.fun)
        return highlight_html(text)

    def __repr__(self) -> str:
        return f"<numbax.jit of {self.fun.__qualname__}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def jit(fun: Optional[Callable] = None, *, static_argnums: Union[int, Sequence[int]] = (),
        static_argnames: Union[str, Sequence[str]] = (), backend: str = "cpu", parallel: bool = False,
        fastmath: bool = False):
    """Compile ``fun`` with Numba, specialized to each call's static values and argument structure.

    Usable as ``@jit``, ``jit(f)`` and ``@jit(static_argnums=(1,))``.

    Args:
        fun: a Python function whose source numbax can read.
        static_argnums: positions of arguments whose values are compile-time constants (hashable).
        static_argnames: names of such arguments.
        backend: ``"cpu"`` (Numba) or ``"python"`` (run the generated code uncompiled, for debugging).
        parallel: pass ``parallel=True`` to Numba.
        fastmath: pass ``fastmath=True`` to Numba.

    Returns:
        A callable with the signature of ``fun``; ``.source`` holds the last generated code.
    """
    def wrap(f: Callable) -> Jitted:
        return Jitted(f, static_argnums, static_argnames, backend, parallel, fastmath)

    return wrap if fun is None else wrap(fun)


def source_for(fun: Callable, args, kwargs=None, *, transform: str = "jit", static_argnums=(),
               static_argnames=(), after_pass: Optional[str] = None) -> str:
    """The generated source of ``fun`` specialized to example ``args`` (after ``after_pass`` if given)."""
    if transform not in TRANSFORMS:
        raise ValueError(f"unknown transform {transform!r}; transforms: {', '.join(TRANSFORMS)}")
    jitted = fun if isinstance(fun, Jitted) else Jitted(getattr(fun, "_numbax_fun", fun), static_argnums,
                                                        static_argnames, backend="python")
    return jitted.generate(tuple(args), dict(kwargs or {}), after_pass).source

def source(fun: Callable, *args, **kwargs) -> str:
    """The generated source of ``fun`` for a call with these arguments (nothing is compiled or run).

    ``fun`` may be a plain function (shown as ``jit`` would compile it) or a transformed one.
    """
    if isinstance(fun, Jitted):
        return fun.lower_source(*args, **kwargs)
    return source_for(fun, args, kwargs)
