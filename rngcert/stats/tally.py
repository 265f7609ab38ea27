"""Tallies: the sufficient statistics of spin logs and shoes, merged by addition (DESIGN §2).

A collector reduces what it reads to a tally; tests that only need counts consume the tally. Two
tallies of consecutive chunks of one table add up to exactly the tally of the whole table (the
pair that straddles the chunk boundary is counted once, by ``__add__``), so a log read in chunks,
or tables split over workers, give the one-pass result. Tests that need the order (runs, gap,
serial correlation, predictor) keep the outcomes as compact integer arrays beside the tally.

Examples
--------
>>> import numpy as np
>>> from rngcert.stats.tally import SpinTally
>>> x = np.array([3, 3, 5, 0, 36, 3])
>>> a, b = SpinTally.of(x[:2], 37), SpinTally.of(x[2:], 37)
>>> (a + b) == SpinTally.of(x, 37)
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from rngcert.errors import InputError
from rngcert.stats.chunks import lookup, narrow

__all__ = ["RunTally", "SpinTally", "ShoeTally"]


@dataclass(frozen=True)
class RunTally:
    """Run boundaries of one two-category partition (colour, parity, low/high) of a spin sequence.

    Attributes
    ----------
    runs : int
        Number of runs of the 0/1 sequence after removing the spins in no category (-1).
    n0, n1 : int
        Spins in category 0 and 1.
    first, last : int
        First and last category value (0/1) of the filtered sequence, -1 when it is empty: what
        ``__add__`` needs to tell whether a run continues across a chunk boundary.
    """

    runs: int = 0
    n0: int = 0
    n1: int = 0
    first: int = -1
    last: int = -1

    @classmethod
    def of(cls, binary: np.ndarray) -> "RunTally":
        """Tally of a 0/1/-1 sequence in spin order."""
        b = np.asarray(binary)
        b = b[b >= 0]
        if b.size == 0:
            return cls()
        n1 = int(np.count_nonzero(b))
        return cls(int(1 + np.count_nonzero(b[1:] != b[:-1])), int(b.size - n1), n1, int(b[0]), int(b[-1]))

    def __add__(self, other: "RunTally") -> "RunTally":
        if self.first < 0:
            return other
        if other.first < 0:
            return self
        joined = 1 if self.last == other.first else 0
        return RunTally(self.runs + other.runs - joined, self.n0 + other.n0, self.n1 + other.n1, self.first, other.last)


#: Longest array whose pair keys :meth:`SpinTally.of` makes in intp (a chunk of :func:`chunked_tally`'s 64 Ki spins).
_INTP_KEYS = 1 << 20


_PART_CONSTS: dict = {}


def _part_consts(part) -> tuple:
    """(values, in-category mask, category-1 and category-0 indicators, changes indicator over the (k, k) pair
    table (int64, flat), the no-category table for :func:`lookup`) of a partition, made once per partition."""
    pt = np.asarray(part)
    key = (pt.dtype.str, pt.tobytes())
    c = _PART_CONSTS.get(key)
    if c is None:
        ok = pt >= 0
        differ = ((pt[:, None] != pt[None, :]) & ok[:, None] & ok[None, :]).astype(np.int64).ravel()
        c = (pt, ok, (pt == 1).astype(np.int64), (pt == 0).astype(np.int64), differ, narrow((~ok).astype(np.int8)), ok.tobytes())
        if len(_PART_CONSTS) < 64:  # (a handful of partitions per process)
            _PART_CONSTS[key] = c
    return c


def _partition_runs(x: np.ndarray, counts: np.ndarray, pairs: np.ndarray, partitions: Mapping[str, np.ndarray]) -> dict[str, RunTally]:
    """``{name: RunTally.of(part[x])}`` for each partition, from the pair table and the spins in no category.

    The spins of a partition's categories follow each other either as consecutive spins (their changes are
    the pair table's entries between the two categories) or across a stretch of spins in no category (-1:
    the zero), whose neighbours are looked up. Partitions with the same spins in no category (colour,
    parity, low/high) share that stretch. Integer counts: the RunTally of the filtered sequence exactly."""
    out: dict[str, RunTally] = {}
    n = x.size
    shared: dict[bytes, tuple] = {}
    flat_pairs = pairs.ravel()
    for name, part in partitions.items():
        pt, ok, is1, is0, differ, none_table, sig = _part_consts(part)
        n1, n0 = int(counts @ is1), int(counts @ is0)
        if n0 + n1 == 0:
            out[name] = RunTally()
            continue
        if sig not in shared:  # the stretches of spins in no category: their first and last spin
            none = np.flatnonzero(~ok)
            if none.size == 1:  # one pocket in no category (the zero): a comparison
                bad = np.flatnonzero(x == none[0])
            else:
                bad = np.zeros(0, dtype=np.intp) if none.size == 0 else np.flatnonzero(lookup(none_table, x).view(bool))
            if bad.size:
                brk = np.flatnonzero(np.diff(bad) != 1)
                s0, s1 = np.concatenate((bad[:1], bad[brk + 1])), np.concatenate((bad[brk], bad[-1:]))
                inner = (s0 > 0) & (s1 < n - 1)
                i0 = int(s1[0]) + 1 if s0[0] == 0 else 0  # the first and last spin in a category
                i1 = int(s0[-1]) - 1 if s1[-1] == n - 1 else n - 1
                shared[sig] = (x[s0[inner] - 1], x[s1[inner] + 1], i0, i1)
            else:
                shared[sig] = (bad, bad, 0, n - 1)
        before, after, i0, i1 = shared[sig]
        changes = int(flat_pairs @ differ) + int(np.count_nonzero(pt[before] != pt[after]))
        out[name] = RunTally(1 + changes, n0, n1, int(pt[x[i0]]), int(pt[x[i1]]))
    return out


@dataclass(frozen=True)
class SpinTally:
    """Sufficient statistics of one table's accepted spins in spin order.

    Attributes
    ----------
    k : int
        Number of outcome ids (pockets in wheel order, or symbols).
    counts : (k,) ndarray of int64
        Outcome counts.
    pairs : (k, k) ndarray of int64
        ``pairs[i, j]`` = number of consecutive spins (i then j).
    first, last : int
        First and last outcome id (-1 for an empty tally).
    runs : mapping of str to RunTally
        Run boundaries per two-category partition, keyed by the partition's name.
    group_counts : mapping of str to (k,) ndarray
        Outcome counts per dealer × direction group label (empty when the log has neither).
    release_offsets : mapping of str to (k,) ndarray
        Per group, counts of the landing offset ``(pocket - release pocket) mod k`` over spins
        with a known release pocket.

    Notes
    -----
    ``a + b`` is the tally of the spins of ``a`` followed by those of ``b``: counts, group counts
    and offsets add; the pair ``(a.last, b.first)`` is added once; run counts are joined at the
    boundary. Addition is associative, and ``SpinTally.empty(k)`` is its identity.
    """

    k: int
    counts: np.ndarray
    pairs: np.ndarray
    first: int = -1
    last: int = -1
    runs: Mapping[str, RunTally] = field(default_factory=dict)
    group_counts: Mapping[str, np.ndarray] = field(default_factory=dict)
    release_offsets: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def n(self) -> int:
        """Number of spins tallied."""
        return int(self.counts.sum())

    @classmethod
    def empty(cls, k: int) -> "SpinTally":
        """The tally of no spins (the identity of ``+``)."""
        return cls(int(k), np.zeros(int(k), dtype=np.int64), np.zeros((int(k), int(k)), dtype=np.int64))

    # long: one chunk's every field (pocket counts, pair table, partition runs, per-group counts, release offsets), each one pass
    @classmethod
    def of(
        cls,
        outcomes,
        k: int,
        *,
        partitions: Mapping[str, np.ndarray] | None = None,
        groups: np.ndarray | None = None,
        group_labels: tuple[str, ...] = (),
        release: np.ndarray | None = None,
    ) -> "SpinTally":
        """Tally of one chunk of spins.

        Parameters
        ----------
        outcomes : (n,) array_like of int
            Outcome ids in ``0..k-1``, in spin order.
        k : int
            Number of outcome ids.
        partitions : mapping of str to (k,) int array, optional
            Two-category partitions (values 0, 1 or -1 for "in neither") whose run boundaries
            are tallied, e.g. ``{"colour": red_or_black}``.
        groups : (n,) int array, optional
            Group index of each spin into ``group_labels`` (dealer × direction).
        group_labels : tuple of str
            Names of the groups; tallies are keyed by name, so chunks may number groups apart.
        release : (n,) int array, optional
            Release pocket per spin, -1 where unknown.

        Raises
        ------
        InputError
            Outcomes outside ``0..k-1`` or arrays of different lengths.
        """
        x = np.asarray(outcomes)
        k = int(k)
        if x.ndim != 1 or (x.size and x.dtype.kind not in "iu"):
            raise InputError(f"outcomes must be a 1-D integer array, got shape {x.shape} dtype {x.dtype}")
        if x.size and (int(x.min()) < 0 or int(x.max()) >= k):
            raise InputError(f"outcome ids must lie in 0..{k - 1}")
        # pair keys i * k + j: uint16 where k * k fits (a quarter of intp's bytes: np.bincount converts them to intp in
        # one pass of its own, and 37 * 37 keys of a 256 Ki-spin chunk stay in the CPU caches; 10 M spins 0.022 -> 0.017
        # CPU-s), else intp for a chunk and int32 where k * k fits for a long array; the counts are the pairs' column
        # sums and the first spin
        kd = np.uint16 if k * k <= 1 << 16 else np.intp if x.size <= _INTP_KEYS or k * k >= 2**31 else np.int32
        xk = x.astype(kd, copy=False)
        if x.size > 1:
            key = xk[:-1] * xk.dtype.type(k)
            key += xk[1:]
            pairs = np.bincount(key, minlength=k * k).astype(np.int64).reshape(k, k)
            del key
            counts = pairs.sum(axis=0)
            counts[x[0]] += 1
        else:
            pairs = np.zeros((k, k), np.int64)
            counts = np.bincount(xk, minlength=k).astype(np.int64)
        runs = _partition_runs(x, counts, pairs, partitions or {})
        xi = x.astype(np.intp, copy=False) if groups is not None or release is not None else None
        gc: dict[str, np.ndarray] = {}
        ro: dict[str, np.ndarray] = {}
        if groups is not None:
            g = np.asarray(groups)
            if g.shape != x.shape:
                raise InputError("groups must have one entry per spin")
            for gi, label in enumerate(group_labels):
                sel = g == gi
                if sel.any():
                    gc[label] = np.bincount(xi[sel], minlength=k).astype(np.int64)
        if release is not None:
            r = np.asarray(release)
            if r.shape != x.shape:
                raise InputError("release must have one entry per spin")
            ok = r >= 0
            g = np.asarray(groups) if groups is not None else np.zeros(x.size, dtype=np.intp)
            labels = group_labels if groups is not None else ("all spins",)
            off = (xi - r) % k
            for gi, label in enumerate(labels):
                sel = ok & (g == gi)
                if sel.any():
                    ro[label] = np.bincount(off[sel], minlength=k).astype(np.int64)
        first, last = (int(x[0]), int(x[-1])) if x.size else (-1, -1)
        return cls(k, counts, pairs, first, last, runs, gc, ro)

    def __add__(self, other: "SpinTally") -> "SpinTally":
        if not isinstance(other, SpinTally):
            return NotImplemented
        if other.k != self.k:
            raise InputError(f"cannot add tallies of {self.k} and {other.k} outcomes")
        pairs = self.pairs + other.pairs
        if self.last >= 0 and other.first >= 0:
            pairs[self.last, other.first] += 1
        runs = dict(self.runs)
        for name, rt in other.runs.items():
            runs[name] = runs[name] + rt if name in runs else rt
        return SpinTally(
            self.k,
            self.counts + other.counts,
            pairs,
            self.first if self.first >= 0 else other.first,
            other.last if other.last >= 0 else self.last,
            runs,
            _add_maps(self.group_counts, other.group_counts),
            _add_maps(self.release_offsets, other.release_offsets),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpinTally):
            return NotImplemented
        return (
            self.k == other.k
            and np.array_equal(self.counts, other.counts)
            and np.array_equal(self.pairs, other.pairs)
            and (self.first, self.last) == (other.first, other.last)
            and _nonempty_runs(self.runs) == _nonempty_runs(other.runs)
            and _maps_equal(self.group_counts, other.group_counts)
            and _maps_equal(self.release_offsets, other.release_offsets)
        )

    __hash__ = None  # mutable arrays inside

    def distance_counts(self, lag_pairs: np.ndarray | None = None) -> np.ndarray:
        """Counts of the wheel distance ``(next - previous) mod k`` of consecutive spins, from
        :attr:`pairs` (``(k,)`` int64)."""
        p = self.pairs if lag_pairs is None else lag_pairs
        k = self.k
        i, j = np.indices((k, k))
        return np.bincount(((j - i) % k).ravel(), weights=p.ravel(), minlength=k).astype(np.int64)


@dataclass(frozen=True)
class ShoeTally:
    """Sufficient statistics of shoes before and after a shuffle, merged by addition.

    Attributes
    ----------
    n_cards : int
        Cards per shoe.
    shoes : int
        Shoes tallied.
    position : (n_cards, n_cards) ndarray of int64
        ``position[i, j]`` = shoes in which the card at position i before the shuffle was dealt at
        position j after it (the card-position matrix of a position chi-square).
    adjacent_kept : (n_cards - 1,) ndarray of int64
        Per position i before the shuffle, shoes in which cards i and i+1 are still neighbours
        (in that order) after it.
    """

    n_cards: int
    shoes: int
    position: np.ndarray
    adjacent_kept: np.ndarray

    @classmethod
    def of(cls, perm) -> "ShoeTally":
        """Tally of shoes given as permutations.

        Parameters
        ----------
        perm : (n_shoes, n_cards) int array
            ``perm[s, i]`` = position after the shuffle of the card at position ``i`` before it.
        """
        p = np.asarray(perm)
        if p.ndim != 2:
            raise InputError(f"perm must be 2-D (n_shoes, n_cards), got shape {p.shape}")
        m, n = p.shape
        flat = (np.arange(n)[None, :] * n + p).ravel()
        position = np.bincount(flat, minlength=n * n).astype(np.int64).reshape(n, n)
        kept = np.count_nonzero(p[:, 1:] - p[:, :-1] == 1, axis=0).astype(np.int64)
        return cls(n, m, position, kept)

    def __add__(self, other: "ShoeTally") -> "ShoeTally":
        if not isinstance(other, ShoeTally):
            return NotImplemented
        if other.n_cards != self.n_cards:
            raise InputError(f"cannot add shoe tallies of {self.n_cards} and {other.n_cards} cards")
        return ShoeTally(self.n_cards, self.shoes + other.shoes, self.position + other.position, self.adjacent_kept + other.adjacent_kept)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShoeTally):
            return NotImplemented
        return (self.n_cards, self.shoes) == (other.n_cards, other.shoes) and np.array_equal(self.position, other.position) and np.array_equal(
            self.adjacent_kept, other.adjacent_kept
        )

    __hash__ = None


def _add_maps(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {key: v.copy() for key, v in a.items()}
    for key, v in b.items():
        out[key] = out[key] + v if key in out else v.copy()
    return out


def _maps_equal(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> bool:
    a = {key: v for key, v in a.items() if np.any(v)}
    b = {key: v for key, v in b.items() if np.any(v)}
    return a.keys() == b.keys() and all(np.array_equal(a[key], b[key]) for key in a)


def _nonempty_runs(r: Mapping[str, RunTally]) -> dict[str, RunTally]:
    """Run tallies without the empty ones (a partition of no spins equals a missing one)."""
    return {key: v for key, v in r.items() if v != RunTally()}
