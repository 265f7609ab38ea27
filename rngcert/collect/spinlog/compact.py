"""The compact path of :func:`rngcert.collect.spinlog.read_spin_log`: large, clean logs kept as small-integer
arrays (:class:`_CompactLog`); anything it cannot prove falls back to the exact reader (:class:`_NeedExact`).
"""

from __future__ import annotations

import re

import numpy as np

from rngcert.collect.spinids import PREFIXED_ID, prefixed_numbers
from rngcert.collect.spinlog.core import IntIds, TableSpins, TextIds, _small_int, _span
from rngcert.collect.spinlog.idorder import ORDER_NOTE, IdRuns, NotInRuns, Shuffled, reorder, text_id_numbers
from rngcert.collect.spinlog.idsort import IdSort, label_keys
from rngcert.collect.spinlog.order import outcome_key
from rngcert.equipment.wheel import OutcomeSpace, Wheel
from rngcert.stats import arrayops


# ---------------------------------------------------------------------------- constant-memory read
class _NeedExact(Exception):
    """The log is not in the usual shape, so the streamed reduction cannot prove its result equal
    to the exact one: a spin id repeats within a table, ids go backwards other than in runs
    (:mod:`rngcert.collect.spinlog.idorder`), timestamps are out of spin order, ids are neither
    whole numbers nor letters and a number, a ``table`` value is empty, the files differ in their
    columns (a CSV log beside a permanence list), a file is neither CSV, JSON Lines nor a
    permanence list, or a permanence list has text on a line longer than a block. :func:`read_spin_log` then reads the log again on the exact
    path, which keeps every row's keys."""


class _NeedSort(_NeedExact):
    """The spin ids of a table are too far out of order for runs (shuffled, files joined out of order):
    the log is read again with its ids sorted out of core (:mod:`rngcert.collect.spinlog.idsort`)."""


def _not_in_runs(exc: NotInRuns) -> _NeedExact:
    """The exception a failed id check raises: read again sorted (:class:`_NeedSort`) or exact."""
    return (_NeedSort if isinstance(exc, Shuffled) else _NeedExact)(str(exc))


class _Grow:
    """A column appended to in place: space is reserved for the rows a file can hold at most (its
    line count), so appending a batch never concatenates and copies; the type widens (once) only
    when a value does not fit."""

    def __init__(self, dtype):
        self.a = np.empty(0, dtype=dtype)
        self.n = 0

    def reserve(self, extra: int) -> None:
        need = self.n + int(extra)
        if need > self.a.size:
            new = np.empty(need, dtype=self.a.dtype)  # untouched pages cost no memory until written
            new[: self.n] = self.a[: self.n]
            self.a = new

    def put(self, v: np.ndarray) -> None:
        v = np.asarray(v)
        if v.size == 0:
            return
        if self.a.dtype.kind != "f":  # integers: widen once when a value does not fit
            info = np.iinfo(self.a.dtype)
            lo, hi = int(v.min()), int(v.max())
            if lo < info.min or hi > info.max:
                self.a = self.a.astype(_small_int(max(hi, -lo)))
        if self.n + v.size > self.a.size:
            self.reserve(max(v.size, self.a.size // 4))
        self.a[self.n : self.n + v.size] = v
        self.n += v.size

    def fill(self, value: int, count: int) -> None:
        """Append ``count`` copies of ``value`` (without an array of them)."""
        if count:
            self.put(np.array([value]))  # (widens the type when the value does not fit, and grows as put does)
            self.n -= 1
            if self.n + count > self.a.size:
                self.reserve(max(count, self.a.size // 4))
            self.a[self.n : self.n + count] = value
            self.n += count

    def truncate(self, n: int) -> None:
        self.n = n

    def values(self) -> np.ndarray:
        """The filled part, with the unused reserve given back (no copy)."""
        if self.a.size != self.n:
            try:
                self.a.resize(self.n, refcheck=False)
            except ValueError:  # pragma: no cover - a view of the buffer exists
                self.a = self.a[: self.n].copy()
        return self.a


def _at(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``a[rows]`` for increasing ``rows``; ``a`` itself (no copy) when they are all of its rows."""
    return a if rows.size == a.size else a[rows]


def _groups(codes: np.ndarray, rows: np.ndarray):
    """``(code, rows of that code in row order)`` for the given rows (one group, usually)."""
    if rows.size == 0:
        return
    c = _at(codes, rows)
    if c[0] == c[-1] and (c == c[0]).all():
        yield int(c[0]), rows
        return
    order = np.argsort(c, kind="stable")
    cs = c[order]
    cut = np.flatnonzero(cs[1:] != cs[:-1]) + 1
    for a, b in zip(np.r_[0, cut].tolist(), np.r_[cut, cs.size].tolist()):
        yield int(cs[a]), rows[order[a:b]]


class _CompactLog:
    """The accepted spins of a log reduced batch by batch to what the tests keep: per spin the
    outcome, table code, release pocket, dealer code and direction as small integers (about 7
    bytes a spin, 4 once split into tables), and per table a few numbers that prove the log is in
    the usual shape (no repeated spin id, ids and timestamps in order) and give its gaps.

    Rows are taken in file order, files in the order given; the result equals the exact path's
    (:func:`_mark_repeats`, :func:`_assemble_tables`) whenever no :class:`_NeedExact` is raised.
    """

    def __init__(self, wheel: Wheel, pool: bool, min_round_interval: float = 0.0, sort: bool = False):
        self.wheel, self.pool = wheel, pool
        self.min_us = int(round(min_round_interval * 1e6))
        self.pos = _Grow(_small_int(max(wheel.k - 1, 1)))
        self.sym = _Grow(_small_int(max(len(wheel.symbols) - 1, 1))) if wheel.kind != "roulette" else None
        self.tab = _Grow(np.int16)
        #: While every spin so far is of one table (a permanence list, a one-table log): (its code, the spins), and ``tab`` is not
        #: filled (2 bytes a spin saved); the codes are written when a second table appears or the tables are split.
        self.tab_one: tuple[int, int] | None = None
        self.release = _Grow(_small_int(max(wheel.k - 1, 1)))
        self.dealer = _Grow(np.int16)
        self.direction = _Grow(np.int8)
        self.rotor_speed = _Grow(np.float64)
        self.ball_direction = _Grow(np.int8)
        self.line_start = _Grow(np.int8)  # permanence lists: 1 where a spin is the first accepted one of its line
        self.last_line: dict[int, int] = {}  # per assembly table: line of its last accepted spin
        self.tables: dict[str, int] = {}
        self.dealers: dict[str, int] = {}
        self.columns: tuple | None = None
        self.all_pos = True
        self.void: dict[int, int] = {}
        self.live_rows: dict[int, int] = {}
        self.last_id: dict[int, int] = {}  # per table: last id of a live row (repeats)
        self.last_ts: dict[int, tuple[int, int]] = {}  # per assembly table: (ts, id) of its last live row
        self.present: dict[int, list] = {}  # per assembly table: [count, last id, runs (start, end) of the ids]
        self.n_runs = 0
        self.period: tuple[int, int] | None = None  # first and last timestamp of the live rows
        #: per table (its code): every live row's timestamp so far a whole minute (the exact path's note that near-duplicate
        #: rounds cannot be told at that resolution), and the live rows with a timestamp in all tables
        self.minute_only: dict[int, bool] = {}
        self.ts_rows = 0
        self.stem = ""
        self.order = IdRuns()  # not pooled: spin ids in runs, in or out of file order (rngcert/collect/spinlog/idorder.py)
        self.sorter = IdSort() if sort else None  # not pooled, ``sort``: spin ids in any order, sorted out of core (idsort.py)
        self.repeat_rejected = None  # sorted: the rows repeated spin ids reject (a RepeatRejects: compact, rows made when read)
        self.repeat_removed: dict[int, list[int]] = {}  # sorted: per file, [accepted, void] rows they take
        self.file_no = -1
        self.id_kind: bool | str | None = None  # True: text ids, kept as the numbers after their prefix; "label": other text ids
        self.id_prefix: dict[int, str] = {}  # per table: the prefix of its text ids
        self.pool_last = -1  # pooled text ids: the number of the last live row, and whether the numbers ever fell
        self.pool_fell = False
        self._mark = None

    # -- one file
    def begin(self, stem: str) -> None:
        self.stem = stem
        self.file_no += 1
        self._mark = self._state()

    def reserve(self, rows: int) -> None:
        for g in self._cols():
            g.reserve(rows)

    def rollback(self) -> None:
        """Forget what the current file added (its fast parse is thrown away and done again)."""
        n, tables, dealers, small, tab_one = self._mark
        for g in self._cols():
            g.truncate(n)
        self.tab_one = tab_one
        if tab_one is not None:  # (the codes were not written then)
            self.tab.truncate(0)
        for d, k in ((self.tables, tables), (self.dealers, dealers)):
            for key in list(d)[k:]:
                del d[key]
        (self.columns, self.all_pos, self.void, self.live_rows, self.last_id, self.last_ts, self.present, self.n_runs, self.period,
         self.last_line, order, self.id_kind, self.id_prefix, self.pool_last, self.pool_fell, sorter, self.minute_only, self.ts_rows) = small
        self.order.restore(order)
        if self.sorter is not None:
            self.sorter.restore(sorter)
        self._mark = self._state()  # (a copy: the restored dictionaries change as the file is read again)

    def _cols(self):
        return [g for g in (self.pos, self.sym, self.tab, self.release, self.dealer, self.direction, self.rotor_speed, self.ball_direction,
                            self.line_start) if g is not None]

    def _state(self):
        import copy

        small = (self.columns, self.all_pos, dict(self.void), dict(self.live_rows), dict(self.last_id), dict(self.last_ts),
                 copy.deepcopy(self.present), self.n_runs, self.period, dict(self.last_line), self.order.state(),
                 self.id_kind, dict(self.id_prefix), self.pool_last, self.pool_fell, None if self.sorter is None else self.sorter.state(),
                 dict(self.minute_only), self.ts_rows)
        return self.pos.n, len(self.tables), len(self.dealers), small, self.tab_one

    def _tab_fill(self) -> None:
        """Write the table codes left unwritten while the spins were of one table (:attr:`tab_one`)."""
        if self.tab_one is not None:
            code, rows = self.tab_one
            self.tab_one = None
            self.tab.fill(code, rows)

    @staticmethod
    def _lut(d: dict, labels) -> np.ndarray:
        return np.array([d.setdefault(t, len(d)) for t in labels] or [0], dtype=np.int64)

    # -- one batch (the dictionary of :func:`_process`)
    # long: one batch folded into the compact log: a short step per optional column (ids, times, dealers, directions, rotor data) on the same batch
    #   arrays
    def add(self, pt: dict) -> None:
        cols = tuple(k for k in ("ts", "spin_id", "dealer", "direction", "release", "rotor_speed", "ball_direction", "line_no") if pt.get(k) is not None)
        if self.columns is None:
            self.columns = cols
        elif cols != self.columns:
            raise _NeedExact("the files have different columns")
        if pt.get("result_source") is not None:
            raise _NeedExact("rows of several result sources")
        n = pt["pos"].size
        if n == 0:
            return
        acc, void = pt["accepted_mask"], pt["void_mask"]
        live_mask = acc | void
        # the live rows' indices where a step takes them (ids, timestamps, a table column); a list needs only their count
        live = np.flatnonzero(live_mask) if any(pt.get(k) is not None for k in ("spin_id", "ts", "table")) else None
        n_live = int(np.count_nonzero(live_mask)) if live is None else live.size
        del live_mask
        one = None  # the table code when every row is of one table: no per-spin code array
        if pt.get("table") is None:
            one = int(self._lut(self.tables, [self.stem])[0])
            tcode = np.broadcast_to(np.int64(one), (n,))
        else:
            codes, labels = pt["table"]
            if "" in labels:
                raise _NeedExact("empty table values")
            if len(labels) == 1:
                one = int(self._lut(self.tables, labels)[0])
                tcode = np.broadcast_to(np.int64(one), (n,))
            else:
                tcode = self._lut(self.tables, labels)[codes]
        akey = tcode if not self.pool else np.zeros(n, dtype=np.int64)
        ak1 = None if one is None else (0 if self.pool else one)
        ids = None
        text = False
        if pt.get("spin_id") is not None:
            if not isinstance(pt["spin_id"], IntIds):
                ids, text = self._text_ids(pt["spin_id"], tcode)  # (raises _NeedExact when they are neither letters and a number nor labels)
            else:
                ids = pt["spin_id"].values
            if self.id_kind is None:
                self.id_kind = text
            elif self.id_kind != text:
                raise _NeedExact("whole-number and text spin ids in one log")
            if text != "label" and ids.size and ids.min() < 0:
                raise _NeedExact("negative spin ids")
        ts = pt.get("ts")
        by_runs = ids is not None and not self.pool and text != "label"  # (pooled tables are one sequence of several tables' ids: the exact path)
        if text == "label" or (by_runs and self.sorter is not None):  # ids sorted out of core (labels: for their repeats only, file order)
            lv = acc | void
            okey = outcome_key(pt["pos"], pt["sym"], void)
            try:
                for t, rows in _groups(tcode, np.arange(n)):
                    self.sorter.add(t, ids[rows], lv[rows], acc[rows], None if ts is None or text == "label" else ts[rows], pt["lines"][rows], okey[rows],
                                    self.file_no)
            except NotInRuns as exc:
                raise _NeedExact(str(exc)) from None
        elif text and self.pool:  # pooled text ids: repeats from the runs of their numbers; file order while the numbers rise
            lv = acc | void
            try:
                for t, rows in _groups(tcode, np.arange(n)):
                    self.order.add(t, ids[rows], lv[rows], acc[rows], None, None, 0)
            except NotInRuns as exc:
                raise _NeedExact(str(exc)) from None
            v = ids[live]
            if v.size:
                self.pool_fell = self.pool_fell or v[0] < self.pool_last or bool(np.any(v[1:] < v[:-1]))
                self.pool_last = int(v[-1])
        # (text ids in time order and near-duplicate checks: the exact path compares rows of equal times in file order)
        self.order.ties_ok = self.order.ties_ok and not (text and self.min_us > 0)
        if by_runs and self.sorter is None:
            okey = outcome_key(pt["pos"], pt["sym"], void) if ts is not None and self.min_us > 0 else None
            lv = acc | void
            try:
                for t, rows in _groups(tcode, np.arange(n)):
                    self.order.add(t, ids[rows], lv[rows], acc[rows], None if ts is None else ts[rows], None if okey is None else okey[rows], self.min_us)
            except NotInRuns as exc:
                raise _not_in_runs(exc) from None
        elif ids is not None and not text and not by_runs:
            for t, rows in _groups(tcode, live):  # repeats: ids strictly increasing within each table
                v = _at(ids, rows)
                if v[0] <= self.last_id.get(t, -1) or (v.size > 1 and np.any(v[1:] <= v[:-1])):
                    raise _NeedExact("a spin id repeats or goes backwards")
                self.last_id[t] = int(v[-1])
            for t, rows in _groups(akey, np.arange(n)):  # gaps: every row of the table with an id counts
                self._present(t, _at(ids, rows))
        if ts is not None and n_live:
            self.period = _span(self.period, _at(ts, live))
            if self.min_us > 0:
                self.ts_rows += n_live
                for t, rows in _groups(tcode, live):
                    if self.minute_only.get(t, True):
                        self.minute_only[t] = bool(np.all(_at(ts, rows) % 60_000_000 == 0))
        if ts is not None and not by_runs:
            for t, rows in _groups(akey, live):  # spin order: timestamps never go back; equal ones in id order
                v = _at(ts, rows)
                prev = self.last_ts.get(t)
                if prev is not None:
                    v = np.r_[prev[0], v]
                d = np.diff(v)
                if np.any(d < 0):
                    raise _NeedExact("timestamps out of order")
                if self.min_us > 0 and d.size and np.any(d < 2 * self.min_us):
                    # a near-duplicate round (closer than a round lasts, same result), or rounds logged this fast (the
                    # exact path then notes that the check does not apply): the exact path's findings and notes
                    raise _NeedExact("rounds closer than twice the minimum round interval")
                if text and np.any(d == 0):
                    raise _NeedExact("equal timestamps with text spin ids")  # (the exact path orders them by their text)
                if ids is not None and not text and np.any(d == 0):
                    s_ = ids[rows] if prev is None else np.r_[prev[1], ids[rows]]
                    if np.any((d == 0) & (s_[1:] < s_[:-1])):
                        raise _NeedExact("equal timestamps out of id order")
                last = rows[-1:]
                self.last_ts[t] = (int(ts[rows[-1]]), int(ids[rows[-1]]) if ids is not None else 0,
                                   int(outcome_key(pt["pos"][last], pt["sym"][last], void[last])[0]))
        for t, c in enumerate(np.bincount(akey[void]).tolist() if ak1 is None else [0] * ak1 + [int(np.count_nonzero(void))]):
            if c:  # (table codes are small: a count per code, no sort)
                self.void[t] = self.void.get(t, 0) + c
        for t, c in enumerate(np.bincount(tcode[live]).tolist() if one is None else [0] * one + [n_live]):
            if c:
                self.live_rows[t] = self.live_rows.get(t, 0) + c
        if acc.all():  # (every row accepted: views, no copies)
            acc = slice(None)
        pos = pt["pos"][acc]
        self.all_pos = self.all_pos and bool(np.all(pos >= 0))
        self.pos.put(pos)
        if self.sym is not None:
            self.sym.put(pt["sym"][acc])
        if one is not None and self.tab.n == 0 and (self.tab_one is None or self.tab_one[0] == one):
            self.tab_one = (one, pos.size + (0 if self.tab_one is None else self.tab_one[1]))  # one table so far: no codes written
        else:
            self._tab_fill()
            if one is None:
                self.tab.put(tcode[acc])
            else:
                self.tab.fill(one, pos.size)
        if pt.get("release") is not None:
            self.release.put(pt["release"][acc])
        if pt.get("dealer") is not None:
            codes, labels = pt["dealer"]
            self.dealer.put(self._lut(self.dealers, labels)[codes[acc]])
        if pt.get("direction") is not None:
            self.direction.put(pt["direction"][acc])
        if pt.get("rotor_speed") is not None:
            self.rotor_speed.put(pt["rotor_speed"][acc])
        if pt.get("ball_direction") is not None:
            self.ball_direction.put(pt["ball_direction"][acc])
        if pt.get("line_no") is not None:  # as _assemble_tables: a spin whose line differs from the table's spin before it
            ln = pt["line_no"][acc]
            start = np.empty(ln.size, dtype=np.int8)
            for t, rows in (_groups(akey[acc], np.arange(ln.size)) if ak1 is None else [(ak1, None)] if ln.size else []):
                v = ln if rows is None else ln[rows]
                head, rest = (0, slice(1, None)) if rows is None else (rows[0], rows[1:])
                start[head] = v[0] != self.last_line.get(t, -1)
                start[rest] = v[1:] != v[:-1]
                self.last_line[t] = int(v[-1])
            self.line_start.put(start)

    def _text_ids(self, sid, tcode: np.ndarray) -> tuple[np.ndarray, bool | str]:
        """``(numbers, True)`` of text spin ids (``(codes, labels)``) in the shape of
        :func:`text_id_numbers`, one prefix per table; ``(keys, "label")`` of other text ids (UUIDs,
        ``T1-5``: 64-bit keys, equal for equal texts, :func:`label_keys`) when the ids are sorted out of
        core (:class:`_NeedSort` before); else :class:`_NeedExact`."""
        if isinstance(sid, TextIds):  # (read as numbers or keys already: no text a row)
            codes = np.arange(sid.values.size)
            got = (sid.prefixes, sid.values, sid.prefix) if sid.kind is True else None
            labels = None
        else:
            codes, labels = sid
            if "" in labels:
                raise _NeedExact("empty spin ids")
            got = text_id_numbers(labels)
            codes = np.asarray(codes, dtype=np.int64)
        if got is None:
            if labels is not None and any(re.fullmatch(PREFIXED_ID, t) for t in labels):
                raise _NeedExact("text spin ids of two shapes (their note names the other shape)")
            keys = sid.values if labels is None else label_keys(labels)  # (None: a label the exact path may count as a whole number, or a very long one)
            if keys is None:
                raise _NeedExact("spin ids that are neither whole numbers nor letters and a number")
            if self.sorter is None:
                raise _NeedSort("spin ids that are labels: their repeats are found out of core")
            return keys[codes], "label"
        prefixes, num, pcode = got
        codes = np.asarray(codes, dtype=np.int64)
        per_row = pcode[codes]
        for t, rows in _groups(tcode, np.arange(codes.size)):  # (a prefix per table)
            if len(prefixes) > 1 and np.any(per_row[rows] != per_row[rows[0]]):
                raise _NeedExact("text spin ids of one table with different prefixes")
            p = prefixes[int(per_row[rows[0]])]
            if self.id_prefix.setdefault(t, p) != p:
                raise _NeedExact("text spin ids of one table with different prefixes")
        return num[codes], True

    def _present(self, t: int, v: np.ndarray) -> None:
        """Add ids (in row order) to the runs of table ``t``; they must keep increasing."""
        st = self.present.setdefault(t, [0, -1, [], []])
        if v[0] <= st[1] or (v.size > 1 and np.any(v[1:] <= v[:-1])):
            raise _NeedExact("spin ids of a table not increasing")
        brk = np.flatnonzero(v[1:] != v[:-1] + 1) + 1
        starts, ends = v[np.r_[0, brk]], v[np.r_[brk - 1, v.size - 1]]
        if st[2] and st[3][-1][-1] + 1 == starts[0]:  # the first run continues the last one
            st[3][-1] = np.r_[st[3][-1][:-1], ends[0]]
            starts, ends = starts[1:], ends[1:]
        if starts.size:
            st[2].append(starts)
            st[3].append(ends)
            self.n_runs += starts.size
            if self.n_runs > 4_000_000:
                raise _NeedExact("too many gaps in the spin ids to keep as runs")
        st[0] += v.size
        st[1] = int(v[-1])

    # -- the log
    # long: builds the tables at the end of a compact read, one optional column after the other, as _assemble_tables does on the exact path
    def finish(self, parts: list[dict], notes: list[str]) -> tuple[str, OutcomeSpace, dict[str, TableSpins]]:
        """Level, outcome space and tables, as :func:`read_spin_log` and :func:`_assemble_tables`
        build them."""
        wheel = self.wheel
        if wheel.kind == "roulette" or (wheel.order_known and self.all_pos):
            level, space, out = "position", wheel.position_space(), self.pos
        else:
            level, space, out = "symbol", wheel.symbol_space(), self.sym
            if wheel.order_known:
                notes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
        cols = self.columns or ()
        if self.id_kind == "label":  # labels: no repeat in any table (file order, no gaps, as on the exact path)
            for t in list(self.sorter.n):
                try:
                    self.sorter.check_unique(t)
                except NotInRuns as exc:
                    raise _NeedExact(str(exc)) from None
        if self.id_kind is True and self.pool:  # pooled text ids: no repeat in any table, and their numbers never fall (file order)
            if self.pool_fell and len({self.id_prefix[t] for t, c in self.live_rows.items() if c}) == 1:  # (one prefix: sorted by number)
                raise _NeedExact("pooled text spin ids out of order")
            for t in list(self.order.runs):
                try:
                    self.order.finish(t, 0)
                except NotInRuns as exc:
                    raise _NeedExact(str(exc)) from None
        if len(self.tables) > 1 and not self.pool:  # (the tables are split by their codes below)
            self._tab_fill()
        outcome = out.values()
        for g in self._cols():
            if g is not out:
                g.values()
        tab_labels_all = list(self.tables)
        if not self.pool:
            labels = tab_labels_all
        else:
            labels = ["(all)"]
            if len(parts) > 1 or len(tab_labels_all) > 1:
                notes.append("tables pooled on request (--pool): tested as one sequence")
        arrays = {"outcomes": outcome}
        if "release" in cols:
            arrays["release"] = self.release.a
        if "dealer" in cols:
            arrays["dealer"] = self.dealer.a
        if "direction" in cols:
            arrays["direction"] = self.direction.a
        for c in ("rotor_speed", "ball_direction"):
            if c in cols:
                arrays[c] = getattr(self, c).a
        if "line_no" in cols:
            arrays["line_start"] = self.line_start.a
        tab = self.tab.a
        self.pos = self.sym = self.tab = self.release = self.dealer = self.direction = self.rotor_speed = self.ball_direction = self.line_start = None  # (the arrays live on in ``arrays``)
        del out, outcome
        if len(labels) > 1:
            arrays, bounds = _split_by_table(arrays, tab, len(labels))  # the ungrouped arrays are freed here
        else:
            bounds = np.array([0, arrays["outcomes"].size])
        del tab
        extra: dict = {}
        extra_text: dict = {}
        for pt in parts:
            for t, v in pt.get("extra_ids", []):
                extra.setdefault(t, []).append(v)
            for t, v in pt.get("extra_text_ids", []):
                extra_text.setdefault(t, []).append(v)
        dealer_labels = list(self.dealers)
        tables: dict[str, TableSpins] = {}
        for ti, t in enumerate(labels):
            live = self.live_rows.get(ti, 0) if not self.pool else sum(self.live_rows.values())
            if live == 0:
                continue
            a, b = int(bounds[ti]), int(bounds[ti + 1])
            tnotes: list[str] = []
            table_void = self.void.get(ti, 0)
            unsplit = sorted_gaps = None
            if "spin_id" in cols:
                names = ([str(t)] if not self.pool else tab_labels_all) + [None]
                unsplit = np.asarray([v for nm in names for v in extra.get(nm, [])], dtype=np.int64)
                unsplit = unsplit[unsplit >= 0] if self.id_kind is not True else (  # (digits are not a text id's number; its prefix's are)
                    prefixed_numbers([v for nm in names for v in extra_text.get(nm, [])], self.id_prefix[ti]) if ti in self.id_prefix else unsplit[:0])
            if "spin_id" in cols and not self.pool and self.id_kind != "label":  # (text ids of one prefix: ordered by their numbers, as whole numbers are)
                try:
                    if self.sorter is not None:  # (the columns are put in spin-id order in place, without the rows repeats leave out)
                        moved, sorted_gaps, kept, groups = self.sorter.sort_table(ti, [arr[a:b] for arr in arrays.values()], self.min_us, unsplit,
                                                                                  repeats=self.id_kind is False)
                        slices = [] if moved else None
                        if groups.size:  # repeated ids: their notes first, as on the exact path
                            b = a + kept
                            rnotes, void_out, live_out = self._repeat_rejects(groups, parts)
                            tnotes.extend(rnotes)
                            table_void -= void_out
                            live -= live_out
                    else:
                        self.present[ti], slices = self.order.finish(ti, self.min_us)
                except NotInRuns as exc:
                    raise _not_in_runs(exc) from None
                if slices is not None:
                    for arr in arrays.values() if slices else ():
                        reorder(arr[a:b], slices)
                    tnotes.append(ORDER_NOTE)
            if live == 0:  # (every live row left out as a conflict)
                continue
            ts_ = TableSpins(table=str(t), outcomes=arrays["outcomes"][a:b], void=table_void, notes=tnotes)
            if "release" in arrays:
                ts_.release = arrays["release"][a:b]
            if "direction" in arrays:
                ts_.direction = arrays["direction"][a:b]
            if "rotor_speed" in arrays:
                ts_.rotor_speed = arrays["rotor_speed"][a:b]
            if "ball_direction" in arrays:
                ts_.ball_direction = arrays["ball_direction"][a:b]
            if "line_start" in arrays and b > a:
                ts_.line_start = arrays["line_start"][a:b].view(bool)
            if "dealer" in arrays:
                sel = arrays["dealer"][a:b]
                used = np.flatnonzero(np.bincount(sel, minlength=len(dealer_labels))) if sel.size else np.zeros(0, np.int64)
                lookup = np.zeros(max(len(dealer_labels), 1), dtype=_small_int(max(used.size - 1, 1)))
                lookup[used] = np.arange(used.size)
                ts_.dealer = lookup[sel]
                ts_.dealer_labels = tuple(dealer_labels[u] if dealer_labels[u] else "(none)" for u in used)
            # gaps: whole-number ids, and text ids of one prefix in a table that is not pooled (their numbers, as the exact path counts them)
            if "spin_id" in cols and (not self.id_kind or (self.id_kind is True and not self.pool)):
                gaps = sorted_gaps if self.sorter is not None else self._gaps(ti, unsplit)
                if gaps:
                    pre = self.id_prefix.get(ti, "") if self.id_kind is True else ""
                    tnotes.append(f"{gaps[0]} spin_id(s) missing between {pre}{gaps[1]} and {pre}{gaps[2]} (gaps in the sequence)")
            if self._whole_minutes(ti):
                tnotes.append(f"Near-duplicate rounds not checked: the timestamps are whole minutes (or dates), too coarse to tell rounds "
                              f"less than {self.min_us / 1e6:g} s apart.")
            tables[str(t)] = ts_
        if self.repeat_rejected and self.period is not None:  # (the rows repeats leave out are not in the period)
            spans = list(self.sorter.span.values())
            self.period = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None
        return level, space, tables

    def _whole_minutes(self, ti: int) -> bool:
        """Whether the near-duplicate check is left out of table ``ti`` (pooled: of any table) with a note, as
        :func:`~rngcert.collect.spinlog.order._mark_near_duplicates` leaves it out: a minimum round interval, two live rows
        with a timestamp or more in the log, and this table's timestamps all whole minutes."""
        if self.min_us <= 0 or self.ts_rows < 2:
            return False
        return any(self.minute_only.values()) if self.pool else self.minute_only.get(ti, False)

    def _repeat_rejects(self, groups: np.ndarray, parts: list[dict]) -> tuple[list[str], int, int]:
        """The rejects and the table notes of the repeated spin ids of one table (the records of their
        live rows, :meth:`IdSort.sort_table`), worded as :func:`_mark_repeats` words them; the rejects
        are kept compact in :attr:`repeat_rejected` (:class:`RepeatRejects`), the accepted and void rows
        they take per file in :attr:`repeat_removed`. Returns (notes, void rows left out, live rows left out)."""
        from rngcert.collect.spinlog.rejects import RepeatRejects

        if self.repeat_rejected is None:
            self.repeat_rejected = RepeatRejects(self.wheel, [pt["name"] for pt in parts],
                                                 [pt.get("colnames", {}).get("spin_id", "spin_id") for pt in parts])
        notes, removed, void_out, live_out = self.repeat_rejected.add_table(groups)
        for f, (na, nv) in removed.items():
            got = self.repeat_removed.setdefault(f, [0, 0])
            got[0] += na
            got[1] += nv
        return notes, void_out, live_out

    def _gaps(self, t: int, unsplit: np.ndarray):
        """(missing, first, last) of the ids of table ``t`` and the unsplit rows' ids, or None."""
        st = self.present.get(t)
        if st is None or st[0] == 0:
            if unsplit.size < 2:
                return None
            u = arrayops.unique(unsplit)
            gaps = int(u[-1]) - int(u[0]) + 1 - u.size  # Python ints: ids near 2**63 - 1 do not overflow
            return (gaps, int(u[0]), int(u[-1])) if gaps else None
        starts, ends = np.concatenate(st[2]), np.concatenate(st[3])
        distinct = st[0]
        u = arrayops.unique(unsplit)
        if u.size:
            i = np.searchsorted(starts, u, side="right") - 1  # the run that may hold each id
            inside = (i >= 0) & (u <= ends[np.clip(i, 0, None)])
            distinct += int(np.count_nonzero(~inside))
        lo = int(min(starts[0], u[0])) if u.size else int(starts[0])
        hi = int(max(ends[-1], u[-1])) if u.size else int(ends[-1])
        if st[0] + unsplit.size < 2:
            return None
        gaps = hi - lo + 1 - distinct
        return (gaps, lo, hi) if gaps else None


def _split_by_table(arrays: dict[str, np.ndarray], tab: np.ndarray, n_tables: int, chunk: int = 1 << 20):
    """Group the rows of every array by table (a stable counting sort done chunk by chunk, so
    that no index array of the whole log is made). Returns the grouped arrays and the bounds of
    each table's rows."""
    counts = np.bincount(tab, minlength=n_tables)
    bounds = np.r_[0, np.cumsum(counts)]
    if _grouped(tab, chunk):  # each table's rows together already (codes are numbered as tables first appear): nothing moves
        return arrays, bounds
    out = {k: np.empty_like(v) for k, v in arrays.items()}
    fill = bounds[:-1].copy()
    for a in range(0, tab.size, chunk):
        t = tab[a : a + chunk]  # (the codes' own small type: a stable sort of 8- or 16-bit integers is a radix sort, 6x faster than of int64)
        order = np.argsort(t, kind="stable")
        st = t[order]
        c = np.bincount(st, minlength=n_tables)
        first = np.r_[0, np.cumsum(c)[:-1]]
        dest = np.empty(t.size, dtype=np.int64)
        dest[order] = fill[st] + (np.arange(t.size) - first[st])
        for k, v in arrays.items():
            out[k][dest] = v[a : a + chunk]
        fill += c
    return out, bounds


def _grouped(tab: np.ndarray, chunk: int = 1 << 20) -> bool:
    """Whether the table codes never decrease (each table's rows are together and in code order), checked chunk
    by chunk (no temporary of the whole log)."""
    for a in range(0, max(tab.size - 1, 0), chunk):
        t = tab[a : a + chunk + 1]
        if np.any(t[1:] < t[:-1]):
            return False
    return True
