"""``numbax.random`` inside compiled code: each call becomes a call of its Numba kernel.

While a function is specialized, ``normal(key, (3, 4))`` has a run-time key and
a compile-time shape and dtype; the lowering checks them as the Python function
would and emits ``rt.random_normal(key, (3, 4), np.float64)``, the same kernel
the Python function calls, so samples are the same bits inside and outside
``jit``. Keys are integers: reverse mode treats every kernel as carrying no
derivative. ``split``, ``fold_in``, ``bits``, ``normal``, ``exponential``,
``gumbel``, and (with bounds and probabilities known at compile time) ``uniform``,
``randint`` and ``bernoulli`` are lowered; the other samplers raise an error
saying to draw outside and pass the sample in.
"""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from numbax.ast_passes.specialize.compile_time import bind_call
from numbax.ast_passes.specialize.values import Dyn, contains_dyn
from numbax.random import continuous, discrete, keys
from numbax.random.arguments import as_shape, float_dtype
from numbax.random.threefry import bits_kernel, fold_in_kernel, split_kernel

# the ``rt.`` name generated code calls -> the kernel
KERNELS = {"random_split": split_kernel, "random_fold_in": fold_in_kernel,
           "random_uniform": continuous.uniform_kernel, "random_normal": continuous.normal_kernel,
           "random_exponential": continuous.exponential_kernel, "random_gumbel": continuous.gumbel_kernel,
           "random_bits": bits_kernel, "random_randint": discrete.randint_kernel,
           "random_bernoulli": discrete.bernoulli_kernel}


def _key(spec, node, value: Any, name: str) -> Any:
    aval = value.aval if isinstance(value, Dyn) else None
    if not isinstance(value, Dyn) or (aval is not None and (aval.ndim != 1 or aval.dtype != np.uint32)):
        spec.fail(node, f"numbax.random.{name} needs a key (a uint32 array of shape (2,)) as its first argument")
    return value


def _static(spec, node, value: Any, what: str, name: str) -> Any:
    if contains_dyn(value):
        spec.fail(node, f"numbax.random.{name}'s {what} must be known at compile time inside compiled code",
                  hint="pass it as a static argument, or draw outside the compiled function.")
    return value


def _bind(spec, node, name: str, args, kwargs) -> Dict[str, Any]:
    """Match a call's arguments to ``numbax.random.<name>``'s parameters, failing at the user's line."""
    import numbax.random

    return bind_call(spec, node, getattr(numbax.random, name), f"numbax.random.{name}", args, kwargs)


def _emit(spec, node, kernel: str, args: List[Any]) -> Any:
    from numbax import runtime

    return spec.call_value(node, getattr(runtime, kernel), args, {})


def lower_split(spec, node, args, kwargs):
    """``split(key, num)`` -> ``rt.random_split(key, shape)``."""
    b = _bind(spec, node, "split", args, kwargs)
    shape = as_shape(_static(spec, node, b["num"], "num", "split"), "split")
    return _emit(spec, node, "random_split", [_key(spec, node, b["key"], "split"), shape])


def lower_fold_in(spec, node, args, kwargs):
    """``fold_in(key, data)`` -> ``rt.random_fold_in(key, data)``."""
    b = _bind(spec, node, "fold_in", args, kwargs)
    return _emit(spec, node, "random_fold_in", [_key(spec, node, b["key"], "fold_in"), b["data"]])


def _lower_standard(name: str):
    def lower(spec, node, args, kwargs):
        b = _bind(spec, node, name, args, kwargs)
        shape = as_shape(_static(spec, node, b["shape"], "shape", name), name)
        dtype = float_dtype(_static(spec, node, b["dtype"], "dtype", name), name)
        return _emit(spec, node, f"random_{name}", [_key(spec, node, b["key"], name), shape, dtype])

    lower.__doc__ = f"``{name}(key, shape, dtype)`` -> ``rt.random_{name}(key, shape, dtype)``."
    return lower


def lower_uniform(spec, node, args, kwargs):
    """``uniform(key, shape, dtype, minval, maxval)`` with bounds known at compile time."""
    b = _bind(spec, node, "uniform", args, kwargs)
    shape = as_shape(_static(spec, node, b["shape"], "shape", "uniform"), "uniform")
    dtype = float_dtype(_static(spec, node, b["dtype"], "dtype", "uniform"), "uniform")
    bounds = [np.broadcast_to(np.asarray(_static(spec, node, b[k], k, "uniform"), dtype), shape).copy()
              for k in ("minval", "maxval")]
    return _emit(spec, node, "random_uniform", [_key(spec, node, b["key"], "uniform"), shape, dtype, *bounds])


def lower_bits(spec, node, args, kwargs):
    """``bits(key, shape, dtype)`` -> ``rt.random_bits(key, shape, dtype)``."""
    b = _bind(spec, node, "bits", args, kwargs)
    shape, dtype = discrete.bits_arguments(_static(spec, node, b["shape"], "shape", "bits"),
                                           _static(spec, node, b["dtype"], "dtype", "bits"))
    return _emit(spec, node, "random_bits", [_key(spec, node, b["key"], "bits"), shape, dtype])


def lower_randint(spec, node, args, kwargs):
    """``randint(key, shape, minval, maxval, dtype)`` with bounds known at compile time."""
    b = _bind(spec, node, "randint", args, kwargs)
    shape, dtype, sampled, bounds = discrete.randint_arguments(
        *(_static(spec, node, b[k], k, "randint") for k in ("shape", "minval", "maxval", "dtype")))
    if sampled != dtype:
        spec.fail(node, f"numbax.random.randint of {dtype} inside compiled code is not supported yet",
                  hint="draw int32 or int64 and convert with .astype().")
    return _emit(spec, node, "random_randint", [_key(spec, node, b["key"], "randint"), shape, sampled, *bounds])


def lower_bernoulli(spec, node, args, kwargs):
    """``bernoulli(key, p, shape)`` with ``p`` known at compile time."""
    b = _bind(spec, node, "bernoulli", args, kwargs)
    shape, probabilities = discrete.bernoulli_arguments(_static(spec, node, b["p"], "p", "bernoulli"),
                                                         _static(spec, node, b["shape"], "shape", "bernoulli"))
    return _emit(spec, node, "random_bernoulli", [_key(spec, node, b["key"], "bernoulli"), shape, probabilities])


def unsupported(name: str):
    def lower(spec, node, args, kwargs):
        spec.fail(node, f"numbax.random.{name} inside compiled code is not supported yet",
                  hint=f"draw with numbax.random.{name} outside and pass the sample in, or use normal/uniform.")

    return lower


def attach() -> None:
    """Give each public function of ``numbax.random`` its lowering; its kernels carry no derivative."""
    import numbax.random as random
    from numbax.transforms.grad.rules import def_nondifferentiable

    def_nondifferentiable(*KERNELS.values())

    lowerings = {"split": lower_split, "fold_in": lower_fold_in, "uniform": lower_uniform,
                 "normal": _lower_standard("normal"), "exponential": _lower_standard("exponential"),
                 "gumbel": _lower_standard("gumbel"), "bits": lower_bits, "randint": lower_randint,
                 "bernoulli": lower_bernoulli}
    for name in random.__all__:
        function = getattr(random, name)
        if callable(function) and not isinstance(function, type) and name not in ("PRNGKey", "key", "key_data"):
            function._numbax_specialize = lowerings.get(name) or unsupported(name)
    keys.PRNGKey._numbax_specialize = unsupported("PRNGKey")
