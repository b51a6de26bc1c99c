"""``vmap``: a function mapped over an axis of its arguments, compiled as a loop over the batch.

A call from Python is checked as JAX checks it (ranks, one common size), then
compiled per specialization like ``jit``: numbax writes a wrapper with the
function's parameters whose body is one batched call, decides for this call
how each parameter is mapped (``in_axes`` for positional arguments, axis 0
for keyword ones, none for defaults), and runs the usual pipeline on the
wrapper; the batched call lowers to a loop (``loop``) in which the user's
function is inlined.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from numbax import config, generated_cache, tree_util
from numbax.api import Jitted
from numbax.ast_passes import pipeline, wrapper
from numbax.ast_passes.parse import ParsedFunction, function_of
from numbax.backends.cuda import lower_on_use as cuda_lower
from numbax.transform_cache import reused
from numbax.transforms.vmap import axes
from numbax.transforms.vmap.batching import Batching, BoundAxes, construct


def unwrap(fun: Callable, static_argnums, static_argnames):
    """``vmap(jit(f))`` maps ``f`` itself; a transformation's static arguments stay static."""
    if isinstance(fun, Jitted):
        static_argnums, static_argnames = fun.merged_static(static_argnums, static_argnames)
        if type(fun) is Jitted:
            fun = fun.fun
    return fun, static_argnums, static_argnames


def user_function(fun: Callable) -> Callable:
    """The user's function under layers of numbax transformations (a function or a ``functools.partial``)."""
    while isinstance(fun, Jitted):
        fun = fun.fun
    return fun


class Vmapped(Jitted):
    """A function mapped over an axis of its arguments, compiled per specialization like ``jit``."""

    label = "vmap"

    def __init__(self, fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Optional[str] = None,
                 axis_size: Optional[int] = None, static_argnums=(), static_argnames=(), backend: str = "cpu"):
        if not callable(fun):
            raise TypeError(f"vmap expects a callable, got {fun!r}")
        inner, static_argnums, static_argnames = unwrap(fun, static_argnums, static_argnames)
        self.batching = Batching(inner, in_axes, out_axes, axis_name, axis_size)
        super().__init__(user_function(inner), static_argnums, static_argnames, backend)
        self._python_twin: Optional[Vmapped] = None

    # -- calls -----------------------------------------------------------------

    def _call(self, args: tuple, kwargs: Dict[str, Any]):
        if config.state.disable_jit and self.backend != "python":
            return self._twin()(*args, **kwargs)
        return self._compiled_call(args, kwargs)

    def _twin(self) -> "Vmapped":
        """The same mapping on the python backend: what runs under ``disable_jit``."""
        if self._python_twin is None:
            self._python_twin = self.rejit(backend="python")
        return self._python_twin

    def _call_form(self, args: tuple, kwargs: Dict[str, Any]) -> Tuple[Tuple[str, tuple], ...]:
        """JAX's checks of this call, and the axis of each dynamic leaf (in parameter order) as the key part."""
        batching, params = self.batching, self._signature.params
        static = {params[i] for i in self._signature.static}
        arg_axes = tuple(None if i < len(params) and params[i] in static else axis
                         for i, axis in enumerate(axes.positional_axes(batching.in_axes, len(args))))
        kwarg_axes = {k: None if k in static else 0 for k in kwargs}  # static arguments are never mapped
        pairs = axes.leaf_axes(arg_axes, kwarg_axes, args, kwargs)
        axes.check_call(params, pairs, args, kwargs, batching.axis_size)
        by_param = {**dict(zip(params, arg_axes)), **kwarg_axes}
        values = self._signature.bind(args, kwargs)
        flat = tuple(axis for i, (param, value) in enumerate(zip(params, values))
                     if i not in self._signature.static
                     for _, axis in axes.broadcast_prefix("vmap in_axes", by_param.get(param), value))
        return (("in_axes", flat),)

    def __new__(cls, fun: Callable = None, in_axes: Any = 0, *args, **kwargs):
        """A ``Vmapped``, or where keyword arguments are not mapped as positional ones would be (``in_axes``
        other than 0) one that keeps calls with keywords from Numba's C dispatch (``_KeywordsApart``): the
        calls of the others go straight to C."""
        if cls is Vmapped and not _keywords_fold(in_axes):
            cls = _KeywordsApart
        return super().__new__(cls, fun, in_axes, *args, **kwargs)

    def _keywords_fold(self) -> bool:
        """Whether Numba's C dispatch, folding keyword arguments into positional ones, maps them as vmap does."""
        return _keywords_fold(self.batching.in_axes)

    def _folds_arguments(self) -> bool:
        """vmap maps positional arguments, keyword arguments (``__call__`` keeps those from Numba's C
        dispatch where they differ) and defaults differently: folding keeps a call's meaning only when every
        parameter is always passed."""
        return super()._folds_arguments() and all(d is _NO_DEFAULT for d in self._signature.defaults(_NO_DEFAULT))

    # -- generating --------------------------------------------------------------

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, in_axes: tuple = (),
                      backend: str = "cpu"):
        return pipeline.run(self._wrapper(bound, in_axes), bound, label=self.label, after_pass=after_pass,
                            lower=cuda_lower.legalize if backend == "gpu" else None)

    def _compiles_for_gpu(self) -> bool:
        """On the GPU backend, a vmap of numbers per example is one kernel (``threads``)."""
        return True

    def _wrapper(self, bound: Dict[str, Any], in_axes: tuple) -> ParsedFunction:
        """``def vmap_f(x, y): return batched(x, y)``, ``batched`` mapping each parameter as ``in_axes`` says."""
        signature = self._signature
        flat = iter(in_axes)
        per_param = []
        for i, param in enumerate(signature.params):
            if i in signature.static:
                per_param.append(None)
                continue
            leaves, treedef = tree_util.tree_flatten(bound[param])
            per_param.append(tree_util.tree_unflatten(treedef, [next(flat) for _ in leaves]))
        kinds = [p.kind for p in signature.signature.parameters.values()]
        positional, keyword = wrapper.by_kind(signature.params, kinds)
        axes_of = dict(zip(signature.params, per_param))
        call = BoundAxes(self.batching, tuple(axes_of[p] for p in positional), {k: axes_of[k] for k in keyword})
        return wrapper.calling(self.fun, self.label, signature.params, kinds, "batched", call)

    def _generated_cache_tag(self) -> Optional[str]:
        """The mapping and what is mapped, fingerprinted; None (no disk cache) if that cannot be."""
        try:
            return f"{self.label}:" + repr(generated_cache.value(self._numbax_fingerprint()))
        except generated_cache.Uncacheable:
            return None

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this mapping depends on (also inside another function)."""
        return self.batching._numbax_fingerprint() + (self.static_argnums,)

    # -- composition ---------------------------------------------------------------

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside another compiled function: the batched loop is emitted there."""
        return self.batching._numbax_specialize(spec, node, args, kwargs)

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "Vmapped":
        """``jit`` of this mapping: the same, with ``jit``'s static arguments added."""
        nums, names = self.merged_static(static_argnums, static_argnames)
        b = self.batching
        return Vmapped(b.fun, b.in_axes, b.out_axes, b.axis_name, b.axis_size, nums, names,
                       self.backend if backend == "cpu" else backend)

    def __repr__(self) -> str:
        return f"<numbax.vmap of {getattr(function_of(self.fun), '__qualname__', self.fun)}>"


_NO_DEFAULT = object()


def _keywords_fold(in_axes: Any) -> bool:
    """vmap maps keyword arguments along axis 0 whatever ``in_axes`` says: as positional ones only where
    ``in_axes`` is 0."""
    return type(in_axes) is int and in_axes == 0


class _KeywordsApart(Vmapped):
    """A ``Vmapped`` whose ``in_axes`` map positional arguments otherwise than keyword ones: a call with keywords
    takes numbax's path, not Numba's C dispatch (which would fold them into positional ones)."""

    def __call__(self, *args, **kwargs):
        if kwargs:
            return self._compile_for_args(*args, **kwargs)()
        return super().__call__(*args, **kwargs)


@reused
def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name: Optional[str] = None,
         axis_size: Optional[int] = None, *, static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
         backend: str = "cpu") -> Callable:
    """Map ``fun`` over an axis of its arguments (``jax.vmap``), compiled as a loop over the batch.

    Args:
        fun: a Python function numbax can read, or a numbax transformation of one (``grad(f)``, ``jit(f)``,
            ``vmap(f)``).
        in_axes: for each positional argument, the axis to map over (``None``: the same value for every
            example); an int or ``None`` applies to all of them; a tuple or list gives one entry per positional
            argument, each a pytree prefix of the argument. Keyword arguments are mapped over axis 0.
        out_axes: where the mapped axis goes in each output (a pytree prefix of the output); ``None`` for an
            output that does not depend on the mapped inputs.
        axis_name: a name for the mapped axis, by which collectives in ``fun`` (``numbax.lax.psum``, ...) run
            over it.
        axis_size: the batch size, required when no argument is mapped.
        static_argnums: arguments that are compile-time constants (as in ``jit``); they are never mapped.
        static_argnames: the same, by name.
        backend: ``"cpu"`` (Numba), ``"gpu"`` (one ``numba.cuda`` kernel, one example per thread, for a
            function of numbers; host arguments are copied to the GPU) or ``"python"`` (the generated code,
            uncompiled). Device arrays among the arguments run it on the GPU backend whatever this says.

    Returns:
        A function with ``fun``'s signature, returning ``fun``'s outputs stacked along ``out_axes``.

    Raises:
        TypeError: ``in_axes`` or ``out_axes`` is not an int, None, or a container of them.
        ValueError: at a call, as JAX raises it: ``in_axes`` does not fit the arguments, a mapped argument
            has no such axis, or the mapped axes differ in size.
    """
    return Vmapped(fun, in_axes, out_axes, axis_name, axis_size, static_argnums, static_argnames, backend)


vmap._numbax_specialize = functools.partial(construct, vmap)  # ``vmap(f)`` inside compiled code
