"""Data-integrity checks of a spin record, run before the battery (DESIGN §4).

They ask whether the *record* is a faithful list of distinct spins in order — not whether the
wheel is fair. A finding here is reported with its evidence and never FAILs a wheel; the
pipeline then keeps the battery off the data the finding touches, and makes the verdict
INCONCLUSIVE only when the artefact is large enough to change a conclusion (the rule is stated
in :mod:`rngcert.pipeline.certify_wheel`).

* :func:`boundary_repeats` — the same number twice in a row, counted where a new line (record)
  of a transcribed permanence list begins and where it does not. A copying or scraping fault
  repeats the last number of a line at the start of the next; a wheel cannot know where a
  transcriber broke the line.
* :func:`duplicated_blocks` — runs of consecutive spins that appear twice (a block pasted twice).
* :func:`time_order` — timestamps that go backwards or repeat exactly.
* :func:`id_order` — spin ids that go backwards.

All functions are pure (arrays in, a dict of evidence out).

Examples
--------
>>> import numpy as np
>>> from rngcert.stats.integrity import boundary_repeats
>>> x = np.array([1, 2, 3, 3, 4, 5, 5, 6])
>>> line_start = np.array([True, False, False, True, False, False, True, False])
>>> boundary_repeats(x, line_start, 37)["boundary"]["repeats"]
2
"""

from __future__ import annotations

import numpy as np

from rngcert.errors import InputError
from rngcert.stats import _dist, arrayops, chunks
from rngcert.stats.chunks import spans

__all__ = ["boundary_repeats", "duplicated_blocks", "time_order", "id_order", "FINDING_P"]

#: p-value below which an integrity check reports a finding (stated in every report).
FINDING_P = 1e-3
#: Smallest relative excess of repeats at line starts that is reported (10%).
MIN_EXCESS = 0.10
#: The duplicated-block scan hashes windows in spans of this many CHUNKs (4: 256 Ki windows, about 3 MB of
#: temporaries; a quarter of the numpy calls of 64 Ki spans, 0.021 -> 0.014 CPU-s a hash pass at 10 M spins).
_HASH_SPAN = 4
#: From this many windows on, the scan finds its candidate windows from k-grams sampled at every s-th spin
#: (:func:`_sampled_candidates`: about a sixth of the sorting of every window's hash; the same blocks found).
_SAMPLED_MIN_WINDOWS = 1 << 15


def _binom_upper(k: int, n: int, p: float) -> float:
    return float(_dist.binom_sf(k - 1, n, p)) if n > 0 else 1.0


def boundary_repeats(outcomes, line_start, k: int, probs=None) -> dict:
    """Repeats of the same result at line starts against within lines.

    Parameters
    ----------
    outcomes : (n,) array_like of int
        Outcome ids in spin order.
    line_start : (n,) array_like of bool
        True where a spin is the first of its line (record) in the file.
    k : int
        Number of outcome ids.
    probs : (k,) array_like of float, optional
        Null probabilities (default 1/k); a repeat has probability ``sum(p**2)``.

    Returns
    -------
    dict
        ``boundary`` and ``within``: pairs, repeats, expected repeats, relative excess and the
        one-sided binomial p-value of the excess; ``difference_pvalue``: Fisher's exact test that
        repeats are more frequent at line starts than within lines; ``finding``: True when that
        p-value is below :data:`FINDING_P` and the excess at line starts is at least
        :data:`MIN_EXCESS`; ``boundary_pairs``: (n-1,) bool, the pairs that straddle a line start.

    Raises
    ------
    InputError
        Arrays of different lengths.
    """
    x = np.asarray(outcomes)
    ls = np.asarray(line_start, dtype=bool)
    if x.shape != ls.shape:
        raise InputError("line_start must have one entry per spin")
    p = np.full(k, 1.0 / k) if probs is None else np.asarray(probs, dtype=float)
    q = float(np.sum(p**2))
    at = ls[1:]
    n_at = r_at = r_all = 0
    for lo, hi in spans(at.size):  # loop over spans of pairs: repeats where a line starts, and all repeats
        rep = x[lo + 1 : hi + 1] == x[lo:hi]
        r_all += int(np.count_nonzero(rep))
        rep &= at[lo:hi]
        r_at += int(np.count_nonzero(rep))
        n_at += int(np.count_nonzero(at[lo:hi]))
    out = {"repeat_probability": q}
    for name, npairs, r in (("boundary", n_at, r_at), ("within", at.size - n_at, r_all - r_at)):
        e = npairs * q
        out[name] = {
            "pairs": npairs,
            "repeats": r,
            "expected": e,
            "relative_excess": (r / e - 1.0) if e > 0 else None,
            "pvalue_excess": _binom_upper(r, npairs, q),
        }
    b, w = out["boundary"], out["within"]
    table = [[b["repeats"], b["pairs"] - b["repeats"]], [w["repeats"], w["pairs"] - w["repeats"]]]
    diff_p = 1.0
    if b["pairs"] and w["pairs"]:
        diff_p = _dist.fisher_exact_greater(table)  # scipy.stats.fisher_exact's p-value, without importing scipy.stats
    out["difference_pvalue"] = diff_p
    exc = b["relative_excess"]
    out["finding"] = bool(b["pairs"] > 0 and w["pairs"] > 0 and diff_p < FINDING_P and exc is not None and exc >= MIN_EXCESS)
    out["boundary_pairs"] = at
    return out


def duplicated_blocks(outcomes, k: int, length: int = 20) -> dict:
    """Blocks of ``length`` consecutive spins that occur more than once.

    A block is a copy when the nearest earlier block of the same spins starts at least ``length``
    spins before it (a copy that does not overlap the block it repeats); a stretch that repeats a
    short cycle (a run of one number, a period under ``length``) overlaps its own previous block and
    holds no copy. Candidates are found by hashes, and every copy reported is checked spin by spin.

    Parameters
    ----------
    outcomes : (n,) array_like of int
        Outcome ids in spin order.
    k : int
        Number of outcome ids.
    length : int
        Block length L. Under i.i.d. uniform spins the chance that any two of the n - L + 1
        blocks coincide is at most ``n**2 / 2 * k**-L`` (below 1e-18 for n = 10**7, k = 37, L = 20).

    Returns
    -------
    dict
        ``length``; ``repeated_blocks``: blocks that occur again later; ``spins_in_copies``: spins
        covered by the later copies; ``share``: that count over n; ``first``: up to five
        ``(first position, copy position)`` pairs (0-based spin indices); ``chance_bound``.
    """
    x = np.asarray(outcomes)
    n = x.size
    L = int(length)
    if L < 2:
        raise InputError(f"block length must be >= 2, got {length!r}")
    res = {"length": L, "repeated_blocks": 0, "spins_in_copies": 0, "share": 0.0, "first": [],
           "chance_bound": min(1.0, n * n / 2.0 * float(k) ** (-L)) if n else 0.0}
    if n < 2 * L:
        return res
    n_win = n - L + 1
    cand = _sampled_candidates(x, L, k) if n_win >= _SAMPLED_MIN_WINDOWS else None
    if cand is not None:
        first, later = _true_copies(x, L, cand, _whole_hash(x, L, cand))
    else:
        hashes = _WindowHashes(x, L)
        twice = _low_bits_twice(hashes, n_win)
        if twice.size == 0:
            return res
        first, later = _true_copies(x, L, *_candidates(hashes, n_win, twice))
    if later.size == 0:
        return res
    srt = np.argsort(later)
    starts = later[srt]
    covered = int(np.minimum(np.diff(starts), L).sum()) + L  # spins of the union of the later copies
    res.update(
        repeated_blocks=int(later.size),
        spins_in_copies=covered,
        share=float(covered / n),
        first=[(int(f), int(c)) for f, c in zip(first[srt][:5], later[srt][:5])],
    )
    return res


def _power_table(b: int, m: int, dtype=np.uint64) -> np.ndarray:
    out = np.full(m, b, dtype=dtype)
    out[0] = 1
    return np.cumprod(out, dtype=dtype)  # (wraps mod 2**64, or 2**32)


class _WindowHashes:
    """The low 32 bits of the polynomial hash mod 2**64 of every window of L spins,
    H(i) = sum_j (x[i+j]+1) * B**(L-1-j) (numpy integer arithmetic wraps): that is the same polynomial mod 2**32,
    computed in 32-bit arithmetic (half the bytes of the 64-bit hash). Computed from a running sum, not L passes:
    with y[t] = (x[t]+1) * B**-t (B is odd, so invertible mod 2**32) and C its prefix sums, H(i) = (C[i+L] - C[i]) * B**(i+L-1).
    Windows with the same whole hash (:func:`_whole_hash`) have the same low bits, so filtering on these loses none of them."""

    B = 1_000_003

    def __init__(self, x: np.ndarray, L: int):
        self.x, self.L, self.m, self.pw, self.inv = x, L, 0, None, None

    def __call__(self, lo: int, hi: int) -> np.ndarray:
        """The low 32 bits of the hashes of windows lo..hi-1 (powers counted from lo)."""
        L = self.L
        m = hi - lo + L - 1
        if self.m < m:
            self.m, self.pw, self.inv = m, _power_table(self.B, m, np.uint32), _power_table(pow(self.B, -1, 1 << 32), m, np.uint32)
        seg = self.x[lo : lo + m].astype(np.uint32)
        seg += np.uint32(1)
        seg *= self.inv[:m]
        c = np.empty(m + 1, dtype=np.uint32)
        c[0] = 0
        np.cumsum(seg, out=c[1:])
        h = c[L:] - c[: m + 1 - L]
        h *= self.pw[L - 1 : m]
        return h


def _whole_hash(x: np.ndarray, L: int, starts: np.ndarray) -> np.ndarray:
    """The whole hash mod 2**64 of the windows at ``starts`` (Horner's rule over their L spins)."""
    h = np.zeros(starts.size, dtype=np.uint64)
    B = np.uint64(_WindowHashes.B)
    for j in range(L):  # loop over the L spins of a window, for the few candidate windows
        h *= B
        h += x[starts + j].astype(np.uint64) + np.uint64(1)
    return h


def _low_bits_twice(hashes: _WindowHashes, n_win: int) -> np.ndarray:
    """The low 32 bits of every hash (4 bytes a window), sorted in place: the values that occur twice."""
    top = np.empty(n_win, dtype=np.uint32)
    for lo, hi in spans(n_win, _HASH_SPAN * chunks.CHUNK):
        top[lo:hi] = hashes(lo, hi)
    top.sort()
    twice = [top[lo:hi][top[lo + 1 : hi + 1] == top[lo:hi]] for lo, hi in spans(n_win - 1)]
    del top
    return arrayops.unique(np.concatenate(twice)) if twice else np.zeros(0, dtype=np.uint32)


def _candidates(hashes: _WindowHashes, n_win: int, twice: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The windows whose low bits occur twice (a superset of those whose whole hash does), in spin order
    with their whole hash: equal hashes sort next to each other as among all windows."""
    cand = []
    seen20 = np.zeros(1 << 20, dtype=bool)  # a 1 MB table of their top 20 bits (it stays in cache): a cheap first filter
    seen20[twice >> np.uint32(12)] = True
    span = _HASH_SPAN * chunks.CHUNK
    top20 = np.empty(min(span, n_win), dtype=np.intp)  # (intp: np.take converts no index)
    for lo, hi in spans(n_win, span):
        h = hashes(lo, hi)
        t20 = top20[: hi - lo]
        np.right_shift(h, 12, out=t20)
        sel = np.flatnonzero(np.take(seen20, t20))
        i = np.minimum(np.searchsorted(twice, h[sel]), twice.size - 1)
        cand.append(sel[twice[i] == h[sel]] + lo)
    cand = np.concatenate(cand)
    return cand, _whole_hash(hashes.x, hashes.L, cand)


def _members(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Where ``values`` (uint32) is one of ``sorted_values`` (few; sorted, distinct): the values whose top 16 bits
    are among theirs, in a 64 KB table, then those few searched (a binary search of every value is 8x slower)."""
    if sorted_values.size == 0:
        return np.zeros(0, dtype=np.intp)
    top = np.zeros(1 << 16, dtype=bool)
    top[sorted_values >> np.uint32(16)] = True
    maybe = np.flatnonzero(np.take(top, values >> np.uint32(16)))
    i = np.minimum(np.searchsorted(sorted_values, values[maybe]), sorted_values.size - 1)
    return maybe[sorted_values[i] == values[maybe]]


def _sampled_candidates(x: np.ndarray, L: int, k: int) -> np.ndarray | None:
    """Every window that has a twin (an equal window elsewhere), and a few others, in spin order; None when
    the sample cannot be selective (few pockets, or many repeated k-grams): the caller then sorts every window.

    A window of L spins holds the k-grams (kk = L // 2 spins) starting at its first s = L - kk + 1 spins, one of
    them at a multiple of s. Those sampled k-grams' hashes go into a bit table (32 bits a sample); every k-gram of
    the record is looked up in it, and the hits sorted: a value hit twice is a k-gram at two places, and the
    windows holding either place at the same offset are candidates. A window p with a twin p' holds a sampled
    k-gram at p + o (o < s) and p' the same k-gram at p' + o: both are hit with the same value, so both windows
    are candidates. Only about n / s + n / 32 hashes are sorted, not n; no window with a twin is missed, so
    :func:`_true_copies` finds the same copies as from every window's hash."""
    n = x.size
    kk = L // 2
    s = L - kk + 1
    n_kg, n_win = n - kk + 1, n - L + 1
    if L < 8 or kk * np.log2(max(k, 2)) < np.log2(n) + 10:  # k**kk < 1024 n: k-grams repeat by chance too often
        return None
    sample = _whole_hash(x, kk, np.arange(0, n_kg, s)).astype(np.uint32)  # (its low 32 bits: _WindowHashes(x, kk)'s values)
    bits = min(int(sample.size).bit_length() + 5, 32)
    shift = np.uint32(32 - bits)
    table = np.zeros(1 << max(bits - 3, 0), dtype=np.uint8)
    top = sample >> shift
    np.bitwise_or.at(table, top >> np.uint32(3), np.left_shift(np.uint8(1), (top & np.uint32(7)).astype(np.uint8)))
    hashes = _WindowHashes(x, kk)
    where, values = [], []
    for lo, hi in spans(n_kg, _HASH_SPAN * chunks.CHUNK):
        h = hashes(lo, hi)
        t = h >> shift
        hit = np.flatnonzero((np.take(table, t >> np.uint32(3)) >> (t & np.uint32(7)).astype(np.uint8)) & np.uint8(1))
        where.append(hit + lo)
        values.append(h[hit])
    where, values = np.concatenate(where), np.concatenate(values)
    srt = np.sort(values)
    twice = arrayops.unique(srt[1:][srt[1:] == srt[:-1]])
    where = where[_members(values, twice)]
    if where.size * s > max(n_win // 8, 1 << 12):  # many repeated k-grams (a long pasted block, a biased record)
        return None
    cand = (where[:, None] - np.arange(s)).ravel()
    return arrayops.unique(cand[(cand >= 0) & (cand < n_win)])


def _true_copies(x: np.ndarray, L: int, cand: np.ndarray, cand_h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, later) starts of the candidate windows equal to their neighbour in (hash, spins, position) order,
    at least L apart (true copies, not overlapping runs): each window with the one of the same spins before it."""
    win = np.lib.stride_tricks.sliding_window_view(x, L)
    order = np.argsort(cand_h, kind="stable")
    same, eq = _hash_neighbours(win, cand, cand_h, order)
    if not eq.all():  # windows of other spins with the same 64-bit hash: equal windows may not be neighbours
        order = _collisions_by_spins(win, cand, cand_h, order, arrayops.unique(cand_h[order[same[~eq]]]))
        same, eq = _hash_neighbours(win, cand, cand_h, order)
    a, b = cand[order[same]], cand[order[same + 1]]  # (cand is in spin order: positions break the ties of both sorts)
    first, later = np.minimum(a, b), np.maximum(a, b)
    ok = eq & (later - first >= L)
    return first[ok], later[ok]


def _hash_neighbours(win: np.ndarray, cand: np.ndarray, cand_h: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where ``order`` puts two candidates with the same hash next to each other, and whether their spins are equal."""
    same = np.flatnonzero(cand_h[order[1:]] == cand_h[order[:-1]])
    return same, np.all(win[cand[order[same]]] == win[cand[order[same + 1]]], axis=1)


def _collisions_by_spins(win: np.ndarray, cand: np.ndarray, cand_h: np.ndarray, order: np.ndarray, bad: np.ndarray) -> np.ndarray:
    """``order`` (by hash) with the candidates of the hashes ``bad`` (sorted; each shared by windows of different
    spins) sorted by hash, spins, then position: a lexicographic sort of those few windows' L spins, in their slots."""
    hs = cand_h[order]
    slots = np.flatnonzero(bad[np.minimum(np.searchsorted(bad, hs), bad.size - 1)] == hs)
    sub = order[slots]
    rows = win[cand[sub]]
    keys = [cand[sub]] + [rows[:, j] for j in range(rows.shape[1] - 1, -1, -1)] + [hs[slots]]
    out = order.copy()
    out[slots] = sub[np.lexsort(keys)]
    return out


def time_order(timestamps) -> dict:
    """Timestamps (in record order) that go backwards or repeat exactly.

    Parameters
    ----------
    timestamps : (n,) array_like of int or datetime64
        In the order the records were written.

    Returns
    -------
    dict
        ``backwards``: steps to an earlier time; ``repeats``: steps to the same time;
        ``steps``: n - 1; ``first_backwards``: up to five 0-based indices.
    """
    t = np.asarray(timestamps)
    if t.size < 2:
        return {"steps": 0, "backwards": 0, "repeats": 0, "first_backwards": []}
    d = t[1:] - t[:-1]
    zero = np.zeros((), dtype=d.dtype)
    back = np.flatnonzero(d < zero)
    return {"steps": int(d.size), "backwards": int(back.size), "repeats": int(np.count_nonzero(d == zero)),
            "first_backwards": [int(i + 1) for i in back[:5]]}


def id_order(spin_ids) -> dict:
    """Numeric spin ids (in the order used for the tests) that go backwards or repeat.

    Returns
    -------
    dict
        ``steps``, ``backwards``, ``repeats``, ``first_backwards`` as in :func:`time_order`.
    """
    s = np.asarray(spin_ids)
    if s.dtype.kind not in "iu":
        raise InputError("spin ids must be integers for the order check")
    return time_order(s)


def excess_text(ev: dict) -> str:
    """One sentence stating a boundary-repeat finding's evidence."""
    b, w = ev["boundary"], ev["within"]
    pct = lambda v: "n/a" if v is None else f"{v:+.1%}"  # noqa: E731
    return (
        f"the same number twice in a row occurs {b['repeats']:,} times where a new line of the file begins against "
        f"{b['expected']:,.0f} expected ({pct(b['relative_excess'])}), but {w['repeats']:,} times within lines against "
        f"{w['expected']:,.0f} ({pct(w['relative_excess'])}); Fisher's exact test that repeats are more frequent at line "
        f"starts: p = {_p(ev['difference_pvalue'])}"
    )


def _p(p: float) -> str:
    if p < 1e-300:
        return "< 1e-300"
    if p < 1e-4:
        return f"{p:.1e}"
    return f"{p:.4f}".rstrip("0").rstrip(".") if p < 1 else "1"
