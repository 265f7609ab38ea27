"""Spin ids out of file order, in constant memory: the compact log (:class:`_CompactLog`) keeps, per table,
the runs in which the ids go monotonically up or down in the file (a newest-first export is one run a batch;
a row where the ids turn is a run of its own),
and puts the table's spins in spin-id order from those runs, as the exact path's sort does.

Per run it keeps its id range, direction, the runs of consecutive ids (for the gap count), where its
accepted and live rows are in the table, and the timestamp and outcome of its lowest- and highest-id
live rows (for the time-order and near-duplicate checks across runs). Runs whose id ranges overlap
(a repeated id, two interleaved sequences, or ascending parts joined out of order, which this does not
tell from a gap), a timestamp that goes back in spin-id order, a possible
near-duplicate round, or ids so far out of order that the runs are many raise :class:`NotInRuns`
(the compact log's :class:`_NeedExact`): the exact path reads the log then.
"""

from __future__ import annotations

import numpy as np

from rngcert.collect.spinids import PREFIXED_ID
from rngcert.stats import arrayops

#: Runs per batch of a table at most (beyond, the ids are shuffled rather than in runs: the exact path sorts them).
RUNS_PER_ROWS = 64
#: Runs of a table at most.
MAX_RUNS = 200_000
#: Runs of consecutive ids (kept for the gap count) of the whole log at most, as the compact log's.
MAX_GAP_RUNS = 4_000_000

class NotInRuns(Exception):
    """The ids of a table are not in runs this module can put in order (the reason is the message)."""


class Shuffled(NotInRuns):
    """The ids are too far out of order for runs, but may be sorted out of core (:mod:`.idsort`)."""


#: The note the exact path gives a table whose rows it puts in spin-id order.
ORDER_NOTE = "rows were not in spin_id order in the file; put in spin_id order"


class IdRuns:
    """The monotone runs of the spin ids of every table of a log (see the module docstring)."""

    def __init__(self):
        self.runs: dict[int, list[tuple]] = {}
        self.acc_n: dict[int, int] = {}
        self.live_n: dict[int, int] = {}
        self.gap_runs = 0
        self.ties_ok = True  # False: equal timestamps of live rows raise NotInRuns

    def state(self):
        return ({t: list(r) for t, r in self.runs.items()}, dict(self.acc_n), dict(self.live_n), self.gap_runs, self.ties_ok)

    def restore(self, st) -> None:
        runs, acc_n, live_n, self.gap_runs, self.ties_ok = st
        self.runs, self.acc_n, self.live_n = {t: list(r) for t, r in runs.items()}, dict(acc_n), dict(live_n)

    def add(self, t: int, v: np.ndarray, live: np.ndarray, acc: np.ndarray, ts: np.ndarray | None, okey: np.ndarray | None, min_us: int) -> None:
        """The rows of table ``t`` in one batch, in file order: ids ``v`` (every row with an id),
        which are live (accepted or void) and accepted, and with ``ts`` their timestamps (and with
        ``okey`` their outcomes, for the near-duplicate check closer than ``min_us``)."""
        n = v.size
        if n == 0:
            return
        d = np.diff(v)
        if np.any(d == 0):
            raise Shuffled("a spin id repeats")
        s = np.sign(d)
        turn = np.flatnonzero(s[1:] != s[:-1]) + 1  # rows where the ids turn (a peak or a trough): a run of their own,
        starts = arrayops.unique(np.r_[0, turn, turn + 1])  # so that runs on either side keep apart (999 | 1000 … 1999 down | 0 … up)
        starts = starts[starts < n]
        if starts.size > n // RUNS_PER_ROWS + 4:
            raise Shuffled("spin ids shuffled, not in runs")
        ends = np.r_[starts[1:], n]
        runs = self.runs.setdefault(t, [])
        if len(runs) + starts.size > MAX_RUNS:
            raise Shuffled("too many runs of spin ids out of order")
        cl = np.r_[0, np.cumsum(live)]
        ca = np.r_[0, np.cumsum(acc)]
        l0, a0 = self.live_n.get(t, 0), self.acc_n.get(t, 0)
        for a, b in zip(starts.tolist(), ends.tolist()):  # (the runs: a few a batch)
            step = int(s[a]) if b - a > 1 else 1
            vv = v[a:b] if step > 0 else v[a:b][::-1]
            brk = np.flatnonzero(np.diff(vv) != 1) + 1
            self.gap_runs += brk.size + 1
            if self.gap_runs > MAX_GAP_RUNS:
                raise Shuffled("too many gaps in the spin ids to keep as runs")
            lo_end = hi_end = None
            if ts is not None:
                lv = live[a:b]
                tl = ts[a:b][lv] if step > 0 else ts[a:b][lv][::-1]
                if tl.size:
                    dt = np.diff(tl)
                    if np.any(dt < 0):
                        raise NotInRuns("timestamps out of order")
                    if not self.ties_ok and np.any(dt == 0):
                        raise NotInRuns("equal timestamps")
                    ol = None
                    if okey is not None:
                        ol = okey[a:b][lv] if step > 0 else okey[a:b][lv][::-1]
                    if min_us > 0 and np.any(dt < 2 * min_us):  # a near-duplicate round, or rounds this fast: the exact path's
                        raise NotInRuns("rounds closer than twice the minimum round interval")  # findings and notes
                    lo_end = (int(tl[0]), None if ol is None else int(ol[0]))
                    hi_end = (int(tl[-1]), None if ol is None else int(ol[-1]))
            runs.append((int(vv[0]), int(vv[-1]), step, b - a, vv[np.r_[0, brk]], vv[np.r_[brk - 1, vv.size - 1]],
                         a0 + int(ca[a]), a0 + int(ca[b]), l0 + int(cl[a]), l0 + int(cl[b]), lo_end, hi_end))
        self.live_n[t] = l0 + int(cl[-1])
        self.acc_n[t] = a0 + int(ca[-1])

    def finish(self, t: int, min_us: int):
        """``(present, order)`` of table ``t``: ``present`` the gap state ``[ids, highest id, run
        starts, run ends]`` of :meth:`_CompactLog._present`; ``order`` None when the live rows are
        in spin-id order in the file, else the ``(start, end, step)`` slices of the table's accepted
        rows that, joined, put them in spin-id order."""
        runs = sorted(self.runs.get(t, []), key=lambda r: r[0])
        if not runs:
            return None, None
        lo = np.array([r[0] for r in runs], dtype=np.int64)
        hi = np.array([r[1] for r in runs], dtype=np.int64)
        if np.any(lo[1:] <= hi[:-1]):
            raise Shuffled("spin ids of a table repeat or interleave")
        with_live = [r for r in runs if r[9] > r[8]]
        for p, q in zip(with_live[:-1], with_live[1:]):
            if p[11] is None:
                break
            dt = q[10][0] - p[11][0]
            if dt < 0 or (dt == 0 and not self.ties_ok):
                raise NotInRuns("timestamps out of order")
            if min_us > 0 and dt < 2 * min_us:  # (as within a run: add)
                raise NotInRuns("rounds closer than twice the minimum round interval")
        present = [sum(r[3] for r in runs), int(hi[-1]), [r[4] for r in runs], [r[5] for r in runs]]
        in_order = all(r[2] > 0 or r[9] - r[8] < 2 for r in with_live) and all(p[9] <= q[8] for p, q in zip(with_live[:-1], with_live[1:]))
        if in_order:
            return present, None
        return present, [(r[6], r[7], r[2]) for r in runs if r[7] > r[6]]


def reorder(a: np.ndarray, slices) -> None:
    """Put the rows of ``a`` (one table's) in the order of ``slices`` (``(start, end, step)``), in place."""
    src = a.copy()
    o = 0
    for s, e, step in slices:
        a[o : o + e - s] = src[s:e] if step > 0 else src[s:e][::-1]
        o += e - s


#: A text spin id the compact log keeps as a number: letters, then a whole number written without leading zeros
#: (``R100234``, ``spin-17``); one prefix per table, so that the number is the id.
_TEXT_ID = PREFIXED_ID


def text_id_numbers(labels: list[str]) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """The prefixes, and each text id's number and prefix (an index into them), when every one is in
    the shape of :data:`_TEXT_ID` (then two ids are the same text exactly when prefix and number
    are); None otherwise."""
    from rngcert.collect import _arrow

    return text_id_numbers_arrow(_arrow.texts(labels))  # (not pa.array: that imports pandas, 0.5 s)


def text_id_numbers_arrow(arr) -> tuple[list[str], np.ndarray, np.ndarray] | None:
    """:func:`text_id_numbers` of a pyarrow string array (one value a row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rngcert.collect import _arrow

    parts = pc.extract_regex(arr, _TEXT_ID)  # (null where a label is not in the shape)
    if not len(arr) or parts.null_count:
        return None
    prefix = pc.dictionary_encode(parts.field("prefix"))
    num = _arrow.ints(pc.cast(parts.field("number"), pa.int64()))  # (not to_numpy: that imports pandas, 0.5 s)
    return prefix.dictionary.to_pylist(), num, _arrow.ints(prefix.indices)
