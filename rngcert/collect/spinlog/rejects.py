"""The rows repeated spin ids reject on the compact path, kept compact: a few integers a row, made into
:class:`RejectedRow` objects (with the reasons :func:`_mark_repeats` words) only when they are read.

A log of 10^8 spins with every 1,000th row exported twice has 10^5 such rows; as objects with their
reasons they took about 420 bytes each (42 MB), here about 40 (the records of the repeated ids and
one index a row). :class:`RejectedRows` is the log's ``rejected`` sequence when it holds any: the
other rejects (few, as objects) and these, merged in the order the exact path gives them (per file,
by line, stable).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rngcert.collect.spinlog.core import RejectedRow
from rngcert.collect.spinlog.order import DUPLICATE_REASON, _result_label


class RepeatRejects:
    """The rejected rows of the repeated spin ids of a log, table by table (see the module docstring).

    Parameters
    ----------
    wheel : Wheel
        Names the results in the reasons.
    names : list of str
        The files' names, by file index.
    colnames : list of str
        The name of each file's spin-id column (as the reasons give it).
    """

    def __init__(self, wheel, names: list[str], colnames: list[str]):
        self.wheel, self.names, self.colnames = wheel, list(names), list(colnames)
        self._labels_pos = wheel.position_space().labels if wheel.order_known else ()
        self._blocks: list[tuple[np.ndarray, ...]] = []  # per table: ids, files, lines, outcome keys of its repeated ids' live rows
        self._conflict: dict[tuple[int, int], str] = {}  # (block, first record of a conflict) -> its reason (one per conflicting id)
        self._result: dict[int, str] = {}  # outcome key -> result label
        self._rows: list[np.ndarray] = []  # per table: (block, record, first record of its id) of each rejected row
        self._rows_all: np.ndarray | None = None

    def result(self, okey: int) -> str:
        """The result of an outcome key (:func:`outcome_key`) as the reasons name it."""
        got = self._result.get(okey)
        if got is None:
            rest = okey >> 1  # (outcome_key: ((pos + 1) * 65536 + sym + 1) * 2 + void)
            one = {"void_mask": [bool(okey & 1)], "pos": [int(rest // 65536 - 1)], "sym": [int(rest % 65536 - 1)]}
            got = self._result[okey] = _result_label(one, 0, self.wheel, self._labels_pos)
        return got

    def _at(self, b: int, j: int, ref: int) -> str:
        """Where record ``j`` of block ``b`` is, with its file's name when that is not the file of record ``ref``."""
        _, files, lines, _ = self._blocks[b]
        return f"line {int(lines[j])}" if files[j] == files[ref] else f"{self.names[int(files[j])]} line {int(lines[j])}"

    # long: one table's repeated ids in one pass (few: at most MAX_REPEATS), the notes worded as _mark_repeats words them
    def add_table(self, groups: np.ndarray) -> tuple[list[str], dict[int, list[int]], int, int]:
        """Add the rejects of one table's repeated ids (the records :meth:`IdSort.sort_table` returns).

        Returns
        -------
        notes : list of str
            The table's notes on its exact duplicates and conflicts.
        removed : dict of int to [int, int]
            Per file index, the accepted and the void rows left out.
        void_out, live_out : int
            The void and the live rows left out in all.
        """
        ok, ids, files, lines, accs = groups["okey"], groups["id"], groups["file"], groups["line"], groups["acc"]
        b = len(self._blocks)
        self._blocks.append((ids.copy(), files.copy(), lines.copy(), ok.copy()))
        cut = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1], True]).tolist()
        dup_ids, conflicts, nd, nr = [], [], 0, 0
        conf = np.zeros(len(cut) - 1, dtype=bool)
        for i, (s_, e) in enumerate(zip(cut[:-1], cut[1:])):  # (the repeated ids: few)
            sid = str(int(ids[s_]))
            if np.all(ok[s_:e] == ok[s_]):  # exact duplicates: the first row counts, the later ones are rejected
                nd += e - s_ - 1
                if len(dup_ids) < 5:  # (the note names five)
                    dup_ids.append(sid)
            else:  # a conflict: every row rejected, neither result used
                conf[i] = True
                seen = ", ".join(f"{self.result(int(ok[g]))} ({self._at(b, g, s_)})" for g in range(s_, min(e, s_ + 4))) + (" …" if e - s_ > 4 else "")
                self._conflict[(b, s_)] = f"conflict: spin_id {sid} has different results: {seen}; neither result is used"
                conflicts.append((int(files[s_]), int(lines[s_]), sid))
                nr += e - s_
        start, end = np.asarray(cut[:-1], dtype=np.int64), np.asarray(cut[1:], dtype=np.int64)
        first = start + ~conf  # (the rejected records of an id: all of a conflict's, the later ones of exact duplicates)
        ref_a = np.repeat(start, end - first)
        rec_a = ref_a + np.arange(ref_a.size) - np.repeat(np.cumsum(end - first) - (end - first), end - first) + (first - start).repeat(end - first)
        self._rows.append(np.stack([np.full(rec_a.size, b, dtype=np.int64), rec_a, ref_a], axis=1))
        self._rows_all = None
        void = accs[rec_a] < 0
        removed: dict[int, list[int]] = {}
        for f in np.unique(files[rec_a]).tolist():
            mine = files[rec_a] == f
            removed[int(f)] = [int(np.count_nonzero(mine & ~void)), int(np.count_nonzero(mine & void))]
        notes = []
        if nd:
            notes.append(f"{nd} exact duplicate row(s) (same spin_id and result; duplicated spin_id(s): {', '.join(dup_ids)}) counted once; "
                         "the copies are in the rejects")
        if conflicts:
            ex = ", ".join(c[2] for c in sorted(conflicts)[:5])
            notes.append(f"{len(conflicts)} spin_id(s) with conflicting results ({ex}): their {nr} rows are left out, neither result is chosen "
                         "(see the rejects)")
        return notes, removed, int(np.count_nonzero(void)), int(rec_a.size)

    def rows(self) -> np.ndarray:
        """(n, 3) int64: block, record and first record of its id, of every rejected row, in the order added."""
        if self._rows_all is None:
            self._rows_all = np.concatenate(self._rows) if self._rows else np.zeros((0, 3), dtype=np.int64)
            self._rows = [self._rows_all]
        return self._rows_all

    def __len__(self) -> int:
        return int(self.rows().shape[0])

    def file_and_line(self) -> tuple[np.ndarray, np.ndarray]:
        """The file index and the line of every rejected row (in :meth:`rows` order)."""
        r = self.rows()
        files = np.zeros(r.shape[0], dtype=np.int64)
        lines = np.zeros(r.shape[0], dtype=np.int64)
        for b, (_, f, ln, _) in enumerate(self._blocks):
            m = r[:, 0] == b
            files[m] = f[r[m, 1]]
            lines[m] = ln[r[m, 1]]
        return files, lines

    def row(self, k: int) -> RejectedRow:
        """Rejected row ``k`` (in :meth:`rows` order) as a :class:`RejectedRow`."""
        return self.rows_at(np.array([k]))[0]

    def rows_at(self, ks: np.ndarray) -> list[RejectedRow]:
        """Rejected rows ``ks`` (in :meth:`rows` order) as :class:`RejectedRow` objects (their numbers
        taken out of the arrays at once, then one reason a row)."""
        r = self.rows()[ks]
        out = []
        for b, (ids, files, lines, ok) in enumerate(self._blocks):
            m = np.flatnonzero(r[:, 0] == b)
            if not m.size:
                continue
            g, s_ = r[m, 1], r[m, 2]
            for j, gi, si, sid, f, fs, ln, lns, o in zip(m.tolist(), g.tolist(), s_.tolist(), ids[s_].tolist(), files[g].tolist(), files[s_].tolist(),
                                                         lines[g].tolist(), lines[s_].tolist(), ok[g].tolist()):
                sid = str(sid)
                why = self._conflict.get((b, si))  # (a conflict: every row of its id has its reason)
                if why is None:  # an exact duplicate: where its first row is (as _at words it)
                    at = f"line {lns}" if fs == f else f"{self.names[fs]} line {lns}"
                    why = f"{DUPLICATE_REASON} {at} (spin_id {sid}, same result {self.result(o)}): counted once"
                out.append((j, RejectedRow(self.names[f], ln, self.colnames[f], why, sid[:200])))
        out.sort(key=lambda x: x[0])
        return [x[1] for x in out]


class RejectedRows(Sequence):
    """A log's rejected rows: ``plain`` (:class:`RejectedRow` objects) and the compact rows of
    ``compact`` (:class:`RepeatRejects`) in one order; a row of ``compact`` is made when it is read.

    Parameters
    ----------
    plain : list of RejectedRow
    compact : RepeatRejects
    order : (n,) int64
        Row ``i`` is ``plain[order[i]]`` where ``order[i] >= 0``, else row ``-1 - order[i]`` of ``compact``.
    """

    def __init__(self, plain: list[RejectedRow], compact: RepeatRejects, order: np.ndarray):
        self.plain, self.compact, self.order = plain, compact, np.asarray(order, dtype=np.int64)

    @classmethod
    def merge(cls, plain_per_file: list[list[RejectedRow]], compact: RepeatRejects) -> tuple[RejectedRows, list[RejectedRows]]:
        """The rows of every file in file order, and each file's rows; within a file its plain rows and
        its compact rows by line, stably, plain rows first on a tie (as
        ``sorted(plain + sorted(compact, key=line), key=line)``)."""
        cf, cl = compact.file_and_line()
        plain, parts, base = [], [], 0
        for f, rows in enumerate(plain_per_file):
            mine = np.flatnonzero(cf == f)
            lines = np.r_[np.asarray([r.line for r in rows], dtype=np.int64), cl[mine]]
            codes = np.r_[np.arange(base, base + len(rows), dtype=np.int64), -1 - mine]
            parts.append(codes[np.argsort(lines, kind="stable")])
            plain.extend(rows)
            base += len(rows)
        every = cls(plain, compact, np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64))
        return every, [cls(plain, compact, o) for o in parts]

    def _get(self, code: int) -> RejectedRow:
        return self.plain[code] if code >= 0 else self.compact.row(-1 - code)

    def __len__(self) -> int:
        return int(self.order.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            codes = self.order[i]
            made = iter(self.compact.rows_at(-1 - codes[codes < 0]))
            return [self.plain[c] if c >= 0 else next(made) for c in codes.tolist()]
        return self._get(int(self.order[i]))

    def __iter__(self):
        step = 1 << 14
        for a in range(0, self.order.size, step):  # (compact rows made a chunk at a time)
            codes = self.order[a : a + step]
            made = iter(self.compact.rows_at(-1 - codes[codes < 0]))
            for c in codes.tolist():
                yield self.plain[c] if c >= 0 else next(made)

    def __eq__(self, other) -> bool:
        return isinstance(other, (list, tuple, RejectedRows)) and list(self) == list(other)

    def __add__(self, other) -> list:
        return list(self) + list(other)

    def __radd__(self, other) -> list:
        return list(other) + list(self)

    def __repr__(self) -> str:
        return f"RejectedRows({len(self)} rows, {len(self.compact)} of repeated spin ids)"
