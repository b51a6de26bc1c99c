"""``grad``, ``value_and_grad`` and ``vjp``: reverse mode as compiled functions with JAX's semantics."""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import gast
import numpy as np

from numbax import config, generated_cache, runtime, tree_util
from numbax.api import _ON_GPU, Jitted, jit
from numbax.compiled import as_numbers
from numbax.ast_passes import anno, pipeline, wrapper
from numbax.ast_passes.analyses import avals
from numbax.ast_passes.naming import Namer
from numbax.ast_passes.specialize.compile_time import built_at_compile_time
from numbax.backends.cuda import lower_on_use as cuda_lower, placement
from numbax.backends.cuda.placement import is_device_array
from numbax.errors import NumbaxDifferentiationError
from numbax.lax import named_axes
from numbax.transform_cache import reused
from numbax.transforms import arity, nesting, replays
from numbax.transforms.grad import transform as grad_transform

FLOAT0 = np.dtype([("float0", np.void, 0)])


def _normalize_argnums(argnums: Union[int, Sequence[int]], nparams: int, fun: Callable) -> Tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums and not isinstance(argnums, int):
        raise ValueError("argnums must be an int or a non-empty tuple of ints")
    out = []
    for i in nums:
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"argnums must be ints, got {i!r}")
        if not -nparams <= i < nparams:
            raise ValueError(f"differentiating with respect to argnums={argnums} requires at least {max(nums) + 1} "
                             f"positional arguments to be passed by the caller, but {fun.__qualname__} takes "
                             f"{nparams}.")
        out.append(int(i) % nparams)
    return tuple(out)


def _no_output(fdef: gast.FunctionDef, returns) -> None:
    """JAX's TypeError for ``grad`` of a function whose output holds no value (``None``), at its ``def``."""
    output = None if returns is None else tree_util.tree_unflatten(returns.treedef, list(returns.statics))
    raise NumbaxDifferentiationError(
        f"Gradient only defined for scalar-output functions. Output was {output!r}.",
        anno.getanno(fdef, anno.Key.ORIGIN), hint="return the scalar to differentiate.")


def _check_one_output(fdef: gast.FunctionDef, returns, has_aux: bool) -> None:
    """JAX's TypeError, at the ``def``, for an output that is no single value (a tuple, a dict: ``grad`` seeds
    only the first returned leaf) or, with ``has_aux``, no ``(value, aux)`` pair."""
    treedef = returns.treedef
    if has_aux:
        children = tree_util.treedef_children(treedef)
        if len(children) != 2 or tree_util.treedef_tuple(children) != treedef:
            raise NumbaxDifferentiationError(
                f"expected function with aux output to return a two-element tuple, but got {treedef}.",
                anno.getanno(fdef, anno.Key.ORIGIN), hint="return (value, aux), or drop has_aux=True.")
        treedef = children[0]
    if not tree_util.treedef_is_leaf(treedef):
        raise NumbaxDifferentiationError(
            f"Gradient only defined for scalar-output functions. Output was {treedef}.",
            anno.getanno(fdef, anno.Key.ORIGIN),
            hint="return the scalar to differentiate (numbax.vjp or numbax.jacrev take any output).")


def _float0_if_int(primal, cotangent):
    """JAX's zero cotangent of an integer input: an array of dtype float0."""
    if np.issubdtype(np.asarray(primal).dtype, np.inexact):
        return cotangent
    return np.zeros(np.shape(primal), dtype=FLOAT0)


def _check_inputs(values, argnums, allow_int: bool) -> None:
    for i in argnums:
        for leaf in tree_util.tree_leaves(values[i]):
            dtype = np.asarray(leaf).dtype
            if not np.issubdtype(dtype, np.inexact) and not allow_int:
                raise TypeError(
                    f"grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                    f"np.inexact), but got {dtype.name}. If you want to use Boolean- or integer-valued inputs, "
                    "use vjp or set allow_int to True.")


class Differentiated(Jitted):
    """A reverse-mode transformation of a function, compiled per specialization like ``jit``."""

    def __init__(self, fun: Callable, argnums=0, has_aux: bool = False, allow_int: bool = False,
                 value: bool = False, static_argnums=(), static_argnames=(), backend: str = "cpu",
                 cotangents: bool = False):
        # ``grad(grad(f))``, ``grad(vmap(f))``: the transformation differentiated, called from a wrapper with
        # f's parameters (its code generated at that call, ``nesting``, for reverse mode to read)
        self.of: Optional[Jitted] = fun if isinstance(fun, Jitted) and type(fun) is not Jitted else None
        super().__init__(fun.fun if self.of is not None else fun, static_argnums, static_argnames, backend)
        self.argnums = _normalize_argnums(argnums, self._nparams, fun)
        self.single = isinstance(argnums, int)
        overlap = set(self.argnums) & set(self.static_argnums)
        if overlap:
            raise ValueError(f"cannot differentiate with respect to static arguments {sorted(overlap)}")
        self.has_aux = has_aux
        self.allow_int = allow_int
        self.value = value
        self.cotangents = cotangents
        self.label = "vjp" if cotangents else "grad"
        # grad and value_and_grad return what the generated function returns: Numba's C dispatch serves them
        self.direct = not (has_aux or allow_int or cotangents)
        self._python_twin: Optional["Differentiated"] = None

    def _call(self, args: tuple, kwargs: Dict[str, Any]):
        """Numba's C dispatch has no compiled signature for this call: bind, check, compile, package."""
        if config.state.disable_jit and self.backend != "python":
            return self._twin()(*args, **kwargs)
        if self.direct:
            return self._compiled_call(args, kwargs)
        out, grads = self._compiled_call(args, kwargs)
        if self.allow_int:
            values = self._signature.bind(args, kwargs)
            grads = [tree_util.tree_map(_float0_if_int, values[i], g) for i, g in zip(self.argnums, grads)]
        return self._package(out, grads)

    def _compile(self, key, values, leaves, treedef, statics, form: tuple = ()):
        """Inputs are checked once per specialization: the cache key holds every leaf's dtype."""
        _check_inputs(values, self.argnums, self.allow_int)
        return super()._compile(key, values, leaves, treedef, statics, form)

    def _twin(self) -> "Differentiated":
        """The same transformation on the python backend: what runs under ``disable_jit``."""
        if self._python_twin is None:
            argnums = self.argnums[0] if self.single else self.argnums
            self._python_twin = type(self)(self._target(), argnums, self.has_aux, self.allow_int, self.value,
                                           self.static_argnums, self.static_argnames, "python", self.cotangents)
        return self._python_twin

    def _package(self, out, grads):
        if not self.cotangents:
            runtime.scalar_output(out[0] if self.has_aux else out)
        return self._arrange(out, grads)

    def _arrange(self, out, grads):
        """What the user receives from the primal output and the gradients (also while specializing a call
        inside another compiled function, over placeholders)."""
        g = grads[0] if self.single else tuple(grads)
        if self.cotangents or self.value:
            return out, g
        return (g, out[1]) if self.has_aux else g

    def export_output(self, out, returns):
        """The user's result from the generated ``(output, gradients)`` (what ``_call`` returns)."""
        if self.allow_int:
            raise NumbaxDifferentiationError(
                f"numbax.export of {self.label} with allow_int=True is not supported (its integer inputs' "
                "gradients are float0 arrays, which an exported module cannot make)",
                hint="export without allow_int, differentiating the floating-point arguments only.")
        return out if self.direct else self._arrange(out[0], out[1])

    def rejit(self, static_argnums=(), static_argnames=(), backend: str = "cpu") -> "Differentiated":
        """``jit`` of this transformation: the same, with ``jit``'s static arguments added."""
        nums, names = self.merged_static(static_argnums, static_argnames)
        backend = self.backend if backend == "cpu" else backend
        argnums = self.argnums[0] if self.single else self.argnums
        return type(self)(self._target(), argnums, self.has_aux, self.allow_int, self.value, nums, names, backend,
                          self.cotangents)

    def _target(self) -> Callable:
        """What this transformation differentiates: the user's function, or the transformation of it."""
        return self.fun if self.of is None else self.of

    def _generated_cache_tag(self) -> Optional[str]:
        """Generated gradients are kept on disk too, keyed by what changes them (and by what ``grad`` of
        ``grad`` differentiates; None, no disk cache, if that has no fingerprint)."""
        of = ""
        if self.of is not None:
            try:
                of = ":of=" + repr(generated_cache.value(self.of._numbax_fingerprint()))
            except generated_cache.Uncacheable:
                return None
        return f"{self.label}:argnums={self.argnums}:single={self.single}:has_aux={self.has_aux}:" \
               f"cotangents={self.cotangents}:direct={self.direct}:value={self.value}{of}"

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this gradient depends on (the disk cache of a caller's code)."""
        of = () if self.of is None else (self.of._numbax_fingerprint(),)
        return (self.label, self.fun, self.argnums, self.single, self.has_aux, self.allow_int, self.value,
                self.static_argnums) + of

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside another compiled function: the gradient is generated there (``nested``)."""
        from numbax.transforms.grad import nested

        return nested.lower(self, spec, node, args, kwargs)

    def _offer_fast_path(self, compiled, treedef, leaves) -> None:
        """Only a result that needs no repackaging in Python may come straight from Numba's C dispatch."""
        if self.direct:
            super()._offer_fast_path(compiled, treedef, leaves)

    def _run_pipeline(self, bound: Dict[str, Any], after_pass: Optional[str] = None, higher_order: bool = False,
                      general: bool = False, backend: str = "cpu"):
        """The middle end for one specialization; ``higher_order``: the result is to be differentiated again
        (a gradient generated inside a function that ``grad`` transforms). Unless ``general`` (or
        ``higher_order``), the code may take dims of the parameters that it combines as equal, after checking
        them (``GradSpec.assume_shapes``)."""
        dynamic = [(i, p) for i, p in enumerate(self._signature.params) if i not in self._signature.static]
        counts = {i: len(tree_util.tree_leaves(bound[p])) for i, p in dynamic}
        offsets, total = {}, 0
        for i, _ in dynamic:
            offsets[i] = total
            total += counts[i]
        holder: Dict[str, Any] = {}

        def rewrite(fdef, spec):
            names = [a.id for a in fdef.args.args]
            wrt = [n for i in self.argnums for n in names[offsets[i]:offsets[i] + counts[i]]]
            width = spec.returns.num_dynamic if spec.returns else 0
            if not width and not self.cotangents:
                _no_output(fdef, spec.returns)
            seeded = list(range(width)) if self.cotangents else [0]
            if self.has_aux or not self.cotangents:
                _check_one_output(fdef, spec.returns, self.has_aux)
                seeded = [0]
            taken = Namer(n.id for n in gast.walk(fdef) if isinstance(n, gast.Name))  # a vjp inlined here has its own
            cts = [taken.new(f"ct_{k}") for k in range(len(seeded))] if self.cotangents else None
            holder["wrt"] = wrt
            outputs = spec.returns.avals if spec.returns is not None else ()
            holder["cotangents"] = [(ct, aval) for ct, aval in zip(cts or (), outputs) if aval is not None]
            fdef.name = f"{self.label}_{fdef.name}"
            spec.name = fdef.name
            leaf_avals = [avals.of_value(np.zeros((1,) * leaf.aval.ndim, leaf.aval.dtype))
                          for i, _ in dynamic for leaf in tree_util.tree_leaves(bound[self._signature.params[i]])]
            param_avals = dict(zip(names, leaf_avals))
            param_avals.update({n: avals.of_value(v) for n, v in spec.constants.items()})
            param_avals = {n: a for n, a in param_avals.items() if a is not None}
            floats = [leaf.aval.dtype for i, _ in dynamic for leaf in tree_util.tree_leaves(bound[self._signature.params[i]])
                      if leaf.aval.dtype.kind in "fc"]
            floats += [np.asarray(v).dtype for v in spec.constants.values() if np.asarray(v).dtype.kind in "fc"]
            holder["fuse"] = param_avals if all(d == np.float64 for d in floats) else None
            narrow = any(np.result_type(d, np.float64) != d for d in floats)
            grad_spec = grad_transform.GradSpec(wrt, seeded, cts, param_avals, self.direct, self.value,
                                                float64=holder["fuse"] is not None, rows=not named_axes.per_thread(),
                                                narrow=narrow,
                                                higher_order=higher_order,
                                                assume_shapes=not (general or higher_order))
            out = grad_transform.transform(fdef, grad_spec)
            holder["same"] = grad_spec.same
            if cts:
                params = out.args.args
                leaves, rest = params[:total], params[total:len(params) - len(cts)]
                out.args.args = leaves + params[len(params) - len(cts):] + rest
            return out

        def lower(module, param_avals, constants):
            """The GPU's lowering, each cotangent parameter of its output's dtype and rank (where known)."""
            param_avals.update(holder["cotangents"])
            return cuda_lower.legalize(module, param_avals, constants)

        on_gpu = backend == "gpu"  # the GPU lowering fuses elementwise runs into kernels itself
        generated = pipeline.run(self._source(), bound, label=self.label, after_pass=after_pass, transform=rewrite,
                                 fuse=lambda: None if holder.get("fuse") is None or on_gpu else (holder["fuse"],
                                                                                                 holder["same"]),
                                 lower=lower if on_gpu else None)
        generated.assumes_shapes = bool(holder.get("same"))
        if generated.returns is not None and after_pass is None:
            generated.returns = self._returns(generated.returns, bound)
        return generated

    def _compiles_for_gpu(self) -> bool:
        """On the GPU backend, the reverse-mode code runs through the GPU's lowering like any jitted code."""
        return True

    def _source(self):
        """The function the pipeline reads: the user's, or for ``grad`` of ``grad`` one that calls the inner
        transformation (whose gradient is then generated at that call, ``nested``)."""
        if self.of is None:
            return self.fun
        kinds = [p.kind for p in self._signature.signature.parameters.values()]
        return wrapper.calling(self.fun, getattr(self.of, "label", "transformed"), self._signature.params, kinds,
                               "differentiated", self.of)

    def _returns(self, primal, bound):
        """The structure of what the generated function returns: the user's result (``direct``), else
        (primal output, gradients); the abstract values of the output's leaves and of the gradients (each
        in its primal's dtype and rank), where known."""
        from numbax.ast_passes.specialize.builder import DYNAMIC, ReturnSpec

        out_tree = tree_util.tree_unflatten(primal.treedef, [0] * primal.treedef.num_leaves)
        out_avals = list(primal.avals) if len(primal.avals) == primal.num_dynamic else [None] * primal.num_dynamic
        grads = [tree_util.tree_map(lambda _: 0, bound[self._signature.params[i]]) for i in self.argnums]
        grad_avals = [_gradient_aval(leaf) for i in self.argnums
                      for leaf in tree_util.tree_leaves(bound[self._signature.params[i]])]
        if self.direct:
            result = grads[0] if self.single else tuple(grads)
            treedef = tree_util.tree_structure((out_tree, result) if self.value else result)
            avals = (out_avals if self.value else []) + grad_avals
        else:
            treedef = tree_util.tree_structure((out_tree, grads))
            avals = out_avals + grad_avals
        if len(avals) != treedef.num_leaves:
            avals = []
        return ReturnSpec(treedef, tuple(DYNAMIC for _ in range(treedef.num_leaves)), tuple(avals))

    def __repr__(self) -> str:
        inner = self.fun.__qualname__ if self.of is None else repr(self.of)[len("<numbax."):-1]
        return f"<numbax.{self.label} of {inner}>"


def _gradient_aval(leaf):
    """The abstract value of the gradient of a float placeholder: its own (``rt.primal_dtype`` casts it);
    None for other leaves."""
    aval = getattr(leaf, "aval", None)
    return aval if aval is not None and aval.dtype.kind == "f" else None


def _unwrap(fun: Callable, static_argnums, static_argnames):
    """The user function under ``jit``, or the transformation differentiated (``grad`` of ``grad``, of
    ``vmap``, of ``jacfwd``; its static arguments kept)."""
    from numbax.errors import NumbaxDifferentiationError

    if isinstance(fun, Differentiated) and fun.cotangents:
        raise NumbaxDifferentiationError(
            f"differentiating {fun!r} directly is not supported",
            hint="differentiate a function that calls numbax.vjp and its pullback.")
    if isinstance(fun, Jitted):
        static_argnums, static_argnames = fun.merged_static(static_argnums, static_argnames)
        return (fun if type(fun) is not Jitted else fun.fun), static_argnums, static_argnames
    return fun, static_argnums, static_argnames


def _refuse_holomorphic(holomorphic: bool) -> None:
    if holomorphic:
        raise NotImplementedError(
            "numbax does not implement holomorphic=True: grad of a real-valued function of complex inputs "
            "follows JAX's convention without it; for a complex output, use numbax.vjp with a complex cotangent")


@reused
def grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False, allow_int: bool = False,
         *, static_argnums=(), static_argnames=(), backend: str = "cpu", holomorphic: bool = False) -> Callable:
    """The gradient of a scalar function, as a compiled function (reverse mode, JAX's semantics).

    Args:
        fun: a Python function of NumPy values returning a scalar (or ``(scalar, aux)`` with ``has_aux``).
        argnums: which positional argument(s) to differentiate; a tuple gives a tuple of gradients.
        has_aux: ``fun`` returns ``(value, aux)``; the result is ``(gradient, aux)``.
        allow_int: accept integer inputs (their gradient is zero, as in JAX).
        static_argnums: arguments that are compile-time constants (as in ``jit``).
        static_argnames: the same, by name.
        backend: ``"cpu"`` (Numba), ``"gpu"`` (the reverse-mode code as ``numba.cuda`` kernels and a host
            driver; host arguments are copied to the GPU) or ``"python"`` (the generated code, uncompiled).
        holomorphic: must be False (JAX's complex convention holds without it).

    Returns:
        A function with ``fun``'s signature returning gradients shaped like the arguments; for a complex
        input, JAX's: the conjugate of the derivative along the real axis (``grad(abs)(z)`` is ``conj(z)/|z|``).

    Raises:
        TypeError: when the output is not a real float scalar, or an input is an integer without ``allow_int``.
        NotImplementedError: for ``holomorphic=True``.
    """
    _refuse_holomorphic(holomorphic)
    inner, static_argnums, static_argnames = _unwrap(fun, static_argnums, static_argnames)
    return Differentiated(inner, argnums, has_aux, allow_int, False, static_argnums, static_argnames, backend)


@reused
def value_and_grad(fun: Callable, argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False,
                   allow_int: bool = False, *, static_argnums=(), static_argnames=(), backend: str = "cpu",
                   holomorphic: bool = False):
    """Like ``grad``, returning ``(value, gradient)`` (``((value, aux), gradient)`` with ``has_aux``)."""
    _refuse_holomorphic(holomorphic)
    inner, static_argnums, static_argnames = _unwrap(fun, static_argnums, static_argnames)
    return Differentiated(inner, argnums, has_aux, allow_int, True, static_argnums, static_argnames, backend)


def _type_short(value) -> str:
    """``float64[5]``: a value's dtype and shape as JAX's errors write them."""
    return f"{np.result_type(value).name}[{','.join(map(str, np.shape(value)))}]"


class _VJPFunction:
    """The pullback returned by ``vjp``: cotangent of the output -> cotangents of the inputs."""

    def __init__(self, transformed: Differentiated, primals: tuple, out_treedef, outputs: Optional[list] = None,
                 keywords: Optional[Dict[str, Any]] = None):
        self.transformed = transformed
        self.primals = primals
        # arguments passed by name, not differentiated (the captured values of a lifted local function)
        self.keywords = dict(keywords or {})
        self.out_treedef = out_treedef
        # the output's leaves (inside compiled code, their placeholders), whose shapes the cotangent's must
        # have; None where numbax makes the cotangents itself (a Jacobian's basis)
        self.outputs = outputs

    def __call__(self, cotangent):
        leaves, treedef = tree_util.tree_flatten(cotangent)
        if treedef != self.out_treedef:
            raise ValueError(f"the cotangent must have the structure of the output ({self.out_treedef}), "
                             f"got {treedef}")
        for leaf, output in zip(leaves, self.outputs or ()):
            if np.shape(leaf) != np.shape(output) or not nesting.cotangent_dtype_fits(np.result_type(leaf),
                                                                               np.result_type(output)):
                raise ValueError("unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                                 f"{_type_short(leaf)}, but expected {_type_short(output)} because the "
                                 f"corresponding output of the differentiated function had JAX type "
                                 f"{_type_short(output)}")
        return self.transformed.pull(self.primals, leaves)

    def _numbax_specialize(self, spec, node, args, kwargs):
        """Called inside compiled code (made there by ``numbax.vjp``, or passed in): the vjp is generated at
        the call (``nested``), the primals placeholders or constants."""
        from numbax.transforms.grad import nested

        if len(args) != 1 or kwargs:
            spec.fail(node, "a vjp function takes one argument, the cotangent of the output")
        leaves, treedef = tree_util.tree_flatten(args[0])
        if treedef != self.out_treedef:
            spec.fail(node, f"the cotangent must have the structure of the output ({self.out_treedef}), "
                      f"got {treedef}")
        if self.outputs is not None:
            leaves = nested.checked_cotangents(spec, node, leaves, self.outputs)
        return nested.lower(self.transformed, spec, node, list(self.primals), self.keywords, leaves)


class _VJP(Differentiated):
    def pull(self, primals: tuple, cotangent_leaves):
        values = self._signature.bind(primals, {})
        statics, dynamic = self._signature.split(values)
        leaves, treedef = tree_util.tree_flatten(dynamic)
        from numbax.call_signature import leaf_key

        stand_ins, form, host = leaves, (), leaves  # host: the leaves before any are put on the GPU
        if self._runs_on_gpu(values, leaves, [("cotangent", c) for c in cotangent_leaves]):  # cotangents' data too
            values, leaves, stand_ins = self._placed_on_gpu(values, leaves)
            cotangent_leaves, form = placement.to_gpu(list(cotangent_leaves)), _ON_GPU
        key = (treedef, statics, leaf_key(stand_ins), leaf_key([placement.stand_in(c) for c in cotangent_leaves]))
        compiled = self._cache.get(key + form)
        if compiled is None:
            compiled = self._compile(key + form, values, stand_ins, treedef, statics, form)
        cotangents = as_numbers([np.asarray(c) if isinstance(c, np.ndarray) else c for c in cotangent_leaves])
        out_tree = tree_util.tree_unflatten(compiled.treedef, [0] * compiled.treedef.num_leaves)[0]
        if len(cotangents) > 1 and len(tree_util.tree_leaves(out_tree)) == 1:
            cotangents = [cotangents]  # one result that is a list of arrays (np.split's): its cotangent a list
        if form:  # on the GPU: a host argument the driver writes is refused (written on the device only)
            placement.check_writes(host, getattr(compiled.function, "written", {}), copied_back=False)
        out, grads = compiled(list(leaves) + cotangents)
        return tuple(grads)


@reused
def vjp_transformation(fun: Callable, nprimals: int, has_aux: bool, backend: str = "cpu") -> "_VJP":
    """The transformation a ``vjp`` pullback calls: ``fun`` differentiated in all ``nprimals`` arguments."""
    inner, _, _ = _unwrap(fun, (), ())
    return _VJP(inner, tuple(range(nprimals)), has_aux, True, False, (), (), backend, cotangents=True)


def vjp(fun: Callable, *primals, has_aux: bool = False, backend: str = "cpu"):
    """``(out, vjp_fun)``: the output of ``fun(*primals)`` and its pullback, as in JAX.

    ``vjp_fun(cotangent)`` returns one cotangent per primal. With ``has_aux``
    the result is ``(out, vjp_fun, aux)``.
    """
    fun = arity.at_arity(fun, len(primals))
    inner, _, _ = _unwrap(fun, (), ())
    transformed = vjp_transformation(fun, len(primals), has_aux, backend)
    jitted = inner if isinstance(inner, Jitted) else jit(inner, backend=backend)
    held = replays.copied_arrays(primals)  # what the pullback replays from, whatever ``fun`` writes into
    out = jitted(*primals)
    primal_out, aux = (out[0], out[1]) if has_aux else (out, None)
    pullback = _VJPFunction(transformed, held, tree_util.tree_structure(primal_out),
                            tree_util.tree_leaves(primal_out))
    return (primal_out, pullback, aux) if has_aux else (primal_out, pullback)


for _constructor in (grad, value_and_grad):
    built_at_compile_time(_constructor)


def _lower_vjp(spec, node, args, kwargs):
    from numbax.transforms.grad import nested

    return nested.lower_vjp(spec, node, args, kwargs)


vjp._numbax_specialize = _lower_vjp  # ``numbax.vjp(f, *primals)`` inside compiled code
