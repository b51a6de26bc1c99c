"""The GPU backend's linear algebra at run time (imported by the generated drivers through ``runtime``, as
``gr``): matrix products (of stacks too), contractions, ``solve``, ``inv``, ``det``, ``cholesky``, triangles
and 2-norms of matrices. cuBLAS and cuSOLVER through CuPy where it is installed; else (the simulator's path) kernels: one
thread per element of a product, one thread for an elimination or a factorisation.
"""
from __future__ import annotations

import math
from typing import Any, Sequence, Tuple

import numpy as np

from numbax.backends.cuda.availability import simulated
from numbax.backends.cuda.memory import copy_2d, cuda, expand, full, grid, installed_cupy
from numbax.backends.cuda.simulated_math import MATH
from numbax.errors import NumbaxDeviceError, NumbaxShapeError, origin_at

if simulated():  # kernels run as Python there: NaN and infinities where ``math`` raises, as on a GPU
    math = MATH  # noqa: F811

_NOT_FINITE = "Array must not contain infs or NaNs."
_SINGULAR = "Matrix is singular to machine precision."
_NOT_POSITIVE_DEFINITE = "Matrix is not positive definite"


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` of device arrays (1-d or 2-d, or stacks of matrices whose leading axes broadcast; the shapes
    were checked where the user wrote the product): cuBLAS through CuPy where CuPy is installed, else
    ``_matmul_kernel``, once per matrix of a stack."""
    dtype = np.result_type(np.dtype(a.dtype), np.dtype(b.dtype))
    cupy = installed_cupy()
    if cupy is not None:
        return cuda.as_cuda_array(cupy.matmul(cupy.asarray(a).astype(dtype, copy=False),
                                              cupy.asarray(b).astype(dtype, copy=False)))
    if a.ndim > 2 or b.ndim > 2:
        return _stacked_matmul(a, b, dtype)
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
    out = cuda.device_array((a2.shape[0], b2.shape[1]), dtype=dtype)
    _matrix_product(out, a2, b2)
    shape = tuple(n for n, keep in ((a2.shape[0], a.ndim == 2), (b2.shape[1], b.ndim == 2)) if keep)
    if not shape:
        return out.copy_to_host()[0, 0]
    return out.reshape(shape)


def contract(kernel, shape: Sequence[int], count: int, dtype, operands: Sequence[Any], letters: str, exact: bool,
             where: str, *g: Any) -> Any:
    """A contraction of device arrays (``letters``: its spec, every letter spelled out) into a new array of
    ``shape`` in ``dtype``, a number on the host where ``shape`` is ``()``; or, ``g`` given, the cotangent of one
    operand, of ``shape``. The axes of a letter must have one size, or (not ``exact``: einsum's) broadcast a size
    of 1, else ``NumbaxShapeError`` at ``where`` (NumPy's ``ValueError``). ``kernel`` (generated for it:
    ``lower.contractions``) runs over ``count`` threads' indices; ``cupy.einsum`` (cuBLAS) computes a contraction
    instead where CuPy is installed and every letter has one size."""
    shape, one_size = tuple(shape), _check_letters(letters, operands, exact, where)
    cupy = installed_cupy()
    if cupy is not None and not g and one_size:
        out = cupy.einsum(letters, *(cupy.asarray(o).astype(dtype, copy=False) for o in operands))
        return cuda.as_cuda_array(out) if shape else np.dtype(dtype).type(out.get())
    out = full(shape or (1,), 0, dtype)
    if count:
        kernel[grid(count)](out, *g, *operands)
    return out if shape else out.copy_to_host()[0]


def _check_letters(letters: str, operands: Sequence[Any], exact: bool, where: str) -> bool:
    """Whether every letter of the spec ``letters`` names axes of one size; raise where two differ otherwise than
    by a size of 1 that broadcasts (or at all, ``exact``)."""
    sizes, one_size = {}, True
    for named, operand in zip(letters.split("->")[0].split(","), operands):
        for c, n in zip(named, tuple(operand.shape)):
            seen = sizes.setdefault(c, n)
            if seen != n:
                one_size = False
                if exact or 1 not in (seen, n):
                    raise NumbaxShapeError("shape-mismatch for sum" if exact else
                                           "einsum: operands could not be broadcast together", where)
                sizes[c] = seen if n == 1 else n
    return one_size


def _stacked_matmul(a: Any, b: Any, dtype: np.dtype) -> Any:
    """``a @ b`` of stacks of matrices (both at least 2-d) without CuPy: one ``_matmul_kernel`` per matrix of
    the result, each operand's matrix found by broadcasting its leading axes as NumPy does."""
    a_shape, b_shape = tuple(a.shape), tuple(b.shape)
    stack = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    out = cuda.device_array(stack + (a_shape[-2], b_shape[-1]), dtype=dtype)
    for index in np.ndindex(*stack):
        _matrix_product(out[index], a[_broadcast_index(index, a)], b[_broadcast_index(index, b)])
    return out


def _broadcast_index(index: Tuple[int, ...], x: Any) -> Tuple[int, ...]:
    """The index of the matrix of the stack ``x`` that position ``index`` of a broadcast stack reads."""
    leading = tuple(x.shape)[:-2]
    return tuple(0 if n == 1 else i for i, n in zip(index[len(index) - len(leading):], leading))


def _matrix_product(out: Any, a: Any, b: Any) -> None:
    """``out[...] = a @ b`` of device matrices by ``_matmul_kernel`` (zeros for a product over no terms)."""
    if not out.size:
        return
    if a.shape[1] == 0:
        out.copy_to_device(np.zeros(out.shape, out.dtype))
    else:
        _matmul_kernel[grid(out.size)](out, a, b)


def solve(a: Any, b: Any, where: str) -> Any:
    """``np.linalg.solve(a, b)`` of device arrays (``a`` square, ``b`` a vector or a matrix of as many rows):
    cuSOLVER through CuPy where CuPy is installed, else ``_eliminate`` (Gaussian elimination with partial
    pivoting, as LAPACK's ``gesv``) and ``_back_substitute``; the CPU backend's ``LinAlgError`` where ``a`` is
    not square or ``b`` has other rows, an operand is not finite or a pivot is zero (CuPy's non-finite solution
    of finite operands: it does not raise)."""
    dtype = _solve_dtype(a, b)
    if b.shape[0] != a.shape[0]:
        raise np.linalg.LinAlgError("Incompatible array sizes, system is not dimensionally valid.")
    _check_square(a)
    cupy = installed_cupy()
    if cupy is not None:
        a_, b_ = cupy.asarray(a).astype(dtype), cupy.asarray(b).astype(dtype)
        if not (bool(cupy.isfinite(a_).all()) and bool(cupy.isfinite(b_).all())):
            raise np.linalg.LinAlgError(_NOT_FINITE)
        x = cupy.linalg.solve(a_, b_)
        if not bool(cupy.isfinite(x).all()):
            raise np.linalg.LinAlgError(_SINGULAR)
        return cuda.as_cuda_array(x)
    n = a.shape[0]
    x = cuda.device_array((n, b.shape[1] if b.ndim == 2 else 1), dtype=dtype)
    if x.size:
        copy_2d[grid(x.size)](x, b if b.ndim == 2 else expand(b, (1,)))
    lu, state = _factored(a, x, dtype)
    if state[0] or state[1]:
        raise np.linalg.LinAlgError(_NOT_FINITE if state[0] else _SINGULAR)
    if n:
        _back_substitute[1, 1](lu, x)
    return x if b.ndim == 2 else x.reshape(n)


def inverse(a: Any, where: str) -> Any:
    """``np.linalg.inv(a)`` of a device array: ``a`` solved against the identity."""
    return solve(a, cuda.to_device(np.eye(a.shape[0], dtype=_solve_dtype(a, a))), where)


def determinant(a: Any, result: str) -> Any:
    """``np.linalg.det(a)`` (``result`` ``"det"``), or the sign or the log of the magnitude of ``slogdet``'s
    (``"sign"``, ``"logabs"``), from ``_eliminate``'s factors, as the CPU backend computes them (the sign of
    the permutation and of each pivot, the sum of their logarithms; 0 and -inf where a pivot is zero)."""
    dtype = _solve_dtype(a, a)
    _check_square(a)
    lu, state = _factored(a, cuda.device_array((a.shape[0], 0), dtype=dtype), dtype)
    if state[0]:
        raise np.linalg.LinAlgError(_NOT_FINITE)
    sign, logabs = dtype.type(-1 if state[2] % 2 else 1), dtype.type(0)
    if state[1]:
        sign, logabs = dtype.type(0), dtype.type(-np.inf)
    else:
        for v in np.diagonal(lu.copy_to_host()):
            sign, logabs = (-sign, logabs + np.log(-v)) if v < 0 else (sign, logabs + np.log(v))
    return {"det": sign * np.exp(logabs), "sign": sign, "logabs": logabs}[result]


def triangle(m: Any, k: int, lower: bool) -> Any:
    """``np.tril(m, k)`` (``lower``) or ``np.triu(m, k)`` of a device matrix: a new matrix of its dtype, zeros on
    the other side of diagonal ``k``."""
    out = cuda.device_array(tuple(m.shape), dtype=m.dtype)
    if out.size:
        _triangle_kernel[grid(out.size)](out, m, k, lower)
    return out


@cuda.jit
def _triangle_kernel(out, m, k, lower):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r = i // out.shape[1]
        c = i % out.shape[1]
        out[r, c] = m[r, c] if (c - r <= k if lower else c - r >= k) else 0


def cholesky(a: Any, where: str) -> Any:
    """``np.linalg.cholesky(a)`` of a real device matrix (its lower triangle read, as NumPy's): cuSOLVER through
    CuPy where CuPy is installed, else ``_cholesky_kernel``; NumPy's ``LinAlgError`` where ``a`` is not positive
    definite."""
    _check_square(a)
    dtype = _solve_dtype(a, a)
    cupy = installed_cupy()
    if cupy is not None:
        import cupyx

        try:
            with cupyx.errstate(linalg="raise"):
                return cuda.as_cuda_array(cupy.linalg.cholesky(cupy.asarray(a).astype(dtype, copy=False)))
        except np.linalg.LinAlgError:
            raise np.linalg.LinAlgError(_NOT_POSITIVE_DEFINITE) from None
    out = full(tuple(a.shape), 0, dtype)
    state = cuda.to_device(np.zeros(1, np.int64))
    _cholesky_kernel[1, 1](out, a, state)
    if state.copy_to_host()[0]:
        raise np.linalg.LinAlgError(_NOT_POSITIVE_DEFINITE)
    return out


@cuda.jit
def _cholesky_kernel(out, a, state):
    """One thread: the lower Cholesky factor of ``a`` (its lower triangle, row by row) into ``out``, zeros above
    the diagonal; ``state[0]`` set to 1, and the thread done, at a pivot that is not positive."""
    if cuda.grid(1) == 0:
        for i in range(a.shape[0]):
            for j in range(i + 1):
                s = a[i, j]
                for k in range(j):
                    s -= out[i, k] * out[j, k]
                if i != j:
                    out[i, j] = s / out[j, j]
                elif s <= 0:
                    state[0] = 1
                    return
                else:
                    out[i, i] = math.sqrt(s)


def _check_square(a: Any) -> None:
    if a.shape[0] != a.shape[1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square.")


def _solve_dtype(a: Any, b: Any) -> np.dtype:
    dtype = np.result_type(np.dtype(a.dtype), np.dtype(b.dtype))
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


def _factored(a: Any, x: Any, dtype) -> Tuple[Any, np.ndarray]:
    """``a`` (square) copied and factored by ``_eliminate``, which applies its row operations to ``x`` too; its
    state: whether ``a`` or ``x`` holds a value that is not finite, whether a pivot is zero, the row swaps."""
    n = a.shape[0]
    lu = cuda.device_array((n, n), dtype=dtype)
    if lu.size:
        copy_2d[grid(lu.size)](lu, a)
    state = cuda.to_device(np.zeros(3, np.int64))
    if n:
        _eliminate[1, 1](lu, x, state)
    return lu, state.copy_to_host()


@cuda.jit
def _eliminate(lu, x, state):
    """One thread factors ``lu`` in place (elimination with partial pivoting: the first row of the largest
    magnitude, as LAPACK's ``getrf``), applying the row operations to ``x``; ``state``: 1 where an element of
    ``lu`` or ``x`` is not finite (nothing factored then), 1 where a pivot is zero (its column skipped, as
    ``getrf`` does), the number of row swaps."""
    n = lu.shape[0]
    for r in range(n):
        for k in range(n):
            if not math.isfinite(lu[r, k]):
                state[0] = 1
        for j in range(x.shape[1]):
            if not math.isfinite(x[r, j]):
                state[0] = 1
    if state[0]:
        return
    for c in range(n):
        p = c
        for r in range(c + 1, n):
            if abs(lu[r, c]) > abs(lu[p, c]):
                p = r
        if lu[p, c] == 0:
            state[1] = 1
            continue
        if p != c:
            state[2] += 1
            for k in range(n):
                lu[c, k], lu[p, k] = lu[p, k], lu[c, k]
            for j in range(x.shape[1]):
                x[c, j], x[p, j] = x[p, j], x[c, j]
        for r in range(c + 1, n):
            f = lu[r, c] / lu[c, c]
            for k in range(c + 1, n):
                lu[r, k] -= f * lu[c, k]
            for j in range(x.shape[1]):
                x[r, j] -= f * x[c, j]


@cuda.jit
def _back_substitute(lu, x):
    """One thread solves the upper triangle of ``lu`` against each column of ``x``, in place."""
    n = lu.shape[0]
    for j in range(x.shape[1]):
        for r in range(n - 1, -1, -1):
            s = x[r, j]
            for k in range(r + 1, n):
                s -= lu[r, k] * x[k, j]
            x[r, j] = s / lu[r, r]


@cuda.jit
def _matmul_kernel(out, a, b):
    """One thread per element of ``out``: the simulator's (and a machine without CuPy's) matrix product."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        row = i // out.shape[1]
        col = i % out.shape[1]
        acc = a[row, 0] * b[0, col]  # the host gives a product over no terms zeros instead
        for k in range(1, a.shape[1]):
            acc += a[row, k] * b[k, col]
        out[row, col] = acc


def spectral_norms(a: Any, where: str) -> Any:
    """``np.linalg.norm(m, 2)`` of each matrix ``m`` of the 3-d device array ``a`` (its largest singular value),
    in ``a``'s dtype: by CuPy's SVD where CuPy is installed, else ``_spectral_norm_kernel``, one thread per
    matrix. An empty matrix (NumPy's SVD refuses it) is refused."""
    if not a.shape[1] or not a.shape[2]:
        raise NumbaxDeviceError("the 2-norm of an empty matrix is not supported by the GPU backend yet",
                                origin_at(where), hint="run it on the CPU backend.")
    cupy = installed_cupy()
    if cupy is not None:
        return cuda.as_cuda_array(cupy.linalg.svd(cupy.asarray(a), compute_uv=False).max(axis=-1))
    side = min(a.shape[1], a.shape[2])
    gram = cuda.device_array((a.shape[0], side, side), dtype=np.float64)
    out = cuda.device_array(a.shape[0], dtype=a.dtype)
    _spectral_norm_kernel[grid(a.shape[0])](out, a, gram)
    return out


@cuda.jit
def _spectral_norm_kernel(out, a, gram):
    """Each thread one matrix: its Gram matrix (``a aᵀ`` or ``aᵀ a``, the smaller, in float64), diagonalised
    by cyclic Jacobi rotations until what is off the diagonal no longer counts; the square root of the largest
    eigenvalue."""
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        wide, side = a.shape[2] > a.shape[1], gram.shape[1]
        for i in range(side):
            for j in range(side):
                s = 0.0
                for t in range(a.shape[2] if wide else a.shape[1]):
                    s += a[b, i, t] * a[b, j, t] if wide else a[b, t, i] * a[b, t, j]
                gram[b, i, j] = s
        for _ in range(64):
            off = 0.0
            scale = 0.0
            for p in range(side):
                scale += gram[b, p, p] * gram[b, p, p]
                for q in range(p + 1, side):
                    off += gram[b, p, q] * gram[b, p, q]
            if off <= 1e-36 * scale:
                break
            for p in range(side):
                for q in range(p + 1, side):
                    _rotate(gram[b], p, q)
        best = 0.0
        for i in range(side):
            best = max(best, gram[b, i, i])
        out[b] = math.sqrt(best)


@cuda.jit(device=True)
def _rotate(g, p, q):
    """One Jacobi rotation of the symmetric ``g`` that zeroes ``g[p, q]``."""
    if g[p, q] == 0.0:
        return
    theta = (g[q, q] - g[p, p]) / (2.0 * g[p, q])
    t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
    c = 1.0 / math.sqrt(t * t + 1.0)
    s = t * c
    for r in range(g.shape[0]):
        gp, gq = g[r, p], g[r, q]
        g[r, p] = c * gp - s * gq
        g[r, q] = s * gp + c * gq
    for r in range(g.shape[0]):
        gp, gq = g[p, r], g[q, r]
        g[p, r] = c * gp - s * gq
        g[q, r] = s * gp + c * gq
