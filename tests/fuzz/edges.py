"""The edge sweep: ``jit`` of one NumPy call against NumPy itself, on edge operands.

``python -m tests.fuzz.edges --backend cpu -n 500 --seed 3`` draws ``n`` calls, each a template of one, two or
three operands (ufuncs, operators, reductions with ``axis``, statistics, shape functions, products, joins,
``np.where``/``np.clip``/``np.average``...) and operands from a pool that finds what the grammars' programs
rarely meet: shapes that broadcast against each other and against empty dimensions, NaN, infinities and
signed zeros, the ends of narrow integer ranges, bools, complex numbers, Python numbers (run-time arguments,
beyond narrow ranges too) and NumPy scalars. Each call is classified:

- ``wrong``: a value whose shape, dtype (a Python number standing for a 0-d result of its kind) or numbers
  differ from NumPy's (float32's tolerance where float32 takes part; signed zeros compared too);
- ``value``: numbax gave a value where NumPy raises;
- ``error``: numbax raised where NumPy gives a value, and not a ``NumbaxError`` at the call's line;
- ``refused``: numbax raised a ``NumbaxError`` at the call's line where NumPy gives a value (a construct or a
  dtype without a rule: counted, not a failure);
- ``right``: anything else (both raise; the same value).

Failures are printed with the call and its operands; the process exits 1 if there was any.
"""
from __future__ import annotations

import argparse
import random
import sys
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

import numbax

from . import loader
from .grammar import run_quietly

UNARY = ("np.sin({a})", "np.sqrt({a})", "np.log({a})", "np.abs({a})", "np.negative({a})", "np.sign({a})",
         "np.square({a})", "np.reciprocal({a})", "np.cbrt({a})", "np.rint({a})", "np.fix({a})", "np.round({a}, 1)",
         "np.floor({a})", "np.exp2({a})", "np.expm1({a})", "np.log1p({a})", "np.sinc({a})", "np.nan_to_num({a})",
         "np.isnan({a})", "np.isfinite({a})", "np.invert({a})", "np.logical_not({a})", "np.deg2rad({a})",
         "np.real({a})", "np.imag({a})", "np.conj({a})", "np.angle({a})", "np.arctanh({a})", "np.arccos({a})",
         "np.sum({a}, axis=-1)", "np.sum({a})", "np.prod({a}, axis=0)", "np.mean({a}, axis=-1)",
         "np.max({a}, axis=-1)", "np.min({a})", "np.nanmax({a}, axis=-1)", "np.nanmin({a})",
         "np.argmax({a}, axis=-1)", "np.argmin({a})", "np.ptp({a}, axis=-1)", "np.any({a}, axis=-1)", "np.all({a})",
         "np.count_nonzero({a}, axis=-1)", "np.median({a}, axis=-1)", "np.median({a})", "np.var({a}, axis=-1)",
         "np.std({a}, ddof=1)", "np.cumsum({a}, axis=-1)", "np.cumprod({a})", "np.sort({a}, axis=-1)",
         "np.argsort({a}, axis=-1)", "np.roll({a}, 1, axis=-1)", "np.roll({a}, -2)", "np.flip({a}, axis=-1)",
         "np.repeat({a}, 2, axis=-1)", "np.tile({a}, 2)", "np.diff({a}, axis=-1)", "np.cumsum({a})",
         "np.trace({a})", "np.diagonal({a})", "np.tril({a})", "np.triu({a}, 1)", "np.ravel({a})",
         "np.transpose({a})", "np.squeeze({a})", "np.expand_dims({a}, 0)", "np.atleast_2d({a})",
         "np.linalg.norm({a})", "np.linalg.norm({a}, axis=-1)", "np.linalg.norm({a}, ord=1, axis=-1)",
         "np.linalg.norm({a}, np.inf)", "{a}.astype(np.int8)", "{a}.astype(np.float32)", "{a}.astype(np.bool_)",
         "np.copy({a})", "{a}.T", "{a} ** 2", "{a} ** 0.5", "-{a}", "~{a}", "abs({a})", "{a} // 2", "{a} % 3",
         "{a} / 0", "{a} * True", "np.pad({a}, 1)", "np.nonzero({a})", "np.argwhere({a})",
         "{a}.sum(axis=0, keepdims=True)", "np.mean({a}, axis=0, keepdims=True)", "np.max({a}, axis=0, keepdims=True)",
         "{a}.var(ddof=1)", "np.average({a}, axis=-1)",
         "np.interp({a}, np.array([0.0, 1.0, 2.0]), np.array([1.0, -1.0, 3.0]))", "np.heaviside({a}, 0.5)",
         "np.clip({a}, -1, 1)", "np.clip({a}, None, 0.5)", "np.where({a})", "np.take({a}, 0)", "np.vander({a}, 3)",
         "np.polyval(np.array([1.0, -2.0, 0.5]), {a})", "np.float_power({a}, 2)", "np.power({a}, 3)",
         "np.power({a}, -1)", "np.power(2, {a})", "{a} << 1", "{a} >> 1", "{a} & 3")
BINARY = ("{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / {b}", "{a} // {b}", "{a} % {b}", "{a} ** {b}",
          "np.maximum({a}, {b})", "np.minimum({a}, {b})", "np.fmax({a}, {b})", "np.fmin({a}, {b})",
          "np.arctan2({a}, {b})", "np.hypot({a}, {b})", "np.logaddexp({a}, {b})", "np.logaddexp2({a}, {b})",
          "np.power({a}, {b})", "np.float_power({a}, {b})", "np.fmod({a}, {b})", "np.mod({a}, {b})",
          "np.floor_divide({a}, {b})", "np.heaviside({a}, {b})", "np.isclose({a}, {b})", "np.allclose({a}, {b})",
          "np.array_equal({a}, {b})", "np.array_equiv({a}, {b})", "np.logical_and({a}, {b})",
          "np.logical_xor({a}, {b})", "{a} & {b}", "{a} | {b}", "{a} ^ {b}", "{a} < {b}", "{a} == {b}",
          "{a} >= {b}", "np.dot({a}, {b})", "np.matmul({a}, {b})", "{a} @ {b}", "np.inner({a}, {b})",
          "np.outer({a}, {b})", "np.vdot({a}, {b})", "np.kron({a}, {b})", "np.convolve({a}, {b})",
          "np.tensordot({a}, {b}, axes=1)", "np.concatenate([{a}, {b}])", "np.concatenate([{a}, {b}], axis=-1)",
          "np.stack([{a}, {b}])", "np.hstack([{a}, {b}])", "np.vstack([{a}, {b}])", "np.where({a} > 0, {a}, {b})",
          "np.where({a}, {b}, 0)", "np.clip({a}, {b}, 2)", "np.clip({a}, -1, {b})", "np.average({a}, weights={b})",
          "np.average({a}, axis=-1, weights={b})", "np.broadcast_to({a}, np.shape({a} + {b}))",
          "np.searchsorted(np.sort(np.ravel({a})), {b})", "np.take({a}, {b})", "np.cross({a}, {b})",
          "np.einsum('ij,j->i', {a}, {b})", "np.einsum('...,...->...', {a}, {b})", "np.true_divide({a}, {b})",
          "np.divide({a}, {b})", "np.subtract({a}, {b})", "np.sum({a} * {b}, axis=-1)", "{a}[{b}]",
          "np.take_along_axis({a}, {b}, axis=-1)", "np.linalg.norm({a} - {b})", "np.interp({a}, {b}, {b})",
          "np.copysign({a}, {b})")
TERNARY = ("np.where({a}, {b}, {c})", "np.clip({a}, {b}, {c})", "{a} * {b} + {c}", "np.where({a} > {b}, {b}, {c})",
           "np.einsum('i,i,i->', {a}, {b}, {c})", "np.stack([{a}, {b}, {c}], axis=-1)")
SHAPES = ((), (3,), (1, 3), (2, 3), (2, 1), (0,), (2, 0), (1, 0), (3, 3), (2, 1, 3), (1,), (4,))
DTYPES = (np.float64, np.float64, np.float32, np.int64, np.int8, np.uint8, np.bool_, np.complex128, np.int32)
SPECIALS = (np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 1e300, 5e-324)
PYTHON_NUMBERS = (0, 1, -1, 2, 3, 300, -129, 2 ** 40, 0.5, -0.0, float("nan"), float("inf"), True, 1.5, 1j, 2.0)
KINDS = ("right", "refused", "wrong", "value", "error")


@dataclass
class Call:
    """One drawn call: its expression over the operands ``a``, ``b``, ``c`` and their values."""

    text: str
    operands: List[Any]

    def describe(self) -> str:
        parts = []
        for name, value in zip("abc", self.operands):
            kind = f"{value.dtype.name}{value.shape}" if isinstance(value, np.ndarray) else type(value).__name__
            parts.append(f"{name}: {kind} = {np.array2string(np.asarray(value), threshold=8)}")
        return f"{self.text}  with  " + "; ".join(parts)


def _array(rng: random.Random, shape: tuple, dtype) -> np.ndarray:
    n, kind = int(np.prod(shape)), np.dtype(dtype).kind
    if kind in "fc":
        values = np.array([rng.choice(SPECIALS) if rng.random() < 0.3 else rng.gauss(0.0, 2.0) for _ in range(n)])
        if kind == "c":
            values = values + 1j * np.array([rng.choice(SPECIALS) if rng.random() < 0.2 else rng.gauss(0.0, 1.0)
                                             for _ in range(n)])
    elif kind == "b":
        values = np.array([rng.random() < 0.5 for _ in range(n)])
    else:
        info = np.iinfo(dtype)
        ends = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, 3]
        values = np.array([rng.choice(ends) if rng.random() < 0.3 else rng.randint(max(info.min, -5), min(info.max, 5))
                           for _ in range(n)])
    with np.errstate(all="ignore"):
        return values.reshape(shape).astype(dtype)


def operand(rng: random.Random) -> Any:
    """A Python number, a NumPy scalar or an array of an edge shape, dtype and values."""
    if rng.random() < 0.15:
        return rng.choice(PYTHON_NUMBERS)
    shape, dtype = rng.choice(SHAPES), rng.choice(DTYPES)
    with np.errstate(all="ignore"):  # inf * 1j
        array = _array(rng, shape, dtype)
    return array[()] if shape == () and rng.random() < 0.5 else array


def draw(rng: random.Random) -> Call:
    """One call: a template of one to three operands, and its operands."""
    arity = rng.choice((1, 1, 2, 2, 2, 3))
    template = rng.choice({1: UNARY, 2: BINARY, 3: TERNARY}[arity])
    return Call(template.format(a="a", b="b", c="c"), [operand(rng) for _ in range(arity)])


def _fresh(operands: List[Any]) -> List[Any]:
    return [np.copy(a) if isinstance(a, np.ndarray) else a for a in operands]


def difference(got: Any, want: Any) -> Optional[str]:
    """None where ``got`` is NumPy's ``want``, else what differs."""
    if isinstance(want, tuple):
        if not isinstance(got, tuple) or len(got) != len(want):
            return "structure"
        return next((d for d in map(difference, got, want) if d), None)
    g, w = np.asarray(got), np.asarray(want)
    if g.shape != w.shape:
        return f"shape {g.shape}, NumPy's {w.shape}"
    scalar = isinstance(got, (bool, int, float, complex)) and g.dtype.kind == w.dtype.kind
    if g.dtype != w.dtype and not scalar:
        return f"dtype {g.dtype}, NumPy's {w.dtype}"
    if w.dtype.kind in "biu":
        return None if np.array_equal(g, w) else "values"
    tolerance = 2e-6 if np.float32 in (w.dtype, g.dtype) or np.complex64 in (w.dtype, g.dtype) else 1e-12
    if not np.allclose(g, w, rtol=tolerance, atol=tolerance * 1e-3, equal_nan=True):
        return "values"
    if w.dtype.kind == "f" and not np.array_equal(np.signbit(g[g == 0]), np.signbit(w[w == 0])):
        return "signed zeros"
    return None


def classify(call: Call, backend: str) -> tuple:
    """``(kind, detail)`` of ``call`` under ``jit`` on ``backend`` against NumPy."""
    module = loader.load(f"def f({', '.join('abc'[:len(call.operands)])}):\n    return {call.text}\n")
    try:
        try:
            want, numpy_error = run_quietly(lambda: module.f(*_fresh(call.operands))), None
        except Exception as error:  # noqa: BLE001 - NumPy's own error is the reference
            want, numpy_error = None, error
        try:
            got, error = run_quietly(lambda: numbax.jit(module.f, backend=backend)(*call.operands)), None
        except Exception as raised:  # noqa: BLE001 - every exception is classified
            got, error = None, raised
    finally:
        loader.unload(module)
    if numpy_error is None and error is None:
        wrong = difference(got, want)
        return ("wrong", f"{wrong}: numbax {got!r}, NumPy {want!r}") if wrong else ("right", "")
    if numpy_error is None:
        at_line = isinstance(error, numbax.NumbaxError) and module.__file__.rsplit("/", 1)[-1] in str(error) and \
            not isinstance(error, numbax.errors.NumbaxInternalError)
        return ("refused" if at_line else "error"), f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    if error is None:
        return "value", f"NumPy raised {type(numpy_error).__name__}: {numpy_error}; numbax gave {got!r}"
    return "right", ""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="python", choices=("python", "cpu", "gpu"))
    parser.add_argument("-n", type=int, default=500, help="calls to draw")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng, counts = random.Random(args.seed), dict.fromkeys(KINDS, 0)
    for _ in range(args.n):
        call = draw(rng)
        kind, detail = classify(call, args.backend)
        counts[kind] += 1
        if kind in ("wrong", "value", "error"):
            print(f"{kind.upper()}: {call.describe()}\n    {detail}", flush=True)
    counted = ", ".join(f"{k} {v}" for k, v in counts.items())
    print(f"SUMMARY {counted} (backend={args.backend}, seed={args.seed})")
    return 1 if counts["wrong"] + counts["value"] + counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
