"""The scalarize pass: small arrays of a known length as one number per element, meaning the same.

Golden: an RK2 step over a state of two numbers, its loop carrying the state checked before it.
Meaning: snippets built to tempt a wrong rewrite (an array written through a view or a copy, a
definition that reads the array it replaces, a carried array whose length the loop changes, a loop
that may not run, an index out of range) return, or raise, what the original does, both run by
Python on NumPy. Programs: generated vector fields integrated in loops compile to numbers (no
array in the loop) and give NumPy's bits exactly; their Jacobians (both modes), gradients and
second derivatives (forward over forward, reverse over forward) agree with JAX in float64, ``vmap``
with stacking. Refusal: a loop that carries an array of another length than its body makes raises at
the loop's line. float32 code keeps its arrays.
"""
import os
import random
import sys
import textwrap

import gast
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import numbax
from numbax import runtime as rt
from numbax.ast_passes import anno
from numbax.ast_passes.optimizations import scalarize
from numbax.ast_passes.unparse import unparse
from numbax.errors import NumbaxShapeError
from numbax.generated_source import source_for
from numbax.origin import Origin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz import loader  # noqa: E402
from grad_corpus.oracles import jit_or_eager  # noqa: E402

jax.config.update("jax_enable_x64", True)


def _pass(source: str, avals):
    return scalarize.transform(_with_loop_origin(gast.parse(textwrap.dedent(source)).body[0]), avals)


def _run(fdef, *args):
    namespace = {"np": np, "rt": rt}
    exec(compile(unparse(gast.Module(body=[fdef], type_ignores=[])), "<scalarized>", "exec"), namespace)
    return namespace[fdef.name](*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])


def _outcome(fdef, *args):
    try:
        return _run(fdef, *args)
    except (IndexError, ValueError) as error:
        return type(error)


GOLDEN_INPUT = """
def f(p, z0):
    z = z0
    for i in range(0, 10):
        rt.check_index(z, 0, 0, 'f.py:3:4')
        x = z[0]
        rt.check_index(z, 1, 0, 'f.py:3:9')
        y = z[1]
        k1 = np.stack((p * x - x * y, x * y - y))
        t = 0.05 * k1
        rt.check_broadcast(z, t, 'f.py:5:8')
        z = z + t
    return z
"""

GOLDEN_OUTPUT = """
def f(p, z0):
    z = z0
    rt.check_carried(z, 2, 'f.py:1:0')
    z_at0 = z[0]
    z_at1 = z[1]
    for i in range(0, 10):
        x = z_at0
        y = z_at1
        k1_at0 = p * x - x * y
        k1_at1 = x * y - y
        t_at0 = 0.05 * k1_at0
        t_at1 = 0.05 * k1_at1
        z_at0_next = z_at0 + t_at0
        z_at1_next = z_at1 + t_at1
        z_at0 = z_at0_next
        z_at1 = z_at1_next
    z_stack = rt.stack((z_at0, z_at1))
    return z_stack
"""


def _with_loop_origin(fdef):
    """``fdef`` with its loops at a user's line (``f.py:1``), where a check before them points."""
    for loop in (n for n in gast.walk(fdef) if isinstance(n, (gast.For, gast.While))):
        anno.setanno(loop, anno.Key.ORIGIN, Origin("f.py", 1, 0, "for i in range(10):"))
    return fdef


def test_golden_state_of_two_numbers():
    fdef = _with_loop_origin(gast.parse(textwrap.dedent(GOLDEN_INPUT)).body[0])
    out, changed = scalarize.transform(fdef, {"p": ("f", 0), "z0": ("f", 1)})
    assert changed
    assert unparse(out).strip() == textwrap.dedent(GOLDEN_OUTPUT).strip()
    again, changed_again = scalarize.transform(out, {"p": ("f", 0), "z0": ("f", 1)})
    assert not changed_again


def test_golden_means_the_same_and_refuses_another_length():
    avals = {"p": ("f", 0), "z0": ("f", 1)}
    original = gast.parse(textwrap.dedent(GOLDEN_INPUT)).body[0]
    scalarized, _ = scalarize.transform(_with_loop_origin(gast.parse(textwrap.dedent(GOLDEN_INPUT)).body[0]), avals)
    z0 = np.array([1.5, 0.25])
    np.testing.assert_array_equal(_run(scalarized, 0.7, z0), _run(original, 0.7, z0))
    for wrong in (np.array([1.5]), np.array([1.0, 2.0, 3.0])):
        with pytest.raises(NumbaxShapeError, match=r"f\.py:1: the loop carries in an array of shape \(\d,\)"):
            _run(scalarized, 0.7, wrong)


# (source, parameters' avals, arguments): each returns or raises the same with the pass as without
TEMPTING = {
    "written_through_a_copy": ("""
        def f(a, b):
            k = np.stack((a, b))
            w = k
            w[0] = 5.0
            return k * 2.0
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.0, 2.0)),
    "written_through_a_view": ("""
        def f(a, b):
            k = np.stack((a, b))
            w = k[0:1]
            w[0] = 5.0
            return k + 1.0
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.0, 2.0)),
    "filled_by_a_method": ("""
        def f(a, b):
            k = np.stack((a, b))
            w = k * 1.0
            k.fill(3.0)
            return k[0] * 2.0 + w[1], k + w
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.0, 2.0)),
    "what_it_is_a_view_of_written": ("""
        def f(z0, n):
            z = z0
            for i in range(n):
                z0[1] = 7.0
                z = z * 0.5 + np.stack((1.0, z[1]))
            return z
        """, {"z0": ("f", 1), "n": ("i", 0)}, (np.array([3.0, 4.0]), 3)),
    "appended_then_written": ("""
        def f(a, b):
            tape = []
            k = np.stack((a, b))
            tape.append(k)
            u = tape.pop()
            u[1] = 7.0
            return k * 3.0
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.0, 2.0)),
    "reads_itself": ("""
        def f(a, b):
            v = np.stack((a, b))
            v = v * v[0] + v[1]
            v = -v / v[1]
            return v
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "negative_index": ("""
        def f(a, b):
            v = np.array([a, b, a * b])
            return v[-1] + v[-3]
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "index_out_of_range_still_raises": ("""
        def f(a, b):
            v = np.stack((a, b))
            rt.check_index(v, 2, 0, 'f.py:3:4')
            return v[0]
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "carried_by_a_loop_of_run_time_length": ("""
        def f(z0, n):
            z = z0
            for i in range(n):
                z = z * 0.5 + np.stack((1.0, z[0]))
            return z
        """, {"z0": ("f", 1), "n": ("i", 0)}, (np.array([3.0, 4.0]), 7)),
    "carried_by_a_loop_that_does_not_run": ("""
        def f(z0, n):
            z = z0
            for i in range(n):
                z = z * 0.5 + np.stack((1.0, z[0]))
            return z
        """, {"z0": ("f", 1), "n": ("i", 0)}, (np.array([3.0, 4.0]), 0)),
    "carried_while_its_element_is_small": ("""
        def f(z0):
            z = z0
            while z[0] < 10.0:
                z = z * 1.5 + np.stack((1.0, z[1]))
            return z
        """, {"z0": ("f", 1)}, (np.array([1.0, 0.25]),)),
    "carried_while_its_sum_is_small": ("""
        def f(z0):
            z = z0
            while np.sum(z) < 10.0:
                z = z * 1.5 + np.stack((1.0, z[1]))
            return z
        """, {"z0": ("f", 1)}, (np.array([1.0, 0.25]),)),
    "carried_in_one_branch_only": ("""
        def f(z0, n):
            z = z0
            for i in range(n):
                if i > 2:
                    z = z + np.stack((1.0, 2.0))
            return z
        """, {"z0": ("f", 1), "n": ("i", 0)}, (np.array([3.0]), 5)),
    "read_by_a_call_in_a_loop": ("""
        def f(a, b, n):
            v = np.stack((a, b))
            s = 0.0
            for i in range(n):
                s = s + np.sum(v * i)
            return s
        """, {"a": ("f", 0), "b": ("f", 0), "n": ("i", 0)}, (1.5, 2.5, 4)),
    "branches": ("""
        def f(a, b):
            if a > b:
                v = np.stack((a, b))
            else:
                v = np.stack((b, a))
            w = v * 2.0
            if w[0] > 3.0:
                w = w - 1.0
            return w[1], np.sum(w)
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, 2.5)),
    "lengths_disagree": ("""
        def f(a, b, c):
            v = np.stack((a, b))
            v = np.stack((a, b, c))
            return v + 1.0
        """, {"a": ("f", 0), "b": ("f", 0), "c": ("f", 0)}, (1.0, 2.0, 3.0)),
    "stores_into_zeros_just_made": ("""
        def f(a, b):
            v = np.stack((a, b))
            d = rt.zeros_like(v)
            d[1] += a * b
            s = d[1] * 2.0
            d[0] -= s
            return d * v, rt.unbroadcast(d, v) + rt.copy_of(v)
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "store_after_a_copy_of_the_name": ("""
        def f(a, b):
            d = np.stack((a, b))
            e = d
            d[0] += 1.0
            return e * 1.0, d[0]
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "store_after_a_view": ("""
        def f(a, b):
            d = np.stack((a, b))
            w = d[0:1]
            d[0] += 1.0
            return w * 1.0, d[1]
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "items_of_a_tape": ("""
        def f(a, b):
            t = []
            s = np.stack((0.0, 0.0))
            for i in range(3):
                z = np.stack((a * i, b - i))
                t.append(z)
            for i in range(3):
                y = t.pop()
                g = rt.zeros_like(y)
                g[1] += y[0]
                s = s + g * y
            return s
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.5, -2.0)),
    "rows_of_a_table": ("""
        def f(a, b, i):
            table = np.zeros((3, 2))
            rt.save_row(table, i, np.stack((a, b)))
            r = table[i]
            g = rt.zeros_like(r)
            g[0] += a
            return rt.unbroadcast(g * 3.0, r), r
        """, {"a": ("f", 0), "b": ("f", 0), "i": ("i", 0)}, (1.5, -2.0, 1)),
    "integer_items_stay_an_array": ("""
        def f(i, j):
            v = np.stack((i, j))
            return v * v
        """, {"i": ("i", 0), "j": ("i", 0)}, (2**40, 3)),
    "power_stays_numpy": ("""
        def f(a, b):
            v = np.stack((a, b))
            return v ** 2.0, v // 0.5
        """, {"a": ("f", 0), "b": ("f", 0)}, (1.1, -2.3)),
}


@pytest.mark.parametrize("case", sorted(TEMPTING))
def test_tempting_snippets_mean_the_same(case):
    source, avals, args = TEMPTING[case]
    original = gast.parse(textwrap.dedent(source)).body[0]
    scalarized, _ = _pass(source, avals)
    expected, got = _outcome(original, *args), _outcome(scalarized, *args)
    if isinstance(expected, type):
        assert got is expected
    else:
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,),
                        got if isinstance(got, tuple) else (got,)):
            np.testing.assert_array_equal(g, e)
            assert np.asarray(g).dtype == np.asarray(e).dtype


def test_loops_that_scalarize_and_those_that_do_not():
    for case in ("carried_by_a_loop_of_run_time_length", "carried_while_its_element_is_small"):
        assert "rt.check_carried(z, 2, 'f.py:1:0')" in unparse(_pass(*TEMPTING[case][:2])[0]), case
    for case in ("carried_while_its_sum_is_small", "carried_in_one_branch_only"):
        assert "check_carried" not in unparse(_pass(*TEMPTING[case][:2])[0]), case


@pytest.mark.parametrize("n", [0, 3])
def test_a_carried_array_of_another_length_is_refused_whether_or_not_the_loop_runs(n):
    """Where NumPy would broadcast a length-1 array to 2 in the first step (or, the loop not running, return
    it), the check before the loop refuses: a loop keeps the shapes it carries, as JAX's must at tracing."""
    source, avals, _ = TEMPTING["carried_by_a_loop_of_run_time_length"]
    with pytest.raises(NumbaxShapeError, match=r"f\.py:1: the loop carries in an array of shape \(1,\)"):
        _run(_pass(source, avals)[0], np.array([3.0]), n)


def test_reverse_modes_forms_are_numbers():
    """A store into zeros just made, an item of a tape of one length, a row of a table of constant width
    (read for its length only, as ``rt.unbroadcast``'s second argument): numbers, no tape left."""
    for case, absent in (("stores_into_zeros_just_made", "zeros_like"), ("items_of_a_tape", "zeros_like"),
                         ("rows_of_a_table", "zeros_like")):
        source, avals, _ = TEMPTING[case]
        out = unparse(_pass(source, avals)[0])
        assert absent not in out and "_at1" in out, case
    for case in ("store_after_a_copy_of_the_name", "store_after_a_view"):
        assert "_at0" not in unparse(_pass(*TEMPTING[case][:2])[0]), case


def test_arrays_written_into_are_left_alone():
    for case in ("written_through_a_copy", "written_through_a_view", "appended_then_written", "filled_by_a_method",
                 "what_it_is_a_view_of_written"):
        source, avals, _ = TEMPTING[case]
        assert "_at0" not in unparse(_pass(source, avals)[0]), case


# ---- generated programs: a vector field of a few numbers integrated in a loop -------------------------------

STEPS = 6


def _expression(rng: random.Random, states: int, params: int, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        choice = rng.random()
        if choice < 0.45:
            return f"z[{rng.randrange(states)}]"
        if choice < 0.8:
            return f"p[{rng.randrange(params)}]"
        return repr(round(rng.uniform(-2.0, 2.0), 3))
    left = _expression(rng, states, params, depth - 1)
    right = _expression(rng, states, params, depth - 1)
    op = rng.choice(["+", "-", "*", "/"])
    if op == "/":
        return f"({left}) / (1.5 + ({right}) * ({right}))"
    return f"({left}) {op} ({right})"


def _program(seed: int) -> str:
    rng = random.Random(seed)
    states, params = rng.choice([2, 3]), rng.choice([2, 3, 4])
    items = ", ".join(f"0.3 * ({_expression(rng, states, params, 3)})" for _ in range(states))
    make = rng.choice(["np.stack(({items}))", "np.array([{items}])"]).format(items=items)
    step = rng.choice(["z + 0.05 * (k1 + k2)", "z + 0.1 * k2 - 0.02 * k1", "0.5 * (z + (z + 0.1 * k1))"])
    return textwrap.dedent(f"""
        def field(z, p):
            return {make}


        def solve(p, z0):
            z = z0
            for i in range({STEPS}):
                k1 = field(z, p)
                k2 = field(z + 0.05 * k1, p)
                z = {step}
            return z


        def loss(p, z0):
            z = solve(p, z0)
            return np.sum(z * z) + z[0] * p[0]
        """)


SEEDS = [3, 11, 29]


def _modules(seed: int):
    source = _program(seed)
    module = loader.load(source)
    with_jax: dict = {"np": jnp}
    exec(compile(source, f"<jax {seed}>", "exec"), with_jax)
    return module, with_jax


def _inputs(seed: int, module):
    rng = np.random.default_rng(seed)
    states = len(module.field(np.ones(4), np.ones(4)))
    return rng.uniform(0.5, 1.5, 4), rng.uniform(-1.0, 1.0, states)


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_programs_are_numbers_and_numpys_bits(seed):
    module, _ = _modules(seed)
    p, z0 = _inputs(seed, module)
    lines = source_for(module.solve, (p, z0)).splitlines()
    start = next(k for k, line in enumerate(lines) if line.strip().startswith("for "))
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = [line for line in lines[start + 1:] if len(line) - len(line.lstrip()) > indent and
            not line.strip().startswith("#")]
    assert any("rt.check_carried(" in line for line in lines[:start])
    assert any("_at0" in line for line in body) and not any("stack" in line or "np." in line for line in body)
    np.testing.assert_array_equal(numbax.jit(module.solve)(p, z0), module.solve(p, z0))


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_programs_derivatives_agree_with_jax(seed):
    module, with_jax = _modules(seed)
    p, z0 = _inputs(seed, module)
    for ours, theirs in ((numbax.jacfwd(module.solve), jit_or_eager(jax.jacfwd(with_jax["solve"]))),
                         (numbax.jacrev(module.solve, argnums=1),
                          jit_or_eager(jax.jacrev(with_jax["solve"], argnums=1))),
                         (numbax.grad(module.loss), jit_or_eager(jax.grad(with_jax["loss"])))):
        np.testing.assert_allclose(ours(p, z0), theirs(p, z0), rtol=1e-10, atol=1e-12)
    batch = np.stack([z0, 0.5 * z0, -z0])
    np.testing.assert_array_equal(numbax.jit(numbax.vmap(module.solve, in_axes=(None, 0)))(p, batch),
                                  np.stack([module.solve(p, z) for z in batch]))


def test_second_derivatives_of_a_generated_program_agree_with_jax():
    """Forward over forward and reverse over forward (reverse mode of a loop carrying arrays of a length it does
    not know refuses a second derivative, scalarized or not)."""
    module, with_jax = _modules(SEEDS[0])
    p, z0 = _inputs(SEEDS[0], module)
    for ours, theirs in ((numbax.jacfwd(numbax.jacfwd(module.solve)),
                          jit_or_eager(jax.jacfwd(jax.jacfwd(with_jax["solve"])))),
                         (numbax.jacrev(numbax.jacfwd(module.solve)),
                          jit_or_eager(jax.jacrev(jax.jacfwd(with_jax["solve"]))))):
        np.testing.assert_allclose(ours(p, z0), theirs(p, z0), rtol=1e-10, atol=1e-12)


def test_a_loop_that_changes_the_carried_length_is_refused_at_its_line():
    module = loader.load(textwrap.dedent("""
        def drift(z0, a):
            z = z0
            for i in range(5):
                z = z + 0.1 * np.stack((a, -a))
            return z
        """))
    np.testing.assert_array_equal(numbax.jit(module.drift)(np.array([1.0, 2.0]), 0.5),
                                  module.drift(np.array([1.0, 2.0]), 0.5))
    with pytest.raises(NumbaxShapeError) as info:
        numbax.jit(module.drift)(np.array([1.0]), 0.5)
    lines = open(module.__file__).read().splitlines()
    loop_line = next(k + 1 for k, line in enumerate(lines) if line.strip().startswith("for i"))
    assert f"{os.path.basename(module.__file__)}:{loop_line}" in str(info.value)
    assert "carries in an array of shape (1,)" in str(info.value)
    assert "shape (2,)" in str(info.value)


def test_float32_code_keeps_its_arrays():
    module = loader.load(textwrap.dedent("""
        def step(z, a):
            k = np.stack((a * z[0], z[1] - a))
            return z + np.float32(0.5) * k
        """))
    z, a = np.array([1.0, 2.0], np.float32), np.float32(0.3)
    assert "_at0" not in source_for(module.step, (z, a))
    out = numbax.jit(module.step)(z, a)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, module.step(z, a))
