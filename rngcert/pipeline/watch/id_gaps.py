"""Gaps in the spin ids of a watched table (:class:`IdGaps`): spins the source never carried
(lost by the wheel controller, the recorder or the export), said as soon as the ids skip.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_EMPTY = np.zeros(0, dtype=np.int64)

#: Gaps of a table said in full, each on its own; later ones are said together, one note per read
#: (ids that rise by another step than one, e.g. one count for all tables, would gap at every row).
SAID_IN_FULL = 20
#: Gaps of a table whose ids are kept (to recognise an id that arrives late inside one); beyond, gaps are counted
#: only: a table whose ids rise by another step than one has a gap at every row, and a watch runs for months.
KEPT_GAPS = 100_000


@dataclass(frozen=True)
class Gap:
    """Spin ids ``first`` to ``last`` missing: the ids went from ``after`` to ``resume``.

    ``index`` is the position, in the ids given to :meth:`IdGaps.update`, of the first row
    with ``resume`` (where the ids resume)."""

    first: int
    last: int
    after: int
    resume: int
    index: int

    @property
    def missing(self) -> int:
        return self.last - self.first + 1


class IdGaps:
    """The spin ids of one table as they are read (their numbers: whole numbers, or text ids of one prefix), checked for gaps.

    The ids of a log rise by one. An id above the highest one seen by more than one opens a gap
    (the ids between are missing); an id that arrives later inside a gap said before fills it
    (``late``: counted once, so that the gap count stays true); an id below the first one seen,
    or one seen before, opens nothing (out of order or repeated: the watch's repeat and conflict
    notes say those). Ids out of order within one read open no gap (a read is checked as a set).
    A table whose ids run newest-first (more of its steps in file order go down than up, across
    reads) is checked the other way too: an id below the lowest one seen by more than one opens a gap.
    Memory: two int64 per gap (the first :data:`KEPT_GAPS`; later gaps are counted only, and an id
    arriving late inside one of them is not recognised) and one per late id; none per spin.

    Attributes
    ----------
    starts, ends : numpy.ndarray
        First and last missing id of each gap said, in order.
    filled : numpy.ndarray
        The ids that arrived late inside a gap (sorted, distinct).
    """

    def __init__(self):
        self.hi: int | None = None
        self.lo: int | None = None
        self.prev: int | None = None  # the last id read (file order), and the steps up and down between ids so far
        self.ups = self.downs = 0
        self.starts = _EMPTY
        self.ends = _EMPTY
        self.filled = _EMPTY
        self.said = 0
        self.uncounted = (0, 0)  # (gaps, ids) beyond KEPT_GAPS: counted, their ids not kept

    def to_say(self, gaps: list[Gap]) -> tuple[list[Gap], list[Gap]]:
        """``gaps`` split into those to say in full (the first :data:`SAID_IN_FULL` of the table) and the rest."""
        k = max(0, min(len(gaps), SAID_IN_FULL - self.said))
        self.said += k
        return gaps[:k], gaps[k:]

    @staticmethod
    def more(table: str, rest: list[Gap], where: str, prefix: str = "") -> str:
        """The note of the gaps of one read beyond the first :data:`SAID_IN_FULL` of a table (``prefix``: of text ids, ``R``)."""
        n = sum(g.missing for g in rest)
        return (f"table {table}: {len(rest):,} more gap(s) in the spin ids ({n:,} id(s) missing, the last from {prefix}{rest[-1].first} to "
                f"{prefix}{rest[-1].last}, resuming at {where}); the first {SAID_IN_FULL} gaps of a table are said in full, every one is counted")

    @property
    def gaps(self) -> int:
        """Gaps said."""
        return int(self.starts.size) + self.uncounted[0]

    @property
    def late(self) -> int:
        """Ids that arrived after their gap was said."""
        return int(self.filled.size)

    @property
    def missing(self) -> int:
        """Ids still missing: those of the gaps said, less those that arrived late."""
        return int((self.ends - self.starts + 1).sum()) + self.uncounted[1] - self.late

    def update(self, ids: np.ndarray, *, excuse: tuple[int, int] | None = None) -> tuple[list[Gap], np.ndarray]:
        """Check the ids of one read (in file order).

        Parameters
        ----------
        ids : numpy.ndarray
            int64 whole-number spin ids of the table's rows in this read, in file order.
        excuse : (int, int), optional
            ``(after, resume)`` of a jump already said otherwise (a lost rotation): not a gap here.

        Returns
        -------
        gaps : list of Gap
            The new gaps, in id order.
        late : numpy.ndarray
            Indices in ``ids`` of the first row of each id that filled a gap said before.
        """
        ids = np.asarray(ids, dtype=np.int64)
        if not ids.size:
            return [], _EMPTY
        d = np.diff(ids if self.prev is None else np.r_[self.prev, ids])
        self.ups, self.downs, self.prev = self.ups + int((d > 0).sum()), self.downs + int((d < 0).sum()), int(ids[-1])
        u, first = np.unique(ids, return_index=True)
        late = self._fill(u, first)
        lo = self.lo
        below = self._below(u, first, excuse) if lo is not None and self.downs > self.ups else []
        self.lo = int(u[0]) if lo is None else min(lo, int(u[0]))
        above = np.ones(u.size, dtype=bool) if self.hi is None else u > self.hi
        ua, fa = u[above], first[above]
        if not ua.size:
            return below, late
        seq = ua if self.hi is None else np.concatenate([[self.hi], ua])
        off = 1 if self.hi is None else 0
        g = np.flatnonzero(np.diff(seq) > 1)
        if excuse is not None:
            g = g[(seq[g] != excuse[0]) | (seq[g + 1] != excuse[1])]
        self.hi = int(ua[-1])
        if not g.size:
            return below, late
        self._keep(seq[g] + 1, seq[g + 1] - 1)
        res = fa[g + off]  # seq[g + 1] is ua[g + off]
        gaps = [Gap(a + 1, b - 1, a, b, i) for a, b, i in zip(seq[g].tolist(), seq[g + 1].tolist(), res.tolist())]
        return below + gaps, late

    def _below(self, u: np.ndarray, first: np.ndarray, excuse: tuple[int, int] | None) -> list[Gap]:
        """The gaps below the lowest id seen of a newest-first table (``u`` sorted, distinct; ``first`` their indices),
        in file order (highest first): the ids go down from ``after`` to ``resume``."""
        sel = u < self.lo
        ub, fb = u[sel], first[sel]
        if not ub.size:
            return []
        seq = np.r_[ub, self.lo]
        g = np.flatnonzero(np.diff(seq) > 1)
        if excuse is not None:
            g = g[(seq[g + 1] != excuse[0]) | (seq[g] != excuse[1])]
        if not g.size:
            return []
        self._keep(seq[g] + 1, seq[g + 1] - 1)
        return [Gap(a + 1, b - 1, b, a, i) for a, b, i in zip(seq[g].tolist()[::-1], seq[g + 1].tolist()[::-1], fb[g].tolist()[::-1])]

    def _keep(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Remember new gaps (the first :data:`KEPT_GAPS` of the table; later ones only counted)."""
        room = max(0, KEPT_GAPS - int(self.starts.size))
        self.starts = np.concatenate([self.starts, starts[:room]])
        self.ends = np.concatenate([self.ends, ends[:room]])
        if self.starts.size > 1 and self.starts[0] > self.starts[-1]:  # (a newest-first table's gaps come below: kept sorted)
            o = np.argsort(self.starts, kind="stable")
            self.starts, self.ends = self.starts[o], self.ends[o]
        if starts.size > room:
            g, n = self.uncounted
            self.uncounted = (g + int(starts.size - room), n + int((ends[room:] - starts[room:] + 1).sum()))

    def _fill(self, u: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Ids of ``u`` (sorted, distinct) inside a gap said before and not filled yet: remembered;
        their indices (``first``) returned."""
        if not self.starts.size:
            return _EMPTY
        k = np.searchsorted(self.starts, u, side="right") - 1
        inside = (k >= 0) & (u <= self.ends[np.maximum(k, 0)])
        if self.filled.size:
            j = np.minimum(np.searchsorted(self.filled, u), self.filled.size - 1)
            inside &= self.filled[j] != u
        if not inside.any():
            return _EMPTY
        self.filled = np.union1d(self.filled, u[inside])
        return first[inside]
