"""Chunked passes over the per-spin arrays of a table (issue 11, item 1).

The order-dependent tests read a table's int8/int16 arrays in spans of :data:`CHUNK` spins
and carry across a span's end only the few values their statistic needs (the last outcome, a
run's length and start, the last hit of a gap, the counts seen so far), so their temporaries
are a few bytes a spin of one span, not of the table. Every accumulation across spans is an
integer one, so the statistics do not depend on the span length (the tests force a tiny one).
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

#: Spins per span (64 Ki: a span's temporaries, about 4 MB at most, stay in the CPU caches and in the heap the
#: allocator keeps; 1 M spans made 8 MB temporaries that were mapped and zeroed afresh for every span, which cost
#: a 10 M-spin table about 0.5 CPU-s of kernel time in the duplicated-block scan alone).
CHUNK = 1 << 16


def spans(n: int, chunk: int | None = None) -> Iterator[tuple[int, int]]:
    """Consecutive spans ``(lo, hi)`` covering ``0..n``.

    Parameters
    ----------
    n : int
        Length to cover.
    chunk : int, optional
        Span length; default :data:`CHUNK` (read at call time, so tests can lower it).

    Yields
    ------
    (int, int)
        ``lo < hi``, the last ``hi == n``; nothing when ``n <= 0``.
    """
    c = int(CHUNK if chunk is None else chunk)
    for lo in range(0, max(int(n), 0), c):  # loop over spans, not spins
        yield lo, min(lo + c, int(n))


def count_true(a: np.ndarray) -> int:
    """Number of non-zero entries of ``a``, counted span by span."""
    return sum(int(np.count_nonzero(a[lo:hi])) for lo, hi in spans(a.size))


def share_at_least_half(mask_of, n: int) -> bool:
    """Whether ``mask_of(lo, hi)`` holds for at least half of ``n`` spins.

    Equals ``bool(np.mean(mask) >= 0.5)`` on the whole mask (the count is exact, the division the
    same) without the whole-table bool array; False for ``n == 0`` (where the mean is NaN).
    """
    if n == 0:
        return False
    c = sum(int(np.count_nonzero(mask_of(lo, hi))) for lo, hi in spans(n))
    return bool(np.float64(c) / n >= 0.5)


def lookup(table, x) -> np.ndarray:
    """``table[x]`` for ids ``x`` in ``0..table.size - 1`` (not checked: the caller's ids are valid).

    When ``x`` holds 1-byte integers and ``table`` 1-byte values (at most 256 of them), one
    ``bytes.translate`` pass (about 1 ns a spin; numpy's gather with 1-byte indices converts them to
    intp first, about 4 ns); otherwise ``np.take``. The same values and dtype as ``table[x]``; the
    result of the fast path is read-only.
    """
    t = np.asarray(table)
    x = np.asarray(x)
    if x.ndim == 1 and x.dtype.kind in "iu" and x.dtype.itemsize == 1 and t.ndim == 1 and 0 < t.size <= 256 and t.dtype.itemsize == 1:
        tb = np.zeros(256, dtype=t.dtype)
        tb[: t.size] = t
        return np.frombuffer(np.ascontiguousarray(x).tobytes().translate(tb.tobytes()), dtype=t.dtype)
    return np.take(t, x)


def narrow(table) -> np.ndarray:
    """``table`` as int8 when its integer values fit (so that :func:`lookup` takes its fast path), else as it is."""
    t = np.asarray(table)
    if t.dtype.kind in "iu" and t.size and -128 <= int(t.min()) and int(t.max()) <= 127:
        return t.astype(np.int8)
    return t
