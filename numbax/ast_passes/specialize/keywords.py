"""keywords: the keyword arguments numbax implements for each NumPy and SciPy callable; the rest is refused.

Every call of a NumPy or SciPy callable that the specializer leaves to
generated code passes ``check`` first, so jit, grad and vmap bind keywords in
one place. A keyword is accepted where ``IMPLEMENTED`` lists it for the
callable (by its spelling in generated code, ``np.sum``), where it names a
parameter without a default (``np.dot(a, b=y)``), or where its compile-time
value is the parameter's default (``axis=None``), which changes nothing.
Anything else (``out=`` of a reduction, ``where=``, ``np.sum(x, foo=1)``) is a
``NumbaxSpecializationError`` at the user's line naming the keyword, never
dropped: Numba ignores some keywords and reports others without a line.

Ufuncs take no keyword but ``out=``, which the specializer implements itself
(``y[...] = np.add(x1, x2)``); array methods are checked by name in ``METHODS``.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Tuple

import numpy as np

from numbax.ast_passes import resolve
from numbax.ast_passes.specialize.values import Dyn


def _names(text: str) -> FrozenSet[str]:
    return frozenset(text.split())


_FOLD = _names("axis dtype keepdims")
_EXTREMUM = _names("axis keepdims")
_MOMENT = _names("axis dtype ddof keepdims")
_CREATE = _names("shape dtype")
_LIKE = _names("dtype shape")
_AXIS = _names("axis")
_DIAGONAL = _names("offset axis1 axis2")
_WHERE = _names("where")  # a keyword composite's (``numbax.primitives.masked_reductions``)
_INITIAL = _names("initial where")

# spelling in generated code -> keywords numbax (legalize, the runtime helpers or Numba) implements
IMPLEMENTED: Dict[str, FrozenSet[str]] = {
    **{f"np.{name}": _FOLD for name in ("nansum", "nanprod")},
    **{f"np.{name}": _FOLD | _WHERE for name in ("sum", "prod", "mean")},
    **{f"np.{name}": _MOMENT | _WHERE for name in ("var", "std")},
    **{f"np.{name}": _EXTREMUM | _INITIAL for name in ("max", "min", "amax", "amin")},
    **{f"np.{name}": _EXTREMUM for name in ("ptp", "any", "all", "argmax", "argmin", "nanmax", "nanmin")},
    **{f"np.{name}": _names("axis dtype") for name in ("cumsum", "cumprod")},
    "np.linalg.norm": _names("ord axis keepdims"),
    **{f"np.{name}": _CREATE for name in ("zeros", "ones", "empty")},
    "np.full": _names("shape fill_value dtype"),
    **{f"np.{name}": _LIKE for name in ("zeros_like", "ones_like", "empty_like")},
    "np.full_like": _names("fill_value dtype shape"),
    "np.arange": _names("stop step dtype"),
    "np.linspace": _names("num"),
    "np.eye": _names("M k dtype"),
    "np.identity": _names("dtype"),
    **{f"np.{name}": _names("dtype") for name in ("array", "asarray", "ascontiguousarray")},
    **{f"np.{name}": _AXIS for name in ("concatenate", "concat", "stack", "flip", "squeeze", "take_along_axis",
                                      "expand_dims", "median")},
    **{f"np.{name}": _names("indices_or_sections axis") for name in ("split", "array_split")},
    "np.repeat": _names("repeats axis"),
    "np.roll": _names("shift axis"),
    "np.diagonal": _DIAGONAL,
    "np.trace": _DIAGONAL,
    "np.pad": _names("pad_width mode constant_values"),
    "np.tensordot": _names("axes"),
    "np.convolve": _names("mode"),
    "np.diff": _names("n axis prepend append"),
    "np.take": _names("axis"),
    "np.average": _names("axis weights returned"),
    "np.vander": _names("N increasing"),
    "np.nan_to_num": _names("nan posinf neginf"),
    "np.clip": _names("a_min a_max"),
    "np.moveaxis": _names("source destination"),
    "np.swapaxes": _names("axis1 axis2"),
    "np.transpose": _names("axes"),
    "np.reshape": _names("shape newshape"),
    "np.argsort": _names("axis kind"),
    "np.sort": _names("axis kind"),
    "np.tril": _names("k"),
    "np.triu": _names("k"),
    "np.diag": _names("k"),
    "np.round": _names("decimals"),
    "np.around": _names("decimals"),
    "np.searchsorted": _names("side"),
    **{f"np.{name}": _names("rtol atol equal_nan") for name in ("allclose", "isclose")},
    "np.array_equal": _names("equal_nan"),
    "np.random.normal": _names("loc scale size"),
    "np.random.uniform": _names("low high size"),
    "np.random.randint": _names("high size"),
    "rt.logsumexp": _EXTREMUM,
    # composites (``numbax.primitives.statistics``, ``shape_composites``, ``composites``)
    "np.nanmean": _FOLD,
    **{f"np.{name}": _MOMENT for name in ("nanvar", "nanstd")},
    **{f"np.{name}": _AXIS for name in ("nancumsum", "nancumprod", "append")},
    "np.cov": _names("y rowvar bias ddof"),
    **{f"np.{name}": _names("q axis keepdims") for name in ("quantile", "percentile")},
    "np.corrcoef": _names("y rowvar"),
    "np.rot90": _names("k axes"),
    "np.diagflat": _names("k"),
    "np.trapezoid": _names("x dx axis"),
    "np.correlate": _names("mode"),
    "np.select": _names("default"),
    # NumPy 2's array-API functions (``numbax.primitives.array_api``)
    **{f"np.{name}": _AXIS for name in ("vecdot", "linalg.vecdot", "linalg.cross")},
    **{f"np.{name}": _names("axis dtype include_initial") for name in ("cumulative_sum", "cumulative_prod")},
    "np.linalg.diagonal": _names("offset"),
    "np.linalg.trace": _names("offset"),
    "np.linalg.tensordot": _names("axes"),
    "np.linalg.vector_norm": _names("axis keepdims ord"),
    "np.linalg.matrix_norm": _names("keepdims ord"),
}

# ndarray methods -> keywords implemented (a method not here takes none)
METHODS: Dict[str, FrozenSet[str]] = {
    **{name: _FOLD | _WHERE for name in ("sum", "prod", "mean")},
    **{name: _MOMENT | _WHERE for name in ("var", "std")},
    **{name: _EXTREMUM | _INITIAL for name in ("max", "min")},
    **{name: _EXTREMUM for name in ("any", "all", "argmax", "argmin")},
    **{name: _names("axis dtype") for name in ("cumsum", "cumprod")},
    "repeat": _names("repeats axis"),
    "squeeze": _AXIS,
    "diagonal": _DIAGONAL,
    "trace": _DIAGONAL,
    "astype": _names("dtype"),
    "argsort": _names("axis kind"),
    "take": _names("indices"),
    "clip": _names("min max"),
    "round": _names("decimals"),
    "transpose": _names("axes"),
    "sort": _names("axis kind"),
}


# Keywords that the transformations' rules take by position, of ndarray methods (``x.clip(max=b)`` is
# ``np.clip(x, None, b)``, whose rule names its bounds ``a_min``, ``a_max``) and of NumPy functions (NumPy 2.1's
# and JAX's ``np.clip(x, min=a)``), after the array
POSITIONS: Dict[str, Tuple[str, ...]] = {"clip": ("min", "max"), "np.clip": ("min", "max")}


def positional(callee: str, args: List[Any], kwargs: Dict[str, Any]) -> Tuple[List[Any], Dict[str, Any]]:
    """A call's keywords of ``POSITIONS`` passed by position (None for one not given); ``callee`` is a method's
    name or a function's canonical reference, ``args`` its arguments after the array."""
    names = POSITIONS.get(callee)
    if names is None or not set(kwargs) & set(names) or len(args) > len(names):
        return args, kwargs
    given = dict(zip(names, args))
    if set(given) & set(kwargs):
        return args, kwargs  # a parameter twice: NumPy's TypeError, at run time
    given.update({k: v for k, v in kwargs.items() if k in names})
    return [given.get(k) for k in names], {k: v for k, v in kwargs.items() if k not in names}


def _signature(func: Any) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None


def _at_default(value: Any, parameter: Optional[inspect.Parameter]) -> bool:
    """Whether a compile-time ``value`` is the parameter's own default (so passing it changes nothing)."""
    if parameter is None or parameter.default is inspect.Parameter.empty or isinstance(value, Dyn):
        return False
    default = parameter.default
    try:
        return value is default or (type(value) is type(default) and bool(value == default))
    except Exception:  # noqa: BLE001 - an array compared with a default: not the default
        return False


def refused(func: Any, kwargs: Dict[str, Any]) -> Optional[str]:
    """The first keyword of a call of ``func`` that numbax does not implement, else None."""
    reference = resolve.canonical_reference(func)
    if isinstance(func, np.ufunc):  # ``out=``, and a generalized ufunc's keywords listed (``axis`` of np.vecdot)
        implemented = IMPLEMENTED.get(reference[1], frozenset()) if reference is not None else frozenset()
        return next((k for k in kwargs if k != "out" and k not in implemented), None)
    scipy = (getattr(func, "__module__", None) or "").startswith("scipy")
    if reference is None or not (reference[1].startswith("np.") or scipy) or isinstance(func, type):
        return None
    signature = _signature(func)
    parameters = signature.parameters if signature is not None else {}
    implemented = IMPLEMENTED.get(reference[1], frozenset())
    for keyword, value in kwargs.items():
        parameter = parameters.get(keyword)
        required = parameter is not None and parameter.default is inspect.Parameter.empty and \
            parameter.kind is not inspect.Parameter.POSITIONAL_ONLY
        if keyword not in implemented and not required and not _at_default(value, parameter):
            return keyword
    return None


def not_taken(func: Any, kwargs: Dict[str, Any], taken: Iterable[str]) -> Optional[str]:
    """The first keyword of a call of ``func`` that its composite, whose parameters are ``taken``, would not
    receive and whose value is not the parameter's default (a keyword listed in ``IMPLEMENTED`` that the
    composite does not implement), else None: never dropped."""
    signature = _signature(func)
    parameters = signature.parameters if signature is not None else {}
    taken = set(taken)
    return next((k for k, v in kwargs.items() if k not in taken and not _at_default(v, parameters.get(k))), None)


def refused_method(method: str, keywords: Iterable[str]) -> Optional[str]:
    """The first keyword of a call of the array method ``method`` that numbax does not implement."""
    implemented = METHODS.get(method, frozenset())
    return next((k for k in keywords if k not in implemented), None)


def message(spelling: str, keyword: str) -> str:
    """What the error says: the keyword and the callable."""
    return f"keyword argument `{keyword}=` of `{spelling}` is not implemented by numbax"


HINT = ("numbax never drops a keyword: leave it out and write what it does in NumPy code (for `out=`, assign "
        "the result: `y[...] = f(x)`), or pass it positionally where it is one of the function's main arguments.")
