"""Arc (sector) tables and the scan over contiguous pockets, shared by the sector scan, the
dealer signature and the power simulation (private)."""

from __future__ import annotations

import numpy as np


def _arc_tables(p2: np.ndarray, n: np.ndarray, lengths):
    """Per length: (g, k) arc probabilities, expected counts and null SDs for every start."""
    g, k = p2.shape
    cp = np.concatenate([np.zeros((g, 1)), np.cumsum(np.concatenate([p2, p2], axis=1), axis=1)], axis=1)
    out = []
    for L in lengths:  # loop over arc lengths (<= k/2)
        pa = cp[:, L : L + k] - cp[:, :k]
        e = n[:, None] * pa
        sd = np.sqrt(n[:, None] * pa * (1.0 - pa))
        out.append((pa, e, sd))
    return out


def _scan(x: np.ndarray, tables, lengths):
    """Max |z| over arcs for count arrays ``x`` of shape (..., g, k).

    Returns (max over everything (...,), per-length max (..., L), argmax info for the observed).
    """
    k = x.shape[-1]
    xd = np.concatenate([x, x], axis=-1).astype(np.float64)
    cx = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(xd, axis=-1)], axis=-1)
    zs = []
    for L, (pa, e, sd) in zip(lengths, tables):
        s = cx[..., L : L + k] - cx[..., :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(sd > 0, (s - e) / np.where(sd > 0, sd, 1.0), 0.0)
        zs.append(z)
    return zs



def _flat_arcs(tables, lengths, k: int, a: int):
    """Group ``a``'s arc tables for :func:`_scan_max`: the lengths, the expected counts and safe
    SDs as (nL, k, 1) arrays, and the (nL, k) mask of arcs with SD 0 (whose z is 0), or None."""
    e = np.stack([t[1][a] for t in tables])[:, :, None]
    sd = np.stack([t[2][a] for t in tables])[:, :, None]
    zero = ~(sd > 0)
    return list(lengths), e, np.where(zero, 1.0, sd), zero[:, :, 0] if zero.any() else None


def _scan_max(x: np.ndarray, flat) -> np.ndarray:
    """Max |z| over all arcs of each row of ``x``, (b, k) counts, returned as (b,).

    The same element-wise arithmetic as :func:`_scan` (so bit-identical), laid out position-major
    (lengths, starts, replicates) so that each arc length is one slice difference of the
    cumulative sums and the maximum is a reduction over the leading axis.
    """
    lengths, e, sd, zero = flat
    b, k = x.shape
    xt = np.ascontiguousarray(x.T)
    cx = np.empty((2 * k + 1, b))
    cx[0] = 0.0
    np.cumsum(np.concatenate([xt, xt], axis=0), axis=0, out=cx[1:], dtype=np.float64)
    z = np.empty((len(lengths), k, b))
    for i, L in enumerate(lengths):  # loop over arc lengths (<= k/2)
        np.subtract(cx[L : L + k], cx[:k], out=z[i])
    z -= e
    z /= sd
    if zero is not None:
        z[zero] = 0.0
    np.abs(z, out=z)
    return z.reshape(-1, b).max(axis=0)


def _exceed_bounds(flat, threshold: float, n: int):
    """Integer bounds that decide, for every arc of one group, whether its ``|z|`` reaches ``threshold``.

    For an integer arc sum ``s`` in ``0 .. n``, :func:`_scan_max` computes ``z = (s - e) / sd`` (one IEEE
    subtraction and one division), a non-decreasing function of ``s``; so ``|z| >= threshold > 0`` exactly
    when ``s <= lo`` or ``s >= hi``, with ``lo`` and ``hi`` found by bisection on that same arithmetic.
    Returns ``(lengths, c, w, dtype)`` for :func:`_scan_exceeds`: ``c = lo + 1`` and ``w = hi - lo - 1``, so
    that ``|z| >= threshold`` if and only if ``(s - c) mod 2^m >= w`` (``m`` the bits of ``dtype``, unsigned,
    wide enough that the wrap-around cannot reach ``w``). Arcs with SD 0 (z = 0) never reach it.
    """
    lengths, e, sd, zero = flat
    e2, sd2 = e[:, :, 0], sd[:, :, 0]

    def first(cond):  # least s in 0..n+1 with cond(z(s)) (n + 1: none), cond monotone in s
        a = np.zeros(e2.shape, dtype=np.int64)
        b = np.full(e2.shape, n + 1, dtype=np.int64)
        while True:
            act = a < b
            if not act.any():
                return a
            mid = (a + b) // 2
            z = mid.astype(np.float64)
            z -= e2
            z /= sd2
            ok = cond(z)
            b = np.where(act & ok, mid, b)
            a = np.where(act & ~ok, mid + 1, a)

    hi = first(lambda z: z >= threshold)
    lo = first(lambda z: z > -threshold) - 1
    if zero is not None:
        hi[zero], lo[zero] = n + 1, -1
    dtype = np.uint16 if n < 2**14 else np.uint32 if n < 2**30 else np.uint64
    return list(lengths), (lo + 1).astype(dtype)[:, :, None], (hi - lo - 1).astype(dtype)[:, :, None], dtype


def _scan_exceeds(x: np.ndarray, bounds) -> np.ndarray:
    """Whether any arc of each row of ``x``, (b, k) counts, has ``|z| >= threshold`` (the bounds of
    :func:`_exceed_bounds`), as (b,) booleans: exactly ``_scan_max(x, flat) >= threshold``, with integer arc
    sums in the narrowest unsigned type (modular arithmetic: every difference taken is exact modulo 2^m)
    and one comparison per arc instead of the z arithmetic."""
    lengths, c, w, dtype = bounds
    b, k = x.shape
    xt = x.T.astype(dtype)
    cx = np.empty((2 * k + 1, b), dtype=dtype)
    cx[0] = 0
    np.cumsum(np.concatenate([xt, xt], axis=0), axis=0, out=cx[1:], dtype=dtype)
    z = np.empty((len(lengths), k, b), dtype=dtype)
    for i, L in enumerate(lengths):  # loop over arc lengths (<= k/2)
        np.subtract(cx[L : L + k], cx[:k], out=z[i])
    z -= c
    return (z >= w).reshape(-1, b).any(axis=0)
