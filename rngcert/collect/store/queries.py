"""Queries: the tables, sources, rejects and conflicts of a store, and the spins of a table in a
window (:meth:`~rngcert.collect.store.Store.spins`)."""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rngcert.collect import _arrow
from rngcert.collect.store.schema import PARTIAL_SOURCE_KEY, _guarded
from rngcert.errors import InputError

#: Rows per record batch read back by :meth:`Store.spins`.
READ_BATCH = 1 << 20



@dataclass
class StoredSpins:
    """Spins of one table read back from the store, in spin order (void spins included).

    The per-spin columns are compact (the store's own types): 2 bytes a spin for positions,
    symbols and release pockets, 1 for direction and void, 1-4 for dealer codes; ``seq`` and
    ``ts`` are int64."""

    table: str
    equipment: str
    spin_id: pa.Array  # text (empty when read without ids)
    seq: np.ndarray | None  # int64; None when read with keys=False (see seq_range)
    ts: np.ndarray | None  # int64 microseconds, or None when no row has a timestamp (or read with keys=False)
    pos: np.ndarray  # int16, -1 none
    sym: np.ndarray  # int16, -1 none
    dealer: np.ndarray | None  # int8/int16/int32 codes into dealer_labels (first appearance by seq), None when no row names a dealer
    direction: np.ndarray | None  # int8, -1 unknown
    release: np.ndarray | None  # int16, -1 unknown
    void: np.ndarray  # bool
    dealer_labels: list[str] = field(default_factory=list)  # "" = not named
    source_ids: list[int] = field(default_factory=list)
    seq_range: tuple | None = None  # (smallest, largest) seq of the window; None when empty
    ts_range: tuple | None = None  # (smallest, largest) ts, int64 us (the smallest int64 where a row has none); None without ts
    #: (source << 32) + line of each spin, for a window holding a permanence list (many spins a line; the line
    #: structure feeds certify's line-start checks); None otherwise
    line_key: np.ndarray | None = None
    #: spin ids of the window left out because the store holds conflicting results for them (neither is used)
    conflicted: int = 0
    #: both versions of each left-out spin as rejected rows (file, line, column, reason), in file and line order
    conflict_rows: list = field(default_factory=list)
    #: timestamps that go back in spin-id order (whole-number ids): the data-integrity finding certify makes of them
    #: (:func:`rngcert.collect.spinlog.time_order_finding`), or None
    order_finding: dict | None = None

    @property
    def n(self) -> int:
        return int(self.void.size)


def _window_where(table: str, since, until, after_seq, before_seq) -> tuple[str, list]:
    """The WHERE clause (and its parameters) of a table's window of spins."""
    where, args = ["table_id = ?"], [table]
    if since is not None:
        where.append("ts >= ?")
        args.append(parse_when(since, "since"))
    if until is not None:
        where.append("ts < ?")
        args.append(parse_when(until, "until"))
    if after_seq is not None:
        where.append("seq > ?")
        args.append(int(after_seq))
    if before_seq is not None:
        where.append("seq < ?")
        args.append(int(before_seq))
    return " AND ".join(where), args


#: The spin id of a row of ``spins`` as text (as the ``conflicts`` table holds it).
_SID = "CASE WHEN spins.spin_label = '' THEN CAST(spins.spin_no AS VARCHAR) ELSE spins.spin_label END"

#: Rows of ``spins`` whose key is among the conflicting ones (parameters: their numeric ids, their text ids; see
#: :func:`_conflicted_keys`): compared as stored (BIGINT, or the text of a non-numeric id), no cast per row; a semi-join on
#: the ids (``IN (SELECT unnest(…))``, a hash table), not ``list_contains``, which scans the whole list for every row (an
#: audit of 500,000 spins with 149,000 conflicts took 108 s, 22 s of it in one such count).
_CONFLICTED = ("((spin_label = '' AND spin_no IN (SELECT unnest(?::BIGINT[]))) "
               "OR (spin_label <> '' AND spin_label IN (SELECT unnest(?::VARCHAR[]))))")


#: a stored spin label that is a whole number written with leading zeros (``007``: certify reads it as spin 7; the store
#: keeps ids in their canonical spelling as numbers, others as labels)
_DIGITS = r"[0-9]{1,18}"


def _id_match(v, alias: str = "") -> tuple[str, list]:
    """SQL (and its parameters) matching the stored rows of spin id ``v``: a text id as stored (``R1200``), or a whole
    number, stored as such or as a label with leading zeros (``007``, which certify and the watch read as 7)."""
    if isinstance(v, str):
        return f"{alias}spin_label = ?", [v]
    lab = f"{alias}spin_label"
    return (f"(({lab} = '' AND {alias}spin_no = ?) OR ({lab} <> '' AND regexp_full_match({lab}, '{_DIGITS}') "
            f"AND TRY_CAST({lab} AS BIGINT) = ?))"), [int(v), int(v)]


def _whole_id_counts(con, win: str, args: list) -> tuple:
    """``(lowest, highest, ids of another kind, ids present between them in the table)`` of a window (``win``, ``args``:
    the table first) of whole-number spin ids, those stored as labels with leading zeros (``007``) too, each number once."""
    num = f"CASE WHEN spin_label = '' THEN spin_no WHEN regexp_full_match(spin_label, '{_DIGITS}') THEN CAST(spin_label AS BIGINT) END"
    lo, hi, other, padded = con.execute(f"""SELECT min({num}), max({num}), count(*) FILTER (WHERE ({num}) IS NULL),
                                                   count(*) FILTER (WHERE spin_label <> '') FROM spins WHERE {win}""", args).fetchall()[0]
    if lo is None:
        return lo, hi, other, 0
    table = args[0]
    present = con.execute("SELECT count(*) FROM spins WHERE table_id = ? AND spin_label = '' AND spin_no BETWEEN ? AND ?", [table, lo, hi]).fetchall()[0][0]
    if not (padded or con.execute("SELECT count(*) FROM spins WHERE table_id = ? AND spin_label <> ''", [table]).fetchall()[0][0]):
        return lo, hi, other, present
    # numbers spelled with leading zeros, outside the window too: each counted once, and not where the number is stored as such.
    # Labels of one length hold each number once, and a label with a leading zero is below 10^(length - 1): without a stored
    # number below that in the range, a count (the usual zero-padded log: 0.1 CPU-s at 2 M ids, not 0.7 with the hash)
    n_lab, lmin, lmax = con.execute(f"""SELECT count(*), min(length(spin_label)), max(length(spin_label)) FROM spins WHERE table_id = ?
                                        AND spin_label <> '' AND regexp_full_match(spin_label, '{_DIGITS}')
                                        AND TRY_CAST(spin_label AS BIGINT) BETWEEN ? AND ?""", [table, lo, hi]).fetchall()[0]
    if not n_lab:
        return lo, hi, other, present
    below = min(int(hi), 10 ** (int(lmax) - 1) - 1)
    if lmin == lmax and not con.execute("SELECT count(*) FROM spins WHERE table_id = ? AND spin_label = '' AND spin_no BETWEEN ? AND ?",
                                        [table, lo, below]).fetchall()[0][0]:
        present += n_lab
    else:
        present += con.execute(
            f"""SELECT count(DISTINCT n) FROM (SELECT CAST(spin_label AS BIGINT) AS n FROM spins WHERE table_id = ? AND spin_label <> ''
                                               AND regexp_full_match(spin_label, '{_DIGITS}')) p
                WHERE n BETWEEN ? AND ? AND NOT EXISTS (SELECT 1 FROM spins c WHERE c.table_id = ? AND c.spin_label = '' AND c.spin_no = p.n)""",
            [table, lo, hi, table]).fetchall()[0][0]
    return lo, hi, other, present


def _text_id_counts(con, win: str, args: list, prefix: str, outside: tuple | None = None) -> tuple:
    """``(lowest, highest, ids of another shape, ids present between them in the table)`` of a window (``win``, ``args``:
    the table first) of text spin ids ``prefix`` and a number (``R1200``), by the number. The number is read once a row,
    and the table's rows outside the window are read only when there are any (an audit of the whole table: one pass)."""
    k = len(prefix) + 1
    # (the number after the prefix, where the rest is a whole number written without a leading zero, a sign or a space;
    # NULL for any other id, which counts as another shape)
    num = f"""CASE WHEN starts_with(spin_label, ?) AND length(spin_label) <= {k + 17}
                   AND CAST(TRY_CAST(substr(spin_label, {k}) AS UBIGINT) AS VARCHAR) = substr(spin_label, {k})
                   THEN TRY_CAST(substr(spin_label, {k}) AS UBIGINT) END"""
    lo, hi, other, inside = con.execute(f"""SELECT min(n), max(n), count(*) FILTER (WHERE n IS NULL), count(n)
                                            FROM (SELECT {num} AS n FROM spins WHERE {win})""", [prefix] + args).fetchall()[0]
    if lo is None or other:
        return lo, hi, other, inside
    table, a, b = args[0], args[1], args[-1]
    out_sql, out_args = outside or ("seq NOT BETWEEN ? AND ?", [a, b])  # (the table's rows outside the window)
    more = con.execute(f"""SELECT count(*) FROM (SELECT {num} AS n FROM spins WHERE table_id = ? AND {out_sql})
                           WHERE n BETWEEN ? AND ?""", [prefix, table, *out_args, lo, hi]).fetchall()[0][0]
    return lo, hi, other, inside + more  # (each label is stored once, and a number has one spelling of this shape)


def _conflicted_keys(con, table: str) -> list:
    """The two parameters of :data:`_CONFLICTED` for a table: the spin ids with a conflict, numeric ids (written as the
    store's ``spin_no``, e.g. ``17``) and text ids apart; empty lists when the table has no conflict."""
    import re

    ids = [r[0] for r in con.execute("SELECT DISTINCT spin_id FROM conflicts WHERE table_id = ?", [table]).fetchall()]
    canon = re.compile(r"^(0|-?[1-9][0-9]{0,17})$")  # (the rule of ingest: such an id is stored as spin_no)
    return [[int(x) for x in ids if canon.match(x)], [x for x in ids if not canon.match(x)]]


def _is_or_ends_with(path: str, file: str) -> bool:
    """Whether ``path`` is ``file`` or ends with it after a path separator (``--file a.csv`` is ``logs/a.csv``, not
    ``data.csv``)."""
    return path == file or path.endswith(("/" + file, "\\" + file))


def _conflict_rejects(con, where_sql: str, args: list, seq_of: dict | None = None) -> list[tuple]:
    """Both versions of every conflict of the ``conflicts`` rows selected by ``where_sql`` (on ``c``) as (file, line, column,
    reason, text, source_id, seq of the stored spin from ``seq_of``: {(table, spin id): seq}, spin id), each (file, line) once, in
    source and line order."""
    from rngcert.collect.store.ingest import result_text
    from rngcert.equipment.wheel import load_wheel

    rows = con.execute(
        f"""SELECT c.table_id, c.spin_id, c.stored_pos, c.stored_sym, c.stored_void, c.stored_source_id, ss.path, c.stored_line,
                   c.new_pos, c.new_sym, c.new_void, c.source_id, ns.path, c.line, t.equipment
            FROM conflicts c LEFT JOIN sources ss ON ss.source_id = c.stored_source_id
                 LEFT JOIN sources ns ON ns.source_id = c.source_id LEFT JOIN tables t ON t.table_id = c.table_id
            WHERE {where_sql}""",
        args,
    ).fetchall()
    wheels: dict = {}  # equipment -> (wheel, its position labels: computed once, not once a row)
    versions: dict = {}  # (table, spin id) -> {(file, line): (result, source_id)}
    for r in rows:  # loop over conflicts (rows that are not spins; a store can hold many: one per spin id with two results)
        if r[14] not in wheels:
            w = load_wheel(r[14])
            wheels[r[14]] = (w, w.position_space().labels if w.order_known else ())
        w, labels = wheels[r[14]]
        v = versions.setdefault((r[0], r[1]), {})
        v.setdefault((r[6], r[7]), (result_text(w, r[2], r[3], r[4], labels=labels), r[5]))
        v.setdefault((r[12], r[13]), (result_text(w, r[8], r[9], r[10], labels=labels), r[11]))
    out = []
    names = {f: Path(str(f)).name for v in versions.values() for f, _ in v}  # (a file's name once, not once a row)
    for (table, sid), v in versions.items():
        said = "; ".join(f"{res} ({names[f]} line {ln})" for (f, ln), (res, _) in v.items())
        reason = f"conflict: spin_id {sid} of table {table} has different results in the store: {said}; neither result is used"
        seq = (seq_of or {}).get((table, sid))
        out.extend((f, ln, "result", reason, res, src, seq, sid) for (f, ln), (res, src) in v.items())
    out.sort(key=lambda x: (x[5] or 0, str(x[0]), x[1] or 0))
    return out


def _window_columns(where_sql: str, key: str, *, with_ids: bool, has_ts: bool, has_dealer: bool) -> str:
    """The SELECT of a window's compact columns (its dealer codes take the dealer labels as their first parameter)."""
    sid = "CASE WHEN spin_label = '' THEN CAST(spin_no AS VARCHAR) ELSE spin_label END" if with_ids else "NULL::VARCHAR"
    codes = "NULL::INTEGER"
    if has_dealer:
        codes = "list_position(?::VARCHAR[], coalesce(dealer, '')) - 1"
    return f"""SELECT {sid} AS spin_id, seq, epoch_us(ts) AS ts, coalesce(pos, -1) AS pos, coalesce(sym, -1) AS sym, {codes} AS dealer,
                       coalesce(direction, -1) AS direction, coalesce(release, -1) AS release, coalesce(void, false) AS void, source_id,
                       {key if has_ts else 'NULL::BIGINT'} AS key
                FROM spins WHERE {where_sql}"""


def _fill_window(w: dict, reader, *, sort: bool, has_ts: bool, with_ids: bool) -> bool:
    """Fill the window's columns in ``w`` from the record batches of ``reader``, checking the (timestamp, key) order as it goes;
    False (stopped early) when the rows, read unsorted, are not in seq order."""
    last_ts = last_key = None
    last_seq = np.iinfo(np.int64).min
    at = 0
    for b in reader:  # loop over record batches
        m = b.num_rows
        if m == 0:
            continue
        sl = slice(at, at + m)
        bseq = _arrow.ints(b.column("seq"))
        if not sort:
            if bseq[0] <= last_seq or np.any(bseq[1:] <= bseq[:-1]):
                return False
            last_seq = bseq[-1]
        if w["seq"] is not None:
            w["seq"][sl] = bseq
        w["lo_seq"], w["hi_seq"] = min(w["lo_seq"], int(bseq.min())), max(w["hi_seq"], int(bseq.max()))
        for name in ("pos", "sym", "release", "direction"):
            w[name][sl] = _arrow.ints(b.column(name))
        w["void"][sl] = _arrow.bools(b.column("void"))
        if w["dealer"] is not None:
            w["dealer"][sl] = _arrow.ints(b.column("dealer"))
        w["sources"].update(x for x in pc.unique(b.column("source_id")).to_pylist() if x is not None)
        if with_ids:
            w["ids"].append(b.column("spin_id"))
        if has_ts:
            t = _arrow.ints(b.column("ts"), fill=np.iinfo(np.int64).min)
            if w["ts"] is not None:
                w["ts"][sl] = t
            w["lo_ts"], w["hi_ts"] = min(w["lo_ts"], int(t.min())), max(w["hi_ts"], int(t.max()))
            if w["ordered"] or w["id_ordered"]:
                k = _arrow.ints(b.column("key")).astype(np.int64)
                if last_ts is not None:
                    t, k = np.concatenate([[last_ts], t]), np.concatenate([[last_key], k])
                d, dk = np.diff(t), np.diff(k)
                if np.any(d < 0) or np.any((d == 0) & (dk < 0)):
                    w["ordered"] = False
                if np.any(dk < 0):
                    w["id_ordered"] = False
                last_ts, last_key = t[-1], k[-1]
        at += m
    return True


def _conflicts_in_last(conflict_rows: list, keys_ts: tuple | None, sel: int, first_seq: int | None) -> list:
    """The rows of :meth:`QueriesMixin._without_conflicts` (seq at 6, spin id at 7) of the spin ids that lie in a window
    cut by ``--last`` at index ``sel``: in spin order from its first kept spin on. With the window's spin ids in spin order
    (``keys_ts``: the ids were not in ingest order, e.g. a month ingested after a later one), a conflicting id belongs to
    the window when it is not below the first kept id; otherwise ingest order is spin order and its seq decides."""
    if first_seq is None:
        return []
    if keys_ts is None:
        return [r for r in conflict_rows if r[6] is not None and r[6] >= first_seq]
    ids, _, prefix = keys_ts
    lo = int(ids[sel])
    keep = []
    for r in conflict_rows:  # loop over the conflicts' rows (two a conflicting spin id)
        sid = str(r[7])
        num = sid[len(prefix):] if sid.startswith(prefix) else ""
        if num.lstrip("-").isdigit():
            if int(num) >= lo:
                keep.append(r)
        elif r[6] is not None and r[6] >= first_seq:
            keep.append(r)
    return keep


def _order_finding(keys_ts: tuple | None, sel: int | None) -> dict | None:
    """Certify's data-integrity finding of timestamps that go back in spin-id order (c18), for the window's spins from index
    ``sel`` on (``--last``), from the (spin ids, timestamps) of :meth:`QueriesMixin._spin_order`; None without them. The store
    keeps no time zone of the log, so a step back is explained only by a clock adjustment, never by daylight-saving time."""
    if keys_ts is None:
        return None
    from rngcert.collect.spinlog import time_order_finding
    from rngcert.collect.spinlog.order import DST_TOLERANCE_S

    ids, ts, prefix = keys_ts
    f = time_order_finding(ts[sel or 0:], ids[sel or 0:], None, prefix)
    if f and f["inconclusive"] and any(abs(x - 3600) <= DST_TOLERANCE_S for x in f["evidence"]["steps_seconds"]):
        why = ("; a step of one hour may be daylight-saving time ending at zone-less local times, which the store cannot tell "
               "(it keeps no time zone of the log): `rngcert certify` of the log itself tells it")
        f["inconclusive"] += why
        f["summary"] += why
    return f


def _last_start(void: np.ndarray, last: int) -> int | None:
    """Index of the first of the last ``last`` non-void spins (None: the window has no more than ``last``)."""
    if last < 1:
        raise InputError(f"--last must be a positive number of spins, got {last}")
    n_good = void.size - int(np.count_nonzero(void))
    if n_good > last:
        return _nth_true(~void, n_good - last)  # the first of the last ``last`` non-void spins
    return None


def _keep_from(out: StoredSpins, sel: int, with_ids: bool) -> None:
    """Cut ``out`` to its spins from index ``sel`` on (``--last``), with their ranges."""
    for name in ("seq", "ts", "pos", "sym", "dealer", "direction", "release", "void", "line_key"):
        v = getattr(out, name)
        if v is not None:
            setattr(out, name, v[sel:].copy())
    out.spin_id = out.spin_id.slice(sel) if with_ids else out.spin_id
    out.seq_range = (int(out.seq.min()), int(out.seq.max())) if out.n else None
    out.ts_range = (int(out.ts.min()), int(out.ts.max())) if out.n and out.ts is not None else None


class QueriesMixin:
    """Reads of a store (part of :class:`~rngcert.collect.store.Store`)."""

    @_guarded
    def known_source(self, sha: str, *, con=None, tables: Sequence[str] | None = None):
        """(equipment, default table, path) of the first ingest of the bytes with this SHA-256, or None.

        Raises :class:`InputError` when the store holds those bytes only in part (their spins of some tables, from an
        ``export --table`` folder): taking them for stored would leave their other tables out without a word; ``tables``
        (the tables an export holds of them) within those stored is no more than the stored part, and not refused."""
        c = con or self.con
        rows = c.execute("SELECT equipment, default_table, path FROM sources WHERE sha256 = ? ORDER BY source_id LIMIT 1", [sha]).fetchall()
        if rows:
            part = c.execute("SELECT value FROM meta WHERE key = ?", [PARTIAL_SOURCE_KEY + sha]).fetchall()
            if part and not (tables is not None and set(tables) <= set(part[0][0].split(", "))):
                raise InputError(
                    f"the bytes with sha256 {sha[:16]}… ({rows[0][2]}) are in store {self.path} only in part: their spins of "
                    f"table(s) {part[0][0]} came from an export of some tables only (rngcert export --table), and the store takes "
                    "a file's bytes once, so their other tables cannot be added to it: ingest the whole log or export into a "
                    "new store")
        return tuple(rows[0]) if rows else None

    @_guarded
    def time_span(self, table: str) -> tuple:
        """(first timestamp, last timestamp, stored rows, rows without a timestamp) of ``table``; the timestamps as int64
        microseconds since 1970 UTC, or None when no row has one."""
        a, b, n, untimed = self.con.execute("SELECT epoch_us(min(ts)), epoch_us(max(ts)), count(*), count(*) FILTER (WHERE ts IS NULL) "
                                            "FROM spins WHERE table_id = ?", [table]).fetchall()[0]
        return a, b, int(n), int(untimed)

    @_guarded
    def stored_rows(self, table: str) -> int:
        """How many rows ``spins`` holds of ``table`` (void ones and conflicting ids' stored rows included)."""
        return int(self.con.execute("SELECT count(*) FROM spins WHERE table_id = ?", [table]).fetchall()[0][0])

    @_guarded
    def tables_with_spins(self, *, counts: bool = False) -> list[str] | dict[str, int]:
        """Ids of the tables that hold at least one spin that is not void, sorted: the tables
        ``audit --all`` audits (the same as ``[t["table"] for t in self.tables() if t["spins"]]``: a
        spin whose id is stored with two results is no spin an audit uses).

        One pass over one column with no times: on a store of 50 M spins it takes about a tenth of
        :meth:`tables` (0.06 s against 0.6 s). With ``counts``, a dict of the same tables, in the same
        order, to their rows that are not void (conflicting ones included: an estimate of an audit's
        size, as ``audit --all`` needs it to plan its work items), from the same pass.
        """
        known = {r[0] for r in self.con.execute("SELECT table_id FROM tables").fetchall()}
        if counts:
            rows = {r[0]: int(r[1]) for r in self.con.execute("SELECT table_id, count(*) FROM spins WHERE NOT void GROUP BY 1").fetchall() if r[0] in known}
        else:
            rows = {r[0]: 0 for r in self.con.execute("SELECT DISTINCT table_id FROM spins WHERE NOT void").fetchall() if r[0] in known}
        got = list(rows)
        with_conflicts = {r[0] for r in self.con.execute("SELECT DISTINCT table_id FROM conflicts").fetchall()}
        for t in with_conflicts.intersection(got):  # (tables with a conflict: few) does a spin outside the conflicts remain?
            if not self.con.execute(f"SELECT 1 FROM spins WHERE table_id = ? AND NOT void AND NOT {_CONFLICTED} LIMIT 1",
                                    [t] + _conflicted_keys(self.con, t)).fetchall():
                got.remove(t)
        return {t: rows[t] for t in sorted(got)} if counts else sorted(got)

    @_guarded
    def tables(self) -> list[dict]:
        """Every table with its wheel and spin counts, as audits use them and as stored.

        A spin id stored with two results (a conflict) is used by neither result: ``spins`` and
        ``void`` count what an audit of the whole table uses (its non-void and void spins, the
        conflicted ones left out); ``conflicted`` counts the stored rows of conflicted spin ids (one
        each, void or not); ``stored_spins`` and ``stored_void`` count every stored row (``spins`` +
        ``void`` + ``conflicted`` = ``stored_spins`` + ``stored_void``: what :meth:`count_spins` and an
        export's data hold). ``first_ts``, ``last_ts`` and ``last_seq`` are of the stored rows.
        """
        q = """SELECT t.table_id, t.equipment, t.wheel_id,
                      count(s.seq) FILTER (WHERE NOT s.void), count(s.seq) FILTER (WHERE s.void),
                      min(s.ts), max(s.ts), max(s.seq)
               FROM tables t LEFT JOIN spins s USING (table_id)
               GROUP BY ALL ORDER BY t.table_id"""
        rows = self.con.execute(q).fetchall()
        conf: dict[str, tuple[int, int]] = {}
        for (t,) in self.con.execute("SELECT DISTINCT table_id FROM conflicts").fetchall():  # (tables with a conflict: few; no cast per row)
            got = self.con.execute(f"SELECT count(*) FILTER (WHERE NOT void), count(*) FILTER (WHERE void) FROM spins WHERE table_id = ? AND {_CONFLICTED}",
                                   [t] + _conflicted_keys(self.con, t)).fetchall()[0]
            conf[t] = (int(got[0]), int(got[1]))
        out = []
        for r in rows:
            cn, cv = conf.get(r[0], (0, 0))
            out.append({"table": r[0], "equipment": r[1], "wheel": r[2], "spins": r[3] - cn, "void": r[4] - cv, "conflicted": cn + cv,
                        "stored_spins": r[3], "stored_void": r[4], "first_ts": r[5], "last_ts": r[6], "last_seq": r[7]})
        return out

    @_guarded
    def equipment_of(self, table: str) -> str:
        found = self.con.execute("SELECT equipment FROM tables WHERE table_id = ?", [table]).fetchall()
        row = found[0] if found else None
        if row is None:
            known = [r[0] for r in self.con.execute("SELECT table_id FROM tables ORDER BY 1 LIMIT 20").fetchall()]
            raise InputError(f"table {table!r} is not in store {self.path}; tables: {', '.join(known) or '(none: ingest a log first)'}")
        return row[0]

    @_guarded
    def sources(self) -> list[dict]:
        cur = self.con.execute("SELECT * FROM sources ORDER BY source_id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @_guarded
    def rejects(self, *, file: str | None = None, limit: int | None = None, conflicts: bool = False) -> list[dict]:
        """Rejected rows (file, line, column, reason, text), optionally of one file; with ``conflicts``, also both rows of
        every spin id stored with two results (a conflict: neither result is used)."""
        q = 'SELECT file, line, "column", reason, text, source_id FROM rejects'
        args: list = []
        names = None if file is None else set(self.source_paths_ending(file))
        if names is not None:
            q += " WHERE file IN (SELECT unnest(?::VARCHAR[]))"
            args.append(sorted(names))
        rows = self.con.execute(q, args).fetchall()
        if conflicts:
            rows += [r[:6] for r in _conflict_rejects(self.con, "true", []) if names is None or str(r[0]) in names]
        rows.sort(key=lambda r: (r[5] or 0, str(r[0]), r[1] or 0))
        if limit is not None:
            rows = rows[: int(limit)]
        return [dict(zip(("file", "line", "column", "reason", "text", "source_id"), r)) for r in rows]

    @_guarded
    def source_paths_ending(self, file: str) -> list[str]:
        """Paths of the stored files (sources, and files of rejected rows) that are ``file`` or end with it after a path
        separator (``--file a.csv`` is ``logs/a.csv``, not ``data.csv``; how :meth:`rejects` matches ``file``). ``file`` is
        read as a path: ``./a.csv`` is ``a.csv``, and a path that ends with a stored relative path after a separator is
        that file (``/srv/logs/a.csv`` or ``../logs/a.csv`` is ``logs/a.csv``, as stored from the folder of the ingest)."""
        given = [file] + ([os.path.normpath(file)] if file and os.path.normpath(file) != file else [])
        stored = {str(r[0]) for r in self.con.execute("SELECT path FROM sources UNION SELECT file FROM rejects").fetchall() if r[0] is not None}
        return sorted(p for p in stored if any(_is_or_ends_with(p, f) or (not os.path.isabs(p) and _is_or_ends_with(f, os.path.normpath(p)))
                                               for f in given))

    @_guarded
    def conflicts(self, *, table: str | None = None) -> list[dict]:
        q = "SELECT * FROM conflicts" + (" WHERE table_id = ?" if table else "") + " ORDER BY source_id, line"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @_guarded
    def spin_origin(self, table: str, spin_no: int | str) -> tuple[str, int] | None:
        """(file, line) the first stored row of spin id ``spin_no`` of ``table`` was read from, or None.

        Parameters
        ----------
        table : str
            The table.
        spin_no : int or str
            The spin id: a whole number, or a text id as stored (``R1200``).

        Returns
        -------
        tuple or None
            The source file's path as ingested and the row's line in it.
        """
        which, val = _id_match(spin_no, "spins.")
        rows = self.con.execute("SELECT s.path, spins.line FROM spins JOIN sources s ON s.source_id = spins.source_id WHERE spins.table_id = ? "
                                f"AND {which} ORDER BY spins.seq LIMIT 1", [table, *val]).fetchall()
        return (str(rows[0][0]), int(rows[0][1] or 0)) if rows else None

    @_guarded
    def id_gaps(self, table: str, seq_range: tuple[int, int], seqs: np.ndarray | None = None) -> tuple[int, str, str] | None:
        """The spin ids missing from the store between the lowest and the highest id of a window of ``table`` (its rows
        with ``seq`` in ``seq_range``): ``(how many, the lowest id, the highest)``, or None when none is missing. The ids
        are whole numbers, or text ids of one prefix and a number (``R1200``: by the number); an id stored anywhere in
        the table (outside the window too, void or conflicted) is not missing. None also when the window's ids are
        labels of another shape, mix the two kinds or are fewer than two, and for a table of logs without spin ids (numbered
        by position: a rejected row's number is no spin id missing; a table's logs are all of one rule). A row rejected on
        ingest stored no id.

        A table stores each spin id once (a repeat or a conflict is not stored again), so the ids present between two
        values are counted by ``count(*)``, without a hash of every id (0.27 CPU-s at 2 M spins with ``count(DISTINCT)``).

        ``seqs``, the seq of each of the window's spins, is its exact set where the seq range holds other spins of the
        table too (a month ingested after a later one: a window of the later month's seq range would span the earlier)."""
        win, args = "table_id = ? AND seq BETWEEN ? AND ?", [table, int(seq_range[0]), int(seq_range[1])]
        if seqs is not None and len(seqs) < self.con.execute(f"SELECT count(*) FROM spins WHERE {win}", args).fetchall()[0][0]:
            self.con.register("_rngcert_window_seq", pa.table({"seq": np.asarray(seqs, dtype=np.int64)}))
            try:
                return self._id_gaps_in(table, "table_id = ? AND seq IN (SELECT seq FROM _rngcert_window_seq)", [table],
                                        ("seq NOT IN (SELECT seq FROM _rngcert_window_seq)", []))
            finally:
                self.con.unregister("_rngcert_window_seq")
        return self._id_gaps_in(table, win, args, None)

    def _id_gaps_in(self, table: str, win: str, args: list, outside: tuple | None) -> tuple[int, str, str] | None:
        """:meth:`id_gaps` of the window ``win`` (``args``: the table first; ``outside``: the SQL and parameters of the
        table's other rows, None for a seq range)."""
        import re

        from rngcert.collect.spinids import PREFIXED_ID

        first = self.con.execute(f"""SELECT f.spin_label, coalesce(src.spin_id_rule, 'column')
                                      FROM (SELECT spin_label, source_id FROM spins WHERE {win} ORDER BY seq LIMIT 1) f
                                      LEFT JOIN sources src USING (source_id)""", args).fetchall()
        if not first or first[0][1] == "position":  # (a log without spin ids: its rows numbered by position, no id of its own)
            return None
        if first[0][0] == "" or re.fullmatch(_DIGITS, first[0][0]):
            got = _whole_id_counts(self.con, win, args)
            prefix = ""
        else:
            m = re.fullmatch(PREFIXED_ID, first[0][0])
            if m is None:
                return None
            prefix = m.group("prefix")
            got = _text_id_counts(self.con, win, args, prefix, outside)
        lo, hi, other, present = got
        if other or lo is None or hi == lo:  # (ids of two kinds, or another prefix: labels, no gap count)
            return None
        missing = int(hi) - int(lo) + 1 - int(present)
        return (missing, f"{prefix}{lo}", f"{prefix}{hi}") if missing > 0 else None

    @_guarded
    def rejected_between(self, table: str, after: int | str, resume: int | str) -> tuple[str, int, list[int]] | None:
        """The rows rejected on ingest that were read between the stored rows of spin ids ``after`` and ``resume`` of
        ``table`` (whole numbers, or text ids as stored), when both rows came from one file: ``(its path, how many, the
        first 5 lines)``; None when they came from two files or no row between them was rejected. (A rejected row's
        spin id is not stored: such rows may hold the ids of a gap.) Between their lines in either order: a newest-first
        log has ``after`` below ``resume``."""
        (wa, va), (wb, vb) = _id_match(after), _id_match(resume)
        rows = self.con.execute(
            f"""WITH a AS (SELECT source_id, line FROM spins WHERE table_id = ? AND {wa} ORDER BY seq LIMIT 1),
                     b AS (SELECT source_id, line FROM spins WHERE table_id = ? AND {wb} ORDER BY seq LIMIT 1)
                SELECT r.file, r.line FROM rejects r, a, b
                WHERE a.source_id = b.source_id AND r.source_id = a.source_id AND r.line > least(a.line, b.line) AND r.line < greatest(a.line, b.line)
                ORDER BY r.line""", [table, *va, table, *vb]).fetchall()
        if not rows:
            return None
        return str(rows[0][0]), len(rows), [int(r[1]) for r in rows[:5]]

    @_guarded
    def conflicted_ids(self, table: str, *, text: bool = False) -> list:
        """The whole-number spin ids of ``table`` stored with two results (left out of :meth:`spins`); with ``text``,
        its text ones (``R1200``)."""
        return _conflicted_keys(self.con, table)[1 if text else 0]

    @_guarded
    def count_spins(self, table: str | None = None) -> int:
        if table is None:
            return int(self.con.execute("SELECT count(*) FROM spins").fetchall()[0][0])
        return int(self.con.execute("SELECT count(*) FROM spins WHERE table_id = ?", [table]).fetchall()[0][0])

    def _without_conflicts(self, table: str, where_sql: str, args: list) -> tuple[str, list, list]:
        """The window's condition without the spin ids stored with two results (neither result is used, as
        certify does), and both rows of each as rejected rows: ``(where_sql, args, conflict_rows)``."""
        keys_ = _conflicted_keys(self.con, table)
        if not (keys_[0] or keys_[1]):
            return where_sql, args, []
        seq_of = {(table, r[0]): r[1] for r in self.con.execute(
            f"SELECT {_SID}, min(seq) FROM spins WHERE {where_sql} AND {_CONFLICTED} GROUP BY 1", args + keys_).fetchall()}
        conflict_rows = _conflict_rejects(self.con, "c.table_id = ? AND c.spin_id IN (SELECT unnest(?::VARCHAR[]))",
                                          [table, [sid for _, sid in seq_of]], seq_of) if seq_of else []
        return f"{where_sql} AND NOT {_CONFLICTED}", args + keys_, conflict_rows

    @_guarded
    def spins(
        self,
        table: str,
        *,
        since: str | _dt.datetime | None = None,
        until: str | _dt.datetime | None = None,
        last: int | None = None,
        after_seq: int | None = None,
        before_seq: int | None = None,
        with_ids: bool = True,
        keys: bool = True,
    ) -> StoredSpins:
        """The spins of ``table`` in a window, in spin order, void spins included.

        Spin order is certify's: with whole-number spin ids, spin-id order (then ingest order ``seq``), and
        timestamps that go back in it are the data-integrity finding ``order_finding`` (c18), not a re-sort;
        with text ids, ingest order, sorted by (timestamp, id) where the timestamps are not non-decreasing.
        A spin id with a conflict (two results stored for it) is left out, as ``certify`` leaves
        it out: ``conflicted`` counts them and ``conflict_rows`` holds both rows of each as
        rejected rows (file, line, column, reason).

        Parameters
        ----------
        since, until : ISO 8601 date/time or datetime, optional
            Keep spins with ``since <= ts < until`` (UTC; a bare date means midnight).
            Spins without a timestamp are excluded when either bound is given.
        last : int, optional
            Keep only the last ``last`` non-void spins of the window (and the void spins among them).
        after_seq, before_seq : int, optional
            Keep ``after_seq < seq < before_seq`` (incremental reads by ``watch``).
        with_ids : bool
            Also return the spin ids as text (``spin_id``; otherwise an empty array).
        keys : bool
            Also return ``seq`` and ``ts`` per spin (16 bytes a spin); with False only their
            ranges (``seq_range``, ``ts_range``) are kept (an audit reads its window with them: its
            seq per spin places the window in the whole table's spin order, for the previous window). A window
            cut by ``last`` keeps them either way (its ranges are those of the spins kept).

        Notes
        -----
        The window is read in record batches of :data:`READ_BATCH` rows into preallocated
        compact arrays, in the stored order when that is seq order (else sorted by seq in the
        database); the order check (timestamp, then spin id) runs batch by batch, and only a
        window out of order reads its sort keys whole.
        """
        equipment = self.equipment_of(table)
        where_sql, args = _window_where(table, since, until, after_seq, before_seq)
        where_sql, args, conflict_rows = self._without_conflicts(table, where_sql, args)
        n, has_ts, labelled, dealer_labels, has_dealer = self._window_summary(where_sql, args)
        key = "dense_rank() OVER (ORDER BY spin_label, spin_no)" if labelled else "spin_no"
        cols = _window_columns(where_sql, key, with_ids=with_ids, has_ts=has_ts, has_dealer=has_dealer)
        w = self._read_window(cols, ([dealer_labels] if has_dealer else []) + args, n, labelled=labelled, has_ts=has_ts,
                              dealer_codes=len(dealer_labels) if has_dealer else None, keys=keys or last is not None, with_ids=with_ids)
        order, keys_ts = self._spin_order(w, key, where_sql, args, n, labelled)
        sel = None if last is None else _last_start(w["void"], last)
        spin_id = pa.concat_arrays(w["ids"]) if w["ids"] else pa.nulls(0, type=pa.string())  # (pa.array([]) would import pandas: 0.3 s)
        direction, release = w["direction"], w["release"]
        out = StoredSpins(
            table=table,
            equipment=equipment,
            spin_id=spin_id.take(pa.array(order)) if order is not None and with_ids else spin_id,
            seq=w["seq"],
            ts=w["ts"],
            pos=w["pos"],
            sym=w["sym"],
            dealer=w["dealer"],
            dealer_labels=dealer_labels if has_dealer else [],
            direction=direction if np.any(direction >= 0) else None,
            release=release if np.any(release >= 0) else None,
            void=w["void"],
            source_ids=sorted(int(x) for x in w["sources"]),
            seq_range=(w["lo_seq"], w["hi_seq"]) if n else None,
            ts_range=(w["lo_ts"], w["hi_ts"]) if n and has_ts else None,
        )
        out.line_key = self._line_keys(where_sql, args, order, w["sources"])
        if sel is not None:
            _keep_from(out, sel, with_ids)
            out.source_ids = self._sources_of(table, out.seq)
            conflict_rows = _conflicts_in_last(conflict_rows, keys_ts, sel, out.seq_range[0] if out.seq_range else None)
        _with_conflicts(out, conflict_rows)
        out.order_finding = _order_finding(keys_ts, sel)
        return out

    def _sources_of(self, table: str, seqs: np.ndarray) -> list[int]:
        """The sources (ids, sorted) of a table's spins with these seqs: a window cut by ``--last`` reads its spins from
        these files only (the files of the spins before the cut are none of its inputs, nor are their rejected rows)."""
        self.con.register("_rngcert_kept_seq", pa.table({"seq": np.asarray(seqs, dtype=np.int64)}))
        try:
            rows = self.con.execute("SELECT DISTINCT source_id FROM spins WHERE table_id = ? AND seq IN (SELECT seq FROM _rngcert_kept_seq)",
                                    [table]).fetchall()
        finally:
            self.con.unregister("_rngcert_kept_seq")
        return sorted(int(r[0]) for r in rows if r[0] is not None)

    def _line_keys(self, where_sql: str, args: list, order: np.ndarray | None, sources) -> np.ndarray | None:
        """(source << 32) + line of the window's spins in its order, when one of its sources is a permanence list
        (read only then: 8 bytes a spin); None otherwise."""
        ids = ",".join(str(int(x)) for x in sources)
        if not ids or not self.con.sql(f"SELECT count(*) FROM sources WHERE source_id IN ({ids}) AND format = 'permanence'").fetchall()[0][0]:
            return None
        rel = self.con.sql(f"SELECT CAST(source_id AS BIGINT) * 4294967296 + coalesce(line, -1) AS k FROM spins WHERE {where_sql} ORDER BY seq",
                           params=args)
        got = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
        keys = _arrow.ints(got.column("k")).astype(np.int64)
        return keys if order is None else keys[order]

    def _window_summary(self, where_sql: str, args: list) -> tuple[int, bool, bool, list, bool]:
        """(rows, any timestamp, any text spin id, dealer labels, any dealer) of a window."""
        n, n_ts, labelled = self.con.sql(
            f"SELECT count(*), count(ts), coalesce(bool_or(spin_label <> ''), false) FROM spins WHERE {where_sql}", params=args
        ).fetchall()[0]
        n, has_ts = int(n), bool(n_ts)
        # dealers: codes in the order of first appearance (by seq), as a dictionary encoding of the column would give
        dealer_labels = [r[0] for r in self.con.sql(
            f"SELECT coalesce(dealer, '') AS d, min(seq) AS f FROM spins WHERE {where_sql} GROUP BY 1 ORDER BY f",
            params=args).fetchall()] if n else []
        has_dealer = bool(n) and bool(self.con.sql(f"SELECT count(dealer) FROM spins WHERE {where_sql}", params=args).fetchall()[0][0])
        return n, has_ts, bool(labelled), dealer_labels, has_dealer

    def _read_window(self, cols: str, params: list, n: int, *, labelled: bool, has_ts: bool, dealer_codes: int | None, keys: bool,
                     with_ids: bool) -> dict:
        """The ``n`` rows of the window query ``cols`` read batch by batch into compact columns (a dict of them, with the seq and
        timestamp ranges, the source ids, and ``ordered``: whether (timestamp, key) is non-decreasing in seq order)."""
        # compact columns filled batch by batch (no whole Arrow table, no int64 copies of the small columns)
        w = {"seq": np.empty(n, dtype=np.int64) if keys else None, "ts": np.empty(n, dtype=np.int64) if has_ts and keys else None,
             "lo_seq": np.iinfo(np.int64).max, "lo_ts": np.iinfo(np.int64).max, "hi_seq": np.iinfo(np.int64).min, "hi_ts": np.iinfo(np.int64).min,
             "pos": np.empty(n, dtype=np.int16), "sym": np.empty(n, dtype=np.int16), "release": np.empty(n, dtype=np.int16),
             "direction": np.empty(n, dtype=np.int8), "void": np.empty(n, dtype=bool),
             "dealer": np.empty(n, dtype=_small_codes(dealer_codes)) if dealer_codes is not None else None}
        # first in the stored order (DuckDB keeps insertion order, which is seq order unless rows were inserted
        # otherwise): no sort of the window in the database; if seq goes backwards, read again sorted by seq
        for sort in ((True,) if labelled else (False, True)):
            w["ids"], w["sources"] = [], set()
            w["ordered"] = True  # (timestamp, key) non-decreasing in seq order: the order certify uses is seq order
            w["id_ordered"] = True  # key (the spin id) non-decreasing in seq order (checked while the window has timestamps)
            rel = self.con.sql(cols + (" ORDER BY seq" if sort else ""), params=params)
            reader = rel.to_arrow_reader(READ_BATCH) if hasattr(rel, "to_arrow_reader") else rel.fetch_record_batch(READ_BATCH)
            in_seq_order = _fill_window(w, reader, sort=sort, has_ts=has_ts, with_ids=with_ids)
            reader.close()  # drained, or left early: the connection takes no new query with a result open
            del reader, rel
            if in_seq_order:
                break
        return w

    def _spin_order(self, w: dict, key: str, where_sql: str, args: list, n: int, labelled: bool) -> tuple:
        """(order or None, (spin ids, timestamps, prefix) or None) of the window, as certify orders a table (c18): whole-number
        spin ids, and text ids of one prefix and a number (``R1200``), in id order (then ingest order), the window's columns
        in ``w`` sorted when they are not; other text ids by (timestamp, id) where the timestamps go back in ingest order."""
        if labelled:
            from rngcert.collect.spinlog.idorder import text_id_numbers_arrow

            got = self._keys_by_seq("spin_label", where_sql, args)
            parsed = text_id_numbers_arrow(got.column("key").combine_chunks()) if n else None
            if parsed is None or len(parsed[0]) != 1:
                return (None, None) if w["ordered"] else self._time_order(w, key, where_sql, args, n)
            ids, prefix = parsed[1], parsed[0][0]
            in_order = not np.any(np.diff(ids) < 0)
        elif w["ordered"] and w["id_ordered"]:
            return None, None
        else:
            got = self._keys_by_seq(key, where_sql, args)
            ids, prefix, in_order = _arrow.ints(got.column("key")).astype(np.int64), "", w["id_ordered"]
        ts = w["ts"] if w["ts"] is not None else _arrow.ints(got.column("ts"), fill=np.iinfo(np.int64).min)
        del got
        order = None
        if not in_order:
            order = np.lexsort((np.arange(n), ids))
            ids, ts = ids[order], ts[order]
            for name in ("seq", "ts", "pos", "sym", "release", "direction", "void", "dealer"):
                if w[name] is not None:
                    w[name] = w[name][order]
        return order, (ids, ts, prefix)

    def _keys_by_seq(self, key: str, where_sql: str, args: list):
        """The window's ``key`` and timestamp (microseconds) in ingest order, as an Arrow table."""
        rel = self.con.sql(f"SELECT {key} AS key, epoch_us(ts) AS ts FROM spins WHERE {where_sql} ORDER BY seq", params=args)
        return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()

    def _time_order(self, w: dict, key: str, where_sql: str, args: list, n: int) -> tuple:
        """Sort the window's columns in ``w`` into the order certify uses for text spin ids (timestamp, spin id, then ingest
        order); returns (that order, None)."""
        # the order certify uses: (timestamp, spin id, then ingest order) — total, so the file order
        # of rows with equal timestamps cannot change the sequence
        rel = self.con.sql(f"SELECT {key} AS key, epoch_us(ts) AS ts FROM spins WHERE {where_sql} ORDER BY seq", params=args)
        got = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
        del rel
        sort_keys = _arrow.ints(got.column("key")).astype(np.int64)
        sort_ts = w["ts"] if w["ts"] is not None else _arrow.ints(got.column("ts"), fill=np.iinfo(np.int64).min)
        del got
        order = np.lexsort((np.arange(n), sort_keys, sort_ts))
        del sort_keys, sort_ts
        for name in ("seq", "ts", "pos", "sym", "release", "direction", "void", "dealer"):
            if w[name] is not None:
                w[name] = w[name][order]
        return order, None

    @_guarded
    def source_infos(self, source_ids: Sequence[int]) -> list:
        from rngcert.collect.spinlog import SourceInfo

        if not source_ids:
            return []
        q = f"SELECT path, sha256, format, rows, accepted, void, rejected FROM sources WHERE source_id IN ({','.join(str(int(s)) for s in source_ids)}) ORDER BY source_id"
        return [SourceInfo(r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), int(r[6]), 0) for r in self.con.execute(q).fetchall()]

    @_guarded
    def rejected_rows(self, source_ids: Sequence[int]) -> list:
        from rngcert.collect.spinlog import RejectedRow

        if not source_ids:
            return []
        q = f'SELECT file, line, "column", reason, text FROM rejects WHERE source_id IN ({",".join(str(int(s)) for s in source_ids)}) ORDER BY source_id, line'
        return [RejectedRow(*r) for r in self.con.execute(q).fetchall()]


def _with_conflicts(out: StoredSpins, conflict_rows: list) -> None:
    """Put the window's conflicting spins (left out) in ``out``: their number, their rows as rejected rows, their sources."""
    from rngcert.collect.spinlog import RejectedRow

    out.conflicted = len({r[6] for r in conflict_rows})
    out.conflict_rows = [RejectedRow(str(r[0]), int(r[1] or 0), r[2], r[3], r[4]) for r in conflict_rows]
    out.source_ids = sorted(set(out.source_ids) | {int(r[5]) for r in conflict_rows if r[5] is not None})


def _small_codes(n_labels: int) -> np.dtype:
    """The smallest signed integer type for codes 0..n_labels-1."""
    for dt in (np.int8, np.int16, np.int32):
        if n_labels - 1 <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.int64)


def _nth_true(mask: np.ndarray, j: int) -> int:
    """Index of the ``j``-th (0-based) True entry of ``mask``, counted span by span."""
    seen = 0
    for lo in range(0, mask.size, READ_BATCH):  # loop over spans
        part = mask[lo : lo + READ_BATCH]
        c = int(np.count_nonzero(part))
        if seen + c > j:
            return lo + int(np.flatnonzero(part)[j - seen])
        seen += c
    raise IndexError(j)


def col_of(a: np.ndarray, order: np.ndarray | None) -> np.ndarray:
    return a[order] if order is not None else a


def parse_when(value, what: str) -> _dt.datetime:
    """An audit window's bound (``--since``/``--until``) as a naive UTC datetime.

    Parameters
    ----------
    value : str, datetime.date or datetime.datetime
        ISO 8601 date or date-time (a ``Z`` or an offset is converted to UTC; none is read as UTC).
    what : str
        The option's name, for the error.

    Raises
    ------
    InputError
        ``value`` is no ISO 8601 date or date-time.
    """
    if isinstance(value, _dt.datetime):
        d = value
    elif isinstance(value, _dt.date):
        d = _dt.datetime(value.year, value.month, value.day)
    else:
        try:
            d = _dt.datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            raise InputError(f"--{what} {value!r} is not an ISO 8601 date or date-time (e.g. 2026-01-31 or 2026-01-31T18:00:00Z)") from None
    if d.tzinfo is not None:
        d = d.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return d
