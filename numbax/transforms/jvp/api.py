"""``jvp``: forward mode as a compiled function with JAX's semantics."""
from __future__ import annotations

import functools
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from numbax import generated_cache, tree_util
from numbax.api import _ON_GPU, Jitted
from numbax.ast_passes import anno, pipeline, wrapper
from numbax.ast_passes.analyses import avals
from numbax.backends.cuda import lower_on_use as cuda_lower, placement
from numbax.backends.cuda.placement import is_device_array
from numbax.call_signature import leaf_key
from numbax.compiled import as_numbers
from numbax.errors import NumbaxDifferentiationError
from numbax.transform_cache import reused
from numbax.transforms import arity, replays
from numbax.transforms.grad.api import FLOAT0
from numbax.transforms.jvp import transform as jvp_transform


def _dtype(leaf) -> np.dtype:
    """A leaf's dtype (a device array's without copying it to the host)."""
    return np.dtype(leaf.dtype) if is_device_array(leaf) else np.asarray(leaf).dtype


def _inexact(leaf) -> bool:
    return np.issubdtype(_dtype(leaf), np.inexact)


def _check_tangents(primals: tuple, tangents: tuple):
    """JAX's checks of ``jvp``'s arguments; the tangent leaves of the inexact primal leaves."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"primal and tangent arguments to jax.jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    primal_leaves, primal_tree = tree_util.tree_flatten(tuple(primals))
    tangent_leaves, tangent_tree = tree_util.tree_flatten(tuple(tangents))
    if primal_tree != tangent_tree:
        raise TypeError(f"primal and tangent arguments to jax.jvp must have the same tree structure; "
                        f"primals have tree structure {primal_tree} whereas tangents have tree structure "
                        f"{tangent_tree}.")
    out = []
    for p, t in zip(primal_leaves, tangent_leaves):
        p_dtype, t_dtype = _dtype(p), _dtype(t)
        if _inexact(p):
            if t_dtype != p_dtype:
                raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or "
                                f"in case of int/bool primal dtype the tangent dtype must be float0. Got primal "
                                f"dtype {p_dtype} and so expected tangent dtype {p_dtype}, but got tangent dtype "
                                f"{t_dtype} instead.")
            if np.shape(p) != np.shape(t):
                raise ValueError(f"jvp called with different primal and tangent shapes;Got primal shape "
                                 f"{np.shape(p)} and tangent shape as {np.shape(t)}")
            out.append(t)
        elif t_dtype != FLOAT0:
            raise TypeError(f"primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
                            f"case of int/bool primal dtype the tangent dtype must be float0. Got primal dtype "
                            f"{p_dtype} and so expected tangent dtype float0, but got tangent dtype {t_dtype} "
                            f"instead.")
    return out


def _tangent_of(out, tangent):
    """An output's tangent as JAX gives it: in the output's dtype (Numba computes a float32 array times a
    Python float in float64), ``float0`` zeros for an integer or boolean output."""
    if not _inexact(out):
        return np.zeros(np.shape(out), FLOAT0)
    dtype = _dtype(out)
    if _dtype(tangent) != dtype and is_device_array(tangent):  # cast on the host, and back where it was
        return placement.cuda().to_device(placement.on_host(tangent).astype(dtype))
    if _dtype(tangent) != dtype:
        return np.asarray(tangent).astype(dtype)  # a 0-d one too: every 0-d result is a 0-d array
    return tangent


class Pushforward(Jitted):
    """``fun`` in forward mode with respect to every inexact leaf of its arguments, compiled per
    specialization: the generated function takes the primal leaves, then their tangents, and returns the
    output leaves, then theirs."""

    label = "jvp"

    def __init__(self, fun: Callable, has_aux: bool = False, backend: str = "cpu",
                 argnums: Optional[Tuple[int, ...]] = None, swept: bool = False):
        inner = fun.fun if type(fun) is Jitted else fun
        base = inner
        while isinstance(base, functools.partial):
            base = base.func
        if isinstance(base, _Linearized):
            raise NumbaxDifferentiationError(
                "forward mode of a linearized function is not supported yet",
                hint="differentiate a function that calls numbax.jvp instead: jvp(lambda p, t: jvp(f, p, t), ...).")
        # jvp of another transformation (``grad(f)``: forward over reverse): a wrapper with f's parameters
        # calls it, and its code is generated at that call (``nesting``) for forward mode to read
        self.of: Optional[Jitted] = inner if isinstance(inner, Jitted) else None
        super().__init__(inner.fun if self.of is not None else inner, (), (), backend)
        self.has_aux = has_aux
        # the positional parameters whose inexact leaves get tangents (None: all of them)
        self.argnums = tuple(range(self._nparams)) if argnums is None else tuple(argnums)
        # called by ``jacfwd``'s sweep once a basis vector at the same primals: fusion leaves what reads no
        # tangent as it is, for the sweep's loop to compute once (``hoist_invariants``)
        self.swept = swept

    def push(self, primals: tuple, tangent_leaves: list):
        """``(output, output tangent)`` at ``primals`` for the tangents of their inexact leaves."""
        values = self._signature.bind(tuple(primals), {})
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        stand_ins, form, host = leaves, (), leaves  # host: the leaves before any are put on the GPU
        if self._runs_on_gpu(values, leaves, [("tangents", t) for t in tangent_leaves]):  # tangents' data too
            values, leaves, stand_ins = self._placed_on_gpu(values, leaves)
            tangent_leaves, form = placement.to_gpu(list(tangent_leaves)), _ON_GPU
        key = (treedef, statics, leaf_key(stand_ins)) + form
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(key, values, stand_ins, treedef, statics, form)
        if form:  # on the GPU: a host argument the driver writes is refused (written on the device only)
            placement.check_writes(host, getattr(compiled.function, "written", {}), copied_back=False)
        out, tangents = compiled(list(leaves) + as_numbers(tangent_leaves))
        return out, tree_util.tree_map(_tangent_of, out, tangents)

    def _compiles_for_gpu(self) -> bool:
        """On the GPU backend, forward mode's code runs through the GPU's lowering like any jitted code."""
        return True

    def _generated_cache_tag(self) -> Optional[str]:
        """Kept on disk, keyed by the options (and by the transformation differentiated; None, no disk cache,
        if that has no fingerprint)."""
        try:
            return "jvp:" + repr(generated_cache.value(self._numbax_fingerprint()[2:]))
        except generated_cache.Uncacheable:
            return None

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this pushforward depends on (the disk cache of a caller's code)."""
        of = () if self.of is None else (self.of._numbax_fingerprint(),)
        return ("jvp", self.fun, self.has_aux, self.argnums, self.swept) + of

    def wrt_leaves(self, bound: Dict[str, Any]) -> List[bool]:
        """For each dynamic leaf of a call bound to ``bound``: whether it gets a tangent (an inexact leaf of a
        parameter in ``argnums``)."""
        out = []
        for i, p in enumerate(self._signature.params):
            if i not in self._signature.static:
                out.extend(i in self.argnums and leaf.aval.dtype.kind in "fc"
                           for leaf in tree_util.tree_leaves(bound[p]))
        return out

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, backend: str = "cpu"):
        """The middle end for one specialization: the user's function, then its tangents (for ``backend``: the
        GPU's lowering fuses elementwise runs into kernels itself)."""
        dynamic = [p for i, p in enumerate(self._signature.params) if i not in self._signature.static]
        leaves = [leaf for p in dynamic for leaf in tree_util.tree_leaves(bound[p])]
        with_tangent = self.wrt_leaves(bound)
        holder: Dict[str, Any] = {}

        def rewrite(fdef, spec):
            if spec.returns is not None and spec.returns.num_dynamic != spec.returns.treedef.num_leaves:
                raise NumbaxDifferentiationError(
                    "jvp of a function whose output holds a value known at compile time is not supported yet",
                    anno.getanno(fdef, anno.Key.ORIGIN), hint="return arrays or numbers computed from the inputs.")
            names = [a.id for a in fdef.args.args]
            param_avals = {n: avals.of_value(np.zeros((1,) * leaf.aval.ndim, leaf.aval.dtype))
                           for n, leaf in zip(names, leaves)}
            param_avals.update({n: avals.of_value(v) for n, v in spec.constants.items()})
            param_avals = {n: a for n, a in param_avals.items() if a is not None}
            wrt = [n for n, tangent in zip(names, with_tangent) if tangent]
            narrow = {n for n, leaf in zip(names, leaves) if n in wrt and leaf.aval.dtype.itemsize < 8}
            fdef.name = f"jvp_{fdef.name}"
            spec.name = fdef.name
            jvp_spec = jvp_transform.JvpSpec(wrt, param_avals, narrow)
            out = jvp_transform.transform(fdef, jvp_spec)
            params = out.args.args  # the leaves, the constants, the tangents: the tangents go after the leaves
            count = len(leaves)
            tangents = params[len(params) - len(wrt):]
            out.args.args = params[:count] + tangents + params[count:len(params) - len(wrt)]
            holder["tangents"] = [(t.id, n) for t, n in zip(tangents, wrt)]
            dtypes = [leaf.aval.dtype for leaf in leaves] + [np.asarray(v).dtype for v in spec.constants.values()]
            if all(d == np.float64 for d in dtypes if d.kind in "fc"):  # fusion's condition (float64 buffers)
                pairs = [(t.id, n) for t, n in zip(tangents, wrt) if n in param_avals]
                fused_avals = {**param_avals, **{t: param_avals[n] for t, n in pairs}}
                # a tangent has its primal's shape (checked before the call, by the caller or ``jvp``), and the
                # dims of the contractions checked at the entry are equal
                same = dict(jvp_spec.same)
                same.update({f"{t}.{k}": same.get(f"{n}.{k}", f"{n}.{k}") for t, n in pairs
                             for k in range(param_avals[n][1])})
                holder["fuse"] = fused_avals, same, {t for t, _ in pairs} if self.swept else None
            return out

        def lower(module, param_avals, constants):
            """The GPU's lowering, each tangent parameter of its primal's dtype and rank."""
            param_avals.update({t: param_avals[n] for t, n in holder["tangents"]})
            return cuda_lower.legalize(module, param_avals, constants)

        on_gpu = backend == "gpu"
        generated = pipeline.run(self._source(), bound, label="jvp", after_pass=after_pass, transform=rewrite,
                                 fuse=lambda: None if on_gpu else holder.get("fuse"), lower=lower if on_gpu else None)
        if generated.returns is not None and after_pass is None:
            generated.returns = self.returns(generated.returns)
        return generated

    def export_parameters(self, args: tuple):
        """The exported ``jvp_f(primals, tangents)``: tuples, as ``numbax.jvp`` takes them, the tangents of
        the primals' kinds (every argument floating-point: integer ones would need float0 tangents)."""
        if self.of is not None or self.has_aux or self.argnums != tuple(range(self._nparams)):
            raise NumbaxDifferentiationError(f"numbax.export of {self!r} with these options is not supported",
                                             hint="export jit of a function that calls numbax.jvp instead.")
        if not all(_inexact(leaf) for leaf in tree_util.tree_leaves(args)):
            raise NumbaxDifferentiationError(
                "numbax.export of jvp needs floating-point arguments only (integer ones take float0 tangents)",
                hint="export jit of a function that calls numbax.jvp, closing over the integer arguments.")
        self.push(tuple(args), tree_util.tree_leaves(tuple(args)))
        return [("primals", tuple(args), False, False), ("tangents", tuple(args), False, False)]

    def export_output(self, out, returns):
        """``(output, its tangent)``; a narrower float's tangent would need the cast that ``push`` makes."""
        primal = returns.avals[:len(returns.avals) // 2]
        if any(a is None or a.dtype not in (np.float64, np.complex128) for a in primal):
            raise NumbaxDifferentiationError(
                "numbax.export of jvp needs float64 or complex128 outputs (the tangent of a narrower one is "
                "cast after the compiled code)", hint="export jit of a function that calls numbax.jvp instead.")
        return out

    def _source(self):
        """The function the pipeline reads: the user's, or one that calls the transformation differentiated."""
        if self.of is None:
            return self.fun
        kinds = [p.kind for p in self._signature.signature.parameters.values()]
        return wrapper.calling(self.fun, "jvp", self._signature.params, kinds, "transformed", self.of)

    @staticmethod
    def returns(primal):
        """What the generated function returns, from what the user's returns: ``(output, its tangent)``.
        The tangent of a float64 leaf is float64; a narrower float's may be wider (numbax casts it)."""
        from numbax.ast_passes.specialize.builder import DYNAMIC, ReturnSpec

        out_tree = tree_util.tree_unflatten(primal.treedef, [0] * primal.treedef.num_leaves)
        treedef = tree_util.tree_structure((out_tree, out_tree))
        avals = tuple(primal.avals) if len(primal.avals) == primal.num_dynamic else (None,) * primal.num_dynamic
        tangent_avals = tuple(a if a is not None and a.dtype == np.float64 else None for a in avals)
        return ReturnSpec(treedef, tuple(DYNAMIC for _ in range(treedef.num_leaves)), avals + tangent_avals)

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside compiled code as ``pushforward(primals, tangents)``: generated there (``nested``)."""
        from numbax.transforms.jvp import nested

        if len(args) != 2 or kwargs:
            spec.fail(node, "a pushforward takes the primals and their tangents")
        return nested.lower(self, spec, node, list(args[0]), args[1])

    def __repr__(self) -> str:
        return f"<numbax.jvp of {self.fun.__qualname__}>"


@reused
def pushforward(fun: Callable, has_aux: bool, backend: str, argnums: Optional[Tuple[int, ...]] = None,
                swept: bool = False) -> Pushforward:
    """The compiled forward mode of ``fun``, made once per function and options (``numbax.transform_cache``)."""
    return Pushforward(fun, has_aux, backend, argnums, swept)


def jvp(fun: Callable, primals, tangents, has_aux: bool = False, *, backend: str = "cpu"):
    """Forward mode, as JAX's ``jax.jvp``: ``(fun(*primals), the tangent of the output)``.

    Args:
        fun: a Python function of NumPy values (pytrees of arrays and numbers).
        primals: a tuple or list of the arguments.
        tangents: the same structure, a tangent of each inexact leaf's dtype and shape (``float0`` zeros for
            integer and boolean leaves, as in JAX).
        has_aux: ``fun`` returns ``(output, aux)``; the result is ``(output, output tangent, aux)``.
        backend: ``"cpu"`` (Numba), ``"gpu"`` (forward mode's code as ``numba.cuda`` kernels and a host driver;
            also where a primal or tangent is a device array) or ``"python"`` (the generated code, uncompiled).

    Returns:
        ``(primals_out, tangents_out)``: the output, and its directional derivative along ``tangents``
        (``float0`` zeros for integer and boolean outputs). The tangent code is computed beside the primal
        in one compiled function, through branches and loops; ``numbax.source`` shows it.
    """
    tangent_leaves = _check_tangents(primals, tangents)
    fun = arity.at_arity(fun, len(primals))
    out, out_tangents = pushforward(fun, has_aux, backend).push(tuple(primals), tangent_leaves)
    if has_aux:
        return out[0], out_tangents[0], out[1]
    return out, out_tangents


class _Linearized:
    """The linear map ``linearize`` returns: tangents of the primals -> the tangent of the output."""

    def __init__(self, pushforward: Pushforward, primals: tuple):
        self.pushforward = pushforward
        self.primals = primals

    def __call__(self, *tangents):
        leaves = _check_tangents(self.primals, tangents)
        # each call runs the forward mode from the primals as passed (a function may write into them)
        out_tangent = self.pushforward.push(replays.copied_arrays(self.primals), leaves)[1]
        return out_tangent[0] if self.pushforward.has_aux else out_tangent


def linearize(fun: Callable, *primals, has_aux: bool = False, backend: str = "cpu"):
    """As JAX's ``jax.linearize``: ``(fun(*primals), f_jvp)`` where ``f_jvp(*tangents)`` is the output's
    tangent (``(output, f_jvp, aux)`` with ``has_aux``). ``f_jvp`` runs the compiled forward mode at
    ``primals`` (the same specialization for every call)."""
    transformed = pushforward(arity.at_arity(fun, len(primals)), has_aux, backend)
    zeros = tree_util.tree_map(
        lambda p: np.zeros(np.shape(p), np.asarray(p).dtype if _inexact(p) else FLOAT0), tuple(primals))
    held = replays.copied_arrays(tuple(primals))
    out = transformed.push(tuple(primals), _check_tangents(tuple(primals), zeros))[0]
    f_jvp = _Linearized(transformed, held)
    return (out[0], f_jvp, out[1]) if has_aux else (out, f_jvp)


def _lower_jvp(spec, node, args, kwargs):
    from numbax.transforms.jvp import nested

    return nested.lower_jvp(spec, node, args, kwargs)


jvp._numbax_specialize = _lower_jvp  # ``numbax.jvp(f, primals, tangents)`` inside compiled code
