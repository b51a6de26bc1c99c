"""``numbax.example_libraries.stax``: ``jax.example_libraries.stax``'s layers over NumPy arrays.

A layer is an ``(init_fun, apply_fun)`` pair: ``init_fun(key, input_shape)`` returns ``(output_shape,
params)`` (in Python, drawing from ``numbax.nn.initializers`` with JAX's keys, so parameters are JAX's bits),
``apply_fun(params, inputs, rng=None)`` the layer's output. Apply functions are marked
``specialized_from_source``: inside ``numbax.jit`` or ``numbax.grad`` a network compiles from this source.
They take ``rng`` as their one keyword (JAX's take ``**kwargs`` and ignore what they do not read; here another
keyword is refused). ``Dropout`` draws its mask with a shape read from its input, JAX's bits in Python and
inside compiled code alike.

Convolutions and pooling are two-dimensional, in JAX's default layout (``Conv``: inputs ``NHWC``, kernels
``HWIO``; pooling: ``NHWC``), with ``padding`` ``'VALID'`` or ``'SAME'``: each is a sum over the window's
offsets of strided slices of the (padded) inputs, times the kernel's slice for a convolution, so every
transformation differentiates it from the rules of slicing and ``@``. ``MaxPool`` is one primitive, a
reduce-window maximum (``numbax.runtime.pooling``) whose derivative, as JAX's, goes to each window's first
maximum in row-major order; its inputs are float64 or float32. Other layouts, dimensions and explicit
paddings are refused when the layer is made (``NumbaxStaticArgumentError``).

Not provided (their names raise ``AttributeError``): ``ConvTranspose``, ``Conv1DTranspose``,
``GeneralConvTranspose``, ``shape_dependent``.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Tuple

import numpy as np

from numbax import random
from numbax.ast_passes.specialize.compile_time import specialized_from_source
from numbax.errors import NumbaxDtypeError, NumbaxStaticArgumentError
from numbax.runtime import pooling
from numbax.nn import gelu, log_softmax, relu, selu, sigmoid, softmax, softplus, elu, leaky_relu, standardize
from numbax.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["serial", "parallel", "Dense", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp",
           "LogSoftmax", "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Gelu", "Selu", "GeneralConv", "Conv", "SumPool", "AvgPool",
           "MaxPool",
           "Flatten", "Identity",
           "FanOut", "FanInSum", "FanInConcat", "Dropout", "glorot", "randn", "logsoftmax", "relu", "log_softmax",
           "softmax", "softplus", "sigmoid", "elu", "leaky_relu", "gelu", "standardize", "glorot_normal", "normal",
           "ones", "zeros"]

Layer = Tuple[Callable, Callable]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax


def _layer(init_fun: Callable, apply_fun: Callable) -> Layer:
    """``(init_fun, apply_fun)``, the apply function compiled from its source inside compiled code."""
    return init_fun, specialized_from_source(apply_fun)


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()) -> Layer:
    """A dense (fully connected) layer: ``inputs @ W + b``, over the last axis of ``inputs``."""

    def init_fun(rng, input_shape):
        output_shape = tuple(input_shape[:-1]) + (out_dim,)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return inputs @ W + b  # np.dot(inputs, W) for a matrix W, which Numba computes for any rank of inputs

    return _layer(init_fun, apply_fun)


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones) -> Layer:
    """Batch normalization: ``inputs`` standardized over the ``axis`` axes, scaled by the learned ``gamma`` and
    shifted by the learned ``beta`` (each over the other axes)."""
    axis = (axis,) if np.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, rng=None):
        beta, gamma = params
        ed = tuple([None if i in axis else slice(None) for i in range(x.ndim)])
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z

    return _layer(init_fun, apply_fun)


def elementwise(fun, **fun_kwargs) -> Layer:
    """A layer applying ``fun(inputs, **fun_kwargs)``, with no parameters."""
    bound = functools.partial(fun, **fun_kwargs)

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        return bound(inputs)

    return _layer(init_fun, apply_fun)


Tanh = elementwise(np.tanh)
Relu = elementwise(relu)
Exp = elementwise(np.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Gelu = elementwise(gelu)
Selu = elementwise(selu)

_NHWC = ("NHWC", "HWIO", "NHWC")  # JAX's ``Conv`` layout, the one implemented


def _windows(name: str, window, strides, padding) -> Tuple[tuple, tuple]:
    """``(window, strides)`` of a two-dimensional layer, refused where numbax has no implementation."""
    window = tuple(window)
    strides = tuple(strides) if strides else (1,) * len(window)
    if len(window) != 2 or len(strides) != 2 or padding not in ("VALID", "SAME"):
        raise NumbaxStaticArgumentError(
            f"stax.{name} with a window of {len(window)} dims, {len(strides)} strides and padding {padding!r}",
            hint="numbax's convolutions and pools are two-dimensional, with padding 'VALID' or 'SAME'.")
    return window, strides


def _out_size(size: int, window: int, stride: int, padding: str) -> int:
    """A spatial dim after a window (``lax.padtype_to_pads``'s ``'SAME'``: the size divided by the stride,
    rounded up)."""
    return -(-size // stride) if padding == "SAME" else (size - window) // stride + 1


@specialized_from_source
def _padded(x, window, strides, padding):
    """``x`` (``NHWC``) with ``'SAME'``'s zeros around its spatial dims (the lower side takes the smaller half,
    as ``lax.padtype_to_pads``), unchanged for ``'VALID'``."""
    if padding == "VALID":
        return x
    pads = [(0, 0)]
    for k in range(2):
        size = x.shape[k + 1]
        total = max((-(-size // strides[k]) - 1) * strides[k] + window[k] - size, 0)
        pads.append((total // 2, total - total // 2))
    pads.append((0, 0))
    return np.pad(x, tuple(pads))


@specialized_from_source
def _window_terms(x, window, strides, kernel):
    """The sum over the window's offsets of ``x``'s strided slice there, times ``kernel[i, j]`` (``kernel`` None:
    the slices themselves): a convolution, or a sum pool."""
    rows = (x.shape[1] - window[0]) // strides[0] + 1
    cols = (x.shape[2] - window[1]) // strides[1] + 1
    total = _window_term(x, 0, 0, rows, cols, strides, kernel)
    for k in range(1, window[0] * window[1]):
        total = total + _window_term(x, k // window[1], k % window[1], rows, cols, strides, kernel)
    return total


@specialized_from_source
def _window_term(x, i, j, rows, cols, strides, kernel):
    """``x``'s strided slice at the window's offset ``(i, j)``, times ``kernel[i, j]`` unless it is None."""
    term = x[:, i:i + (rows - 1) * strides[0] + 1:strides[0], j:j + (cols - 1) * strides[1] + 1:strides[1], :]
    return term if kernel is None else term @ kernel[i, j]


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID", W_init=None,
                b_init=normal(1e-6)) -> Layer:
    """A two-dimensional convolution (``jax.example_libraries.stax.GeneralConv``) of ``dimension_numbers``
    ``('NHWC', 'HWIO', 'NHWC')``, plus a bias; kernels drawn by ``glorot_normal`` over the kernel's ``I`` and
    ``O`` axes, as JAX's."""
    if tuple(dimension_numbers) != _NHWC:
        raise NumbaxStaticArgumentError(f"stax.GeneralConv with dimension_numbers {dimension_numbers!r}",
                                        hint=f"numbax implements {_NHWC} (stax.Conv's); transpose the inputs.")
    window, strides = _windows("Conv", filter_shape, strides, padding)
    W_init = W_init or glorot_normal(2, 3)

    def init_fun(rng, input_shape):
        n, h, w, c = input_shape
        output_shape = (n, _out_size(h, window[0], strides[0], padding),
                        _out_size(w, window[1], strides[1], padding), out_chan)
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, window + (c, out_chan)), b_init(k2, (1, 1, 1, out_chan)))

    def apply_fun(params, inputs, rng=None):
        W, b = params
        return _window_terms(_padded(inputs, window, strides, padding), window, strides, W) + b

    return _layer(init_fun, apply_fun)


Conv = functools.partial(GeneralConv, _NHWC)


def _max_pool(inputs, window, strides, same):
    """The maximum of each window of ``inputs`` (``NHWC``, padded with ``-inf`` where ``same``), differentiated
    as JAX's ``MaxPool`` (``numbax.runtime.pooling``)."""
    _check_pooled_dtype(np.asarray(inputs).dtype)
    return pooling.max_pool(inputs, window, strides, same)


def _check_pooled_dtype(dtype, fail=None) -> None:
    """``MaxPool``'s inputs are real floating arrays (its padding is ``-inf``); ``fail(message, hint)`` where
    compiled code is being made, else a ``NumbaxDtypeError``."""
    if dtype not in (np.float64, np.float32):
        message, hint = f"stax.MaxPool of {dtype} inputs", "pass float64 or float32 inputs (x.astype(np.float64))."
        if fail is not None:
            fail(message, hint)
        raise NumbaxDtypeError(message, hint=hint)


def _lower_max_pool(spec, node, args, kwargs):
    """``_max_pool`` in compiled code: the runtime's reduce-window maximum, whose rules give JAX's derivative."""
    from numbax.ast_passes.specialize.compile_time import bind_call
    from numbax.ast_passes.specialize.dtypes import aval_of
    from numbax.ast_passes.specialize.values import AVal

    bound = bind_call(spec, node, _max_pool, "stax.MaxPool", args, kwargs)
    aval = aval_of(bound["inputs"])
    if aval is None or aval.ndim != 4:
        spec.fail(node, "stax.MaxPool of inputs that are not 4-D (NHWC)", hint="pass an array of shape (N, H, W, C).")
    _check_pooled_dtype(np.dtype(aval.dtype), lambda message, hint: spec.fail(node, message, hint=hint))
    out = spec.call_static(node, pooling.max_pool, [bound["inputs"], bound["window"], bound["strides"],
                                                    bound["same"]], {})
    out.aval = AVal(aval.dtype, 4)
    return out


_max_pool._numbax_specialize = _lower_max_pool


def _pooling(name: str, kind: str):
    def layer(window_shape, strides=None, padding="VALID", spec=None) -> Layer:
        if spec is not None and spec != "NHWC":
            raise NumbaxStaticArgumentError(f"stax.{name} with spec {spec!r}", hint="numbax pools NHWC inputs.")
        window, steps = _windows(name, window_shape, strides, padding)

        def init_fun(rng, input_shape):
            n, h, w, c = input_shape
            return (n, _out_size(h, window[0], steps[0], padding), _out_size(w, window[1], steps[1], padding), c), ()

        def apply_fun(params, inputs, rng=None):
            if kind == "max":
                return _max_pool(inputs, window, steps, padding == "SAME")
            sums = _window_terms(_padded(inputs, window, steps, padding), window, steps, None)
            if kind == "sum":
                return sums
            ones = np.ones((1, inputs.shape[1], inputs.shape[2], 1))  # how many inputs each window holds
            return sums / _window_terms(_padded(ones, window, steps, padding), window, steps, None)

        return _layer(init_fun, apply_fun)

    layer.__name__ = layer.__qualname__ = name
    layer.__doc__ = (f"A two-dimensional {dict(sum='sum', avg='average', max='maximum')[kind]} pool over ``NHWC`` "
                     f"inputs (``jax.example_libraries.stax.{name}``).")
    return layer


SumPool = _pooling("SumPool", "sum")
AvgPool = _pooling("AvgPool", "avg")
MaxPool = _pooling("MaxPool", "max")


def _flatten() -> Layer:
    """Flattens all but the leading axis."""

    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, rng=None):
        return np.reshape(inputs, (inputs.shape[0], -1))

    return _layer(init_fun, apply_fun)


def _identity() -> Layer:
    """The identity layer."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        return inputs

    return _layer(init_fun, apply_fun)


def FanOut(num) -> Layer:
    """A layer whose output is a list of ``num`` copies of its input."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, rng=None):
        return [inputs for _ in range(num)]

    return _layer(init_fun, apply_fun)


def _fan_in_sum() -> Layer:
    """The sum of a sequence of inputs."""

    def init_fun(rng, input_shape):
        return input_shape[0], ()

    def apply_fun(params, inputs, rng=None):
        return sum(inputs)

    return _layer(init_fun, apply_fun)


def FanInConcat(axis=-1) -> Layer:
    """A sequence of inputs concatenated along ``axis``."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        return tuple(input_shape[0][:ax]) + (concat_size,) + tuple(input_shape[0][ax + 1:]), ()

    def apply_fun(params, inputs, rng=None):
        return np.concatenate(inputs, axis)

    return _layer(init_fun, apply_fun)


def Dropout(rate, mode="train") -> Layer:
    """Dropout (JAX's): in ``mode="train"`` each input is kept with probability ``rate`` and divided by it, else
    set to 0; in any other mode the layer is the identity. ``apply_fun`` needs ``rng``, a key."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, rng=None):
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
                             "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, "
                             "rng)` where `rng` is a PRNG key (e.g. from `numbax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return np.where(keep, inputs / rate, 0)
        return inputs

    return _layer(init_fun, apply_fun)


def serial(*layers) -> Layer:
    """The layers composed in sequence; ``rng`` is split into one key per layer."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    apply_funs = tuple(layer[1] for layer in layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, rng=None):
        if rng is None:
            for fun, param in zip(apply_funs, params):
                inputs = fun(param, inputs, rng=None)
            return inputs
        rngs = random.split(rng, nlayers)
        for k, fun in enumerate(apply_funs):
            inputs = fun(params[k], inputs, rng=rngs[k])
        return inputs

    return _layer(init_fun, apply_fun)


def parallel(*layers) -> Layer:
    """The layers side by side: a sequence of inputs to the sequence of their outputs (with ``FanOut`` and
    ``FanInSum``, a residual block)."""
    nlayers = len(layers)
    init_funs = tuple(layer[0] for layer in layers)
    apply_funs = tuple(layer[1] for layer in layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        made = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        return tuple(shape for shape, _ in made), tuple(param for _, param in made)

    def apply_fun(params, inputs, rng=None):
        if rng is None:
            return [f(p, x, rng=None) for f, p, x in zip(apply_funs, params, inputs)]
        rngs = random.split(rng, nlayers)
        return [apply_funs[k](params[k], inputs[k], rng=rngs[k]) for k in range(nlayers)]

    return _layer(init_fun, apply_fun)


Flatten = _flatten()
Identity = _identity()
FanInSum = _fan_in_sum()
