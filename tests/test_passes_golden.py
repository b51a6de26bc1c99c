"""Golden-source tests: each pass on a small input, the expected output written as a real function.

Every pass applied a second time to its own output changes nothing.
"""
import inspect
import textwrap

import gast
import numpy as np

from numbax.ast_passes import anf, inline, optimize
from numbax.ast_passes.optimizations import copy_propagation, dead_code, fold_temporaries
from numbax.ast_passes.parse import parse_function
from numbax.ast_passes.specialize import specialize_function
from numbax.ast_passes.specialize.values import AVal, Dyn
from numbax.ast_passes.unparse import unparse

F64_1D = AVal(np.dtype("float64"), 1)
F64_2D = AVal(np.dtype("float64"), 2)
F64_WEAK = AVal(np.dtype("float64"), 0, weak=True)  # a Python float argument


def leaf(aval=F64_2D):
    return Dyn(None, aval)


def code_of(fn, name=None) -> str:
    """The source of a golden function, renamed and without its decorators."""
    node = gast.parse(textwrap.dedent(inspect.getsource(fn))).body[0]
    node.name = name or node.name.replace("expected_", "")
    node.decorator_list = []
    return unparse(node)


def specialized(fn, bound, module=False):
    parsed = parse_function(fn)
    out = specialize_function(parsed.node, parsed.globals, bound, parsed.closure, key=fn.__code__)
    return out.module if module else out.module.body[-1]


def as_text(node) -> str:
    return unparse(node)


# -- specialize ------------------------------------------------------------------


def mlp(params, x):
    for w, b in params[:-1]:
        x = np.tanh(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def expected_mlp(params_0_0, params_0_1, params_1_0, params_1_1, params_2_0, params_2_1, x):
    w, b = (params_0_0, params_0_1)
    x = np.tanh(x @ w + b)
    w, b = (params_1_0, params_1_1)
    x = np.tanh(x @ w + b)
    w, b = (params_2_0, params_2_1)
    return x @ w + b


def test_specialize_unrolls_loops_over_containers():
    params = [(leaf(), leaf(F64_1D)) for _ in range(3)]
    assert as_text(specialized(mlp, {"params": params, "x": leaf()})) == code_of(expected_mlp)


def static_power(x, n, mode):
    if mode == "square":
        return x ** n
    return x


def expected_static_power(x):
    return x ** 2


def test_specialize_folds_static_values_and_prunes_branches():
    out = specialized(static_power, {"x": leaf(), "n": 2, "mode": "square"})
    assert as_text(out) == code_of(expected_static_power)


def by_ndim(x):
    if x.ndim == 1:
        return x.sum()
    return x.sum(axis=0)


def expected_by_ndim(x):
    return x.sum()


def test_specialize_reads_ndim_from_abstract_values():
    assert as_text(specialized(by_ndim, {"x": leaf(F64_1D)})) == code_of(expected_by_ndim)


def by_flags(x, scale, shift):
    if scale and x.ndim > 1:
        x = x * 2.0
    if shift or x.ndim == 0:
        return x + 1.0
    return x


def expected_by_flags(x):
    x = x * 2.0
    return x


def test_specialize_folds_boolean_operators_of_known_operands():
    out = specialized(by_flags, {"x": leaf(), "scale": True, "shift": False})
    assert as_text(out) == code_of(expected_by_flags)


def accumulate(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def expected_accumulate(x, n):
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def test_specialize_keeps_runtime_loops_and_materializes_carried_numbers():
    out = specialized(accumulate, {"x": leaf(F64_1D), "n": leaf(AVal(np.dtype("int64"), 0))})
    assert as_text(out) == code_of(expected_accumulate)


def test_specialize_is_idempotent():
    params = [(leaf(), leaf(F64_1D)) for _ in range(3)]
    once = specialized(mlp, {"params": params, "x": leaf()})
    namespace = {"np": np}
    exec(unparse(once), namespace)
    names = [a.id for a in once.args.args]
    parsed_again = gast.parse(unparse(once)).body[0]
    twice = specialize_function(parsed_again, namespace, {n: leaf() for n in names}).module.body[-1]
    assert as_text(twice) == as_text(once)


def stop_early(ws, x):
    for w in ws:
        x = np.tanh(x * w)
        if x.max() < 0.5:
            break
    return x


def expected_stop_early(ws_0, ws_1, ws_2, x):
    w = ws_0
    x = np.tanh(x * w)
    if x.max() < 0.5:
        go = False
    else:
        go = True
    if go:
        w = ws_1
        x = np.tanh(x * w)
        if x.max() < 0.5:
            go = False
    if go:
        w = ws_2
        x = np.tanh(x * w)
        if x.max() < 0.5:
            go = False
    return x


def test_specialize_unrolls_a_runtime_break_into_a_flag():
    out = specialized(stop_early, {"ws": [leaf(F64_1D) for _ in range(3)], "x": leaf(F64_1D)})
    assert as_text(out) == code_of(expected_stop_early)
    namespace = {"np": np}
    again = specialize_function(gast.parse(as_text(out)).body[0], namespace,
                                {a.id: leaf(F64_1D) for a in out.args.args}).module.body[-1]
    assert as_text(again) == as_text(out)


def skip_negative(ws, x):
    for w in ws:
        if w.sum() < 0:
            continue
        x = x + w
    return x


def expected_skip_negative(ws_0, ws_1, x):
    w = ws_0
    if w.sum() < 0:
        run = False
    else:
        run = True
    if run:
        x = x + w
    w = ws_1
    if w.sum() < 0:
        run = False
    else:
        run = True
    if run:
        x = x + w
    return x


def test_specialize_unrolls_a_runtime_continue_into_a_flag():
    out = specialized(skip_negative, {"ws": [leaf(F64_1D) for _ in range(2)], "x": leaf(F64_1D)})
    assert as_text(out) == code_of(expected_skip_negative)


def search(x, t):
    for i in range(x.shape[0]):
        if x[i] == t:
            found = i
            break
    else:
        found = -1
    return found


def expected_search(x, t):
    no_break = True
    found_assigned = False
    for i in range(x.shape[0]):
        if x[i] == t:
            found = i
            found_assigned = True
            no_break = False
            break
    if no_break:
        found = -1
        found_assigned_1 = True
    else:
        found_assigned_1 = found_assigned
    rt.check_bound(found_assigned_1, "cannot access local variable 'found' where it is not associated with a value",
                   'WHERE')
    return found


def test_specialize_lowers_for_else_to_a_flag():
    # `found` is assigned before each `break` and in the `else`; which flag says so is not known when
    # compiling (no_break is a run-time bool), so its read is checked as any maybe-assigned variable's
    out = specialized(search, {"x": leaf(F64_1D), "t": leaf(F64_WEAK)})
    where = f"{__file__}:{search.__code__.co_firstlineno + 7}:11"
    assert as_text(out).replace(repr(where), "'WHERE'") == code_of(expected_search)


def scaled(x, s, y):
    return x * 0.5 + s * x[0] - 2, y * 0.5


def expected_scaled(x, s, y):
    return (x * np.float32(0.5) + np.float32(s) * x[0] - 2, y * 0.5)


def test_specialize_keeps_python_numbers_weak_next_to_float32():
    out = specialized(scaled, {"x": leaf(AVal(np.dtype("float32"), 1)), "s": leaf(F64_WEAK), "y": leaf(F64_1D)})
    assert as_text(out) == code_of(expected_scaled)


# -- inline ----------------------------------------------------------------------


def dense(x, w, b):
    return np.tanh(x @ w + b)


def relu_or_neg(x):
    if x.sum() > 0:
        return np.maximum(x, 0.0)
    return -x


def two_layers(x, w, b):
    h = dense(x, w, b)
    return relu_or_neg(h)


def expected_two_layers(x, w, b):
    x_1 = x
    w_1 = w
    b_1 = b
    _t1 = np.tanh(x_1 @ w_1 + b_1)
    h = _t1
    x_2 = h
    if x_2.sum() > 0:
        _t2 = np.maximum(x_2, 0.0)
    else:
        _t2 = -x_2
    return _t2


def test_inline_renames_binds_parameters_and_absorbs_early_returns():
    module = specialized(two_layers, {"x": leaf(), "w": leaf(), "b": leaf(F64_1D)}, module=True)
    once = inline.transform(module)
    assert len(once.body) == 1
    assert as_text(once.body[0]) == code_of(expected_two_layers)
    assert as_text(inline.transform(once).body[0]) == as_text(once.body[0])


def first_over(x, t):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if x[i, j] > t:
                return i * x.shape[1] + j
    return -1


def flat_index(x):
    return first_over(x, 0.5)


def expected_flat_index(x):
    x_1 = x
    live = True
    for i in range(x_1.shape[0]):
        for j in range(x_1.shape[1]):
            if x_1[i, j] > 0.5:
                _t1 = i * x_1.shape[1] + j
                live = False
                break
        if not live:
            break
    if live:
        _t1 = -1
    return _t1


def test_inline_returns_from_loops_through_a_live_flag():
    once = inline.transform(specialized(flat_index, {"x": leaf()}, module=True))
    assert as_text(once.body[0]) == code_of(expected_flat_index)
    assert as_text(inline.transform(once).body[0]) == as_text(once.body[0])


# -- anf -------------------------------------------------------------------------


def nested(x, w, b, c):
    y = np.tanh(x @ w + b) if c > 0 else x
    return y.sum() * 2.0


def expected_nested(x, w, b, c):
    _t1 = c > 0
    if _t1:
        _t3 = x @ w
        _t4 = _t3 + b
        _t2 = np.tanh(_t4)
    else:
        _t2 = x
    y = _t2
    _t5 = y.sum()
    _t6 = _t5 * 2.0
    return _t6


def test_anf_one_operation_per_statement():
    fdef = gast.parse(textwrap.dedent(inspect.getsource(nested))).body[0]
    once = anf.transform(fdef)
    assert as_text(once) == code_of(expected_nested, "nested")
    assert as_text(anf.transform(once)) == as_text(once)


# -- optimizations ---------------------------------------------------------------


def copies(x, w):
    _t1 = x @ w
    y = _t1
    z = y
    unused = np.sin(x)
    return z


def expected_copies(x, w):
    z = x @ w
    return z


def test_copy_propagation_then_dead_code():
    fdef = gast.parse(textwrap.dedent(inspect.getsource(copies))).body[0]
    fdef, changed = copy_propagation.transform(fdef)
    assert changed
    fdef, changed = dead_code.transform(fdef)
    assert changed
    assert as_text(fdef) == code_of(expected_copies, "copies")
    assert copy_propagation.transform(fdef)[1] is False
    assert dead_code.transform(fdef)[1] is False


def expected_folded(x, w, b, c):
    if c > 0:
        _t2 = np.tanh(x @ w + b)
    else:
        _t2 = x
    y = _t2
    return y.sum() * 2.0


def test_fold_temporaries_restores_expressions():
    fdef = anf.transform(gast.parse(textwrap.dedent(inspect.getsource(nested))).body[0])
    fdef, changed = fold_temporaries.transform(fdef)
    assert changed
    assert as_text(fdef) == code_of(expected_folded, "nested")
    assert fold_temporaries.transform(fdef)[1] is False


def expected_optimized(x, w, b, c):
    if c > 0:
        y = np.tanh(x @ w + b)
    else:
        y = x
    return y.sum() * 2.0


def test_optimize_reaches_a_fixpoint():
    fdef = anf.transform(gast.parse(textwrap.dedent(inspect.getsource(nested))).body[0])
    module = optimize.transform(gast.Module(body=[fdef], type_ignores=[]))
    assert as_text(module.body[0]) == code_of(expected_optimized, "nested")
    again = optimize.transform(module)
    assert as_text(again.body[0]) == code_of(expected_optimized, "nested")
