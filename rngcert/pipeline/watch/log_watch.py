"""The watch of one spin log (:class:`LogWatch`): a :class:`~rngcert.pipeline.watch.follow.LogFollower`
and one :class:`~rngcert.pipeline.watch.detector.Watcher` per table; every spin counted once by its id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rngcert.collect.spinids import counter_ids, table_codes, whole_number_ids
from rngcert.collect.spinlog.tablenames import file_tables
from rngcert.pipeline.watch.detector import Watcher, WatchStatus
from rngcert.pipeline.watch.follow import DEFAULT_SETTLE, LogFollower
from rngcert.pipeline.watch.id_gaps import Gap, IdGaps
from rngcert.stats import arrayops


# ---------------------------------------------------------------------------- a watched log
@dataclass
class Event:
    """What :meth:`LogWatch.step` saw: ``kind`` is ``"status"`` (a table's detector after new
    spins), ``"alarm"`` (``spin_id`` of the spin at which the evidence crossed the threshold),
    ``"note"`` (``text``: rotation, truncation, rejected lines), ``"start"`` (the first spins
    of a table: ``text`` is the guarantee) or ``"lost"`` (``text``: a rotation the watch did not
    see: a file it never read, or a jump of the spin ids from one file to the next) or ``"gap"``
    (``text``, and ``detail``: ``first``, ``last``, ``missing``, ``file``, ``line``: spin ids
    that skip within the log, see :attr:`LogWatch.id_gaps`)."""

    kind: str
    table: str = ""
    status: WatchStatus | None = None
    watcher: "Watcher | None" = None
    spin_id: str | None = None
    text: str = ""
    detail: dict = field(default_factory=dict)


class LogWatch:
    """The watch of one spin log: a :class:`LogFollower` and one :class:`Watcher` per table.

    Parameters
    ----------
    path : path
        The log (regular file or FIFO).
    wheel : Wheel
        The wheel the log is recorded on.
    columns, fmt
        As in :func:`rngcert.collect.spinlog.read_spin_rows`.
    alpha, horizon, block
        Of every table's :class:`Watcher`.
    settle : float
        See :class:`LogFollower`.

    Attributes
    ----------
    spins : dict
        Spins given to each table's detector (accepted spins with a wheel position, in order).
    rejected : int
        Lines that could not be read (each reported in a ``"note"`` event, the first 20 in full).
    repeated : int
        Rows not counted because they repeat a spin already counted: same table and ``spin_id``
        with the same result (an exact duplicate, e.g. the old rows of a log that an exporter
        rewrote whole: truncated, then written again with the new rows appended).
    void : int
        Void spins (rows marked void: no result; excluded from the detectors), each counted once: by table and
        ``spin_id`` when the log has ids (a void row exported again is not counted again), as read otherwise.
    conflicts : int
        Rows not counted because their ``spin_id`` was already counted in the same table with
        another result (each reported in a ``"note"`` event, the first 20 in full).
    lost : list of str
        Rotations the watch did not see (each also a ``"lost"`` event): a file beside the log that
        it never read, or, per table, a jump of the whole-number spin ids from the last one of a
        rotated file to the first one of the next file, where the ids went up by a constant step
        (the last three or more of them) and the next file skips ahead.
    id_gaps : dict
        Per table with whole-number spin ids, its :class:`~rngcert.pipeline.watch.id_gaps.IdGaps`:
        ids that skip (each gap said at once in a ``"gap"`` event: spins the log never carried),
        and ids that arrived late inside a gap (said in a ``"note"``; no longer missing). The jump
        of a lost rotation is said once, as lost, not also as a gap.

    Every counted spin with a ``spin_id`` is remembered (table, spin_id -> result; 10 bytes a
    spin with a whole-number id), so that a spin is never counted twice, across truncation and
    rotation too.
    Rows without a ``spin_id`` cannot be recognised: they are counted as they are read.
    """

    def __init__(self, path, wheel, *, columns=None, fmt: str = "auto", alpha: float = 0.01, horizon: int = 100_000, block: int = 100,
                 settle: float = DEFAULT_SETTLE):
        from rngcert.collect.spinlog import detect_format

        self.path = Path(path)
        self.wheel = wheel
        self.space = wheel.position_space()
        self.columns = columns
        self.alpha, self.horizon, self.block = alpha, horizon, block
        self.follower = LogFollower(path, fmt=fmt, settle=settle, detect=detect_format)
        self.watchers: dict[str, Watcher] = {}
        self.rejected = 0
        self.repeated = 0
        self.conflicts = 0
        self.void = 0
        self._seen: dict[str, _Counted] = {}  # table -> the spins counted, by spin_id
        self._void_seen: dict[str, _Counted] = {}  # table -> the void spins counted, by spin_id
        self.lost: list[str] = []
        self.id_gaps: dict[str, IdGaps] = {}
        self._tail: dict[str, tuple[int, int, int]] = {}  # table -> (last whole-number id, its constant step, run of that step)
        self._id_prefix: dict[str, str] = {}  # table -> its spin ids' prefix ("" for whole numbers, "R" for R1200)
        self._after_rotation: set[str] = set()  # tables whose first id after a rotation is still to be compared
        self._labels: set[str] = set()  # tables whose text ids are of two shapes: labels, not checked for gaps
        self._other_id: dict[str, tuple[str, int]] = {}  # table -> (its first id of neither shape, its line) before its prefix was known
        self._gen = 0

    @property
    def spins(self) -> dict[str, int]:
        return {t: w.status().spins for t, w in self.watchers.items()}

    def close(self) -> None:
        self.follower.close()

    # long: one poll: chunks read, rows parsed, per-table spins counted once and fed to the detectors, in that order
    def step(self, *, final: bool = False) -> list[Event]:
        """Read what is new and update the detectors; stops at the first alarm."""
        from rngcert.collect.spinlog import read_spin_rows
        from rngcert.errors import NoDataError

        events: list[Event] = []
        chunks = self.follower.poll(final=final)
        events += [Event("note", text=t) for t in self.follower.notes]
        self.follower.notes.clear()
        for t in self.follower.lost:
            self.lost.append(t)
            events.append(Event("lost", text=t))
        self.follower.lost.clear()
        for ch in chunks:
            if ch.generation != self._gen:
                self._gen = ch.generation
                if ch.generation in self.follower.rotations:
                    self._after_rotation = set(self._tail)
            try:
                rows = read_spin_rows(self.path, self.wheel, columns=self.columns, fmt=ch.fmt, data=ch.data)
            except NoDataError:
                continue
            shift = ch.first_line - 1 - ch.header_lines
            for r in rows.rejected:
                self.rejected += 1
                if self.rejected <= 20:
                    events.append(Event("note", text=f"{self.path}:{r.line + shift}: {r.column}: {r.reason} (line not counted)"))
            if not rows.n:
                continue
            line = rows.line + shift
            ok = rows.accepted & (rows.pos >= 0)
            if rows.table is not None:
                tcodes, tnames = table_codes(rows.table)
            else:
                tcodes, tnames = np.zeros(rows.n, dtype=np.int64), [file_tables([str(self.path)])[str(self.path)]]
            if rows.spin_id is not None:
                self._id_gaps(events, rows, tcodes, tnames, line)
            self._count_void(rows, tcodes, tnames)
            used, first_at = np.unique(tcodes[ok], return_index=True)
            for c in used[np.argsort(first_at)].tolist():  # tables in order of appearance (a handful)
                tname = tnames[c] or "(no table)"
                sel = np.flatnonzero(ok & (tcodes == c))
                if rows.spin_id is not None:
                    sel = self._new_spins(events, tname, sel, rows, line)
                    if not sel.size:
                        continue
                w = self.watchers.get(tname)
                if w is None:
                    w = self.watchers[tname] = Watcher(self.space, alpha=self.alpha, horizon=self.horizon, block=self.block)
                    events.append(Event("start", tname, watcher=w, text=w.guarantee()))
                before = w.status().spins
                st = w.update(rows.pos[sel])
                events.append(Event("status", tname, status=st, watcher=w))
                if st.alarm:
                    j = int(sel[w.alarm_spin - 1 - before])
                    sid = rows.spin_id[j].as_py() if rows.spin_id is not None else f"line {int(line[j])}"
                    events.append(Event("alarm", tname, status=st, watcher=w, spin_id=sid))
                    return events
        return events

    # long: the vectorised id bookkeeping (repeats, conflicts, text ids) of one chunk, kept together
    def _new_spins(self, events: list[Event], tname: str, sel: np.ndarray, rows, line: np.ndarray) -> np.ndarray:
        """The rows of ``sel`` whose spin was not counted yet; remembers them. An exact repeat
        (same table, spin_id and result) is skipped and counted in one note per chunk; a spin_id
        already counted with another result is a conflict: reported, not counted. Vectorised over
        the rows (a catch-up over a long log is one large chunk); ids that are not whole numbers
        are looked up one by one."""
        seen = self._seen.get(tname)
        if seen is None:
            seen = self._seen[tname] = _Counted()
        raw, num, is_num, no_id = whole_number_ids(rows.spin_id, sel)
        pos = np.asarray(rows.pos[sel], dtype=np.int64)
        ref = np.full(sel.size, -1, dtype=np.int64)  # the result this spin was counted with (-1: not counted yet)
        new = np.zeros(sel.size, dtype=bool)
        k = np.flatnonzero(is_num)
        if k.size:
            ids = num[k].astype(np.int64)
            ref[k] = seen.lookup(ids)
            # repeats within the chunk: a later row of an id refers to its first row in the chunk
            u, first, inv = np.unique(ids, return_index=True, return_inverse=True)
            later = np.arange(k.size) != first[inv]
            fresh = ref[k] < 0
            ref[k[later & fresh]] = pos[k[first[inv]][later & fresh]]
            take = fresh & ~later
            new[k[take]] = True
            seen.add(ids[take], pos[k[take]])
        for i in np.flatnonzero(~is_num & ~no_id).tolist():  # text ids (rare): one by one
            sid = raw[i].as_py()
            old = seen.text.get(sid)
            if old is None:
                seen.text[sid] = int(pos[i])
                new[i] = True
            else:
                ref[i] = old
        repeat = (ref >= 0) & (ref == pos)
        conflict = (ref >= 0) & (ref != pos)
        keep = new | no_id
        for i in np.flatnonzero(conflict).tolist():
            self.conflicts += 1
            if self.conflicts <= 20:
                lab = self.space.labels
                show = lambda q: lab[q] if 0 <= q < len(lab) else q  # noqa: E731
                events.append(Event("note", text=(
                    f"{self.path}:{int(line[sel[i]])}: spin_id {raw[i].as_py()} of table {tname} was already counted with result "
                    f"{show(int(ref[i]))}; this row says {show(int(pos[i]))}: conflict, row not counted")))
        repeated = int(np.count_nonzero(repeat))
        if repeated:
            self.repeated += repeated
            events.append(Event("note", text=(
                f"skipped {repeated} row(s) of table {tname} that repeat spins already counted (same spin_id and result, "
                f"e.g. the old rows of a log rewritten whole): not counted again")))
        return sel[keep]


    def _count_void(self, rows, tcodes: np.ndarray, tnames: list) -> None:
        """Count the void rows of a chunk (see ``void``): once per table and spin_id, or as read when the log has no ids."""
        v = np.flatnonzero(rows.void)
        if not v.size:
            return
        if rows.spin_id is None:
            self.void += int(v.size)
            return
        for c in arrayops.unique(tcodes[v]).tolist():  # tables (a handful)
            sel = v[tcodes[v] == c]
            seen = self._void_seen.setdefault(tnames[c] or "(no table)", _Counted())
            raw, num, is_num, no_id = whole_number_ids(rows.spin_id, sel)
            ids = np.unique(num[is_num].astype(np.int64))
            fresh = ids[seen.lookup(ids) < 0]
            seen.add(fresh, np.zeros(fresh.size, dtype=np.int16))
            text = {raw[i].as_py() for i in np.flatnonzero(~is_num & ~no_id).tolist()} - seen.text.keys()  # text ids (rare)
            seen.text.update(dict.fromkeys(text, 0))
            self.void += int(fresh.size) + len(text) + int(np.count_nonzero(no_id))

    def _id_gaps(self, events: list[Event], rows, tcodes: np.ndarray, tnames: list, line: np.ndarray) -> None:
        """:meth:`_id_gap` for every table of a chunk, on the numbers of all its rows' spin ids in file order (whole
        numbers, or text ids of the table's one prefix and a number, ``R1200``: :func:`~rngcert.collect.spinids.counter_ids`):
        void and rejected rows too (a void spin is a spin of the log, not a gap)."""
        for c in arrayops.unique(tcodes).tolist():  # tables (a handful)
            tname = tnames[c] or "(no table)"
            got = self._counted(events, tname, rows.spin_id, np.flatnonzero(tcodes == c), line)
            if got is None:
                continue
            r, num, pre = got
            excuse = self._id_gap(events, tname, num, line[r])
            gaps, late = self.id_gaps.setdefault(tname, IdGaps()).update(num, excuse=excuse)
            ig = self.id_gaps[tname]
            full, rest = ig.to_say(gaps)
            events += [self._gap_event(tname, g, int(line[r][g.index])) for g in full]
            if rest:
                events.append(Event("note", tname, text=ig.more(tname, rest, f"{self.path}:{int(line[r][rest[-1].index])}", prefix=pre)))
            if late.size:
                shown = ", ".join(f"{pre}{int(x)}" for x in num[late[:5]]) + (", ..." if late.size > 5 else "")
                events.append(Event("note", tname, text=(
                    f"{self.path}:{int(line[r][late[0]])}: table {tname}: {late.size} spin_id(s) ({shown}) arrived late, inside a gap "
                    f"said before: no longer missing; {ig.missing:,} still missing")))

    def _counted(self, events: list[Event], tname: str, spin_id, rsel: np.ndarray, line: np.ndarray):
        """``(rows, numbers, prefix)`` of the rows ``rsel`` of table ``tname`` whose ids are counted for gaps, or None. Text ids
        count only while every id of the table is its one prefix and a number, as certify reads them: from the first id of
        another shape (``r10`` among ``R`` ids, ``X``), the table's ids are labels, no longer checked, and a note says so."""
        if tname in self._labels:
            return None
        num, ok, pre = counter_ids(spin_id, self._id_prefix.get(tname), rsel)
        other = np.flatnonzero(~ok & ~whole_number_ids(spin_id, rsel)[3]) if pre != "" else np.zeros(0, np.int64)
        if pre is None:
            if other.size and tname not in self._other_id:
                self._other_id[tname] = (str(spin_id[int(rsel[other[0]])]).strip(), int(line[rsel[other[0]]]))
            return None
        if pre and (other.size or tname in self._other_id):
            sid, at = self._other_id.get(tname) or (str(spin_id[int(rsel[other[0]])]).strip(), int(line[rsel[other[0]]]))
            self._labels.add(tname)
            events.append(Event("note", tname, text=(
                f"{self.path}:{at}: table {tname}: spin_id {sid!r} is not {pre} and a number, as the table's other ids are: ids of two "
                "shapes, no longer checked for gaps (certify counts gaps in text ids only where all are of one prefix)")))
            ok[other[0] if other.size and tname not in self._other_id else 0:] = False
        if not ok.any():
            return None
        self._id_prefix[tname] = pre
        return rsel[ok], num[ok], pre

    def _gap_event(self, tname: str, g: Gap, line: int) -> Event:
        """The ``"gap"`` event of ids that skip (``line``: the row where the ids resume)."""
        pre = self._id_prefix.get(tname, "")
        ids = f"spin_id {pre}{g.first}" if g.first == g.last else f"spin_id {pre}{g.first} to {pre}{g.last}"
        text = (f"{self.path}:{line}: table {tname}: {ids} missing ({g.missing:,}): the ids go from {pre}{g.after} to {pre}{g.resume} here; "
                "spins the log never carried (lost by the wheel controller, the recorder or the export), not watched")
        first, last = (g.first, g.last) if not pre else (f"{pre}{g.first}", f"{pre}{g.last}")  # (text ids: as the log writes them)
        return Event("gap", tname, text=text, detail={"first": first, "last": last, "missing": g.missing, "file": str(self.path), "line": line})

    def _restart_at(self, spin_id: int) -> bool:
        """``rngcert record`` resumed writing this log after ``spin_id`` (its ``LOG.json``): a jump of the ids there is the
        games played while it was stopped (a gap of the source, said as one), not a rotation the watch did not see."""
        from rngcert.collect.record import resumed_after

        return spin_id in resumed_after(self.path)

    def _id_gap(self, events: list[Event], tname: str, ids: np.ndarray, line) -> tuple[int, int] | None:
        """Compare the first id counted after a rotation with the last one before it (see ``lost``),
        then remember the last id and the step the ids went up by. Returns ``(last id, first id)``
        of a jump said as lost (not to be said again as a gap), else None."""
        if not ids.size:
            return None
        excuse = None
        tail = self._tail.get(tname)
        if tname in self._after_rotation:
            self._after_rotation.discard(tname)
            if tail is not None and tail[1] > 0 and tail[2] >= 2 and int(ids[0]) > tail[0] + tail[1] and not self._restart_at(tail[0]):
                missing = (int(ids[0]) - tail[0]) // tail[1] - 1
                pre = self._id_prefix.get(tname, "")
                text = (f"{self.path}:{int(line[0])}: table {tname}: the first spin_id of the new file after a rotation is {pre}{int(ids[0])}, "
                        f"the last one of the file before was {pre}{tail[0]} (ids went up by {tail[1]}): about {missing:,} spin(s) between them "
                        "were never read (a rotation the watch did not see)")
                self.lost.append(text)
                events.append(Event("lost", tname, text=text))
                excuse = (tail[0], int(ids[0]))
        seq = ids if tail is None else np.concatenate([[tail[0]], ids])
        if seq.size < 2:
            self._tail[tname] = (int(ids[-1]), 0, 0)
            return excuse
        d = np.diff(seq)
        step = int(d[-1])
        neq = np.flatnonzero(d != step)
        run = d.size - (int(neq[-1]) + 1 if neq.size else 0)
        if not neq.size and tail is not None and tail[1] == step:
            run += tail[2]
        self._tail[tname] = (int(ids[-1]), step, run)
        return excuse


class _Counted:
    """The spins of one table counted so far, by spin id: whole-number ids in a sorted int64 array
    beside their wheel positions (10 bytes a spin, grown by doubling), other ids in a dict."""

    def __init__(self):
        self.ids = np.zeros(0, dtype=np.int64)
        self.pos = np.zeros(0, dtype=np.int16)
        self.n = 0
        self.text: dict[str, int] = {}

    def lookup(self, ids: np.ndarray) -> np.ndarray:
        """The position each id was counted with, -1 where it was not counted."""
        have = self.ids[: self.n]
        i = np.searchsorted(have, ids)
        i = np.minimum(i, max(self.n - 1, 0))
        found = (self.n > 0) & (have[i] == ids) if self.n else np.zeros(ids.size, dtype=bool)
        return np.where(found, self.pos[: self.n][i] if self.n else -1, -1).astype(np.int64)

    def add(self, ids: np.ndarray, pos: np.ndarray) -> None:
        """Remember new, distinct ids (not counted before)."""
        if ids.size == 0:
            return
        order = np.argsort(ids, kind="stable")
        ids, pos = ids[order], pos[order].astype(np.int16)
        n, m = self.n, ids.size
        if n + m > self.ids.size:  # grow by doubling: appending a poll's few spins stays cheap
            cap = max(n + m, 2 * self.ids.size, 1024)
            self.ids = np.concatenate([self.ids[:n], np.zeros(cap - n, dtype=np.int64)])
            self.pos = np.concatenate([self.pos[:n], np.zeros(cap - n, dtype=np.int16)])
        if n == 0 or ids[0] > self.ids[n - 1]:  # the usual case: ids keep increasing
            self.ids[n : n + m], self.pos[n : n + m] = ids, pos
        else:  # an id below the last one: merge
            a = np.concatenate([self.ids[:n], ids])
            b = np.concatenate([self.pos[:n], pos])
            o = np.argsort(a, kind="stable")
            self.ids[: n + m], self.pos[: n + m] = a[o], b[o]
        self.n = n + m
