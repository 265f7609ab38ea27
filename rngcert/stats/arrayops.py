"""``numpy.unique`` and ``numpy.quantile`` for the cases the certify path uses, without importing
``numpy.ma`` (issue 26 item 1: fixed cost).

numpy 2's ``np.unique`` without ``return_index`` / ``return_inverse`` / ``return_counts`` asks
``np.ma.is_masked`` about its argument, and ``np.quantile`` calls that ``np.unique``: the first call
imports ``numpy.ma`` (about 10-20 ms, and nothing of it is used). :func:`unique` and :func:`quantile`
give the very arrays numpy gives, bit for bit (``tests/test_arrayops.py`` compares them on many
inputs), and hand every case they do not cover (floats with NaN, several dimensions, other dtypes or
methods) to numpy itself.
"""

from __future__ import annotations

import numpy as np

__all__ = ["quantile", "unique"]


def unique(values) -> np.ndarray:
    """The sorted distinct values of an integer, boolean or string array (``np.unique(values)``).

    Parameters
    ----------
    values : array_like
        Any shape (flattened, as ``np.unique`` does).

    Returns
    -------
    numpy.ndarray
        1-D, of the dtype of ``values``. Integers whose range is at most their number (or 65,536) are
        counted (``bincount``: linear time), others sorted.
    """
    a = np.asarray(values).ravel()
    if a.dtype.kind not in "biuU" or a.size < 2:
        return np.unique(a) if a.dtype.kind not in "biuU" else a.copy()
    if a.dtype.kind in "iu":
        lo, hi = int(a.min()), int(a.max())
        if hi - lo <= max(1 << 16, a.size):  # (the counts take no more memory than the sorted copy would)
            wide = np.int64 if a.dtype.kind == "i" else np.uint64  # offsets from the least value, in 64 bits
            off = a.astype(wide)
            off -= wide(lo)
            present = np.flatnonzero(np.bincount(off.astype(np.intp, copy=False), minlength=hi - lo + 1))
            del off
            return (present.astype(wide) + wide(lo)).astype(a.dtype)
    s = np.sort(a)
    keep = np.empty(s.size, dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def quantile(values, q) -> np.ndarray:
    """``np.quantile(values, q)`` (numpy's default ``method="linear"``) of a 1-D float64 array.

    Parameters
    ----------
    values : array_like
        The sample; arrays that are not 1-D float64 without NaN are given to ``np.quantile``.
    q : sequence of float
        Probabilities in [0, 1] (a list or 1-D array; a bare number goes to ``np.quantile``).

    Returns
    -------
    numpy.ndarray
        One quantile per entry of ``q``: numpy's numbers (the same order statistics, found by
        ``partition``, and numpy's interpolation ``_lerp``, operation for operation).
    """
    a = np.asarray(values)
    qa = np.asarray(q)
    if (type(q) in (int, float) or a.ndim != 1 or a.dtype != np.float64 or a.size == 0 or qa.ndim != 1
            or qa.dtype != np.float64 or not bool(np.all((qa >= 0) & (qa <= 1))) or bool(np.isnan(a).any())):
        return np.quantile(values, q)
    n = a.size
    virtual = (n - 1) * qa
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    prev_i, next_i = prev.astype(np.intp), nxt.astype(np.intp)
    arr = a.copy()
    kth = np.concatenate(([0, -1], prev_i, next_i))
    arr.partition(unique(np.where(kth < 0, kth + n, kth)))
    previous, following = arr[prev_i], arr[next_i]
    gamma = np.asarray(virtual - prev_i, dtype=virtual.dtype)
    diff = following - previous
    out = np.add(previous, diff * gamma)
    np.subtract(following, diff * (1 - gamma), out=out, where=gamma >= 0.5, casting="unsafe", dtype=out.dtype)
    return out
