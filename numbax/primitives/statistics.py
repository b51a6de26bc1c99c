"""Statistics written as composites (``registry``'s ``composite``) of the primitives numbax has, as
``jax.numpy`` writes them: ``np.nanmean``, ``np.nanvar``, ``np.nanstd``, ``np.nancumsum``, ``np.nancumprod``,
``np.quantile``, ``np.percentile``, ``np.cov`` and ``np.corrcoef``.

The NaN-ignoring functions select with ``np.where`` (a NaN's place gets no derivative, as JAX's), and divide by a
count of the elements present kept in the data's dtype (NumPy's ``float32`` mean of ``float32`` data); a slice
with nothing left to divide by is NaN, through a second ``where`` so that its derivative is not ``0 * inf``.
"""
import numpy as np

from numbax.primitives.registry import composite_of


@composite_of(np.nanmean)
def nanmean(a, axis=None, dtype=None, keepdims=False):
    """``np.nanmean``: the mean of the elements that are not NaN (NaN where none is), computed in ``dtype``."""
    if dtype is not None:
        a = np.asarray(a).astype(dtype)
    if np.asarray(a).dtype.kind not in "fc":
        return np.mean(a, axis=axis, keepdims=keepdims)
    missing = np.isnan(a)
    present = np.sum(np.where(missing, np.zeros_like(a), np.ones_like(a)), axis=axis, keepdims=keepdims)
    return np.sum(np.where(missing, np.zeros_like(a), a), axis=axis, keepdims=keepdims) / present


@composite_of(np.nanvar)
def nanvar(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """``np.nanvar``: the variance of the elements that are not NaN, with ``ddof`` (NaN where no more than
    ``ddof`` are), computed in ``dtype``."""
    if dtype is not None:
        a = np.asarray(a).astype(dtype)
    if np.asarray(a).dtype.kind not in "fc":
        return np.var(a, axis=axis, ddof=ddof, keepdims=keepdims)
    missing = np.isnan(a)
    centered = np.where(missing, np.zeros_like(a), a - np.nanmean(a, axis=axis, keepdims=True))
    squares = np.sum(np.real(centered * np.conj(centered)), axis=axis, keepdims=keepdims)
    present = np.where(missing, np.zeros_like(a), np.ones_like(a))
    normalizer = np.sum(np.real(present), axis=axis, keepdims=keepdims) - ddof
    empty = normalizer <= 0
    return np.where(empty, np.nan, squares) / np.where(empty, 1, normalizer)


@composite_of(np.nanstd)
def nanstd(a, axis=None, dtype=None, ddof=0, keepdims=False):
    """``np.nanstd``: the square root of ``np.nanvar``."""
    return np.sqrt(np.nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims))


@composite_of(np.nancumsum)
def nancumsum(a, axis=None):
    """``np.nancumsum``: ``np.cumsum`` with NaNs taken as zeros."""
    if np.asarray(a).dtype.kind not in "fc":
        return np.cumsum(a, axis=axis)
    return np.cumsum(np.where(np.isnan(a), np.zeros_like(a), a), axis=axis)


@composite_of(np.nancumprod)
def nancumprod(a, axis=None):
    """``np.nancumprod``: ``np.cumprod`` with NaNs taken as ones."""
    if np.asarray(a).dtype.kind not in "fc":
        return np.cumprod(a, axis=axis)
    return np.cumprod(np.where(np.isnan(a), np.ones_like(a), a), axis=axis)


def _quantiles_of_rank_one(app, args):
    """The ``refuse`` rule ``q is a number or a vector``."""
    q = args[1] if len(args) > 1 else None
    return "of a q of 2 or more dimensions: take np.quantile of each row of q" if q is not None and q[1] > 1 \
        else None


@composite_of(np.quantile, refuse=_quantiles_of_rank_one)
def quantile(a, q, axis=None, keepdims=False):
    """``np.quantile`` by NumPy's default method (``'linear'``): the sorted values along ``axis`` (all of ``a``
    without it) interpolated at ``q * (n - 1)``, as NumPy's ``lerp``; NaN where the slice holds a NaN. The result's
    axes are ``q``'s, then ``a``'s that are left."""
    x = np.asarray(a)
    ranks = np.asarray(q).ndim
    if ranks > 1:
        raise NotImplementedError("numbax: np.quantile of a q of 2 or more dimensions: take each row of q")
    single = x.dtype == np.float32 and (ranks == 0 or np.asarray(q).dtype == np.float32)
    work = np.float32 if single else np.float64  # a number ``q`` is weak, an array of them is not
    if (np.any(np.asarray(q) < 0) or np.any(np.asarray(q) > 1)) if ranks else (q < 0 or q > 1):
        raise ValueError("Quantiles must be in the range [0, 1]")
    rows = np.sort(np.ravel(x) if axis is None else np.moveaxis(x, axis, 0), axis=0).astype(work)
    last = rows.shape[0] - 1
    position = np.reshape(np.asarray(q, dtype=np.float64), (-1,)) * last
    low = np.minimum(np.floor(position).astype(np.int64), last)
    high = np.minimum(low + 1, last)
    t = np.reshape((position - low).astype(work), (-1,) + (1,) * (rows.ndim - 1))
    below = rows[low]
    above = rows[high]
    gap = above - below
    value = np.where(t >= 0.5, above - gap * (1 - t), below + gap * t)
    value = np.where(np.any(np.isnan(rows), axis=0), np.nan, value)
    value = value if ranks else value[0]
    if not keepdims:
        return value
    if axis is None:
        return np.reshape(value, np.shape(q) + (1,) * x.ndim)
    return np.expand_dims(value, ranks + axis % x.ndim)


@composite_of(np.percentile, refuse=_quantiles_of_rank_one)
def percentile(a, q, axis=None, keepdims=False):
    """``np.percentile``: ``np.quantile`` at ``q / 100``."""
    ranks = np.asarray(q).ndim
    outside = (np.any(np.asarray(q) < 0) or np.any(np.asarray(q) > 100)) if ranks else (q < 0 or q > 100)
    if outside:
        raise ValueError("Percentiles must be in the range [0, 100]")
    return np.quantile(a, np.true_divide(q, 100), axis=axis, keepdims=keepdims)


@composite_of(np.cov)
def cov(m, y=None, rowvar=True, bias=False, ddof=None):
    """``np.cov``: the covariance matrix of the variables (rows of ``m`` and ``y``; columns where not
    ``rowvar``), over ``N - ddof`` (``ddof`` 1 unless ``bias``), in float64 (complex128 of complex data). A
    single variable gives a number, as NumPy's squeezed matrix; one of a 2-D array raises ValueError, as its rank
    would be known only at run time."""
    if np.asarray(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    single = np.asarray(m).ndim < 2 and y is None
    x = np.atleast_2d(m).astype(np.complex128 if np.asarray(m).dtype.kind == "c" else np.float64)
    if not rowvar and np.asarray(m).ndim == 2:
        x = x.T
    if y is not None:
        other = np.atleast_2d(y).astype(np.complex128 if np.asarray(y).dtype.kind == "c" else np.float64)
        if not rowvar and np.asarray(y).ndim == 2:
            other = other.T
        x = np.concatenate((x, other), axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    centered = x - np.mean(x, axis=1, keepdims=True)
    c = centered @ np.conj(centered.T) * np.true_divide(1, x.shape[1] - ddof)  # NumPy's: inf where N is ddof
    if single:
        return c[0, 0]
    if c.shape[0] == 1:
        raise ValueError("numbax: np.cov of one variable given as a 2-D array is a number, which compiled code "
                         "cannot tell from a matrix ahead of run time; pass the variable as a 1-D array")
    return c


@composite_of(np.corrcoef)
def corrcoef(x, y=None, rowvar=True):
    """``np.corrcoef``: ``np.cov`` over the outer product of the standard deviations, clipped to [-1, 1]."""
    c = np.cov(x, y, rowvar)
    if np.asarray(x).ndim < 2 and y is None:
        return c / c
    deviations = np.sqrt(np.real(np.diagonal(c)))
    normalized = c / deviations[:, None] / deviations[None, :]
    if np.asarray(normalized).dtype.kind == "c":
        return np.clip(np.real(normalized), -1.0, 1.0) + 1j * np.clip(np.imag(normalized), -1.0, 1.0)
    return np.clip(normalized, -1.0, 1.0)
