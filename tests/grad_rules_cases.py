"""The derivative-rule table under test: for each NumPy callable (or operator) with a reverse-mode
rule, a few call expressions over named inputs.

``RULES`` maps a qualified name, as ``numbax.coverage()`` reports it (``"numpy.tanh"``,
``"numpy.linalg.solve"``, ``"scipy.special.logsumexp"``, ``"operator.mul"``), to a list of
``Snippet``: an expression in the inputs, written as a user writes it (``np.sum(x, axis=1,
keepdims=True)``, ``x.max(axis=0)``, ``a @ b``), and each input's shape and domain.
``tests/test_grad_rules.py`` turns snippet ``k`` of ``name`` into

    def <name>_<k>(x, y):
        return np.sum((<expr>) * W_<name>_<k>)

with a fixed random weight of the expression's shape (so the cotangent is not all ones), and
checks ``numbax.grad`` with respect to every input against finite differences and JAX.
A snippet that a known numbax bug breaks carries ``xfail`` (a reason, or ``{backend: reason}``).

Domains (``sample`` draws them, deterministically from a seed):

- ``real``: standard normal; ``wide``: normal with scale 3 (``floor``/``round`` need values
  spread over several integers);
- ``pos``: uniform in (0.5, 2) (``log``, ``sqrt``, ``power`` bases, divisors);
- ``unit``: uniform in (-0.9, 0.9) (``arcsin``, ``arccos``, ``arctanh``, ``tan``);
- ``gt1``: uniform in (1.2, 3) (``arccosh``);
- ``wellcond``: ``I + 0.3 N`` for square matrices (``inv``, ``det``, ``solve``, ``slogdet``).

Symmetric positive definite inputs (``cholesky``) are built inside the expression from a free
matrix (``a @ a.T + 3 I``), so every perturbation stays in the domain and the gradient is
unambiguous. Non-differentiable functions (``sign``, ``floor``, ``argmax``, ...) appear in
expressions whose gradient flows through the other terms, checking that they contribute zero.
A scalar input (shape ``()``) is passed as a Python float.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Tuple, Union

import numpy as np

DOMAINS = ("real", "wide", "steps", "pos", "unit", "gt1", "wellcond")


@dataclasses.dataclass(frozen=True)
class Input:
    shape: Tuple[int, ...]
    domain: str = "real"

    def __post_init__(self):
        assert self.domain in DOMAINS, self.domain
        assert self.domain != "wellcond" or (len(self.shape) == 2 and self.shape[0] == self.shape[1])


@dataclasses.dataclass(frozen=True)
class Snippet:
    expr: str
    inputs: Tuple[Tuple[str, Input], ...]
    jax: bool = True  # whether JAX runs the expression too (np -> jax.numpy) as a second oracle
    rtol: Optional[float] = None
    xfail: Union[None, str, Dict[str, str]] = None  # a known numbax bug: a reason, or {backend: reason}

    def xfail_reason(self, backend: str) -> Optional[str]:
        if isinstance(self.xfail, dict):
            return self.xfail.get(backend)
        return self.xfail

    @property
    def names(self) -> Tuple[str, ...]:
        return tuple(name for name, _ in self.inputs)


def S(expr: str, jax: bool = True, rtol: Optional[float] = None, xfail=None, **inputs: Input) -> Snippet:
    return Snippet(expr, tuple(inputs.items()), jax, rtol, xfail)


def real(*shape: int) -> Input:
    return Input(shape, "real")


def wide(*shape: int) -> Input:
    return Input(shape, "wide")


def steps(*shape: int) -> Input:
    """``wide`` values at least 0.05 from every integer and half-integer: where ``floor``, ``ceil`` and ``round``
    jump, central differences would measure the jump (which values land there depends on the seed)."""
    return Input(shape, "steps")


def pos(*shape: int) -> Input:
    return Input(shape, "pos")


def unit(*shape: int) -> Input:
    return Input(shape, "unit")


def gt1(*shape: int) -> Input:
    return Input(shape, "gt1")


def wellcond(n: int) -> Input:
    return Input((n, n), "wellcond")


def sample(inp: Input, seed: int):
    """A deterministic value in ``inp``'s domain: an array, or a Python float for shape ``()``."""
    rng = np.random.default_rng(seed)
    if inp.domain == "real":
        value = rng.normal(size=inp.shape)
    elif inp.domain in ("wide", "steps"):
        value = 3.0 * rng.normal(size=inp.shape)
        if inp.domain == "steps":
            doubled = 2.0 * value
            value = np.where(np.abs(doubled - np.round(doubled)) < 0.1, value + 0.1, value)
    elif inp.domain == "pos":
        value = rng.uniform(0.5, 2.0, size=inp.shape)
    elif inp.domain == "unit":
        value = rng.uniform(-0.9, 0.9, size=inp.shape)
    elif inp.domain == "gt1":
        value = rng.uniform(1.2, 3.0, size=inp.shape)
    else:
        value = np.eye(inp.shape[0]) + 0.3 * rng.normal(size=inp.shape)
    return float(value) if inp.shape == () else value


def sample_inputs(snippet: Snippet, seed: int) -> tuple:
    return tuple(sample(inp, seed + k) for k, (_, inp) in enumerate(snippet.inputs))


SQUEEZE_ALL = {"cpu": "np.squeeze without axis: the result's ndim depends on the run-time shape, which compiled "
                      "code does not know (numbax asks for the axis instead)"}


def _comparison(op: str) -> List[Snippet]:
    return [S(f"x * (x {op} y)", x=real(3, 4), y=real(4)),
            S(f"np.where(x {op} 0.3, x * y, y)", x=real(3), y=real(3))]


RULES: Dict[str, List[Snippet]] = {
    # ---- operators, with broadcasting -----------------------------------------------------
    "operator.add": [S("x + y", x=real(3, 4), y=real(4)), S("x + y", x=real(3, 1), y=real(1, 4)),
                     S("a + x + 2.0", a=real(), x=real(3))],
    "operator.sub": [S("x - y", x=real(3, 4), y=real(3, 1)), S("1.5 - x", x=real(3)),
                     S("a - x", a=real(), x=real(2, 3))],
    "operator.mul": [S("x * y", x=real(2, 3, 4), y=real(4)), S("x * y", x=real(3, 1), y=real(1, 4)),
                     S("a * x * x", a=real(), x=real(3))],
    "operator.truediv": [S("x / y", x=real(3, 4), y=pos(4)), S("2.0 / y", y=pos(3)), S("x / a", x=real(3), a=pos()),
                         S("a / y", a=real(), y=pos(2, 2))],
    "operator.pow": [S("x ** 3", x=real(3)), S("x ** y", x=pos(3, 4), y=real(4)), S("2.0 ** x", x=real(3)),
                     S("x ** 0.5 + x ** -2", x=pos(3)), S("x ** a", x=pos(3), a=real())],
    "operator.neg": [S("-x", x=real(3, 4)), S("-(x * y) + -a", x=real(3), y=real(3), a=real())],
    "operator.matmul": [S("a @ b", a=real(3, 4), b=real(4, 2)), S("a @ v", a=real(3, 4), v=real(4)),
                        S("v @ a", v=real(3), a=real(3, 4)), S("u @ v", u=real(4), v=real(4)),
                        S("a @ b", a=real(2, 3, 4), b=real(4, 2)), S("a @ b", a=real(2, 3, 4), b=real(2, 4, 3))],
    "operator.lt": _comparison("<"),
    "operator.le": _comparison("<="),
    "operator.gt": _comparison(">"),
    "operator.ge": _comparison(">="),
    "operator.eq": [S("np.where(x == y, 0.0, x * y)", x=real(3, 4), y=real(4)),
                    S("x * (np.round(x) == 0.0)", x=wide(5))],
    "operator.ne": [S("x * (x != y)", x=real(3, 4), y=real(4)),
                    S("np.where(x != 0.0, x * y, y)", x=real(3), y=real(3))],
    # ---- elementwise ------------------------------------------------------------------------
    "numpy.abs": [S("np.abs(x)", x=real(3, 4)), S("np.abs(x - y)", x=real(3), y=real(3))],
    "numpy.exp": [S("np.exp(x)", x=real(3, 4)), S("np.exp(a * x)", a=real(), x=real(3))],
    "numpy.exp2": [S("np.exp2(x)", x=real(3, 4))],
    "numpy.expm1": [S("np.expm1(x)", x=real(3, 4))],
    "numpy.log": [S("np.log(x)", x=pos(3, 4)), S("np.log(x * y)", x=pos(3, 1), y=pos(4))],
    "numpy.log2": [S("np.log2(x)", x=pos(3, 4))],
    "numpy.log10": [S("np.log10(x)", x=pos(3, 4))],
    "numpy.log1p": [S("np.log1p(x)", x=pos(3, 4)), S("np.log1p(x * x)", x=real(3))],
    "numpy.sqrt": [S("np.sqrt(x)", x=pos(3, 4)), S("np.sqrt(x * x + y * y)", x=real(3), y=real(3))],
    "numpy.cbrt": [S("np.cbrt(x)", x=real(3, 4))],
    "numpy.square": [S("np.square(x)", x=real(3, 4))],
    "numpy.power": [S("np.power(x, 3)", x=real(3, 4)), S("np.power(x, y)", x=pos(3, 4), y=real(3, 1)),
                    S("np.power(2.5, x)", x=real(3)), S("np.power(x, a)", x=pos(3), a=real())],
    "numpy.reciprocal": [S("np.reciprocal(x)", x=pos(3, 4))],
    "numpy.sin": [S("np.sin(x)", x=real(3, 4))],
    "numpy.cos": [S("np.cos(x)", x=real(3, 4))],
    "numpy.tan": [S("np.tan(x)", x=unit(3, 4))],
    "numpy.arcsin": [S("np.arcsin(x)", x=unit(3, 4))],
    "numpy.arccos": [S("np.arccos(x)", x=unit(3, 4))],
    "numpy.arctan": [S("np.arctan(x)", x=real(3, 4))],
    "numpy.sinh": [S("np.sinh(x)", x=real(3, 4))],
    "numpy.cosh": [S("np.cosh(x)", x=real(3, 4))],
    "numpy.ndarray.astype": [S("x.astype(np.float64) * np.tanh(x.astype(np.float64))", x=real(3, 4)),
                             S("np.sin(x) * (3 * x).astype(np.int64) + x.astype(np.float64) ** 2", x=wide(3, 4))],
    "numpy.tanh": [S("np.tanh(x)", x=real(3, 4)), S("np.tanh(x @ w + b)", x=real(2, 3), w=real(3, 4), b=real(4))],
    "numpy.arcsinh": [S("np.arcsinh(x)", x=real(3, 4))],
    "numpy.arccosh": [S("np.arccosh(x)", x=gt1(3, 4))],
    "numpy.arctanh": [S("np.arctanh(x)", x=unit(3, 4))],
    "numpy.arctan2": [S("np.arctan2(y, x)", y=real(3, 4), x=real(4)), S("np.arctan2(x, 1.5)", x=real(3))],
    "numpy.hypot": [S("np.hypot(x, y)", x=real(3, 4), y=real(3, 1)), S("np.hypot(x, 2.0)", x=real(3))],
    "numpy.logaddexp": [S("np.logaddexp(x, y)", x=real(3, 4), y=real(4)), S("np.logaddexp(x, 0.0)", x=real(3))],
    "numpy.logaddexp2": [S("np.logaddexp2(x, y)", x=real(3, 4), y=real(4))],
    "numpy.sinc": [S("np.sinc(x)", x=real(3, 4))],
    "numpy.fmod": [S("np.fmod(x, y)", x=wide(3, 4), y=pos(4)), S("np.fmod(x, -1.3)", x=wide(5))],
    "numpy.maximum": [S("np.maximum(x, y)", x=real(3, 4), y=real(4)), S("np.maximum(x, 0.0)", x=real(5))],
    "numpy.minimum": [S("np.minimum(x, y)", x=real(3, 4), y=real(3, 1)), S("np.minimum(x, 0.2)", x=real(5))],
    "numpy.fmax": [S("np.fmax(x, y)", x=real(3, 4), y=real(4))],
    "numpy.fmin": [S("np.fmin(x, y)", x=real(3, 4), y=real(4))],
    "builtins.max": [S("max(a, b) * a", a=real(), b=real()), S("max(b, 0.5) * x", x=real(3), b=real())],
    "builtins.min": [S("min(a, b) * a", a=real(), b=real()), S("min(b, 0.5) * x", x=real(3), b=real())],
    "numpy.clip": [S("np.clip(x, -0.5, 0.5)", x=real(3, 4)), S("np.clip(x, lo, lo + 1.0)", x=real(3, 4), lo=real(4)),
                   S("x.clip(-1.0, 0.3)", x=real(5))],
    "numpy.where": [S("np.where(x > 0.0, x, y)", x=real(3, 4), y=real(4)),
                    S("np.where(c > 0.0, x * y, 2.0)", c=real(3), x=real(3), y=real(3))],
    # ---- non-differentiable: zero contribution ------------------------------------------------
    "numpy.sign": [S("np.sign(x) * y", x=real(3, 4), y=real(3, 4)), S("np.sign(x) * x", x=real(5))],
    "numpy.floor": [S("np.floor(x) + x", x=steps(3, 4)), S("np.floor(x) * x", x=steps(5))],
    "numpy.ceil": [S("np.ceil(x) * x", x=steps(3, 4))],
    "numpy.round": [S("np.round(x) * x", x=steps(3, 4)), S("np.round(x) + x * x", x=steps(5))],
    "numpy.argmax": [S("x[np.argmax(x)]", x=real(6)), S("y * np.argmax(x, axis=1)", x=real(3, 4), y=real(3))],
    "numpy.argmin": [S("x[np.argmin(x)]", x=real(6)), S("y * np.argmin(x, axis=0)", x=real(3, 4), y=real(4))],
    "numpy.argsort": [S("x[np.argsort(x)]", x=real(5)), S("y[np.argsort(x)] * x", x=real(5), y=real(5))],
    # ---- reductions -------------------------------------------------------------------------
    "numpy.sum": [S("np.sum(x)", x=real(3, 4)), S("np.sum(x, axis=0)", x=real(3, 4)),
                  S("np.sum(x, axis=1, keepdims=True)", x=real(3, 4)), S("x.sum(axis=-1)", x=real(2, 3, 4)),
                  S("np.sum(x, axis=(0, 2))", x=real(2, 3, 4)), S("np.sum(x, axis=0, where=x > 0.0)", x=real(3, 4)),
                  S("x.sum(where=np.array([True, False, True]))", x=real(2, 3))],
    "numpy.mean": [S("np.mean(x)", x=real(3, 4)), S("np.mean(x, axis=0)", x=real(3, 4)),
                   S("np.mean(x, axis=1, keepdims=True)", x=real(3, 4)), S("x.mean(axis=-1)", x=real(2, 3, 4)),
                   S("np.mean(x, axis=1, where=x > -0.5)", x=real(3, 4)),
                   S("x.mean(where=x > 0.0, keepdims=True)", x=real(2, 3))],
    "numpy.prod": [S("np.prod(x)", x=real(5)), S("np.prod(x, axis=1)", x=pos(3, 4)),
                   S("x.prod(axis=0, keepdims=True)", x=real(3, 4)),
                   S("np.prod(x, axis=1, where=x > 0.0)", x=real(3, 4))],
    "numpy.max": [S("np.max(x)", x=real(3, 4)), S("np.max(x, axis=0)", x=real(3, 4)),
                  S("x.max(axis=1, keepdims=True)", x=real(3, 4)),
                  S("np.max(x, axis=0, initial=0.1, where=x < 1.0)", x=real(3, 4)),
                  S("x.max(initial=0.3)", x=real(3, 4))],
    "numpy.min": [S("np.min(x)", x=real(3, 4)), S("np.min(x, axis=1)", x=real(3, 4)),
                  S("x.min(axis=0, keepdims=True)", x=real(3, 4)), S("np.min(x, axis=1, initial=0.2)", x=real(3, 4))],
    "numpy.amax": [S("np.amax(x, axis=1)", x=real(3, 4)), S("np.amax(x, initial=-0.1, where=x < 0.5)", x=real(3, 4))],
    "numpy.amin": [S("np.amin(x, axis=0, keepdims=True)", x=real(3, 4))],
    "numpy.nanmax": [S("np.nanmax(x)", x=real(3, 4)), S("np.nanmax(x * x)", x=real(5))],
    "numpy.nanmin": [S("np.nanmin(x)", x=real(3, 4)), S("np.nanmin(x * x)", x=real(5))],
    "numpy.ptp": [S("np.ptp(x)", x=real(3, 4)), S("np.ptp(x, axis=1)", x=real(3, 4))],
    "numpy.median": [S("np.median(x)", x=real(5)), S("np.median(x * y)", x=real(3, 2), y=real(3, 2))],
    "numpy.sort": [S("np.sort(x)", x=real(5)), S("np.sort(x * y) * y", x=real(4), y=real(4))],
    "numpy.var": [S("np.var(x)", x=real(3, 4)), S("np.var(x, axis=0)", x=real(3, 4)),
                  S("np.var(x, axis=1, ddof=1, keepdims=True)", x=real(3, 4)),
                  S("np.var(x, axis=0, where=x > -1.5, ddof=1)", x=real(5, 3))],
    "numpy.std": [S("np.std(x)", x=real(3, 4)), S("np.std(x, axis=1)", x=real(3, 4)), S("x.std(ddof=1)", x=real(5)),
                  S("x.std(where=x > -0.5)", x=real(3, 4))],
    "numpy.cumsum": [S("np.cumsum(x)", x=real(5)), S("np.cumsum(x, axis=0)", x=real(3, 4)),
                     S("np.cumsum(x)", x=real(3, 4)), S("x.cumsum(axis=1)", x=real(3, 4)),
                     S("np.cumsum(x[::-1])[::-1]", x=real(5)), S("np.cumsum(x[:, ::-1], axis=1)", x=real(3, 4))],
    "numpy.cumprod": [S("np.cumprod(x)", x=real(5)), S("np.cumprod(x, axis=1)", x=pos(3, 4))],
    # ---- products and contractions ----------------------------------------------------------
    "numpy.dot": [S("np.dot(u, v)", u=real(4), v=real(4)), S("np.dot(a, v)", a=real(3, 4), v=real(4)),
                  S("np.dot(a, b)", a=real(3, 4), b=real(4, 2)), S("x.dot(y)", x=real(2, 3), y=real(3))],
    "numpy.matmul": [S("np.matmul(a, b)", a=real(3, 4), b=real(4, 2)),
                     S("np.matmul(a, b)", a=real(2, 3, 4), b=real(4, 5)),
                     S("np.matmul(a, b)", a=real(2, 1, 3, 4), b=real(3, 4, 2)),
                     S("np.matmul(u, b)", u=real(3), b=real(2, 3, 4))],
    "numpy.inner": [S("np.inner(u, v)", u=real(4), v=real(4)),
                    S("np.inner(a, b)", a=real(3, 4), b=real(2, 4))],
    "numpy.vdot": [S("np.vdot(u, v)", u=real(4), v=real(4)), S("np.vdot(a, b)", a=real(2, 3), b=real(3, 2))],
    "numpy.polyval": [S("np.polyval(p, x)", p=real(4), x=real(3, 2)), S("np.polyval(p, x)", p=real(3), x=real())],
    "numpy.convolve": [S("np.convolve(a, v)", a=real(5), v=real(3)),
                       S("np.convolve(a, v, mode='same')", a=real(2), v=real(4)),
                       S("np.convolve(a, v, 'valid')", a=real(5), v=real(3))],
    "numpy.interp": [S("np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), fp)", x=wide(6), fp=real(4)),
                     S("np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), fp)", x=real(), fp=real(4))],
    "numpy.outer": [S("np.outer(x, y)", x=real(3), y=real(4)), S("np.outer(a, y)", a=real(2, 2), y=real(3))],
    "numpy.tensordot": [S("np.tensordot(a, b, axes=1)", a=real(2, 3), b=real(3, 4)),
                        S("np.tensordot(a, b, axes=2)", a=real(2, 3, 4), b=real(3, 4, 2)),
                        S("np.tensordot(a, b, axes=([0], [1]))", a=real(3, 2), b=real(4, 3)),
                        S("np.tensordot(a, b, (0, -1))", a=real(3, 2), b=real(4, 3))],
    "numpy.einsum": [S("np.einsum('ij,jk->ik', a, b)", a=real(3, 4), b=real(4, 2)),
                     S("np.einsum('ii->', a)", a=real(3, 3)),
                     S("np.einsum('ij->j', a)", a=real(3, 4)),
                     S("np.einsum('bij,bjk->bik', a, b)", a=real(2, 3, 4), b=real(2, 4, 2)),
                     S("np.einsum('i,i->', u, v)", u=real(4), v=real(4)),
                     S("np.einsum('ij,j->i', a, v)", a=real(3, 4), v=real(4)),
                     S("np.einsum('ii->i', a)", a=real(3, 3)),
                     S("np.einsum('...ij,...jk->...ik', a, b)", a=real(2, 1, 3, 4), b=real(3, 4, 2)),
                     S("np.einsum('ijk,kj,i->', a, b, u)", a=real(2, 3, 4), b=real(4, 3), u=real(2))],
    "numpy.trace": [S("np.trace(a)", a=real(3, 3)), S("np.trace(a, offset=1)", a=real(3, 4)),
                    S("a.trace()", a=real(4, 4))],
    "numpy.diag": [S("np.diag(v)", v=real(3)), S("np.diag(a)", a=real(3, 3)), S("np.diag(a, k=1)", a=real(3, 4)),
                   S("np.diag(v, k=-1)", v=real(3))],
    "numpy.diagonal": [S("np.diagonal(a)", a=real(3, 4)),
                       S("np.diagonal(a, offset=1, axis1=1, axis2=2)", a=real(2, 3, 4)),
                       S("a.diagonal()", a=real(3, 3)), S("np.diagonal(a, -1, 2, 0)", a=real(3, 2, 4))],
    # ---- shapes and copies ------------------------------------------------------------------
    "numpy.transpose": [S("np.transpose(a)", a=real(3, 4)), S("np.transpose(a, (1, 2, 0))", a=real(2, 3, 4)),
                        S("a.T", a=real(3, 4)), S("a.transpose(0, 2, 1)", a=real(2, 3, 4))],
    "numpy.reshape": [S("np.reshape(a, (4, 3))", a=real(3, 4)), S("a.reshape(2, -1)", a=real(3, 4)),
                      S("np.reshape(a, -1)", a=real(2, 3)), S("a.T.reshape(2, 6)", a=real(3, 4)),
                      S("np.transpose(a, (2, 0, 1)).reshape(4, 6)", a=real(2, 3, 4))],
    "numpy.ravel": [S("np.ravel(a)", a=real(3, 4)), S("a.ravel()", a=real(2, 3)), S("a.T.ravel()", a=real(3, 4))],
    "numpy.squeeze": [S("np.squeeze(a)", a=real(3, 1, 4), xfail=SQUEEZE_ALL),
                      S("np.squeeze(a, axis=0)", a=real(1, 3)), S("a.squeeze(axis=(0, 2))", a=real(1, 3, 1))],
    "numpy.expand_dims": [S("np.expand_dims(x, 0)", x=real(3, 4)), S("np.expand_dims(x, axis=-1)", x=real(3))],
    "numpy.swapaxes": [S("np.swapaxes(a, 0, 2)", a=real(2, 3, 4)), S("a.swapaxes(0, 1)", a=real(3, 4))],
    "numpy.moveaxis": [S("np.moveaxis(a, 0, -1)", a=real(2, 3, 4)),
                       S("np.moveaxis(a, [0, 1], [2, 0])", a=real(2, 3, 4))],
    "numpy.broadcast_to": [S("np.broadcast_to(x, (3, 4))", x=real(4)),
                           S("np.broadcast_to(x, (2, 3, 4))", x=real(3, 1))],
    "numpy.atleast_1d": [S("np.atleast_1d(a)", a=real()), S("np.atleast_1d(x) * 2.0", x=real(3))],
    "numpy.atleast_2d": [S("np.atleast_2d(x)", x=real(3)), S("np.atleast_2d(a)", a=real())],
    "numpy.atleast_3d": [S("np.atleast_3d(x)", x=real(3, 4)), S("np.atleast_3d(x)", x=real(3))],
    "numpy.concatenate": [S("np.concatenate((x, y))", x=real(3), y=real(2)),
                          S("np.concatenate([a, b], axis=1)", a=real(3, 2), b=real(3, 4)),
                          S("np.concatenate((x, x * y))", x=real(3), y=real(3))],
    "numpy.stack": [S("np.stack((x, y))", x=real(3), y=real(3)),
                    S("np.stack([a, b, a], axis=1)", a=real(2, 3), b=real(2, 3))],
    "numpy.hstack": [S("np.hstack((x, y))", x=real(3), y=real(2)), S("np.hstack([a, b])", a=real(3, 2), b=real(3, 1))],
    "numpy.vstack": [S("np.vstack((x, y))", x=real(3), y=real(3)), S("np.vstack([a, b])", a=real(2, 3), b=real(1, 3))],
    "numpy.split": [S("np.split(x, 3)[1]", x=real(6)), S("np.split(a, [1, 3], axis=1)[2]", a=real(3, 5)),
                    S("np.split(x, 2)[0] * np.split(x, 2)[1]", x=real(6))],
    "numpy.tile": [S("np.tile(x, 3)", x=real(2)),
                 S("np.tile(a, (2, 1))", a=real(2, 3)), S("np.tile(a, (2, 1, 2))", a=real(2, 3))],
    "numpy.repeat": [S("np.repeat(x, 3)", x=real(3)), S("np.repeat(a, 2, axis=1)", a=real(2, 3)),
                     S("a.repeat(3, axis=-1)", a=real(2, 2, 2))],
    "numpy.flip": [S("np.flip(x)", x=real(4)), S("np.flip(a, axis=1)", a=real(3, 4)),
                   S("np.flip(a, (0, -1))", a=real(2, 3, 4))],
    "numpy.roll": [S("np.roll(x, 2)", x=real(5)), S("np.roll(a, -1, axis=0)", a=real(3, 4)),
                   S("np.roll(a, -2, (0, 2))", a=real(2, 3, 4))],
    "numpy.triu": [S("np.triu(a)", a=real(4, 4)), S("np.triu(a, k=1)", a=real(3, 4))],
    "numpy.tril": [S("np.tril(a)", a=real(4, 4)), S("np.tril(a, k=-1)", a=real(3, 4))],
    "numpy.pad": [S("np.pad(x, 2)", x=real(3)),
                  S("np.pad(a, ((1, 2), (0, 1)))", a=real(2, 3)),
                  S("np.pad(x, (1, 0), constant_values=0.5)", x=real(3)), S("np.pad(a, (1,))", a=real(2, 3))],
    # ---- linear algebra ---------------------------------------------------------------------
    "numpy.linalg.norm": [S("np.linalg.norm(x)", x=real(4)), S("np.linalg.norm(a)", a=real(3, 4)),
                          S("np.linalg.norm(a, axis=1)", a=real(3, 4)), S("np.linalg.norm(x, ord=1)", x=real(4)),
                          S("np.linalg.norm(a, axis=0, keepdims=True)", a=real(3, 4))],
    "numpy.linalg.inv": [S("np.linalg.inv(a)", a=wellcond(3))],
    "numpy.linalg.det": [S("np.linalg.det(a)", a=wellcond(3)), S("np.linalg.det(a)", a=wellcond(2))],
    "numpy.linalg.slogdet": [S("np.linalg.slogdet(a)[1]", a=wellcond(3)),
                             S("np.linalg.slogdet(a)[0] * np.linalg.slogdet(a)[1]", a=wellcond(3))],
    "numpy.linalg.solve": [S("np.linalg.solve(a, b)", a=wellcond(3), b=real(3)),
                           S("np.linalg.solve(a, b)", a=wellcond(3), b=real(3, 2))],
    "numpy.linalg.cholesky": [S("np.linalg.cholesky(a @ a.T + 3.0 * np.eye(3))", a=real(3, 3))],
    # ---- composites: Python written in the primitives above (numbax.primitives.composites) ---------
    "numpy.diff": [S("np.diff(x)", x=real(5)), S("np.diff(a, n=2, axis=0)", a=real(4, 3)),
                   S("np.diff(a, 2, 1, prepend=1.5, append=b)", a=real(3, 4), b=real(3, 2)),
                   S("np.diff(a, axis=0, prepend=b)", a=real(3, 2), b=real(1, 2)), S("np.diff(x, n=0)", x=real(3))],
    "numpy.take": [S("np.take(a, np.array([2, 0, -1]))", a=real(3, 4)),
                   S("np.take(a, np.array([[0, 1], [2, 2]]), axis=1)", a=real(3, 4)),
                   S("np.take(a, 1, axis=0)", a=real(3, 4)), S("np.take(a, np.array([1, 1]), axis=-2)", a=real(3, 4))],
    "numpy.take_along_axis": [S("np.take_along_axis(a, np.array([[0, 3], [1, 1], [2, 0]]), axis=1)", a=real(3, 4)),
                              S("np.take_along_axis(a, np.array([[0, 2, 1, -1]]), axis=0)", a=real(3, 4)),
                              S("np.take_along_axis(x, np.array([3, 0, 0]), axis=0)", x=real(4))],
    "numpy.average": [S("np.average(a)", a=real(3, 4)),
                      S("np.average(a, axis=1, weights=np.array([0.5, 1.0, 2.0, 0.25]))", a=real(3, 4)),
                      S("np.average(a, axis=0, weights=w)", a=real(3, 4), w=pos(3, 4)),
                      S("np.average(a, 1, w, True)[0] * np.average(a, 1, w, True)[1]", a=real(2, 3), w=pos(3)),
                      S("np.average(a, axis=0, returned=True)[1] * np.average(a, axis=0)", a=real(2, 3))],
    "numpy.cross": [S("np.cross(x, y)", x=real(3), y=real(3)), S("np.cross(a, b)", a=real(2, 3), b=real(3))],
    "numpy.kron": [S("np.kron(x, y)", x=real(2), y=real(3)), S("np.kron(a, b)", a=real(2, 3), b=real(2, 2))],
    "numpy.deg2rad": [S("np.deg2rad(x)", x=wide(4)), S("np.radians(a)", a=wide(2, 3))],
    "numpy.rad2deg": [S("np.rad2deg(x)", x=real(4)), S("np.degrees(a)", a=real(2, 3))],
    "numpy.float_power": [S("np.float_power(x, 1.5)", x=pos(4)), S("np.float_power(x, y)", x=pos(3), y=real(3)),
                          S("np.float_power(2.0, x)", x=real(4))],
    "numpy.heaviside": [S("np.heaviside(x, 0.5) * x + np.heaviside(x, y) * y", x=real(4), y=real(4))],
    "numpy.nan_to_num": [S("np.nan_to_num(x) * x", x=real(4)), S("np.nan_to_num(np.log(x), neginf=-3.0)", x=pos(5))],
    "numpy.vander": [S("np.vander(x, 3)", x=real(4)), S("np.vander(x, increasing=True)", x=real(3))],
    "numpy.linalg.matrix_power": [S("np.linalg.matrix_power(a, 3)", a=real(3, 3)),
                                  S("np.linalg.matrix_power(a, -2)", a=wellcond(3)),
                                  S("np.linalg.matrix_power(a, 0) * a", a=real(2, 2))],
    # ---- NumPy 2's array-API functions, composites too (numbax.primitives.array_api) ------------------
    "numpy.vecdot": [S("np.vecdot(a, x)", a=real(2, 3), x=real(3)),
                     S("np.vecdot(a, b, axis=0)", a=real(3, 2), b=real(3, 2))],
    "numpy.linalg.vecdot": [S("np.linalg.vecdot(a, b, axis=-2)", a=real(3, 2), b=real(3, 1))],
    "numpy.matvec": [S("np.matvec(a, x)", a=real(2, 3), x=real(3)),
                     S("np.matvec(a, b)", a=real(2, 2, 3), b=real(2, 3))],
    "numpy.vecmat": [S("np.vecmat(x, a)", x=real(2), a=real(2, 3))],
    "numpy.matrix_transpose": [S("np.matrix_transpose(a) * b", a=real(2, 3, 4), b=real(4, 3)),
                               S("a.mT @ a", a=real(3, 2))],
    "numpy.linalg.matrix_transpose": [S("np.linalg.matrix_transpose(a) @ a", a=real(3, 2))],
    "numpy.astype": [S("np.astype(x * x, np.float64)", x=real(3))],
    "numpy.cumulative_sum": [S("np.cumulative_sum(x, include_initial=True)", x=real(4)),
                             S("np.cumulative_sum(a, axis=1)", a=real(2, 3))],
    "numpy.cumulative_prod": [S("np.cumulative_prod(a, axis=0, include_initial=True)", a=pos(3, 2))],
    "numpy.linalg.matmul": [S("np.linalg.matmul(a, b)", a=real(2, 3), b=real(3, 2))],
    "numpy.linalg.tensordot": [S("np.linalg.tensordot(a, b, axes=1)", a=real(2, 3), b=real(3, 2))],
    "numpy.linalg.outer": [S("np.linalg.outer(x, y)", x=real(3), y=real(2))],
    "numpy.linalg.cross": [S("np.linalg.cross(a, x)", a=real(2, 3), x=real(3)),
                           S("np.linalg.cross(a, b, axis=0)", a=real(3, 2), b=real(3, 2))],
    "numpy.linalg.diagonal": [S("np.linalg.diagonal(a, offset=1)", a=real(2, 3, 4))],
    "numpy.linalg.trace": [S("np.linalg.trace(a)", a=real(2, 3, 3))],
    "numpy.linalg.vector_norm": [S("np.linalg.vector_norm(a)", a=real(2, 3)),
                                 S("np.linalg.vector_norm(a, axis=1, ord=1)", a=real(2, 3)),
                                 S("np.linalg.vector_norm(a, axis=(0, 2), keepdims=True)", a=real(2, 3, 2)),
                                 S("np.linalg.vector_norm(a, axis=(-1, 0), ord=3)", a=real(2, 3, 2))],
    "numpy.linalg.matrix_norm": [S("np.linalg.matrix_norm(a)", a=real(3, 4)),
                                 S("np.linalg.matrix_norm(a, keepdims=True)", a=real(3, 4))],
    # ---- shape functions and statistics, composites too (shape_composites, statistics) -----------------
    "numpy.fliplr": [S("np.fliplr(a)", a=real(2, 3))],
    "numpy.flipud": [S("np.flipud(a)", a=real(3, 2))],
    "numpy.rot90": [S("np.rot90(a)", a=real(2, 3)), S("np.rot90(a, -1, axes=(2, 1))", a=real(2, 3, 2)),
                    S("np.rot90(a, 2)", a=real(2, 3))],
    "numpy.column_stack": [S("np.column_stack((x, a, y))", x=real(3), a=real(3, 2), y=real(3))],
    "numpy.dstack": [S("np.dstack((a, b))", a=real(2, 3), b=real(2, 3))],
    "numpy.append": [S("np.append(a, x)", a=real(2, 2), x=real(3)),
                     S("np.append(a, b, axis=0)", a=real(2, 3), b=real(1, 3))],
    "numpy.diagflat": [S("np.diagflat(a, 1)", a=real(2, 2))],
    "numpy.hsplit": [S("np.hsplit(a, 2)[1]", a=real(3, 4))],
    "numpy.vsplit": [S("np.vsplit(a, [1])[1]", a=real(3, 2))],
    "numpy.dsplit": [S("np.dsplit(a, 2)[0]", a=real(2, 2, 4))],
    "numpy.nanmean": [S("np.nanmean(np.where(a > 1.0, np.nan, a), axis=0)", a=real(4, 3)),
                      S("np.nanmean(a, keepdims=True)", a=real(2, 3))],
    "numpy.nanvar": [S("np.nanvar(np.where(a > 1.0, np.nan, a), axis=1, ddof=1)", a=real(3, 5))],
    "numpy.nanstd": [S("np.nanstd(np.where(a > 1.0, np.nan, a))", a=real(3, 4))],
    "numpy.nancumsum": [S("np.nancumsum(np.where(a > 1.0, np.nan, a), axis=1)", a=real(3, 4))],
    "numpy.nancumprod": [S("np.nancumprod(np.where(x > 1.5, np.nan, x))", x=pos(5))],
    "numpy.quantile": [S("np.quantile(a, 0.3)", a=real(3, 4)),
                       S("np.quantile(a, np.array([0.25, 0.9]), axis=1)", a=real(2, 5)),
                       S("np.quantile(a, 0.6, axis=0, keepdims=True)", a=real(4, 3))],
    "numpy.percentile": [S("np.percentile(x, 40.0)", x=real(6)),
                         S("np.percentile(a, np.array([10.0, 75.0]), axis=-1)", a=real(2, 5))],
    "numpy.cov": [S("np.cov(a)", a=real(3, 5)), S("np.cov(x, y, bias=True)", x=real(4), y=real(4)),
                  S("np.cov(a, rowvar=False, ddof=0)", a=real(5, 2)), S("np.cov(x) * x", x=real(4))],
    "numpy.corrcoef": [S("np.corrcoef(a)", a=real(3, 5)), S("np.corrcoef(x, y)", x=real(4), y=real(4))],
    "numpy.trapezoid": [S("np.trapezoid(a)", a=real(2, 4)), S("np.trapezoid(a, x, axis=0)", a=real(3, 2), x=real(3)),
                        S("np.trapezoid(a, dx=0.5, axis=0)", a=real(3, 2)),
                        S("np.trapezoid(a, b)", a=real(2, 3), b=real(2, 3))],
    "numpy.ediff1d": [S("np.ediff1d(a)", a=real(2, 3))],
    "numpy.correlate": [S("np.correlate(x, y)", x=real(5), y=real(2)),
                        S("np.correlate(x, y, 'full')", x=real(2), y=real(4)),
                        S("np.correlate(x, y, 'same')", x=real(3), y=real(4))],
    "numpy.select": [S("np.select([a > 1.0, a < 0.2], [a * 2.0, a * a], 0.5)", a=real(3, 4))],
    "numpy.linalg.multi_dot": [S("np.linalg.multi_dot([x, a, b])", x=real(2), a=real(2, 3), b=real(3, 2)),
                               S("np.linalg.multi_dot([a, b, a])", a=real(2, 3), b=real(3, 2))],
    # ---- scipy.special ----------------------------------------------------------------------
    "scipy.special.logsumexp": [S("scipy.special.logsumexp(x)", x=real(3, 4)),
                                S("scipy.special.logsumexp(x, axis=1)", x=real(3, 4)),
                                S("scipy.special.logsumexp(x, axis=0, keepdims=True)", x=real(3, 4)),
                                S("x - scipy.special.logsumexp(x)", x=real(4))],  # log-softmax
    "scipy.special.expit": [S("scipy.special.expit(x)", x=real(3, 4))],
    "scipy.special.erf": [S("scipy.special.erf(x)", x=real(3, 4))],
}
