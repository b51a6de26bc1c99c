"""``numbax.random`` inside compiled code: each call becomes a call of its Numba kernel.

While a function is specialized, ``normal(key, (3, 4))`` has a run-time key and
a compile-time shape and dtype; the lowering checks them as the Python function
would and emits ``rt.random_normal(key, (3, 4), np.float64)``, the same kernel
the Python function calls, so samples are the same bits inside and outside
``jit``. Every sampler is lowered. Dtypes, axes and ``replace`` must be known
at compile time, and so must the number of a shape's dims: ``normal``,
``uniform`` (with number bounds), ``exponential``, ``gumbel`` and ``bernoulli``
(with a number ``p``) take a shape
whose dims are run-time ints (``x.shape``, ``(n, 3)``), as JAX's shapes inside
``jit`` come from the arrays; the other samplers' shapes are known at compile
time, and ``uniform``'s array bounds, ``randint``'s and ``bernoulli``'s
parameters too. ``PRNGKey(seed)`` and ``key(seed)`` of a run-time integer seed
make the key JAX makes. ``truncated_normal``'s bounds, ``gamma``'s ``a``, and the
arrays that ``permutation``, ``choice`` and ``categorical`` draw from may be
run-time values: the kernels broadcast parameters themselves, and the gathers
by random indices (``selection.py``) are compiled from their source.

Derivatives: keys are integers, so the kernels that draw from a key alone carry
none; ``truncated_normal`` and ``gamma`` have rules for their parameters
(``derivatives.py``), and a permuted or chosen array has the derivative its
indexing has. The sample's abstract value (dtype, ndim) is known to the code
that uses it.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import gast
import numpy as np

from numbax.ast_passes.specialize.compile_time import bind_call
from numbax.ast_passes.specialize.values import AVal, Dyn, Method, Rows, contains_dyn
from numbax.random import continuous, discrete, keys
from numbax.random.arguments import NumbaxRandomArgumentError, as_shape, float_dtype, sample_shape
from numbax.runtime.checks import check_key
from numbax.runtime.random.kernels import DRAWS


def key_of(spec, node, value: Any, name: str) -> Any:
    """The key argument: a run-time ``uint32`` array of one dimension, where its abstract value is known, whose
    length of 2 is checked at run time (``rt.check_key``: the kernels read its two words unchecked)."""
    aval = value.aval if isinstance(value, Dyn) else None
    if not isinstance(value, Dyn) or (aval is not None and (aval.ndim != 1 or aval.dtype != np.uint32)):
        spec.fail(node, f"numbax.random.{name} needs a key (a uint32 array of shape (2,)) as its first argument")
    key = spec.snapshot(value)
    where = spec.origin(node).position() if spec.origin(node) is not None else ""
    spec.emit(gast.Expr(value=gast.Call(func=spec.materialize(check_key), keywords=[],
                                        args=[key.expr(), gast.Constant(value=where, kind=None)])))
    return key


def static(spec, node, value: Any, what: str, name: str) -> Any:
    """An argument that must be known at compile time (a shape, a dtype, an axis, ``replace``)."""
    if contains_dyn(value):
        spec.fail(node, f"numbax.random.{name}'s {what} must be known at compile time inside compiled code",
                  hint="pass it as a static argument, or draw outside the compiled function.")
    return value


def _bind(spec, node, name: str, args, kwargs) -> Dict[str, Any]:
    """Match a call's arguments to ``numbax.random.<name>``'s parameters, failing at the user's line."""
    import numbax.random

    return bind_call(spec, node, getattr(numbax.random, name), f"numbax.random.{name}", args, kwargs)


def typed(value: Any, dtype, ndim: Optional[int]) -> Any:
    """A sample with its abstract value: ``x.ndim`` and ``x.dtype`` of it fold, and arithmetic promotes as NumPy's."""
    if not isinstance(value, Dyn) or ndim is None:
        return value
    return Dyn(value.node, AVal(np.dtype(dtype), ndim))


def emit(spec, node, kernel: str, args: List[Any], dtype=None, ndim: Optional[int] = None) -> Any:
    """A call of the kernel ``rt.<kernel>``, its result of ``dtype`` and ``ndim`` where given."""
    from numbax import runtime

    return typed(spec.call_value(node, getattr(runtime, kernel), args, {}), dtype, ndim)


def array_info(spec, node, value: Any, what: str, name: str) -> Tuple[int, np.dtype]:
    """``(ndim, dtype)`` of an argument known now or of a run-time value whose abstract value numbax knows."""
    if not contains_dyn(value):
        array = np.asarray(value)
        return array.ndim, array.dtype
    if not isinstance(value, Dyn):
        spec.fail(node, f"numbax.random.{name}'s {what} must be an array or a number, not a container of run-time "
                  "values", hint="stack them into one array first.")
    if value.aval is None:
        spec.fail(node, f"numbax.random.{name} inside compiled code needs the number of dimensions of its {what}, "
                  "and numbax does not know this value's", hint=f"pass {what} in as an argument of the compiled "
                  "function, or draw outside it.")
    spec.builder.reads_avals = True
    return value.aval.ndim, value.aval.dtype


def _lower_split(spec, node, b):
    """``split(key, num)`` -> ``rt.random_split(key, shape)``."""
    shape = as_shape(static(spec, node, b["num"], "num", "split"), "split")
    keys = emit(spec, node, "random_split", [key_of(spec, node, b["key"], "split"), shape], np.uint32, len(shape) + 1)
    return Rows(keys.node, keys.aval, shape[0]) if len(shape) == 1 else keys  # ``key, *subkeys = split(key, n)``


def _lower_fold_in(spec, node, b):
    """``fold_in(key, data)`` -> ``rt.random_fold_in(key, data)``."""
    return emit(spec, node, "random_fold_in", [key_of(spec, node, b["key"], "fold_in"), b["data"]], np.uint32, 1)


def _run_time_dim(value: Any) -> bool:
    """An integer known at run time (``n``, ``x.shape[0]``)."""
    return isinstance(value, Dyn) and value.aval is not None and value.aval.ndim == 0 and \
        value.aval.dtype.kind in "iu"


def sample_shape_of(spec, node, value: Any, name: str) -> Tuple[Any, int]:
    """A sample's shape and its number of dims: a tuple of ints known now, or one whose dims are known only at
    run time but whose length is known (``x.shape`` of an array of known rank, ``(n, 3)``, ``n``), as JAX's
    shapes inside ``jit`` are known from the arrays they come from. Negative run-time dims raise NumPy's
    ``ValueError`` where the sample is made."""
    if not contains_dyn(value):
        shape = as_shape(value, name)
        return shape, len(shape)
    if isinstance(value, Method) and isinstance(value.node, gast.Attribute) and value.node.attr == "shape" \
            and value.receiver is not None:
        spec.builder.reads_avals = True
        return value, value.receiver.ndim
    if _run_time_dim(value):
        return (value,), 1
    if isinstance(value, (tuple, list)) and all(_run_time_dim(d) for d in value if isinstance(d, Dyn)):
        known = [d for d in value if not isinstance(d, Dyn)]
        as_shape(tuple(known), name)  # the dims known now are non-negative ints
        return tuple(value), len(value)
    spec.fail(node, f"numbax.random.{name}'s shape must be a tuple of integers whose number is known at compile "
              "time inside compiled code", hint="pass x.shape, a tuple such as (n, 3), or a static argument.")


def _standard(name: str):
    def lower(spec, node, b):
        shape, ndim = sample_shape_of(spec, node, b["shape"], name)
        dtype = float_dtype(static(spec, node, b["dtype"], "dtype", name), name)
        return emit(spec, node, f"random_{name}", [key_of(spec, node, b["key"], name), shape, dtype], dtype, ndim)

    lower.__doc__ = f"``{name}(key, shape, dtype)`` -> ``rt.random_{name}(key, shape, dtype)``."
    return lower


def _lower_uniform(spec, node, b):
    """``uniform(key, shape, dtype, minval, maxval)`` with bounds known at compile time."""
    shape, ndim = sample_shape_of(spec, node, b["shape"], "uniform")
    dtype = float_dtype(static(spec, node, b["dtype"], "dtype", "uniform"), "uniform")
    bounds = [np.asarray(static(spec, node, b[k], k, "uniform"), dtype) for k in ("minval", "maxval")]
    if contains_dyn(shape) and any(bound.ndim for bound in bounds):
        spec.fail(node, "numbax.random.uniform's bounds must be numbers where its shape is known only at run time",
                  hint="draw uniform(key, shape) and scale it: minval + (maxval - minval) * u.")
    if not contains_dyn(shape):
        bounds = [np.broadcast_to(bound, shape).copy() for bound in bounds]
    return emit(spec, node, "random_uniform", [key_of(spec, node, b["key"], "uniform"), shape, dtype, *bounds],
                dtype, ndim)


def _lower_bits(spec, node, b):
    """``bits(key, shape, dtype)`` -> ``rt.random_bits(key, shape, dtype)``."""
    shape, dtype = discrete.bits_arguments(static(spec, node, b["shape"], "shape", "bits"),
                                           static(spec, node, b["dtype"], "dtype", "bits"))
    return emit(spec, node, "random_bits", [key_of(spec, node, b["key"], "bits"), shape, dtype], dtype, len(shape))


def _lower_randint(spec, node, b):
    """``randint(key, shape, minval, maxval, dtype)`` with bounds known at compile time."""
    shape, dtype, sampled, bounds = discrete.randint_arguments(
        *(static(spec, node, b[k], k, "randint") for k in ("shape", "minval", "maxval", "dtype")))
    if sampled != dtype:
        spec.fail(node, f"numbax.random.randint of {dtype} inside compiled code is not supported yet",
                  hint="draw int32 or int64 and convert with .astype().")
    return emit(spec, node, "random_randint", [key_of(spec, node, b["key"], "randint"), shape, sampled, *bounds],
                sampled, len(shape))


def _lower_poisson(spec, node, b):
    """``poisson(key, lam, shape, dtype)`` -> ``rt.random_poisson(key, shape, dtype, lam)``: ``lam`` may be
    a run-time value (no derivative flows to it: the counts are integers, JAX's derivative is zero)."""
    dtype = discrete.poisson_dtype(static(spec, node, b["dtype"], "dtype", "poisson"))
    lam = b["lam"]
    if isinstance(lam, Dyn) and (lam.aval is None or lam.aval.dtype.kind not in "iuf"):
        spec.fail(node, "numbax.random.poisson: lam must be a real number or array, not "
                  f"{'a value of unknown dtype' if lam.aval is None else lam.aval.dtype}")
    if contains_dyn(b["shape"]):  # run-time dims (``x.shape``): one rate for every element
        shape, ndim = sample_shape_of(spec, node, b["shape"], "poisson")
        if np.ndim(lam) if not isinstance(lam, Dyn) else lam.aval.ndim:
            spec.fail(node, "numbax.random.poisson's lam must be a number where its shape is known only at run time",
                      hint="pass shape=None to take lam's shape, or a shape known when compiling.")
    elif not isinstance(lam, Dyn):
        shape, dtype, lam = discrete.poisson_arguments(lam, b["shape"], dtype)
        ndim = len(shape)
    else:
        shape, ndim = _shape_and_ndim(spec, node, "poisson", b["shape"], [lam])
    return emit(spec, node, "random_poisson", [key_of(spec, node, b["key"], "poisson"), shape, dtype.type, lam], dtype,
                ndim)


def _lower_bernoulli(spec, node, b):
    """``bernoulli(key, p, shape)`` with ``p`` known at compile time, ``shape`` too or of run-time dims with a
    number ``p`` (``bernoulli(key, rate, x.shape)``, stax's ``Dropout``)."""
    p = static(spec, node, b["p"], "p", "bernoulli")
    if not contains_dyn(b["shape"]):
        shape, probabilities = discrete.bernoulli_arguments(p, b["shape"])
        ndim = len(shape)
    else:
        shape, ndim = sample_shape_of(spec, node, b["shape"], "bernoulli")
        if np.ndim(p):
            spec.fail(node, "numbax.random.bernoulli's p must be a number where its shape is known only at run time",
                      hint="draw uniform(key, shape) and compare it with p.")
        probabilities = discrete.bernoulli_arguments(p, ())[1]
    return emit(spec, node, "random_bernoulli", [key_of(spec, node, b["key"], "bernoulli"), shape, probabilities],
                np.bool_, ndim)


def _shape_and_ndim(spec, node, name: str, shape, parameters: List[Any]):
    """A sample's shape, where run-time parameters may leave it to be computed at run time, and its ndim."""
    shape = sample_shape(name, static(spec, node, shape, "shape", name),
                         *(None if isinstance(p, Dyn) else np.shape(p) for p in parameters))
    if shape is not None:
        return shape, len(shape)
    shapes = [spec.call_value(node, np.shape, [p], {}) if isinstance(p, Dyn) else np.shape(p) for p in parameters]
    ndims = [p.aval.ndim if isinstance(p, Dyn) and p.aval is not None else np.ndim(p) for p in parameters]
    known = all(not isinstance(p, Dyn) or p.aval is not None for p in parameters)
    return spec.call_value(node, np.broadcast_shapes, shapes, {}), max(ndims) if known else None


def _lower_truncated_normal(spec, node, b):
    """``truncated_normal(key, lower, upper, shape, dtype)`` -> ``rt.random_truncated_normal(key, shape, dtype,
    lower, upper)``; the bounds may be run-time values, with derivatives."""
    dtype = float_dtype(static(spec, node, b["dtype"], "dtype", "truncated_normal"), "truncated_normal")
    shape, ndim = _shape_and_ndim(spec, node, "truncated_normal", b["shape"], [b["lower"], b["upper"]])
    return emit(spec, node, "random_truncated_normal", [key_of(spec, node, b["key"], "truncated_normal"), shape, dtype,
                                                         b["lower"], b["upper"]], dtype, ndim)


def _lower_gamma(spec, node, b):
    """``gamma(key, a, shape, dtype)`` -> ``rt.random_gamma(key, shape, dtype, a)``; ``a`` may be a run-time value,
    with a derivative."""
    dtype = float_dtype(static(spec, node, b["dtype"], "dtype", "gamma"), "gamma")
    shape, ndim = _shape_and_ndim(spec, node, "gamma", b["shape"], [b["a"]])
    if not isinstance(b["a"], Dyn):
        continuous.check_gamma_parameter(np.asarray(b["a"], dtype))
    return emit(spec, node, "random_gamma", [key_of(spec, node, b["key"], "gamma"), shape, dtype, b["a"]], dtype, ndim)


# parameters that take arrays: a list or tuple known at compile time becomes one, as in the Python functions
_ARRAYS = ("x", "a", "p", "logits", "lower", "upper")


def _lowering(name: str, lower):
    """The ``_numbax_specialize`` hook of ``numbax.random.<name>``: arguments bound by its signature (lists made
    arrays), and its argument errors raised at the user's call."""
    def specialize(spec, node, args, kwargs):
        bound = _bind(spec, node, name, args, kwargs)
        bound.update({k: np.asarray(v) for k, v in bound.items()
                      if k in _ARRAYS and isinstance(v, (list, tuple)) and not contains_dyn(v)})
        try:
            return lower(spec, node, bound)
        except NumbaxRandomArgumentError as error:
            raise NumbaxRandomArgumentError(error.message, spec.origin(node), error.hint) from None

    specialize.__doc__ = lower.__doc__
    return specialize


def _lower_key(spec, node, b):
    """``PRNGKey(seed)`` / ``key(seed)``: the key itself for a seed known now, else ``rt.random_key(seed, wide)``
    (the seed's two's complement in 64 bits, or in 32 for seeds of 32 bits or fewer, as outside)."""
    seed = b["seed"]
    if not isinstance(seed, Dyn):
        return keys.PRNGKey(seed)
    aval = seed.aval
    if aval is None or aval.ndim != 0 or aval.dtype.kind not in "iu":
        spec.fail(node, f"numbax.random.PRNGKey takes one integer seed, got a value of "
                  f"{'unknown type' if aval is None else f'dtype {aval.dtype} and {aval.ndim} dims'}",
                  hint="pass an integer; to make several keys, split one.")
    spec.builder.reads_avals = True
    return emit(spec, node, "random_key", [seed, aval.dtype.itemsize > 4], np.uint32, 1)


def _sample_aval(app, args) -> Optional[Tuple[str, int]]:
    """``rt.random_normal(key, (n, 3), np.float64)`` (``uniform``, ``exponential``, ``gumbel``): the dtype's kind,
    a dim for each item of the shape written out; unknown for a shape held in a name."""
    from numbax.primitives import kinds

    if len(app.args) < 3 or not isinstance(app.args[1], gast.Tuple):
        return None
    kind = kinds.dtype_kind(app.args[2])
    return (kind, len(app.args[1].elts)) if kind is not None else None


def attach() -> None:
    """Give each public function of ``numbax.random`` its lowering; register which kernels carry no derivative
    and the rules of those that do (importing ``derivatives`` registers them)."""
    import numbax.random as random
    from numbax.random import derivatives, lowering_selection  # noqa: F401
    from numbax.primitives.cuda import RANDOM
    from numbax.primitives.registry import def_nondifferentiable, define

    def_nondifferentiable(*DRAWS.values())
    define(*(DRAWS[f"random_{name}"] for name in ("normal", "uniform", "exponential", "gumbel")), aval=_sample_aval)
    for name, draw in RANDOM.items():
        define(DRAWS[name], cuda=draw)
    lowerings = {"split": _lower_split, "fold_in": _lower_fold_in, "uniform": _lower_uniform,
                 "normal": _standard("normal"), "exponential": _standard("exponential"),
                 "gumbel": _standard("gumbel"), "bits": _lower_bits, "randint": _lower_randint,
                 "bernoulli": _lower_bernoulli, "truncated_normal": _lower_truncated_normal, "gamma": _lower_gamma,
                 "poisson": _lower_poisson, "PRNGKey": _lower_key, "key": _lower_key, **lowering_selection.LOWERINGS}
    for name, lower in lowerings.items():
        getattr(random, name)._numbax_specialize = _lowering(name, lower)
