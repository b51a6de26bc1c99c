"""``custom_jvp`` and ``custom_vjp``: functions with derivative rules of the user's, as JAX's.

Outside compiled code the function runs as the Python it is; inside (under ``jit``, ``vmap``) its code is
specialized like any function's; where a transformation differentiates it, its rule replaces the
derivative numbax would derive (``numbax.transforms.custom.lowering``). numbax's custom rules take
functions of one output (an array or a number); forward mode of a ``custom_vjp`` function is refused at the
user's line, as in JAX; reverse mode of a ``custom_jvp`` function transposes its rule, which must be linear in
the tangents (``numbax.transforms.custom.transpose``).
"""
from __future__ import annotations

import functools
from typing import Callable, Optional, Sequence


def _argnums(nondiff_argnums: Sequence[int]) -> tuple:
    nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
    for n in nums:
        if not isinstance(n, int):
            raise TypeError(f"nondiff_argnums must be ints, got {n!r}")
    return tuple(sorted(set(nums)))


class _Custom:
    """What both kinds share: the function, its non-differentiated arguments, its name in errors."""

    kind = ""

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        if not callable(fun):
            raise TypeError(f"{self.kind} expects a callable, got {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _argnums(nondiff_argnums)
        self.name = getattr(fun, "__name__", repr(fun))

    def __call__(self, *args, **kwargs):
        self._check_defined()
        return self.fun(*args, **kwargs)

    def _rules(self) -> tuple:
        raise NotImplementedError

    def _numbax_specialize(self, spec, node, args, kwargs):
        """A call inside compiled code: the function, or its rule where it is differentiated."""
        from numbax.transforms.custom import lowering

        if None in self._rules():
            spec.fail(node, self._undefined(), hint=f"define the rule of {self.name} before using it.")
        lower = lowering.lower_vjp if self.kind == "custom_vjp" else lowering.lower_jvp
        return lower(self, spec, node, list(args), dict(kwargs))

    def _check_defined(self) -> None:
        if None in self._rules():
            raise AttributeError(self._undefined())

    def _undefined(self) -> str:
        raise NotImplementedError

    def _numbax_fingerprint(self) -> tuple:
        """What code generated for a call of this function depends on (the disk cache of a caller's code)."""
        return (self.kind, self.fun, self.nondiff_argnums) + self._rules()

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)


class custom_vjp(_Custom):
    """A function with a reverse-mode rule of the user's, as ``jax.custom_vjp``::

        @numbax.custom_vjp
        def clip_gradient(x):
            return x

        def clip_fwd(x):
            return x, None

        def clip_bwd(res, g):
            return (np.clip(g, -1.0, 1.0),)

        clip_gradient.defvjp(clip_fwd, clip_bwd)

    ``fwd(*args)`` returns ``(output, residuals)``; ``bwd(*nondiff_args, residuals, g)`` returns a tuple with
    one cotangent per differentiated argument (``None`` for zero), each of its argument's structure.
    """

    kind = "custom_vjp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.fwd: Optional[Callable] = None
        self.bwd: Optional[Callable] = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Set the rule: ``fwd`` computes the output and residuals, ``bwd`` the cotangents from them."""
        if symbolic_zeros:
            raise NotImplementedError("numbax's custom_vjp does not implement symbolic_zeros=True")
        self.fwd, self.bwd = fwd, bwd

    def _rules(self) -> tuple:
        return (self.fwd, self.bwd)

    def _undefined(self) -> str:
        return f"No VJP defined for custom_vjp function {self.name} using defvjp."


class custom_jvp(_Custom):
    """A function with a forward-mode rule of the user's, as ``jax.custom_jvp``::

        @numbax.custom_jvp
        def log1pexp(x):
            return np.log1p(np.exp(x))

        @log1pexp.defjvp
        def log1pexp_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return log1pexp(x), t / (1.0 + np.exp(-x))

    The rule takes ``(*nondiff_args, primals, tangents)`` and returns ``(primal_out, tangent_out)``, linear in
    the tangents; reverse mode (``grad``, ``vjp``, ``jacrev``) transposes it, and refuses at the rule's line an
    operation or a branch on the tangents that is not linear in them, as JAX does.
    """

    kind = "custom_jvp"

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, nondiff_argnums)
        self.jvp: Optional[Callable] = None

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the rule (usable as a decorator); returns it."""
        if symbolic_zeros:
            raise NotImplementedError("numbax's custom_jvp does not implement symbolic_zeros=True")
        self.jvp = jvp
        return jvp

    def defjvps(self, *jvps: Callable) -> None:
        """JAX's per-argument rules; not implemented (write one rule with ``defjvp``)."""
        raise NotImplementedError("numbax's custom_jvp does not implement defjvps: write one rule with defjvp")

    def _rules(self) -> tuple:
        return (self.jvp,)

    def _undefined(self) -> str:
        return f"No JVP defined for custom_jvp function {self.name} using defjvp."
