"""Reverse-mode rules for the runtime helpers that adjoint code calls: what a second derivative reads.

A gradient generated at a ``numbax.grad`` call inside a differentiated function
becomes part of that function (``nested``), so the outer reverse mode meets the
helpers of the inner one's adjoint code. Each is linear in its cotangent
argument, and each cotangent it receives has the shape of the result it undoes,
which broadcasting made at least as large as the operand (``rt.unbroadcast(g, x)``
only ever sums ``g`` down to ``x``). The parameter that NumPy's rules call ``g``
is ``cotangent`` here: ``g`` is the template's own cotangent.
"""
# flake8: noqa: F821  (``d`` and ``rt`` are template placeholders)
from numbax import runtime as rt
from numbax.transforms.grad.rules import def_nondifferentiable, defvjp


@defvjp(rt.unbroadcast)
def unbroadcast(g, ans, cotangent, x):
    d[cotangent] = rt.unreduce(g, cotangent, None, False)


@defvjp(rt.unreduce)
def unreduce(g, ans, cotangent, a, axis=None, keepdims=False):
    d[cotangent] = rt.unbroadcast(g, cotangent) if axis is None else np.sum(g, axis=axis, keepdims=keepdims)


@defvjp(rt.reshape_like)
def reshape_like(g, ans, cotangent, a):
    d[cotangent] = rt.reshape_like(g, cotangent)


@defvjp(rt.matmul_grad_a)
def matmul_grad_a(g, ans, cotangent, a, b):
    d[cotangent] = g @ b
    d[b] = rt.matmul_grad_b(cotangent, g, b)


@defvjp(rt.matmul_grad_b)
def matmul_grad_b(g, ans, cotangent, a, b):
    d[cotangent] = a @ g
    d[a] = rt.matmul_grad_a(cotangent, a, g)


@defvjp(rt.scalar_output, rt.copy_of)
def identity(g, ans, x):
    d[x] = g


def_nondifferentiable(rt.ones_like, rt.zeros_like, rt.size_of, rt.chooser_weights, rt.tie_share, rt.clip_mask)


@defvjp(rt.reserve_rows)
def reserve_rows(g, ans, table, rows):
    d[table] = g[:table.shape[0]]


@defvjp(rt.grow_rows)
def grow_rows(g, ans, table):
    d[table] = g[:table.shape[0]]
