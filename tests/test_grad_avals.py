"""The abstract-value analysis reverse mode reads: kinds and ndims, and ``None`` where it cannot know."""
import gast
import numpy as np

from numbax.ast_passes.analyses.avals import infer


def avals_of(source: str, **params):
    return infer(gast.parse(source).body[0], params)


def test_operators_reductions_and_indexing():
    got = avals_of(
        "def f(x, w, i):\n"
        "    h = x @ w\n"
        "    s = np.sum(h)\n"
        "    m = np.mean(h, axis=1)\n"
        "    k = np.mean(h, axis=0, keepdims=True)\n"
        "    r = x[i]\n"
        "    e = x[0, 1:]\n"
        "    c = h > 0\n"
        "    a = np.argmax(h)\n"
        "    return s\n",
        x=("f", 2), w=("f", 2), i=("i", 0))
    assert got["h"] == ("f", 2) and got["s"] == ("f", 0) and got["m"] == ("f", 1) and got["k"] == ("f", 2)
    assert got["r"] == ("f", 1) and got["e"] == ("f", 1) and got["c"] == ("b", 2) and got["a"] == ("i", 0)


def test_shapes_give_ints_and_unknown_calls_give_nothing():
    got = avals_of(
        "def f(x):\n"
        "    t = x.shape\n"
        "    n = t[0]\n"
        "    u = mystery(x)\n"
        "    v = u + 1.0\n"
        "    return n\n",
        x=("f", 2))
    assert got["n"] == ("i", 0)
    assert "t" not in got and "u" not in got and "v" not in got


def test_disagreeing_assignments_are_unknown():
    got = avals_of(
        "def f(x, c):\n"
        "    y = 0.0\n"
        "    if c:\n"
        "        y = x\n"
        "    return y\n",
        x=("f", 1), c=("b", 0))
    assert "y" not in got


def shapes_of(source: str, **ndims):
    from numbax.ast_passes.analyses.shapes import infer as infer_shapes

    fdef = gast.parse(source).body[0]
    return infer_shapes(fdef, ndims, infer(fdef, {p: ("f", n) for p, n in ndims.items()}))


def test_names_bound_other_than_by_a_plain_assignment():
    """A loop over a range binds integers; over an array (its rows), a tuple or ``enumerate``, and unpacking,
    bind what the analysis does not work out: unknown, not a stale or guessed value."""
    got = avals_of(
        "def f(x, idx, pair):\n"
        "    for i in range(3):\n"
        "        a = x[i]\n"
        "    for row in idx:\n"
        "        b = x[row]\n"
        "    for k, v in enumerate(x):\n"
        "        c = v\n"
        "    u = x[0]\n"
        "    u, w = pair\n"
        "    n = 1\n"
        "    n += 0.5\n"
        "    m = 1.0\n"
        "    m += 2\n"
        "    return a\n",
        x=("f", 1), idx=("i", 2), pair=("f", 1))
    assert got["i"] == ("i", 0) and got["a"] == ("f", 0)
    assert got.get("row") is None and got.get("b") is None
    assert got.get("k") is None and got.get("v") is None and got.get("c") is None
    assert got.get("u") is None and got.get("w") is None
    assert got.get("n") is None and got["m"] == ("f", 0)  # rebound as another kind: unknown


def test_symbolic_shapes_of_slices_scalars_reductions_and_products():
    got = shapes_of(
        "def f(x, a, b):\n"
        "    u = x[1:]\n"
        "    v = x[:-1] ** 2\n"
        "    w = 100.0 * (u - v)\n"
        "    s = np.sum(w)\n"
        "    p = a @ b\n"
        "    r = np.sum(p, axis=0)\n"
        "    t = a.T\n"
        "    q = a + b\n"
        "    return s\n",
        x=1, a=2, b=2)
    assert got["u"] == got["v"] == got["w"] == (("x.0", -1),)
    assert got["s"] == ()
    assert got["p"] == (("a.0", 0), ("b.1", 0)) and got["r"] == (("b.1", 0),)
    assert got["t"] == (("a.1", 0), ("a.0", 0))
    # broadcasting could make it either operand's shape or neither: its own symbols, shared by what follows
    assert got["q"] == (("q.0", 0), ("q.1", 0))


def test_a_shape_that_changes_in_a_loop_is_unknown():
    got = shapes_of(
        "def f(x, n):\n"
        "    y = x\n"
        "    z = x * 2.0\n"
        "    for i in range(n):\n"
        "        z = z + 1.0\n"
        "        y = y[1:]\n"
        "    return y\n",
        x=1, n=0)
    assert "y" not in got and got["z"] == (("x.0", 0),)


def test_shape_functions_and_reverse_mode_helpers_keep_kinds():
    """np.pad and np.broadcast_to, and the helpers of matmul's and sinc's derivatives, whose kinds a second
    derivative reads (an unknown one costs a run-time ``rt.check_real``)."""
    got = avals_of(
        "def f(x, g, m, n, z):\n"
        "    p = np.pad(x, 1)\n"
        "    q = np.pad(z, ((1, 2),))\n"
        "    b = np.broadcast_to(x, (n, 4))\n"
        "    c = np.broadcast_to(x, 4)\n"
        "    s = np.broadcast_to(x, m.shape)\n"
        "    ga = rt.matmul_grad_a(g, m, z)\n"
        "    gb = rt.matmul_grad_b(g, m, z)\n"
        "    w = rt.widen(n)\n"
        "    d = rt.dsinc(n)\n"
        "    return p\n",
        x=("f", 1), g=("f", 1), m=("f", 2), n=("i", 0), z=("c", 1))
    assert got["p"] == ("f", 1) and got["q"] == ("c", 1)
    assert got["b"] == ("f", 2) and got["c"] == ("f", 1) and "s" not in got
    assert got["ga"] == ("c", 2) and got["gb"] == ("f", 1)
    assert got["w"] == ("f", 0) and got["d"] == ("f", 0)


def padded_tiles(x):
    y = np.tanh(x) * x
    return np.sum(np.tile(np.pad(y, 1), 2) ** 2) + np.sum(np.broadcast_to(x, (2, 3)) @ np.ones((3, 2)))


def test_a_second_derivative_of_a_real_program_checks_no_dtype_when_it_runs():
    """Every kind in the Hessian's code is inferred, so it has no ``rt.check_real`` (the first derivative's
    helpers, ``rt.tile_grad``, ``rt.pad_grad``, ``rt.matmul_grad_a``, included); its value is central
    differences' of the gradient."""
    import numbax

    x = np.array([0.3, -0.7, 1.1])
    hessian = numbax.hessian(padded_tiles, backend="python")
    assert "check_real" not in numbax.source(hessian, x)
    grad = numbax.grad(padded_tiles, backend="python")
    eps = 1e-6
    columns = [(grad(x + eps * e) - grad(x - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(hessian(x), np.stack(columns, axis=1), rtol=1e-6, atol=1e-8)
