"""``numbax.example_libraries.optimizers``: ``jax.example_libraries.optimizers`` over NumPy pytrees.

An optimizer is an ``(init_fun, update_fun, get_params)`` triple. ``init_fun(params)`` returns an
``OptimizerState`` (a pytree, registered with ``numbax.tree_util`` as JAX registers it: its leaves are the
per-parameter state arrays, the parameters' and states' structures are its static data), ``update_fun(i, grads,
opt_state)`` the next state, ``get_params(opt_state)`` the parameters. Every function here is marked
``specialized_from_source``: inside ``numbax.jit`` the step is compiled from this source, the structures fold
at compile time and the arithmetic is the user's. Step sizes are numbers or schedules (callables of the step).
The updates are JAX's formulas in JAX's order, so float64 trajectories agree with JAX's to rounding.
"""
from __future__ import annotations

import functools
import types
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

from numbax import tree_util
from numbax.ast_passes.specialize.compile_time import specialized_from_source

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov", "adagrad", "rmsprop",
           "rmsprop_momentum", "adam", "adamax", "sm3", "constant", "exponential_decay", "inverse_time_decay",
           "polynomial_decay", "piecewise_constant", "make_schedule", "l2_norm", "clip_grads", "JoinPoint",
           "unpack_optimizer_state", "pack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
    lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Schedule = Callable[[int], float]


class Optimizer(NamedTuple):
    """An optimizer's ``(init_fn, update_fn, params_fn)`` triple over pytrees."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def _compiled(*functions: Callable) -> tuple:
    """``functions``, the plain ones marked to be specialized from their source inside compiled code (a user's
    own are anyway; a ``numbax.jit`` or another object that specializes its own calls is left as it is)."""
    return tuple(specialized_from_source(f) if isinstance(f, types.FunctionType) and
                 not hasattr(f, "_numbax_specialize") else f for f in functions)


_wraps = functools.partial(functools.wraps, updated=())  # the name and docstring, not the hook in ``__dict__``


def optimizer(opt_maker: Callable[..., tuple]) -> Callable[..., Optimizer]:
    """Make an optimizer written for single arrays work on pytrees of arrays (JAX's ``@optimizer``).

    Args:
        opt_maker: Returns ``(init, update, get_params)`` over one array and its state (a pytree).

    Returns:
        A function with ``opt_maker``'s parameters returning an ``Optimizer`` whose functions take pytrees of
        parameters and an ``OptimizerState``.
    """

    @_wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = _compiled(*opt_maker(*args, **kwargs))

        @_wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_util.tree_flatten(x0_tree)
            flattened = [tree_util.tree_flatten(init(x0)) for x0 in x0_flat]
            return OptimizerState([s for s, _ in flattened], tree, [d for _, d in flattened])

        @_wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_util.tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError("optimizer update function was passed a gradient tree that did not match the "
                                "parameter tree structure with which it was initialized")
            states = [tree_util.tree_unflatten(d, s) for d, s in zip(subtrees, states_flat)]
            flattened = [tree_util.tree_flatten(update(i, g, s)) for g, s in zip(grad_flat, states)]
            if [d for _, d in flattened] != list(subtrees):
                raise TypeError("optimizer update function produced an output structure that did not match its "
                                "input structure")
            return OptimizerState([s for s, _ in flattened], tree, subtrees)

        @_wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            params = [get_params(tree_util.tree_unflatten(d, s)) for d, s in zip(subtrees, states_flat)]
            return tree_util.tree_unflatten(tree, params)

        return Optimizer(*_compiled(tree_init, tree_update, tree_get_params))

    return tree_opt_maker


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: ``x - step_size(i) * g``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return init, update, get_params


@optimizer
def momentum(step_size, mass):
    """SGD with momentum ``mass``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * velocity
        return x, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum ``mass``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        x = x - step_size(i) * (mass * velocity + g)
        return x, velocity

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad, with ``momentum`` (Duchi et al. 2011)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + np.square(g)
        g_sq_inv_sqrt = np.where(g_sq > 0, 1. / np.sqrt(np.where(g_sq > 0, g_sq, 1.0)), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        return x, g_sq, m

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp with decay ``gamma``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1. - gamma)
        x = x - step_size(i) * g / np.sqrt(avg_sq_grad + eps)
        return x, avg_sq_grad

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with decay ``gamma`` and ``momentum``."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + np.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / np.sqrt(avg_sq_grad + eps)
        x = x - mom
        return x, avg_sq_grad, mom

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam with moment decays ``b1``, ``b2`` and bias correction (Kingma and Ba 2015)."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m  # first moment estimate
        v = (1 - b2) * np.square(g) + b2 * v  # second moment estimate
        mhat = m / (1 - b1 ** (i + 1))  # bias correction
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size(i) * mhat / (np.sqrt(vhat) + eps)
        return x, m, v

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax, Adam with an exponentially weighted infinity norm."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, np.zeros_like(x0), np.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m  # first moment estimate
        u = np.maximum(b2 * u, np.abs(g))  # exponentially weighted infinity norm
        x = x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps)
        return x, m, u

    def get_params(state):
        return state[0]

    return init, update, get_params


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): per axis, the largest accumulated squared gradient over the other axes; each
    element's accumulator the smallest of its axes' (``jax.example_libraries.optimizers.sm3``)."""
    step_size = make_schedule(step_size)

    def init(x0):
        x_shape = x0.shape
        x0 = np.atleast_1d(x0)
        vs = [np.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, np.zeros_like(x0), vs, x_shape

    def update(i, g, state):
        x, m, vs, x_shape = state
        ndim = len(vs)  # x's, known at compile time
        accum = _broadcast_into(ndim, vs[0], 0)
        for axis in range(1, ndim):
            accum = np.minimum(accum, _broadcast_into(ndim, vs[axis], axis))
        accum = accum + np.square(g)
        accum_inv_sqrt = np.where(accum > 0, 1. / np.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [_max_over_others(accum, axis, ndim) for axis in range(ndim)]
        return x, m, vs, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        return x.reshape(x_shape)

    return init, update, get_params


@specialized_from_source
def _broadcast_into(ndim, v, axis):
    """``v``, the accumulator of ``axis``, with size-1 axes around it: of ``ndim`` axes."""
    return v.reshape(tuple([v.shape[0] if j == axis else 1 for j in range(ndim)]))


@specialized_from_source
def _max_over_others(accum, axis, ndim):
    """The largest of ``accum`` (of ``ndim`` axes) over every axis but ``axis``."""
    return np.max(accum, axis=tuple([j for j in range(ndim) if j != axis])) if ndim > 1 else accum


def constant(step_size) -> Schedule:
    """The schedule ``i -> step_size``."""

    @specialized_from_source
    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size, decay_steps, decay_rate) -> Schedule:
    """The schedule ``i -> step_size * decay_rate ** (i / decay_steps)``."""

    @specialized_from_source
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False) -> Schedule:
    """The schedule ``i -> step_size / (1 + decay_rate * i / decay_steps)``, with ``floor(i / decay_steps)`` if
    ``staircase``."""

    @specialized_from_source
    def schedule(i):
        if staircase:
            return step_size / (1 + decay_rate * np.floor(i / decay_steps))
        return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0) -> Schedule:
    """The schedule from ``step_size`` to ``final_step_size`` over ``decay_steps`` steps along
    ``(1 - i / decay_steps) ** power``, then constant."""

    @specialized_from_source
    def schedule(step_num):
        step_num = np.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """The schedule ``i -> values[number of boundaries below i]``.

    Raises:
        ValueError: ``boundaries`` and ``values`` are not sequences, or ``values`` is not one longer.
    """
    boundaries = np.array(boundaries)
    values = np.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    @specialized_from_source
    def schedule(i):
        return values[np.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule) -> Schedule:
    """A schedule as it is, a number as the ``constant`` schedule of it.

    Raises:
        TypeError: Neither a callable nor a number.
    """
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


@specialized_from_source
def l2_norm(tree):
    """The l2 norm of a pytree of arrays (all its leaves as one vector)."""
    leaves = tree_util.tree_leaves(tree)
    return np.sqrt(sum([np.vdot(np.ravel(x), np.ravel(x)) for x in leaves]))


@specialized_from_source
def clip_grads(grad_tree, max_norm):
    """``grad_tree`` scaled to l2 norm ``max_norm`` if its norm is above it."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: np.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks the boundary between two joined (nested) pytrees."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An ``OptimizerState`` as the parameters' pytree with a ``JoinPoint`` holding each parameter's state (for
    serializing)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_util.tree_unflatten(d, s) for d, s in zip(subtree_defs, states_flat)]
    return tree_util.tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree):
    """The ``OptimizerState`` that ``unpack_optimizer_state`` unpacked to ``marked_pytree``.

    Raises:
        TypeError: A leaf of ``marked_pytree`` is not a ``JoinPoint``.
    """
    sentinels, tree_def = tree_util.tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state takes a pytree whose leaves are JoinPoints (unpack_optimizer_state's)")
    flattened = [tree_util.tree_flatten(s.subtree) for s in sentinels]
    return OptimizerState([s for s, _ in flattened], tree_def, [d for _, d in flattened])
