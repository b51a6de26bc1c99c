"""Shape functions and contractions Numba lacks, as users write them: ``numbax.jit`` agrees with NumPy.

Each case is an expression over named inputs, written into a generated module as a real function
(numbax reads function source), compiled by ``numbax.jit`` on the cpu backend (where ``legalize``
sends it to ``numbax.runtime.arrays`` or ``.contractions``) and run on the python backend, and
compared with NumPy at several shapes, broadcasting and negative axes included. The adjoint helpers
(``rt.einsum_vjp``, ``rt.diagonal_grad``, ...) are checked against the vector-Jacobian product that
NumPy's own function defines, from Python and compiled.
"""
import importlib.util
import os
import re
import sys
import tempfile

import numba
import numpy as np
import pytest

import numbax
from numbax import runtime as rt

RNG = np.random.default_rng(0)


def real(*shape):
    return RNG.normal(size=shape)


def ints(*shape):
    return RNG.integers(-3, 4, size=shape)


# name -> (expression, inputs)
CASES = {
    "einsum_matmul": ("np.einsum('ij,jk->ik', a, b)", dict(a=real(3, 4), b=real(4, 2))),
    "einsum_implicit": ("np.einsum('ij, jk', a, b)", dict(a=real(3, 4), b=real(4, 2))),
    "einsum_trace": ("np.einsum('ii->', a)", dict(a=real(3, 3))),
    "einsum_diagonal": ("np.einsum('ii->i', a)", dict(a=real(4, 4))),
    "einsum_column_sums": ("np.einsum('ij->j', a)", dict(a=real(3, 4))),
    "einsum_batch": ("np.einsum('bij,bjk->bik', a, b)", dict(a=real(2, 3, 4), b=real(2, 4, 2))),
    "einsum_ellipsis_broadcast": ("np.einsum('...ij,...jk->...ik', a, b)", dict(a=real(2, 1, 3, 4), b=real(3, 4, 2))),
    "einsum_outer": ("np.einsum('i,j->ij', u, v)", dict(u=real(3), v=real(4))),
    "einsum_size_one_broadcast": ("np.einsum('ij,ij->ij', a, b)", dict(a=real(1, 3), b=real(2, 3))),
    "einsum_three_operands": ("np.einsum('ijk,kj,i->', a, b, u)", dict(a=real(2, 3, 4), b=real(4, 3), u=real(2))),
    "einsum_ints": ("np.einsum('ij,j->i', a, v)", dict(a=ints(3, 4), v=ints(4))),
    "inner_vectors": ("np.inner(u, v)", dict(u=real(4), v=real(4))),
    "inner_matrices": ("np.inner(a, b)", dict(a=real(3, 4), b=real(2, 4))),
    "inner_3d": ("np.inner(a, b)", dict(a=real(2, 3, 4), b=real(5, 4))),
    "inner_scalar": ("np.inner(a, 2.5)", dict(a=real(3, 2))),
    "tensordot_0": ("np.tensordot(u, v, 0)", dict(u=real(3), v=real(2))),
    "tensordot_1": ("np.tensordot(a, b, axes=1)", dict(a=real(2, 3), b=real(3, 4))),
    "tensordot_2": ("np.tensordot(a, b)", dict(a=real(2, 3, 4), b=real(3, 4, 2))),
    "tensordot_lists": ("np.tensordot(a, b, axes=([1, 2], [0, 1]))", dict(a=real(2, 3, 4), b=real(3, 4, 2))),
    "tensordot_ints_pair": ("np.tensordot(a, b, (0, -1))", dict(a=real(3, 2), b=real(4, 3))),
    "matmul_2d": ("np.matmul(a, b)", dict(a=real(3, 4), b=real(4, 2))),
    "matmul_3d_2d": ("np.matmul(a, b)", dict(a=real(2, 3, 4), b=real(4, 5))),
    "matmul_broadcast": ("np.matmul(a, b)", dict(a=real(2, 1, 3, 4), b=real(3, 4, 2))),
    "matmul_vector_3d": ("np.matmul(u, b)", dict(u=real(3), b=real(2, 3, 4))),
    "matmul_operator_3d": ("a @ b", dict(a=real(2, 3, 4), b=real(2, 4, 3))),
    "matmul_operator_vector": ("a @ u", dict(a=real(2, 3, 4), u=real(4))),
    "matmul_ints": ("np.matmul(a, b)", dict(a=ints(3, 4), b=ints(4, 2))),
    "diagonal": ("np.diagonal(a)", dict(a=real(3, 4))),
    "diagonal_offset_axes": ("np.diagonal(a, offset=1, axis1=1, axis2=2)", dict(a=real(2, 3, 4))),
    "diagonal_negative": ("np.diagonal(a, -1, 2, 0)", dict(a=real(3, 2, 4))),
    "diagonal_past_the_end": ("np.diagonal(a, 5)", dict(a=real(3, 4))),
    "diagonal_method": ("a.diagonal(1)", dict(a=real(4, 4))),
    "trace_method": ("a.trace()", dict(a=real(4, 4))),
    "trace_axes": ("np.trace(a, 1, axis1=0, axis2=2)", dict(a=real(3, 2, 4))),
    "trace_method_ints": ("a.trace(-1)", dict(a=ints(4, 3))),
    "squeeze_axis": ("np.squeeze(a, axis=1)", dict(a=real(3, 1, 4))),
    "squeeze_axes_method": ("a.squeeze((0, -1))", dict(a=real(1, 3, 1))),
    "squeeze_transposed": ("np.squeeze(a.T, 0)", dict(a=real(3, 1))),
    "atleast_1d_scalar": ("np.atleast_1d(s)", dict(s=2.5)),
    "atleast_2d_scalar": ("np.atleast_2d(s)", dict(s=2.5)),
    "atleast_2d_vector": ("np.atleast_2d(u)", dict(u=real(3))),
    "tile_int": ("np.tile(u, 3)", dict(u=real(2))),
    "tile_more_reps": ("np.tile(a, (2, 1, 2))", dict(a=real(2, 3))),
    "tile_fewer_reps": ("np.tile(a, (2,))", dict(a=real(2, 3))),
    "pad_int": ("np.pad(u, 2)", dict(u=real(3))),
    "pad_pairs": ("np.pad(a, ((1, 2), (0, 1)))", dict(a=real(2, 3))),
    "pad_pair_every_axis": ("np.pad(a, (1, 0), constant_values=0.5)", dict(a=real(2, 3))),
    "pad_one_width": ("np.pad(a, (1,), 'constant', constant_values=-1)", dict(a=ints(2, 2, 2))),
    "repeat_axis": ("np.repeat(a, 2, axis=1)", dict(a=real(2, 3))),
    "repeat_negative_axis": ("np.repeat(a, 3, -1)", dict(a=real(2, 2, 2))),
    "repeat_counts": ("np.repeat(a, k, axis=0)", dict(a=real(3, 2), k=np.array([1, 0, 2]))),
    "repeat_method": ("a.repeat(2, axis=0)", dict(a=real(2, 3))),
    "flip_axis": ("np.flip(a, axis=1)", dict(a=real(3, 4))),
    "flip_axes": ("np.flip(a, (0, -1))", dict(a=real(2, 3, 4))),
    "roll_axis": ("np.roll(a, -1, axis=0)", dict(a=real(3, 4))),
    "roll_past_the_end": ("np.roll(a, 7, 1)", dict(a=real(3, 4))),
    "roll_axes": ("np.roll(a, (1, -2), (0, 2))", dict(a=real(2, 3, 4))),
    "reshape_transposed": ("np.transpose(a, (2, 0, 1)).reshape(4, 6)", dict(a=real(2, 3, 4))),
    "reshape_strided": ("np.reshape(a[:, ::2], -1)", dict(a=real(3, 4))),
    "reshape_method_tuple": ("a.T.reshape((2, -1))", dict(a=real(3, 4))),
    "moveaxis_lists": ("np.moveaxis(a, [0, 1], [2, 0])", dict(a=real(2, 3, 4))),
    "swapaxes_method": ("a.swapaxes(0, -1)", dict(a=real(2, 3, 4))),
}


def _module():
    """The cases as functions of one generated module, imported once."""
    lines = ["import numpy as np", ""]
    for name, (expr, inputs) in CASES.items():
        lines += ["", f"def {name}({', '.join(inputs)}):", f"    return {expr}", ""]
    folder = tempfile.mkdtemp(prefix="numbax_runtime_arrays_")
    module_name = f"numbax_runtime_arrays_{os.getpid()}"
    path = os.path.join(folder, module_name + ".py")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


MODULE = _module()


@pytest.mark.parametrize("name", sorted(CASES))
def test_jit_matches_numpy(name):
    expr, inputs = CASES[name]
    fn = getattr(MODULE, name)
    expected = fn(**inputs)
    code = [line for line in numbax.source(fn, *inputs.values()).splitlines() if not line.lstrip().startswith("#")]
    assert not re.search(r"np\.(einsum|inner|tensordot|matmul|diagonal|squeeze|tile|pad)\(", "\n".join(code)), code
    for backend in ("python", "cpu"):
        got = numbax.jit(fn, backend=backend)(*inputs.values())
        assert np.shape(got) == np.shape(expected), f"{backend}: {np.shape(got)} != {np.shape(expected)}"
        assert np.result_type(got) == np.result_type(expected), backend
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13, err_msg=f"{expr} [{backend}]")


def squeeze_every_axis(a):
    return np.squeeze(a)


def test_squeeze_without_axis_asks_for_the_axis():
    """The python backend is NumPy; compiled code must know the result's ndim: a typing error at the user's line.

    (The helper's TypingError says to name the axis; ``compiled.py`` keeps Numba's first lines only.)
    """
    a = real(3, 1, 4)
    np.testing.assert_array_equal(numbax.jit(squeeze_every_axis, backend="python")(a), np.squeeze(a))
    with pytest.raises(numbax.NumbaxTypingError, match=r"test_runtime_arrays\.py:\d+:(.|\n)*squeeze\(array"):
        numbax.jit(squeeze_every_axis)(a)


def test_einsum_subscripts_are_written_explicit_in_generated_code():
    source = numbax.source(MODULE.einsum_implicit, *CASES["einsum_implicit"][1].values())
    assert "rt.einsum('ij,jk->ik', a, b)" in source


# ---- adjoints: the vector-Jacobian product of NumPy's own function -----------------------------


def numpy_vjp(f, g, args, k):
    """``g``'s pullback to argument ``k`` of the linear-in-``args[k]`` function ``f``, entry by entry."""
    x = args[k]
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = 1.0
        out[i] = np.sum(g * f(*[e if j == k else a for j, a in enumerate(args)]))
    return out


ADJOINTS = [
    # (helper call source, NumPy function of the operands, operands, which operand)
    ("rt.einsum_vjp(g, 0, 'ii->i', a)", lambda a: np.einsum("ii->i", a), (real(3, 3),), 0),
    ("rt.einsum_vjp(g, 1, '...ij,...jk->...ik', a, b)", lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
     (real(2, 1, 3, 4), real(3, 4, 2)), 1),
    ("rt.einsum_vjp(g, 0, '...ij,...jk->...ik', a, b)", lambda a, b: np.einsum("...ij,...jk->...ik", a, b),
     (real(2, 1, 3, 4), real(3, 4, 2)), 0),
    ("rt.einsum_vjp(g, 2, 'ijk,kj,i->', a, b, c)", lambda a, b, c: np.einsum("ijk,kj,i->", a, b, c),
     (real(2, 3, 4), real(4, 3), real(2)), 2),
    ("rt.tensordot_vjp(g, 0, a, b, (1, 2), (0, 1))", lambda a, b: np.tensordot(a, b, ([1, 2], [0, 1])),
     (real(2, 3, 4), real(3, 4, 2)), 0),
    ("rt.inner_vjp(g, 1, a, b)", np.inner, (real(2, 3, 4), real(5, 4)), 1),
    ("rt.matmul_vjp(g, 0, a, b)", np.matmul, (real(2, 1, 3, 4), real(3, 4, 2)), 0),
    ("rt.matmul_vjp(g, 1, a, b)", np.matmul, (real(3), real(2, 3, 4)), 1),
    ("rt.matmul_vjp(g, 0, a, b)", np.matmul, (real(3, 4), real(4, 2)), 0),
    ("rt.diagonal_grad(g, a, -1, 2, 0)", lambda a: np.diagonal(a, -1, 2, 0), (real(3, 2, 4),), 0),
    ("rt.tile_grad(g, a, (2, 1, 2))", lambda a: np.tile(a, (2, 1, 2)), (real(2, 3),), 0),
    ("rt.pad_grad(g, a, ((1, 2), (0, 1)), 'constant')", lambda a: np.pad(a, ((1, 2), (0, 1))), (real(2, 3),), 0),
    ("rt.repeat_grad(g, a, 3, -1)", lambda a: np.repeat(a, 3, -1), (real(2, 2, 2),), 0),
]


@pytest.mark.parametrize("call, fn, operands, k", ADJOINTS, ids=[c[0] for c in ADJOINTS])
def test_adjoint_helpers_are_numpys_vjp(call, fn, operands, k):
    g = real(*np.shape(fn(*operands))) if np.ndim(fn(*operands)) else 1.7
    expected = numpy_vjp(fn, g, operands, k)
    names = "abc"[:len(operands)]
    namespace = {"rt": rt}
    exec(f"def f(g, {', '.join(names)}):\n    return {call}\n", namespace)
    for run in (namespace["f"], numba.njit(namespace["f"])):
        np.testing.assert_allclose(run(g, *operands), expected, rtol=1e-12, atol=1e-12, err_msg=call)
