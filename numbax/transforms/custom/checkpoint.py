"""``checkpoint`` (``remat``): reverse mode recomputes a function's intermediates instead of saving them.

``checkpoint(f)`` is a ``custom_vjp`` function whose forward rule returns ``f``'s output and its inputs as
the residuals, and whose backward rule is ``f``'s own reverse mode at those inputs (``numbax.vjp`` inside
the rule, generated where the rule is inlined): the forward sweep keeps only the inputs, and the backward
sweep runs ``f`` again before differentiating it. In a loop whose body calls a checkpointed function,
what reverse mode saves per iteration is that function's inputs, not everything it computes.
"""
from __future__ import annotations

import inspect
from typing import Callable

from numbax.ast_passes import wrapper
from numbax.errors import NumbaxDifferentiationError
from numbax.transform_cache import reused
from numbax.transforms.custom.api import custom_vjp


class _Checkpointed(custom_vjp):
    """What ``checkpoint`` returns: a ``custom_vjp`` function whose rule is numbax's, set once. Every
    ``checkpoint`` of one function returns this one object (``numbax.transform_cache``), so a rule given to
    it later would change what all of them compute: refused."""

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Set numbax's rule, once; refused afterwards."""
        if self.fwd is not None:
            raise NumbaxDifferentiationError(
                f"checkpoint of {self.name} has numbax's rule, shared by every checkpoint of {self.name}; it "
                "cannot be given another", hint=f"give {self.name} a rule of your own with numbax.custom_vjp.")
        super().defvjp(fwd, bwd, symbolic_zeros)


def _rules(fun: Callable, params: list, name: str):
    """``fwd(*params) -> (fun(*params), params)`` (with ``*args``: the arguments as passed) and
    ``bwd(params, g) -> the pullback of fun at params``, written out so that numbax reads them like the user's."""
    from numbax.transforms.grad.api import vjp

    header = ", ".join(params)
    inputs = f"({header}{',' if len(params) == 1 else ''})"
    if params[-1].startswith("*"):  # ``*args``: the inputs are the positional arguments as passed
        header, inputs = "*args", "args"
    source = (f"def {name}_fwd({header}):\n    return {name}_({header}), {inputs}\n"
              f"\n\ndef {name}_bwd(inputs, g):\n    return vjp_({name}_, *inputs)[1](g)\n")
    filename = f"<numbax: checkpoint of {name} {id(fun):x}>"
    namespace = wrapper.define(source, filename, {f"{name}_": fun, "vjp_": vjp})
    return namespace[f"{name}_fwd"], namespace[f"{name}_bwd"]


@reused
def checkpoint(fun: Callable, *, prevent_cse: bool = True, policy=None, static_argnums=()) -> custom_vjp:
    """``fun``, with reverse mode recomputing its intermediates in the backward sweep (``jax.checkpoint``).

    Args:
        fun: a function of positional arguments (``*args`` too) returning one array or number.
        prevent_cse: accepted for JAX's signature (numbax eliminates no common subexpressions across it).
        policy: must be None (numbax saves nothing of ``fun`` but its inputs).
        static_argnums: must be empty.

    Returns:
        A ``custom_vjp`` function that computes ``fun``; under ``grad`` only its inputs are saved. The same
        function with the same options gives the same object again, whose rule cannot be replaced.
    """
    if policy is not None:
        raise NotImplementedError("numbax's checkpoint does not implement policies: it saves the inputs only")
    if static_argnums:
        raise NotImplementedError("numbax's checkpoint does not implement static_argnums: close over the values")
    signature = inspect.signature(fun)
    params = [("*" if p.kind is p.VAR_POSITIONAL else "") + p.name for p in signature.parameters.values()]
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) or p.default is not p.empty
           for p in signature.parameters.values()) or not params:
        raise TypeError(f"checkpoint takes a function of positional parameters (and *args) without defaults, got "
                        f"{signature}")
    name = getattr(fun, "__name__", "f").replace("<lambda>", "lambda")
    out = _Checkpointed(fun)
    out.defvjp(*_rules(fun, params, name if name.isidentifier() else "f"))
    return out


remat = checkpoint
