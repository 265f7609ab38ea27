"""Inputs of the shuffle tests (card orders → permutation) and the p-value of a sum over shoes."""

from __future__ import annotations

import math

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist  # scipy.stats' distributions without its import (over 0.5 s)
from rngcert.stats.result import clip_pvalue

_TINY = float(np.finfo(float).tiny)


def _pv(p: float) -> float:
    """Clip into [0, 1] and floor at the smallest normal double: an underflowed tail is reported
    as 2.2e-308 ("smaller than this"), never as 0 (TestResult p-values lie in (0, 1])."""
    return max(clip_pvalue(p), _TINY)


# Exact convolution of per-shoe laws is used while the support of the sum stays below this.
_EXACT_SUPPORT = 4_000


# ----------------------------------------------------------------------------- inputs
def _orders_iv(before, after):
    b = np.asarray(before)
    a = np.asarray(after)
    if a.ndim != 2 or b.shape != a.shape:
        raise InputError(f"before and after must be 2-D arrays of equal shape (n_shoes, n_cards), got {b.shape} and {a.shape}")
    if a.shape[0] < 1 or a.shape[1] < 2:
        raise InputError(f"need at least one shoe of at least 2 cards, got shape {a.shape}")
    if not (np.issubdtype(a.dtype, np.integer) and np.issubdtype(b.dtype, np.integer)):
        raise InputError(f"card orders must be integer card codes, got dtypes {b.dtype} and {a.dtype}")
    return b, a


def _perm_iv(perm) -> np.ndarray:
    try:
        p = np.asarray(perm)
    except ValueError as e:  # numpy's "inhomogeneous shape" of a list of rows of different lengths
        lens = sorted({len(r) for r in perm}) if all(hasattr(r, "__len__") for r in perm) else "?"
        raise InputError(f"perm must be an integer array (n_shoes, n_cards >= 2): its rows have different lengths {lens}") from e
    if p.ndim == 1:
        p = p[None, :]
    if p.ndim != 2 or p.shape[1] < 2 or not np.issubdtype(p.dtype, np.integer):
        raise InputError(f"perm must be an integer array (n_shoes, n_cards >= 2), got shape {p.shape}, dtype {p.dtype}")
    n = p.shape[1]
    s = np.sort(p, axis=1)
    if not np.array_equal(s, np.broadcast_to(np.arange(n), p.shape)):
        bad = int(np.nonzero(~np.all(s == np.arange(n), axis=1))[0][0])
        raise InputError(f"perm row {bad} is not a permutation of 0..{n - 1}")
    return p


def card_permutation(before, after) -> tuple[np.ndarray, bool]:
    """Permutation taking each shoe's ``before`` order to its ``after`` order.

    Parameters
    ----------
    before, after : (n_shoes, n_cards) array_like of int
        Card codes before and after the shuffle. Each ``after`` row must hold the same multiset
        of codes as its ``before`` row.

    Returns
    -------
    perm : (n_shoes, n_cards) ndarray of int32
        ``perm[i, j]`` = position in ``before[i]`` of the card at position ``j`` of ``after[i]``.
    unique : bool
        True when every code occurs once per shoe (card identity is unambiguous). Otherwise
        repeated codes were matched in order: the k-th copy after to the k-th copy before.

    Raises
    ------
    InputError
        Shapes differ, or a shoe's ``after`` is not a rearrangement of its ``before``
        (quoting the shoe index).
    """
    b, a = _orders_iv(before, after)
    m, n = a.shape
    ob = np.argsort(b, axis=1, kind="stable")
    oa = np.argsort(a, axis=1, kind="stable")
    sb = np.take_along_axis(b, ob, axis=1)
    sa = np.take_along_axis(a, oa, axis=1)
    diff = np.any(sb != sa, axis=1)
    if diff.any():
        i = int(np.nonzero(diff)[0][0])
        raise InputError(f"shoe {i}: the cards after the shuffle are not the cards before it")
    unique = bool(np.all(sb[:, 1:] != sb[:, :-1]))
    perm = np.empty((m, n), dtype=np.int32)
    np.put_along_axis(perm, oa, ob.astype(np.int32), axis=1)
    return perm, unique


def _positions(perm: np.ndarray) -> np.ndarray:
    """pos[i, k] = position after the shuffle of the card that was at position k before."""
    pos = np.empty_like(perm)
    np.put_along_axis(pos, perm.astype(np.intp), np.broadcast_to(np.arange(perm.shape[1], dtype=perm.dtype), perm.shape), axis=1)
    return pos



# ----------------------------------------------------------------------------- sums over shoes
def fftconvolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.signal.fftconvolve(a, b)`` (mode "full") of two 1-D float arrays, the same bits without importing
    ``scipy.signal`` (which imports ``scipy.stats``: about 0.5 s): the product of their real FFTs padded to
    ``next_fast_len`` of the full length, transformed back and cut to it, or the plain product where one holds
    a single value, as scipy's does. The inputs are converted to float64 first: for float32 input scipy's is
    computed in float32 (other bits), for integer input times a single value it stays integer (same values)."""
    from scipy import fft as sp_fft  # (imported by the trackers already)

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 1 or b.size == 1:
        return a * b
    shape = a.size + b.size - 1
    fshape = [sp_fft.next_fast_len(shape, True)]
    ret = sp_fft.irfftn(sp_fft.rfftn(a, fshape, axes=[0]) * sp_fft.rfftn(b, fshape, axes=[0]), fshape, axes=[0])
    return ret[:shape].copy()


def _sum_pvalue(total: float, pmf: np.ndarray, n_shoes: int, alternative: str, offset: int = 0):
    """P-value of the sum of n_shoes i.i.d. lattice variables with law ``pmf`` (support offset+0..).

    Exact (up to float rounding, ~1e-15 absolute): the law is trimmed to the support where it
    exceeds 1e-22 of its mode (the rest is far below any p-value of interest) and raised to the
    n-th convolution power by repeated squaring with FFT convolution; the normal law with the
    exact moments is used only beyond 4 million support points. The normal tail is not used
    for small sums: the sum of ~Poisson(1) succession counts over a few dozen shoes is visibly
    skewed in the upper tail. Returns (pvalue, method, mean, var).
    """
    support = np.arange(pmf.size) + offset
    mu1 = float(np.dot(support, pmf))
    var1 = float(np.dot((support - mu1) ** 2, pmf))
    mean, var = n_shoes * mu1, n_shoes * var1
    keep = np.flatnonzero(pmf > pmf.max() * 1e-22)
    lo_i, hi_i = int(keep.min()), int(keep.max())
    core = pmf[lo_i:hi_i + 1] / pmf[lo_i:hi_i + 1].sum()
    off = offset + lo_i
    if n_shoes * (core.size - 1) + 1 <= 4_000_000:
        law = np.array([1.0])
        base = core
        k = n_shoes
        while k:  # repeated squaring; every product is a law, clipped at 0 against FFT round-off
            if k & 1:
                law = np.maximum(fftconvolve(law, base) if law.size * base.size > 4096 else np.convolve(law, base), 0.0)
            k >>= 1
            if k:
                base = np.maximum(fftconvolve(base, base) if base.size > 64 else np.convolve(base, base), 0.0)
        law /= law.sum()
        t = int(round(total)) - n_shoes * off
        upper = float(law[max(t, 0):].sum()) if t < law.size else 0.0
        lower = float(law[: t + 1].sum()) if t >= 0 else 0.0
        method = "exact"
    else:
        sd = math.sqrt(var)
        upper = float(_dist.norm_sf((total - 0.5 - mean) / sd))
        lower = float(_dist.norm_cdf((total + 0.5 - mean) / sd))
        method = "asymptotic"
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = 2 * min(upper, lower)
    return _pv(p), method, mean, var


def _alt_iv(alternative):
    if alternative not in ("two-sided", "less", "greater"):
        raise InputError(f"alternative must be 'two-sided', 'less' or 'greater', got {alternative!r}")
    return alternative
