"""``jacfwd``, ``jacrev``, ``jacobian`` and ``hessian``: a basis swept in one compiled function.

``jacfwd(f)(x)`` compiles one function whose body is a loop over the rows of an identity matrix, each
iteration ``f``'s forward mode along one input element (``jacrev``: ``f``'s reverse mode from one output
element); the sweep is written in NumPy (``sweeps``) and specialized like the user's code, with
``numbax.vmap`` making the loop and the forward and reverse modes generated inside it (``nesting``).
``hessian(f)`` is ``jacfwd(jacrev(f))``: forward mode over the reverse mode's generated code.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Union

import numpy as np

from numbax import generated_cache, tree_util
from numbax.api import Jitted
from numbax.ast_passes import pipeline, wrapper
from numbax.ast_passes.specialize.values import Dyn
from numbax.ast_passes.parse import function_of
from numbax.ast_passes.specialize.compile_time import built_at_compile_time
from numbax.backends.cuda import lower_on_use as cuda_lower
from numbax.errors import NumbaxDeviceError, NumbaxDifferentiationError, NumbaxError
from numbax.transform_cache import reused
from numbax.transforms.grad.api import _normalize_argnums, _unwrap
from numbax.transforms import replays
from numbax.transforms.jacobian import sweeps

_MODES = {"fwd": "jacfwd", "rev": "jacrev"}


def _dtype_of(leaf, label: str, what: str, origin) -> np.dtype:
    """The dtype of a leaf: a run-time one's abstract value's (refused where numbax cannot tell it)."""
    if isinstance(leaf, Dyn):
        if leaf.aval is None:
            raise NumbaxDifferentiationError(
                f"{label} cannot tell the dtype and rank of this {what}, which its basis must match", origin,
                hint="compute it with NumPy functions numbax knows the result of (numbax.coverage() lists them), "
                     "or use numbax.jvp or numbax.vjp, which need no basis.")
        return leaf.aval.dtype
    return np.asarray(leaf).dtype


def check_inputs(label: str, leaves, origin=None) -> None:
    """JAX's TypeError for an input a Jacobian cannot take (numbax has no ``holomorphic=True``: complex
    inputs are refused by both modes)."""
    for leaf in leaves:
        dtype = _dtype_of(leaf, label, "input", origin)
        if not np.issubdtype(dtype, np.floating):
            raise NumbaxDifferentiationError(
                f"{label} requires real-valued inputs (input dtype that is a sub-dtype of np.floating), but got "
                f"{dtype.name}. For differentiation of non-holomorphic functions involving complex inputs or "
                f"integer inputs, use jax.jvp directly.", origin,
                hint="numbax.jvp and numbax.vjp take complex and (float0 tangents of) integer inputs.")


def check_outputs(label: str, leaves, origin=None) -> None:
    """JAX's TypeError for an output a Jacobian cannot differentiate."""
    for leaf in leaves:
        dtype = _dtype_of(leaf, label, "output", origin)
        if not np.issubdtype(dtype, np.floating):
            raise NumbaxDifferentiationError(
                f"{label} requires real-valued outputs (output dtype that is a sub-dtype of np.floating), but got "
                f"{dtype.name}. For differentiation of functions with integer outputs, use jax.vjp directly.",
                origin, hint="return floating-point values; numbax.vjp and numbax.jvp take other outputs.")


def _as_numpy_scalar(leaf):
    """A Python number the function returns as the NumPy scalar it stands for (``1.0``: ``np.float64(1.0)``),
    whose Jacobian rows are zeros; any other leaf as it is."""
    return np.asarray(leaf)[()] if isinstance(leaf, (bool, int, float, complex)) else leaf


def _by_kind(jac: "Jacobian", values) -> tuple:
    """The arguments of a call of ``jac``'s function, in parameter order, as the positional ones and a dict
    of the keyword-only ones."""
    kinds = [p.kind for p in jac._signature.signature.parameters.values()]
    positional, keyword = wrapper.by_kind(jac._signature.params, kinds)
    bound = dict(zip(jac._signature.params, values))
    return [bound[p] for p in positional], {p: bound[p] for p in keyword}


class _Pushforward:
    """Compile-time value the forward sweep calls: ``(args, tangents of the arguments differentiated)`` ->
    ``(output, output tangent, aux)``, forward mode generated at the call."""

    def __init__(self, jacobian: "Jacobian"):
        self.jacobian = jacobian

    def _numbax_specialize(self, spec, node, args, kwargs):
        from numbax.transforms.jvp import nested
        from numbax.transforms.jvp.api import pushforward

        jac = self.jacobian
        primals, tangents = args
        push = pushforward(jac.target, jac.has_aux, jac.backend, jac.argnums, swept=True)
        positional, keywords = _by_kind(jac, primals)
        out, out_tangent = replays.restoring(spec, node, [positional, keywords], lambda: nested.lower(
            push, spec, node, positional, tree_util.tree_leaves(tangents), jac.label, keywords=keywords,
            shaped=True))  # the sweep's basis vectors, each made in its primal's shape
        if jac.has_aux:
            return out[0], out_tangent[0], out[1]
        return out, out_tangent, None


class _Linearization:
    """Compile-time value the reverse sweep calls: ``*args`` -> ``(output, pullback, aux)``, the pullback's
    reverse mode generated where it is called."""

    def __init__(self, jacobian: "Jacobian"):
        self.jacobian = jacobian

    def _numbax_specialize(self, spec, node, args, kwargs):
        from numbax.transforms.grad.api import _VJP, _VJPFunction

        jac = self.jacobian
        positional, keywords = _by_kind(jac, args)
        out = replays.restoring(spec, node, [positional, keywords],
                                lambda: spec.call_value(node, jac.target, positional, keywords))
        primal, aux = (out[0], out[1]) if jac.has_aux else (out, None)
        primal = tree_util.tree_map(_as_numpy_scalar, primal)
        check_outputs(jac.label, tree_util.tree_leaves(primal), spec.origin(node))
        transformed = _VJP(jac.target, jac.argnums, jac.has_aux, True, False, (), (), jac.backend, cotangents=True)
        held = tuple(spec.snapshot(a) for a in positional)  # the pullback reads them later: pinned now
        pinned = {k: spec.snapshot(v) for k, v in keywords.items()}
        return primal, _VJPFunction(transformed, held, tree_util.tree_structure(primal), keywords=pinned), aux


class _Sweep:
    """What the generated wrapper calls: the Jacobian's sweep, specialized at the call."""

    def __init__(self, jacobian: "Jacobian"):
        self.jacobian = jacobian

    def _numbax_specialize(self, spec, node, args, kwargs):
        jac = self.jacobian
        try:
            values = jac._signature.bind(tuple(args), dict(kwargs))
        except TypeError as exc:
            spec.fail(node, f"calling {jac!r}: {exc}")
        if any(i in jac._signature.static for i in range(len(values))):
            spec.fail(node, f"{jac!r} with static arguments", hint="close over the static values instead.")
        dyn = tuple(values[i] for i in jac.argnums)
        check_inputs(jac.label, tree_util.tree_leaves(dyn), spec.origin(node))
        single = len(jac.argnums) == 1 and jac.single
        if jac.mode == "fwd":
            sweep, arguments = sweeps.jacfwd, [_Pushforward(jac), list(values), dyn, single, jac.has_aux]
        else:
            sweep, arguments = sweeps.jacrev, [_Linearization(jac), list(values), dyn, single, jac.has_aux]
        try:
            return spec.call_python_function(node, sweep, arguments, {}, owner=jac)
        except NumbaxError as error:  # raised at a line of the sweep: reported at the user's call instead
            if error.origin is None or error.origin.filename != sweeps.__file__:
                raise
            raise type(error)(error.message, spec.origin(node) or jac.origin(), error.hint) from None


class Jacobian(Jitted):
    """The Jacobian of a function, by forward (``mode="fwd"``) or reverse mode, compiled per specialization."""

    def __init__(self, fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                 mode: str = "rev", backend: str = "cpu"):
        inner = _unwrap(fun, (), ())[0]
        # a transformation of a transformation (hessian's jacfwd of jacrev): a wrapper calls the inner one
        self.of: Optional[Jitted] = inner if isinstance(inner, Jitted) else None
        super().__init__(inner.fun if self.of is not None else inner, (), (), backend)
        self.target = inner
        self.argnums = _normalize_argnums(argnums, self._nparams, self.fun)
        self.single = isinstance(argnums, int)
        self.has_aux = has_aux
        self.mode = mode
        self.label = _MODES[mode]

    def _compile(self, key, values, leaves, treedef, statics, form: tuple = ()):
        check_inputs(self.label, [leaf for i in self.argnums for leaf in tree_util.tree_leaves(values[i])])
        return super()._compile(key, values, leaves, treedef, statics, form)

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, backend: str = "cpu"):
        """The middle end for one specialization: a wrapper with the function's parameters calls the sweep
        (on the GPU backend, lowered to kernels and a host driver like any jitted code)."""
        kinds = [p.kind for p in self._signature.signature.parameters.values()]
        source = wrapper.calling(self.fun, self.label, self._signature.params, kinds, "jacobian", _Sweep(self))
        try:
            return pipeline.run(source, bound, label=self.label, after_pass=after_pass,
                                lower=cuda_lower.legalize if backend == "gpu" else None)
        except NumbaxDeviceError as error:  # the GPU's refusal of a line of the sweep: at the user's function
            if error.origin is None or error.origin.filename != sweeps.__file__:
                raise
            raise NumbaxDeviceError(f"{error.message} (in {self!r})", self.origin(), error.hint) from None

    def _compiles_for_gpu(self) -> bool:
        """On the GPU backend, the sweep's loop over the basis runs in the host driver, each column's forward
        or reverse mode as kernels."""
        return True

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside another compiled function (``hessian``'s inner ``jacrev``): swept there."""
        return _Sweep(self)._numbax_specialize(spec, node, args, kwargs)

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "Jacobian":
        """``jit`` of this Jacobian: the same (it is compiled already); static arguments are refused."""
        if static_argnums or static_argnames:
            raise NumbaxDifferentiationError(f"jit of {self!r} with static arguments is not supported",
                                             hint="close over the static values instead.")
        if backend == "cpu" or backend == self.backend:
            return self
        argnums = self.argnums[0] if self.single else self.argnums
        return Jacobian(self.target, argnums, self.has_aux, self.mode, backend)

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this Jacobian depends on (the disk cache of a caller's code)."""
        of = () if self.of is None else (self.of._numbax_fingerprint(),)
        return (self.label, self.fun, self.argnums, self.single, self.has_aux) + of

    def _generated_cache_tag(self) -> Optional[str]:
        try:
            return f"{self.label}:" + repr(generated_cache.value(self._numbax_fingerprint()[2:]))
        except generated_cache.Uncacheable:
            return None

    def __repr__(self) -> str:
        inner = self.fun.__qualname__ if self.of is None else repr(self.of)[len("<numbax."):-1]
        return f"<numbax.{self.label} of {inner}>"


def _refuse_holomorphic(holomorphic: bool) -> None:
    if holomorphic:
        raise NotImplementedError("numbax does not implement holomorphic=True: use numbax.jvp or numbax.vjp "
                                  "with complex tangents or cotangents")


@reused
def jacfwd(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
           holomorphic: bool = False, *, backend: str = "cpu") -> Jacobian:
    """The Jacobian of ``fun`` by forward mode, as JAX's ``jax.jacfwd``: one column per input element, all
    in one compiled function (a loop over the basis whose body is ``fun``'s tangent code).

    Args:
        fun: a function of arrays (pytrees of them) returning floating-point arrays (pytrees of them), or a
            numbax transformation of one (``jacfwd(jacrev(f))``).
        argnums: the positional argument(s) to differentiate; a tuple gives a tuple of Jacobians per output.
        has_aux: ``fun`` returns ``(output, aux)``; the result is ``(jacobian, aux)``.
        holomorphic: must be False.
        backend: ``"cpu"`` (Numba) or ``"python"`` (the generated code, uncompiled).

    Returns:
        A function with ``fun``'s signature; for each output leaf of shape ``S`` and input leaf of shape
        ``T``, a block of shape ``S + T``, arranged as the output's structure of the inputs' structure.

    Raises:
        TypeError: an input differentiated is not a real floating-point value (JAX's message).
    """
    _refuse_holomorphic(holomorphic)
    return Jacobian(fun, argnums, has_aux, "fwd", backend)


@reused
def jacrev(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False, *, backend: str = "cpu") -> Jacobian:
    """The Jacobian of ``fun`` by reverse mode, as JAX's ``jax.jacrev``: one row per output element, all in
    one compiled function (a loop over the basis whose body is ``fun``'s adjoint code). Arguments and
    result as ``jacfwd``'s; also raises JAX's TypeError for an output that is not a real float."""
    _refuse_holomorphic(holomorphic)
    if allow_int:
        raise NotImplementedError("numbax's jacrev does not implement allow_int=True: use numbax.vjp, whose "
                                  "cotangents of integer inputs are float0")
    return Jacobian(fun, argnums, has_aux, "rev", backend)


jacobian = jacrev


@reused
def hessian(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
            holomorphic: bool = False, *, backend: str = "cpu") -> Jacobian:
    """The Hessian of ``fun``, as JAX's ``jax.hessian``: ``jacfwd(jacrev(fun))``, forward mode over the
    reverse mode's generated code, in one compiled function. For a scalar ``fun`` of an input of shape
    ``T`` the result has shape ``T + T``."""
    _refuse_holomorphic(holomorphic)
    return jacfwd(jacrev(fun, argnums, has_aux, backend=backend), argnums, has_aux, backend=backend)


for _constructor in (jacfwd, jacrev, hessian):
    built_at_compile_time(_constructor)
