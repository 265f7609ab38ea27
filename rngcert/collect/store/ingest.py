"""Ingest: one spin log into the store in one transaction, with the rules of ingest (see
:mod:`rngcert.collect.store`); :func:`prepare_file` reads and parses a log with no store access."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import rngcert.scratch as scratch
from rngcert import __version__
from rngcert.collect import _arrow
from rngcert.collect.store.schema import PARTIAL_SOURCE_KEY, _guarded, _now
from rngcert.collect.store.spool import _prepare_streamed, _rejects_table, csv_scan, refuse_table_option
from rngcert.errors import InputError, NoDataError


def _before_commit() -> None:
    """Hook called just before an ingest commits (tests replace it to kill the process there)."""



def whole_line_reject(r) -> bool:
    """Whether a rejected row is a whole line that holds no data row of the reader's count.

    A line that could not be split into fields (column ``*``) and a permanence list's title line
    (column ``line``, case c20) are rejected whole: they are rows of the file that the reader's
    row count does not hold, so a file's rows are that count plus these.

    Parameters
    ----------
    r : RejectedRow
        A rejected row.

    Returns
    -------
    bool
    """
    return r.column in ("*", "line")


@dataclass
class IngestResult:
    """What one file's ingest did."""

    path: str
    sha256: str
    status: str  # "ingested" | "already ingested" | "empty"
    rows: int = 0
    accepted: int = 0
    void: int = 0
    rejected: int = 0
    inserted: int = 0
    duplicates: int = 0
    conflicts: int = 0
    conflict_sample: list[dict] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    spin_id_rule: str = "column"
    note: str = ""

    def summary(self) -> str:
        if self.status != "ingested":
            return f"{self.path}: {self.status} (sha256 {self.sha256[:16]}…): nothing added" + (f"; {self.note}" if self.note else "")
        s = (
            f"{self.path}: {self.rows} rows → {self.inserted} new spins stored, {self.duplicates} already stored, "
            f"{self.conflicts} conflicting, {self.rejected} rejected ({self.void} void among the rows); "
            f"tables: {', '.join(self.tables[:6])}{' …' if len(self.tables) > 6 else ''}"
        )
        if self.spin_id_rule == "position":
            s += "; no spin_id column: spins numbered by position in the file"
        if self.note:  # e.g. from an export folder, and what of the original ingest could not come back
            s += f"; {self.note}"
        return s



def _lapper(timing: dict):
    """A ``lap(what)`` that adds the seconds since the previous lap (or since now) to ``timing[what]``."""
    clock = [time.perf_counter()]

    def lap(what):
        now_ = time.perf_counter()
        timing[what] = timing.get(what, 0.0) + now_ - clock[0]
        clock[0] = now_

    return lap


def _fix_tables(con, path, used_tables: list, wheel, equipment: str, rule: str, stream: bool = False, exported: frozenset = frozenset()) -> int:
    """Fix the equipment of every table of a file once (a new table is registered, a known one must have the same wheel),
    refuse spin ids that would collide with another log's (:func:`_refuse_mixed_numbering`); returns the spins already
    stored in those tables."""
    stored_before = 0
    for t in used_tables:  # loop over tables (a handful)
        found = con.execute("SELECT equipment, wheel_id FROM tables WHERE table_id = ?", [t]).fetchall()
        row = found[0] if found else None
        if row is None:
            con.execute("INSERT INTO tables VALUES (?, ?, ?, ?)", [t, equipment, wheel.id, _now()]).fetchall()
        elif row[1] != wheel.id:
            raise InputError(f"{path}: table {t!r} is stored as wheel {row[1]!r}, not {wheel.id!r}; give --equipment {row[0]}")
        else:
            stored_before += con.execute("SELECT count(*) FROM spins WHERE table_id = ?", [t]).fetchall()[0][0]
    if stored_before:
        _refuse_mixed_numbering(con, path, used_tables, rule, stream, exported)
    return stored_before


def _refuse_mixed_numbering(con, path, used_tables: list, rule: str, stream: bool = False, exported: frozenset = frozenset()) -> None:
    """Refuse a file whose spin ids would collide with another log's in one of its tables.

    A log without a ``spin_id`` column is numbered by position in its file (spin k is its k-th row), so
    two such logs of one table (two days of a permanence list) give different spins the same id, and a
    positional log beside a log of real spin ids does too. A grown version of the stored log is numbered
    alike: it is told by its bytes, which start with the stored log's bytes (its SHA-256 over the stored
    size), whatever its name or folder (labs keep one folder a day with the same file name in each); any
    other mix is refused before anything is stored. A pipe or FIFO (every piped log is /dev/stdin) cannot be
    read again to compare: a positional one is never taken for a grown log.

    Parameters
    ----------
    con : duckdb connection
        Inside the file's transaction.
    path : path
        The log being ingested.
    used_tables : list of str
        Its tables.
    rule : str
        Its spin-id rule: ``"column"`` or ``"position"``.
    stream : bool
        The log was read from a pipe or FIFO.
    exported : frozenset of str
        The rows come from an export (``rngcert ingest`` of an export folder) whose sources have these SHA-256: the
        file is not read (it may be gone); a stored positional log is taken for its earlier version only when the export
        holds that version too (an export of a grown log holds every version its store took).

    Raises
    ------
    InputError
        Naming the log, the table, the stored log it would collide with, and what to do.
    """
    rule_sql = "<> 'position'" if rule == "position" else "= 'position'"
    why_not: dict = {}  # (sha256, size) of a stored version -> why this log is not it grown ('' if it is)
    for t in used_tables:  # loop over tables (a handful)
        other = con.execute(
            f"""SELECT src.path FROM spins s JOIN sources src USING (source_id)
                WHERE s.table_id = ? AND coalesce(src.spin_id_rule, 'column') {rule_sql} LIMIT 1""",
            [t],
        ).fetchall()
        if other:
            _mixed_numbering_error(path, t, other[0][0], rule, stream)
        if rule != "position":
            continue
        stored = con.execute(
            """SELECT path, sha256, size_bytes FROM sources WHERE spin_id_rule = 'position'
               AND source_id IN (SELECT DISTINCT source_id FROM spins WHERE table_id = ?) ORDER BY source_id""",
            [t],
        ).fetchall()
        why_not.update(_not_grown_from(path, [v for v in stored if (v[1], v[2]) not in why_not], stream, exported))
        for spath, sha, size in stored:  # (the stored versions of one log: one per ingest of it)
            if why_not[(sha, size)]:
                _mixed_numbering_error(path, t, spath, rule, stream, why_not=why_not[(sha, size)])


def _not_grown_from(path, stored: list, stream: bool, exported: frozenset) -> dict:
    """Why the log at ``path`` is not a grown version of each stored version ``(path, sha256, size_bytes)`` of a log:
    ``{(sha256, size): reason, or "" for a grown version}``. A grown version's first ``size`` bytes have the stored
    SHA-256; the log is read once, up to the largest stored size, whatever the number of versions (a log ingested as
    it grew has one for each ingest). Rows from an export (``exported``: its sources' SHA-256; its file may be gone):
    a grown version when the export holds the stored version too. By file name where no size was kept (a store written
    before). Never a grown version when read from a pipe or FIFO."""
    import hashlib

    out: dict = {}
    by_size = []
    for spath, sha, size in stored:
        if stream:
            out[(sha, size)] = f"was read from a pipe, which cannot be read again to compare its bytes with {spath}'s"
        elif exported:
            out[(sha, size)] = "" if sha in exported else (
                f"comes from an export that does not hold {spath} (its SHA-256): an export's file cannot be read to compare, and "
                "the export of a grown log holds its earlier versions too")
        elif size is None:
            same = Path(str(path)).name == Path(str(spath)).name
            out[(sha, size)] = "" if same else f"has another file name than {spath} (a stored log of unknown size, told by its name)"
        else:
            by_size.append((int(size), sha, spath))
    if not by_size:
        return out
    by_size.sort()
    h, done = hashlib.sha256(), 0
    try:
        with open(path, "rb") as fh:
            for size, sha, spath in by_size:  # (one hash over the file's prefix, its state read at each stored size)
                while done < size:
                    chunk = fh.read(min(size - done, 1 << 22))
                    if not chunk:
                        break
                    h.update(chunk)
                    done += len(chunk)
                out[(sha, size)] = _prefix_verdict(h, done, size, sha, spath)
    except OSError as exc:
        raise InputError(f"{path}: cannot be read again to compare it with {by_size[0][2]}: {exc.strerror or exc}") from None
    return out


def _prefix_verdict(h, done: int, size: int, sha: str, spath: str) -> str:
    """The reason of :func:`_not_grown_from` for one stored version of ``size`` bytes, the log's first ``done`` bytes
    hashed in ``h`` ("" when they are the stored bytes)."""
    if done < size:
        return (f"is shorter than {spath} ({done:,} bytes against {size:,}): an earlier version of that log (its spins are "
                "stored already) or another log, which its bytes cannot tell apart")
    if h.hexdigest() != sha:
        return (f"does not start with the bytes of {spath} (its first {size:,} bytes differ: another log, or that log "
                "rewritten, e.g. another line end or an edited line), so it is not that log grown")
    return ""


def _mixed_numbering_error(path, table: str, stored: str, rule: str, stream: bool, why_not: str = ""):
    """Raise the InputError of :func:`_refuse_mixed_numbering` (``why_not``: both logs are numbered by position and this
    one is not taken for the stored log grown, for this reason of :func:`_not_grown_from`)."""
    if why_not:
        why = (f"has no spin_id column either, and it {why_not}: its rows, numbered 1, 2, … by position, would take the "
               "ids of spins already stored")
    else:
        why = ("has no spin_id column, so its rows are numbered 1, 2, … by position and would take the ids of spins already stored"
               if rule == "position" else "carries spin ids, but the table's spins were numbered by position")
    raise InputError(
        f"{path}: table {table!r} already holds spins of {stored}, and this log {why} from {stored} "
        f"(a spin would be dropped as 'already stored' or made a false conflict); nothing of {path} was stored: "
        "give each log of the table a spin_id column, or ingest this log into its own table (--table)"
        + ("; a pipe cannot be read again to tell a grown log from another: ingest the log's file" if stream else ""))


def _open_incoming(con, incoming, proven_repeated) -> tuple[bool, bool, int]:
    """The file's rows as the view or table ``incoming_arrow``; returns (spooled to Parquet, rows carry ``rn``, rows whose
    (table, spin id) repeats an earlier row of the file)."""
    spooled = isinstance(incoming, (str, Path))  # a streamed log: its rows in a Parquet file (see prepare_file)
    if spooled:
        con.execute(f"CREATE OR REPLACE TEMP VIEW incoming_arrow AS SELECT * FROM read_parquet('{_sql_path(incoming)}')").fetchall()
        has_rn = False
    else:
        con.register("incoming_arrow", incoming)
        has_rn = "rn" in incoming.column_names  # a parsed log carries the reader's rule; an export does not
    if proven_repeated is not None:  # proven while the file was streamed
        repeated = int(proven_repeated)
    elif has_rn:
        repeated = int(pc.sum(pc.greater(incoming.column("rn"), _arrow.array(np.ones(1, np.int64))[0])).as_py() or 0)
    else:
        repeated = _repeated_keys(incoming, con)
    return spooled, has_rn, repeated


def _insert_keyed(con, base: int, source_id: int, has_rn: bool, now) -> tuple[int, int]:
    """Insert the rows of ``incoming_arrow`` whose (table, spin id) is new, recording the conflicts with the store and inside
    the file; returns (spins inserted, conflicts)."""
    con.execute(
        """CREATE OR REPLACE TEMP TABLE inc AS
           SELECT table_id, spin_no, spin_label, ? + ord AS seq, ts, pos, sym, dealer,
                  direction, release, void, line, """
        + ("rn" if has_rn else "row_number() OVER (PARTITION BY table_id, spin_no, spin_label ORDER BY ord) AS rn")
        + """
           FROM incoming_arrow""",
        [base],
    ).fetchall()
    key = "s.table_id = i.table_id AND s.spin_no = i.spin_no AND s.spin_label = i.spin_label"
    differ = "(s.pos IS DISTINCT FROM i.pos OR s.sym IS DISTINCT FROM i.sym OR s.void IS DISTINCT FROM i.void)"
    sid_text = "CASE WHEN i.spin_label = '' THEN CAST(i.spin_no AS VARCHAR) ELSE i.spin_label END"
    # conflicts with spins already stored
    n_conf_old = con.execute(
        f"""INSERT INTO conflicts
            SELECT i.table_id, {sid_text}, s.pos, s.sym, s.void, s.source_id, s.line,
                   i.pos, i.sym, i.void, ?, i.line, ?
            FROM inc i JOIN spins s ON {key} WHERE {differ}""",
        [source_id, now],
    ).fetchall()[0][0]
    # conflicts inside the file (a repeated spin_id with a different result)
    n_conf_in = con.execute(
        f"""INSERT INTO conflicts
            SELECT i.table_id, {sid_text}, s.pos, s.sym, s.void, ?, s.line,
                   i.pos, i.sym, i.void, ?, i.line, ?
            FROM inc i JOIN inc s ON {key} AND s.rn = 1
            WHERE i.rn > 1 AND {differ}
              AND NOT EXISTS (SELECT 1 FROM spins x WHERE x.table_id = i.table_id AND x.spin_no = i.spin_no
                              AND x.spin_label = i.spin_label)""",
        [source_id, source_id, now],
    ).fetchall()[0][0]
    n_new = con.execute(
        """INSERT INTO spins
           SELECT i.table_id, i.spin_no, i.spin_label, i.seq, i.ts, i.pos, i.sym, i.dealer, i.direction,
                  i.release, i.void, ?, i.line
           FROM inc i
           WHERE i.rn = 1
             AND NOT EXISTS (SELECT 1 FROM spins s WHERE s.table_id = i.table_id AND s.spin_no = i.spin_no
                             AND s.spin_label = i.spin_label)""",
        [source_id],
    ).fetchall()[0][0]
    n_conf = int(n_conf_old) + int(n_conf_in)
    con.execute("DROP TABLE inc").fetchall()
    return n_new, n_conf


def _insert_rejects(con, rej_tbl, source_id: int) -> None:
    """Store a file's rejected rows."""
    # rejects: a grown log re-reads its old bad lines; keep each (file, line, column, reason) once
    con.register("rej_arrow", rej_tbl)
    con.execute(
        """INSERT INTO rejects
           SELECT DISTINCT ?, r.file, r.line, r."column", r.reason, r.text FROM rej_arrow r
           WHERE NOT EXISTS (SELECT 1 FROM rejects x WHERE x.file = r.file AND x.line = r.line
                             AND x."column" = r."column" AND x.reason = r.reason AND x.text = r.text)""",
        [source_id],
    ).fetchall()
    con.unregister("rej_arrow")


def _insert_all(con, base: int, source_id: int) -> None:
    """The fast path of a store: every row of ``incoming_arrow`` is a new spin (new tables, no repeated id in the file)."""
    con.execute(
        """INSERT INTO spins
           SELECT table_id, spin_no, spin_label, ? + ord, ts, pos, sym, dealer, direction,
                  release, void, ?, line
           FROM incoming_arrow""",
        [base, source_id],
    ).fetchall()


def _close_incoming(con, spooled: bool) -> None:
    """Drop the view (a spooled file) or the registered table ``incoming_arrow``."""
    if spooled:
        con.execute("DROP VIEW incoming_arrow").fetchall()
    else:
        con.unregister("incoming_arrow")


def _first_conflicts(con, source_id: int) -> list:
    """The first ten conflicts of a source, in line order (for :func:`_conflict_sample`)."""
    return con.execute(
        """SELECT table_id, spin_id, stored_pos, stored_sym, stored_void, stored_line, new_pos, new_sym, new_void, line
           FROM conflicts WHERE source_id = ? ORDER BY line LIMIT 10""",
        [source_id],
    ).fetchall()


def _insert_source(con, values: list) -> None:
    """The row of a source (its path, SHA-256, format, options and counts) in ``sources``."""
    con.execute("INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", values).fetchall()


def result_text(wheel, pos, sym, void, *, labels: tuple | None = None) -> str:
    """A stored result (position, symbol id, void flag) as the wheel's label, its symbol, or ``void`` (``labels``: the
    wheel's position labels when the caller has them, for many rows)."""
    if labels is None:
        labels = wheel.position_space().labels if wheel.order_known else ()
    if void:
        return "void"
    if pos is not None and labels:
        return str(labels[pos])
    return f"symbol {wheel.symbols[sym] if sym is not None else '?'}"


def _conflict_sample(wheel, sample: list) -> list[dict]:
    """The first conflicts of a file, with results as the wheel's labels (or symbols)."""
    return [
        {"table": r[0], "spin_id": r[1], "stored": result_text(wheel, r[2], r[3], r[4]), "stored_line": r[5],
         "new": result_text(wheel, r[6], r[7], r[8]), "line": r[9]}
        for r in sample
    ]


class IngestMixin:
    """Ingest of spin logs (part of :class:`~rngcert.collect.store.Store`)."""

    @_guarded
    def ingest(
        self,
        paths: Sequence[str | Path] | str | Path,
        equipment: str = "european",
        *,
        columns: Mapping[str, str] | None = None,
        fmt: str = "auto",
        table: str | None = None,
    ) -> list[IngestResult]:
        """Ingest spin logs (one transaction per file) through this open connection.

        Parameters
        ----------
        paths : path or sequence of paths
            CSV, JSON Lines or permanence-list spin logs (every format ``certify`` reads), in
            time order.
        equipment : str
            Packaged wheel id or wheel TOML file the logs were recorded on.
        columns, fmt
            As in :func:`rngcert.collect.spinlog.read_spin_log`.
        table : str, optional
            Table id for logs without a ``table`` column (default: the file name without
            extension).

        Returns
        -------
        list of IngestResult
            One per file, in order.

        Raises
        ------
        InputError
            Unreadable file or options; a table already stored with another wheel.
        StorageError
            Full disk or damaged store (the file's transaction is rolled back).

        See Also
        --------
        ingest_files : the same, holding the write lock only while each file is stored.
        """
        from rngcert.equipment.wheel import load_wheel

        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        check_table_name(table)
        wheel = load_wheel(equipment)
        paths = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
        for p in paths:
            if not p.is_file():
                raise InputError(f"{p}: no such file")
        reader = self.con.cursor()  # the prefetch thread's own connection (reads committed state)

        def known(sha: str):
            return self.known_source(sha, con=reader)

        def prepare(p: Path):
            return prepare_file(p, wheel, str(equipment), columns, fmt, table, known)

        out: list[IngestResult] = []
        # Pipeline: the next file is read and parsed (pyarrow, numpy: GIL released) while DuckDB
        # stores the current one; files are still committed one by one, in order.
        from concurrent.futures import ThreadPoolExecutor

        nxt = None
        try:
            with ThreadPoolExecutor(max_workers=1) as ex:
                nxt = ex.submit(prepare, paths[0]) if paths else None
                for i in range(len(paths)):
                    prep = nxt.result()
                    nxt = ex.submit(prepare, paths[i + 1]) if i + 1 < len(paths) else None
                    try:
                        out.append(prep if isinstance(prep, IngestResult) else self._store_prepared(prep, wheel, str(equipment)))
                    finally:
                        discard_prepared(prep)
                nxt = None
        finally:
            if nxt is not None and nxt.done() and nxt.exception() is None:  # a file prepared ahead of one that failed
                discard_prepared(nxt.result())
            reader.close()
        return out

    @_guarded
    def _store_prepared(self, prep: dict, wheel, equipment: str) -> IngestResult:
        """Store one prepared file in one transaction (see "Rules of ingest" in :mod:`rngcert.collect.store`)."""
        path, sha, n, m = prep["path"], prep["sha"], prep["n"], prep["m"]
        incoming, rej_tbl, rej, used_tables, rule = prep["incoming"], prep["rej_tbl"], prep["rej"], prep["used_tables"], prep["rule"]
        default_table = prep["default_table"]
        timing = prep["timing"]
        self.last_timing = timing
        lap = _lapper(timing)
        con = self.con
        if con.execute("SELECT 1 FROM sources WHERE sha256 = ? LIMIT 1", [sha]).fetchall():
            return IngestResult(str(path), sha, "already ingested")  # the same file twice in one call
        con.execute("BEGIN TRANSACTION")
        try:
            stored_before = _fix_tables(con, path, used_tables, wheel, equipment, prep["rule"], prep.get("stream", False), prep.get("exported", frozenset()))
            source_id = con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchall()[0][0]
            base = int(con.execute("SELECT coalesce(max(seq), 0) + 1 FROM spins").fetchall()[0][0])
            spooled, has_rn, repeated = _open_incoming(con, incoming, prep.get("repeated"))
            now = _now()
            if stored_before == 0 and repeated == 0:
                # fast path: new tables, no repeated id in the file: every row is new
                _insert_all(con, base, source_id)
                n_new, n_conf = m, 0
            else:
                n_new, n_conf = _insert_keyed(con, base, source_id, has_rn, now)
            _close_incoming(con, spooled)
            n_dup = m - int(n_new) - n_conf
            _insert_rejects(con, rej_tbl, source_id)
            sample = _first_conflicts(con, source_id)
            n_split_rejects = sum(1 for r in rej if whole_line_reject(r))
            _insert_source(con, [
                source_id, str(path), sha, prep["format"], prep["size"], equipment, rule, default_table,
                n + n_split_rejects, prep["accepted"], prep["void"], len(rej),
                int(n_new), n_dup, n_conf, now, __version__,
            ])
            _mark_partial(con, prep)
            lap("insert")
            _before_commit()
            con.execute("COMMIT")
            lap("commit")
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except Exception:  # pragma: no cover - connection already unusable
                pass
            raise
        conflict_sample = _conflict_sample(wheel, sample)
        return IngestResult(
            str(path), sha, "ingested", rows=n + n_split_rejects, accepted=prep["accepted"],
            void=prep["void"], rejected=len(rej), inserted=int(n_new), duplicates=n_dup, conflicts=n_conf,
            conflict_sample=conflict_sample, tables=used_tables, spin_id_rule=rule,
        )


def _mark_partial(con, prep: dict) -> None:
    """Record a source stored in part (``prep["partial_tables"]``: from an ``export --table`` folder, its spins of those
    tables only), so that a later ingest of the same bytes is refused, not skipped as stored."""
    if prep.get("partial_tables"):
        con.execute("INSERT INTO meta VALUES (?, ?)", [PARTIAL_SOURCE_KEY + prep["sha"], prep["partial_tables"]])


def _read_and_hash(path: Path) -> tuple:
    """(is a pipe or FIFO, its bytes or None, SHA-256) of a log: a pipe or FIFO (<(…)) is read into memory; a file is hashed
    as a stream (and parsed as one)."""
    from rngcert.collect.csvstream import is_stream, read_stream, sha256_file
    from rngcert.collect.spinlog import sha256_of

    stream = is_stream(path)  # a pipe or FIFO (<(…)) is read into memory; a file is hashed and parsed as a stream
    try:
        data = read_stream(path) if stream else None
        sha = sha256_of(data) if stream else sha256_file(path)[0]
    except OSError as exc:  # the log, not the store
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return stream, data, sha


def check_table_name(table: str | None) -> None:
    """Refuse a table id given by the caller (``--table``) that no audit could name: blank, or holding a control
    character (the rule of a log's table cells, which rejects an empty cell and a control character in one).

    Raises
    ------
    InputError
        Naming the option and the reason.
    """
    if table is None:
        return
    if not str(table).strip():
        raise InputError(f"--table {table!r}: a blank table id (an audit could not name it: `rngcert audit --table T`); give a table id")
    bad = [c for c in str(table) if ord(c) < 0x20 or ord(c) == 0x7F]
    if bad:
        raise InputError(f"--table {table!r}: control character U+{ord(bad[0]):04X} in the table id; give a table id of printable characters")


def _table_column(table, default_table: str, n: int) -> tuple:
    """(table of each row, its dictionary codes, the codes' labels): the log's table column (an empty value is
    "(no table)") or ``default_table`` for every row."""
    if table is not None:
        tab = table
        tab = pc.if_else(pc.equal(tab, _arrow.text_scalar("")), _arrow.text_scalar("(no table)"), tab)  # (str literals, pa.array and
    else:  # to_numpy import pandas: 0.5 s an ingest)
        tab = _arrow.repeat_text(default_table, n)
    tab_enc = pc.dictionary_encode(tab)
    tab_codes = _arrow.ints(tab_enc.indices, fill=-1).astype(np.int64)
    tab_labels = tab_enc.dictionary.to_pylist()
    return tab, tab_codes, tab_labels


def _repeat_status(rows, keep: np.ndarray, tab_codes: np.ndarray, spin_no, spin_label) -> np.ndarray:
    """Status of each row among the repeats of its (table, spin id) in the file (0: the first)."""
    from rngcert.collect.spinlog import outcome_key, repeat_status

    n = rows.n
    # repeated spin ids inside the file: the same rule as certify (spinlog.repeat_status): the
    # first row of a (table, spin_id) is the candidate, later ones are duplicates or conflicts
    lab_codes = _arrow.ints(pc.dictionary_encode(spin_label).indices, fill=-1).astype(np.int64) if n else np.zeros(0, np.int64)
    status, _ = repeat_status(
        [tab_codes, _arrow.ints(spin_no).astype(np.int64), lab_codes],
        outcome_key(rows.pos, rows.sym, rows.void), keep,
    )
    return status


def _known_file(path: Path, sha: str, first: tuple, equipment: str, table) -> IngestResult:
    """The result for bytes already stored (``first``: their equipment, default table and path), noting where they were stored
    and the options not applied."""
    eq0, tab0, path0 = first
    differs = [] if str(path0) == str(path) else [f"first ingested from {path0} (default table {tab0!r})"]
    if str(eq0) != str(equipment):
        differs.append(f"first ingested with equipment {eq0!r}, now {equipment!r}")
    if table is not None and table != tab0:
        differs.append(f"first ingested with table {tab0!r}, now {table!r}")
    note = (
        "these bytes were " + "; ".join(differs) + ": the stored rows are kept, the options of this call are not applied"
        if differs
        else "options of this call (e.g. --column) are not applied to bytes already stored"
    )
    return IngestResult(str(path), sha, "already ingested", note=note)


def _spin_keys(spin_id, tab_codes: np.ndarray, n: int) -> tuple:
    """(spin_no, spin_label, rule) of a file's rows: from its spin id column, or the k-th row of its table (1-based)."""
    if spin_id is not None:
        sid = spin_id.combine_chunks() if isinstance(spin_id, pa.ChunkedArray) else spin_id
        canon = pc.fill_null(pc.match_substring_regex(sid, r"^(0|-?[1-9][0-9]{0,17})$"), _arrow.bool_scalar(False))
        spin_no = pc.cast(pc.if_else(canon, sid, _arrow.text_scalar("0")), pa.int64())
        spin_label = pc.if_else(canon, _arrow.text_scalar(""), sid)
        rule = "column"
    else:
        # k-th row of its table in this file → spin_id k (1-based), vectorised cumcount
        order = np.argsort(tab_codes, kind="stable")
        sorted_codes = tab_codes[order]
        starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
        ordinal = np.empty(n, dtype=np.int64)
        ordinal[order] = np.arange(n) - starts + 1
        spin_no = _arrow.array(ordinal)
        spin_label = _arrow.repeat_text("", n)
        rule = "position"
    return spin_no, spin_label, rule


def _incoming_table(rows, keep: np.ndarray, m: int, tab, spin_no, spin_label, status: np.ndarray) -> pa.Table:
    """The ``m`` rows to store (accepted or void) of a parsed file as the Arrow table ``_store_prepared`` inserts."""
    n = rows.n
    sel = _arrow.mask(keep)

    def kept(a):  # rows to store (all of them, usually: no copy then)
        return a if m == n else a.filter(sel)

    pos = np.where(rows.pos >= 0, rows.pos, -1)
    sym = np.where(rows.sym >= 0, rows.sym, -1)
    ts = pa.nulls(m, pa.int64())
    if rows.timestamp is not None:
        tsv = rows.timestamp[keep]
        ts = _arrow.array(tsv.astype(np.int64, copy=False), null=tsv == np.iinfo(np.int64).min)
    ts = ts.cast(pa.timestamp("us"))
    return pa.table(
        {
            "table_id": kept(tab),
            "spin_no": kept(spin_no),
            "spin_label": kept(spin_label),
            "ord": _arrow.array(np.flatnonzero(keep).astype(np.int64)),
            "ts": ts,
            "pos": _arrow.array(pos[keep].astype(np.int16), null=pos[keep] < 0),
            "sym": _arrow.array(sym[keep].astype(np.int16), null=sym[keep] < 0),
            "dealer": kept(rows.dealer) if rows.dealer is not None else pa.nulls(m, pa.string()),
            "direction": _arrow.array(rows.direction[keep].astype(np.int8, copy=False), null=rows.direction[keep] < 0) if rows.direction is not None else pa.nulls(m, pa.int8()),
            "release": _arrow.array(rows.release[keep].astype(np.int16), null=rows.release[keep] < 0) if rows.release is not None else pa.nulls(m, pa.int16()),
            "void": _arrow.array(np.asarray(rows.void[keep], dtype=bool)),
            "line": _arrow.array(rows.line[keep].astype(np.int32)),
            "rn": _arrow.array(np.where(status[keep] == 0, 1, 2).astype(np.int64)),  # 1: first row of its spin id in the file
        }
    )


def prepare_file(path: Path, wheel, equipment: str, columns, fmt, table, known) -> "IngestResult | dict":
    """Read, hash and parse one spin log into the Arrow tables to store (no store access).

    ``known(sha256)`` returns (equipment, default table, path) of an earlier ingest of the same bytes,
    or None; a known file is not parsed. Returns an :class:`IngestResult` when there is nothing
    to store, else the prepared file for :meth:`Store._store_prepared`.
    """
    from rngcert.collect.csvstream import is_stream
    from rngcert.collect.spinlog import read_spin_rows

    timing: dict[str, float] = {}
    lap = _lapper(timing)
    scan = None if is_stream(path) else csv_scan(path, fmt)  # a CSV file: hashed by its line scan (one read for both)
    stream, data, sha = (False, None, scan.sha256) if scan is not None else _read_and_hash(path)
    lap("read+sha256")
    first = known(sha)
    if first:
        return _known_file(path, sha, first, equipment, table)
    if not stream:
        try:
            prep = _prepare_streamed(path, wheel, columns, fmt, table, sha, timing, scan=scan)
        except NoDataError:
            return IngestResult(str(path), sha, "empty")
        if prep is not None:
            lap("parse+spool")
            return prep
    try:
        rows = read_spin_rows(path, wheel, columns=columns, fmt=fmt, data=data)
    except NoDataError:
        return IngestResult(str(path), sha, "empty")
    del data
    lap("parse")
    refuse_table_option(path, table, rows.table is not None)
    n = rows.n
    keep = rows.accepted | rows.void  # rejected rows go to `rejects` only
    if stream and table is None and rows.table is None:
        raise InputError(f"{path} is a pipe or FIFO and the log has no table column: name its table with --table")
    default_table = table if table is not None else path.stem
    tab, tab_codes, tab_labels = _table_column(rows.table, default_table, n)
    spin_no, spin_label, rule = _spin_keys(rows.spin_id, tab_codes, n)
    status = _repeat_status(rows, keep, tab_codes, spin_no, spin_label)
    m = int(keep.sum())
    incoming = _incoming_table(rows, keep, m, tab, spin_no, spin_label, status)
    rej = rows.rejected
    rej_tbl = _rejects_table(rej)
    used_tables = sorted({tab_labels[c] for c in np.unique(tab_codes[keep])}) if keep.any() else []
    lap("arrow")
    return {
        "path": path, "sha": sha, "format": rows.format, "size": rows.size, "accepted": int(rows.accepted.sum()), "void": int(rows.void.sum()),
        "n": n, "m": m, "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej,
        "used_tables": used_tables, "rule": rule, "default_table": default_table, "timing": timing, "stream": stream,
    }


def discard_prepared(prep) -> None:
    """Remove the spool file of a prepared log (:func:`prepare_file`), if it has one."""
    if isinstance(prep, dict) and isinstance(prep.get("incoming"), (str, Path)):
        scratch.remove(Path(prep["incoming"]).parent)


def _sql_path(p) -> str:
    return str(p).replace("'", "''")



def _repeated_keys(incoming: pa.Table, con) -> int:
    """Number of rows whose (table, spin id) repeats an earlier row of the same file.

    Fast exact answer for the usual log (one table, numeric ids strictly increasing); otherwise
    counted by DuckDB."""
    if not isinstance(incoming, pa.Table):  # a spooled file: DuckDB counts
        return int(con.execute("SELECT count(*) - count(DISTINCT (table_id, spin_no, spin_label)) FROM incoming_arrow").fetchall()[0][0])
    m = len(incoming)
    if m == 0:
        return 0
    tab = incoming.column("table_id")
    labels = incoming.column("spin_label")
    if pc.count_distinct(tab).as_py() == 1 and pc.all(pc.equal(labels, _arrow.text_scalar(""))).as_py():
        no = _arrow.ints(incoming.column("spin_no"))
        if np.all(np.diff(no) > 0):
            return 0
    return int(con.execute("SELECT count(*) - count(DISTINCT (table_id, spin_no, spin_label)) FROM incoming_arrow").fetchall()[0][0])
