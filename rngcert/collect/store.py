"""The rngcert store: spins of every table accumulated over months, in one DuckDB file.

Default location ``data/rngcert.duckdb`` (CLI ``--db``). What it holds (schema version
:data:`SCHEMA_VERSION`):

``meta``
    ``schema_version`` and the rngcert version that created the store.
``sources``
    One row per ingested file version: path, SHA-256, format, size, equipment, row counts
    (accepted / void / rejected) and what the ingest did (inserted / duplicates / conflicts).
``tables``
    Table id and the equipment (wheel) it runs; a table keeps one wheel.
``spins``
    One row per spin, void spins included: ``table_id``, the spin id as ``spin_no`` (BIGINT,
    when the id is a whole number written canonically, e.g. ``17``) or ``spin_label`` (its text
    otherwise; ``''`` for numeric ids), ``seq`` (global
    ingest order), ``ts`` (UTC), ``pos`` (wheel position, NULL when the result is a symbol only),
    ``sym`` (symbol id, money wheels), ``dealer``, ``direction`` (0 cw, 1 ccw), ``release``,
    ``void``, and provenance ``source_id`` (→ ``sources``: file and SHA-256) and ``line``.
``rejects``
    Rows that could not be read: file, line, column, reason, text.
``conflicts``
    Rows whose (table, spin_id) was already stored with a different result: both versions,
    never overwritten.
``audits`` / ``audit_tests``
    Audit records (window, verdict, every p-value, bias estimates, report path).
``alarms``
    Alarms raised by ``rngcert watch``.

Rules of ingest
---------------
* **Identity of a spin** is (table, spin_id). Logs without a ``spin_id`` column (permanence
  lists, bare CSV) are numbered by position: the k-th row of a table in the file gets spin_id
  ``k`` (1-based, counting every row the reader could split, rejected ones included), so a log
  that grows by appending keeps its numbers. Logs without a ``table`` column go to the table
  given by ``table=`` (CLI ``--table``), by default the file's name without extension.
* **Idempotent.** A file whose SHA-256 is already in ``sources`` adds nothing. Otherwise only
  rows whose (table, spin_id) is new are inserted: a grown log adds exactly its new rows; rows
  already stored with the same result are counted as duplicates; rows stored with a *different*
  result (or void flag) are conflicts, recorded in ``conflicts`` and reported, never overwritten.
  Within one file, the first row of a repeated spin_id is kept and the later ones are duplicates
  or conflicts in the same way.
* **Atomic.** One file is one transaction (spins, rejects, conflicts and the ``sources`` row
  commit together), so an ingest killed at any point leaves the store as it was before that
  file; running it again ingests the file exactly once.
* **Vectorised.** Rows go from the pyarrow arrays of :func:`rngcert.collect.spinlog.read_spin_rows`
  into DuckDB as one Arrow table; de-duplication and conflict detection are set operations (joins)
  inside DuckDB, never a Python loop over rows.
* Shoe logs (card scanners) are not stored yet: the card side lives in
  :mod:`rngcert.collect.shoelog`; this store holds spins only.

Many readers, one writer
------------------------
DuckDB lets one process write a database file, or many processes read it, not both at once.
rngcert keeps every hold on the file short: :func:`ingest_files` parses each file with no
connection open and holds the write lock only while that file's rows are stored (one
transaction per file); audits read each table in a read-only session and record their result in
a separate short write transaction; ``rejects``, ``watch --table`` and ``export`` only read. A
command that finds the file locked by another process retries with a bounded, stated wait
(``wait`` seconds, CLI ``--wait``, default :data:`DEFAULT_WAIT`; backoff from 0.05 s up to 1 s
between attempts) and then fails with an input/storage error (exit 3) that names the store.

Storage errors
--------------
A full disk, an unwritable or damaged file, or any other failure of the database file is a
:class:`StorageError` (an :class:`~rngcert.errors.InputError`: exit 3) naming the store's path,
never an internal error. A failed transaction is rolled back: what was committed before stays.

Export
------
:meth:`Store.export_parquet` writes the spins as Parquet partitioned by table and day
(``DIR/table_id=T/day=YYYY-MM-DD/*.parquet``, Hive layout: Spark, Dask and DuckDB read it as one
data set) with the provenance of every row, plus ``DIR/_rngcert/`` (manifest, sources and
rejected rows, conflicts, each file's SHA-256 and rows; folders starting with ``_`` are skipped by
those readers). :meth:`Store.ingest_parquet` checks the files and the spins per source and table
against the manifest (refusing, with nothing stored, when one is missing, added or changed), then
reads the folder back, source by source, with the rules of ingest (a source already stored adds
nothing).
"""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rngcert import __version__
from rngcert.collect import _arrow
from rngcert.errors import InputError, NoDataError, StorageError

#: Version of the store's schema. Bump when the tables change; older rngcert versions refuse a
#: store with a higher version (they would misread it), newer ones migrate older stores.
SCHEMA_VERSION = 2  # 2: audits.report_sha256 (the hash of the audit's report.json)

DEFAULT_DB = Path("data") / "rngcert.duckdb"

#: Seconds a command waits for a store locked by another process before it gives up (exit 3).
DEFAULT_WAIT = 120.0

#: Export layout version (``DIR/_rngcert/manifest.json``).
EXPORT_FORMAT = 2  # 2: conflicts.jsonl; every file's SHA-256 and rows, spins per source in the manifest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS sources (
    source_id INTEGER, path VARCHAR, sha256 VARCHAR, format VARCHAR, size_bytes BIGINT,
    equipment VARCHAR, spin_id_rule VARCHAR, default_table VARCHAR,
    rows BIGINT, accepted BIGINT, void BIGINT, rejected BIGINT,
    inserted BIGINT, duplicates BIGINT, conflicts BIGINT,
    ingested_utc TIMESTAMP, rngcert VARCHAR);
CREATE TABLE IF NOT EXISTS tables (table_id VARCHAR, equipment VARCHAR, wheel_id VARCHAR, created_utc TIMESTAMP);
CREATE TABLE IF NOT EXISTS spins (
    table_id VARCHAR, spin_no BIGINT, spin_label VARCHAR, seq BIGINT, ts TIMESTAMP,
    pos SMALLINT, sym SMALLINT, dealer VARCHAR, direction TINYINT, release SMALLINT,
    void BOOLEAN, source_id INTEGER, line INTEGER);
CREATE TABLE IF NOT EXISTS rejects (
    source_id INTEGER, file VARCHAR, line INTEGER, "column" VARCHAR, reason VARCHAR, text VARCHAR);
CREATE TABLE IF NOT EXISTS conflicts (
    table_id VARCHAR, spin_id VARCHAR,
    stored_pos SMALLINT, stored_sym SMALLINT, stored_void BOOLEAN, stored_source_id INTEGER, stored_line INTEGER,
    new_pos SMALLINT, new_sym SMALLINT, new_void BOOLEAN, source_id INTEGER, line INTEGER,
    detected_utc TIMESTAMP);
CREATE TABLE IF NOT EXISTS audits (
    audit_id INTEGER, table_id VARCHAR, equipment VARCHAR, created_utc TIMESTAMP,
    since VARCHAR, until VARCHAR, last_n BIGINT,
    first_seq BIGINT, last_seq BIGINT, first_ts TIMESTAMP, last_ts TIMESTAMP,
    n BIGINT, void BIGINT, verdict VARCHAR, seed VARCHAR, alpha DOUBLE, n_resamples INTEGER,
    report_path VARCHAR, pvalues VARCHAR, bias VARCHAR, homogeneity VARCHAR, rngcert VARCHAR, report_sha256 VARCHAR);
CREATE TABLE IF NOT EXISTS audit_tests (
    audit_id INTEGER, name VARCHAR, requirement VARCHAR, applicable BOOLEAN, statistic DOUBLE, df DOUBLE,
    pvalue DOUBLE, pvalue_holm DOUBLE, method VARCHAR, reason VARCHAR);
CREATE TABLE IF NOT EXISTS alarms (
    alarm_id INTEGER, table_id VARCHAR, source VARCHAR, created_utc TIMESTAMP,
    spin_count BIGINT, spin_id VARCHAR, ts TIMESTAMP, log_evidence DOUBLE, log_threshold DOUBLE,
    alternative VARCHAR, guarantee VARCHAR, rngcert VARCHAR);
"""


class StoreVersionError(InputError):
    """The store was written by a newer rngcert (higher schema version) or is not a store."""


class StoreBusyError(StorageError):
    """Another process held the store's file for longer than the stated wait."""


_DISK_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.EACCES, errno.EPERM, errno.EFBIG}


def storage_error(path, exc: BaseException) -> "StorageError | None":
    """The :class:`StorageError` for a failure of the store file at ``path``, or None when
    ``exc`` is not a storage failure (a programming error stays what it is).

    Storage failures: DuckDB's I/O, serialization, fatal, internal and out-of-memory errors, a
    bare ``duckdb.Error`` (DuckDB's "Corrupt database file"), and ``OSError`` for a full disk,
    quota, read-only file system, I/O or permission error.
    """
    import duckdb

    if isinstance(exc, StorageError):
        return exc
    msg = str(exc)
    low = msg.lower()
    if isinstance(exc, OSError):
        if exc.errno not in _DISK_ERRNOS:
            return None
    elif not (
        isinstance(exc, (duckdb.IOException, duckdb.SerializationException, duckdb.FatalException, duckdb.InternalException, duckdb.OutOfMemoryException))
        or type(exc) is duckdb.Error
    ):
        return None
    if "no space left" in low or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
        what = f"the disk holding store {path} is full ({msg})"
        tail = "; the unfinished transaction was rolled back, everything committed before it is kept: free space and run the command again"
    elif "corrupt" in low or "not a valid duckdb" in low or "checksum" in low or isinstance(exc, duckdb.SerializationException):
        what = f"store {path} is damaged ({msg})"
        tail = "; restore it from a backup (or an `rngcert export`), or re-ingest the logs into a new store"
    elif "read-only" in low or "permission" in low or (isinstance(exc, OSError) and exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)):
        what = f"store {path} cannot be written ({msg})"
        tail = "; audit it with --no-record, or copy it somewhere writable"
    else:
        what = f"store {path}: storage error ({type(exc).__name__}: {msg})"
        tail = ""
    return StorageError(what + tail)


def _guarded(fn):
    """Method decorator: storage failures of the store file become :class:`StorageError`."""

    @functools.wraps(fn)
    def wrapper(self, *a, **k):
        try:
            return fn(self, *a, **k)
        except InputError:
            raise
        except Exception as exc:
            err = storage_error(self.path, exc)
            if err is None:
                raise
            raise err from exc

    return wrapper


def _rollback(con) -> None:
    """Roll back the open transaction, if any. When a COMMIT failed (a full disk, a folder where the
    write-ahead log cannot be created), DuckDB has already ended the transaction and a ROLLBACK
    raises "cannot rollback - no transaction is active", which would hide the real error."""
    import duckdb

    try:
        con.execute("ROLLBACK")
    except duckdb.Error:
        pass


def _before_commit() -> None:
    """Hook called just before an ingest commits (tests replace it to kill the process there)."""


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)


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

    @property
    def n(self) -> int:
        return int(self.void.size)


class Store:
    """An open rngcert store (a DuckDB database file).

    Parameters
    ----------
    path : path
        The database file; created (with its folder) unless ``read_only``.
    read_only : bool
        Open for reading only (several readers may share the file; a writer excludes others).
    wait : float
        Seconds to keep retrying while another process holds the file (a writer, or readers when
        this is a writer); 0 (default for the library): fail at once. The CLI passes ``--wait``.
    on_wait : callable, optional
        Called once with DuckDB's message (which names the holding process) when the first
        attempt finds the file locked, e.g. to tell the user that the command is waiting.

    Raises
    ------
    StoreVersionError
        The store's schema version is newer than this rngcert understands, or the file is a
        DuckDB database that is not an rngcert store.
    StoreBusyError
        Still locked by another process after ``wait`` seconds.
    StorageError
        The file is damaged, cannot be written, or the disk is full.
    InputError
        The file is missing in read-only mode.
    """

    def __init__(self, path: str | Path = DEFAULT_DB, *, read_only: bool = False, wait: float = 0.0, on_wait=None):
        self.path = Path(path)
        self.con = None
        if read_only and not self.path.is_file():
            if self.path.is_dir():
                raise InputError(f"store {self.path} is a folder, not a store file (an `rngcert export` folder is read back with: rngcert ingest {self.path} --db NEW.duckdb)")
            raise InputError(f"store {self.path} does not exist; create it with: rngcert ingest LOG --db {self.path}")
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise storage_error(self.path, exc) or exc from None
        self.read_only = read_only
        self.con = self._connect(read_only, float(wait), on_wait)
        try:
            self._check_schema()
        except BaseException:
            self.close()
            raise

    def _connect(self, read_only: bool, wait: float, on_wait):
        import duckdb

        deadline = time.monotonic() + max(0.0, wait)
        delay, told, tries = 0.05, False, 0
        while True:
            tries += 1
            try:
                return duckdb.connect(str(self.path), read_only=read_only)
            except duckdb.IOException as exc:
                msg = str(exc)
                if "lock" not in msg.lower():
                    raise storage_error(self.path, exc) or InputError(f"store {self.path} cannot be opened: {msg}") from None
                now = time.monotonic()
                if now >= deadline:
                    waited = f"for {wait:g} s ({tries} attempts)" if wait > 0 else "(--wait 0: no waiting)"
                    raise StoreBusyError(
                        f"store {self.path} is in use by another process {waited}: DuckDB lets one process write a store or "
                        f"several read it, not both at once ({msg.split('. See also')[0]}); run the command again later "
                        "or give a longer --wait SECONDS"
                    ) from None
                if on_wait is not None and not told:
                    on_wait(msg.split(". See also")[0])
                    told = True
                time.sleep(min(delay, max(0.0, deadline - now)))
                delay = min(2 * delay, 1.0)
            except duckdb.Error as exc:
                err = storage_error(self.path, exc)
                raise err or InputError(f"store {self.path} cannot be opened (not a DuckDB file of a supported version?): {exc}") from None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        con = getattr(self, "con", None)
        self.con = None
        if con is not None:
            try:
                con.close()  # a writer's close checkpoints: it can meet a full disk too
            except Exception as exc:
                err = storage_error(self.path, exc)
                if err is None:
                    raise
                raise err from exc

    @_guarded
    def _check_schema(self) -> None:
        names = {r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "meta" not in names:
            if names:
                raise StoreVersionError(f"{self.path} is a DuckDB database but not an rngcert store (tables: {', '.join(sorted(names))})")
            if self.read_only:
                raise StoreVersionError(f"{self.path} is an empty database, not an rngcert store")
            self.con.execute("BEGIN TRANSACTION")
            self.con.execute(_SCHEMA)
            self.con.execute(
                "INSERT INTO meta VALUES ('schema_version', ?), ('created_by', ?), ('created_utc', ?)",
                [str(SCHEMA_VERSION), f"rngcert {__version__}", _now().isoformat(timespec="seconds")],
            )
            self.con.execute("COMMIT")
            self.schema_version = SCHEMA_VERSION
            return
        row = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        try:
            version = int(row[0][0]) if row else None
        except ValueError:
            version = None
        if version is None:
            raise StoreVersionError(f"{self.path}: the store has no readable schema version; it is not an rngcert store")
        if version > SCHEMA_VERSION:
            by = self.con.execute("SELECT value FROM meta WHERE key = 'written_by'").fetchall() or self.con.execute("SELECT value FROM meta WHERE key = 'created_by'").fetchall()
            raise StoreVersionError(
                f"store {self.path} has schema version {version} (written by {by[0][0] if by else 'a newer rngcert'}), "
                f"but this rngcert {__version__} reads schema versions up to {SCHEMA_VERSION}: upgrade rngcert to use this store "
                "(the store was not modified)"
            )
        self.schema_version = version
        if version < 2 and not self.read_only:  # 1 -> 2: audit records keep their report's hash
            self.con.execute("ALTER TABLE audits ADD COLUMN IF NOT EXISTS report_sha256 VARCHAR")
            self.con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
            self.schema_version = 2
        if not self.read_only:
            self.con.execute("INSERT OR REPLACE INTO meta VALUES ('written_by', ?)", [f"rngcert {__version__}"])

    # ------------------------------------------------------------------ ingest
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
        if isinstance(paths, (str, Path)):
            paths = [paths]
        wheel = load_wheel(equipment)
        paths = [Path(p) for p in paths]
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
        """Store one prepared file in one transaction (see the module docstring)."""
        path, sha, n, m = prep["path"], prep["sha"], prep["n"], prep["m"]
        incoming, rej_tbl, rej, used_tables, rule = prep["incoming"], prep["rej_tbl"], prep["rej"], prep["used_tables"], prep["rule"]
        default_table = prep["default_table"]
        timing = prep["timing"]
        self.last_timing = timing
        clock = [time.perf_counter()]

        def lap(what):
            now_ = time.perf_counter()
            timing[what] = timing.get(what, 0.0) + now_ - clock[0]
            clock[0] = now_

        con = self.con
        if con.execute("SELECT 1 FROM sources WHERE sha256 = ? LIMIT 1", [sha]).fetchall():
            return IngestResult(str(path), sha, "already ingested")  # the same file twice in one call
        con.execute("BEGIN TRANSACTION")
        try:
            # equipment of every table is fixed once
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
            source_id = con.execute("SELECT coalesce(max(source_id), 0) + 1 FROM sources").fetchall()[0][0]
            base = int(con.execute("SELECT coalesce(max(seq), 0) + 1 FROM spins").fetchall()[0][0])
            spooled = isinstance(incoming, (str, Path))  # a streamed log: its rows in a Parquet file (see prepare_file)
            if spooled:
                con.execute(f"CREATE OR REPLACE TEMP VIEW incoming_arrow AS SELECT * FROM read_parquet('{_sql_path(incoming)}')").fetchall()
                has_rn = False
            else:
                con.register("incoming_arrow", incoming)
                has_rn = "rn" in incoming.column_names  # a parsed log carries the reader's rule; an export does not
            if prep.get("repeated") is not None:  # proven while the file was streamed
                repeated = int(prep["repeated"])
            elif has_rn:
                repeated = int(pc.sum(pc.greater(incoming.column("rn"), 1)).as_py() or 0)
            else:
                repeated = _repeated_keys(incoming, con)
            now = _now()
            if stored_before == 0 and repeated == 0:
                # fast path: new tables, no repeated id in the file: every row is new
                con.execute(
                    """INSERT INTO spins
                       SELECT table_id, spin_no, spin_label, ? + ord, ts, pos, sym, dealer, direction,
                              release, void, ?, line
                       FROM incoming_arrow""",
                    [base, source_id],
                ).fetchall()
                n_new, n_conf = m, 0
            else:
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
            if spooled:
                con.execute("DROP VIEW incoming_arrow").fetchall()
            else:
                con.unregister("incoming_arrow")
            n_dup = m - int(n_new) - n_conf
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
            sample = con.execute(
                """SELECT table_id, spin_id, stored_pos, stored_sym, stored_void, stored_line, new_pos, new_sym, new_void, line
                   FROM conflicts WHERE source_id = ? ORDER BY line LIMIT 10""",
                [source_id],
            ).fetchall()
            n_split_rejects = sum(1 for r in rej if r.column == "*")
            con.execute(
                "INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    source_id, str(path), sha, prep["format"], prep["size"], equipment, rule, default_table,
                    n + n_split_rejects, prep["accepted"], prep["void"], len(rej),
                    int(n_new), n_dup, n_conf, now, __version__,
                ],
            ).fetchall()
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
        labels = wheel.position_space().labels if wheel.order_known else ()
        conflict_sample = [
            {
                "table": r[0],
                "spin_id": r[1],
                "stored": "void" if r[4] else (labels[r[2]] if r[2] is not None and labels else f"symbol {wheel.symbols[r[3]] if r[3] is not None else '?'}"),
                "stored_line": r[5],
                "new": "void" if r[8] else (labels[r[6]] if r[6] is not None and labels else f"symbol {wheel.symbols[r[7]] if r[7] is not None else '?'}"),
                "line": r[9],
            }
            for r in sample
        ]
        return IngestResult(
            str(path), sha, "ingested", rows=n + n_split_rejects, accepted=prep["accepted"],
            void=prep["void"], rejected=len(rej), inserted=int(n_new), duplicates=n_dup, conflicts=n_conf,
            conflict_sample=conflict_sample, tables=used_tables, spin_id_rule=rule,
        )

    # ------------------------------------------------------------------ queries
    @_guarded
    def known_source(self, sha: str, *, con=None):
        """(equipment, default table) of the first ingest of the bytes with this SHA-256, or None."""
        rows = (con or self.con).execute("SELECT equipment, default_table FROM sources WHERE sha256 = ? LIMIT 1", [sha]).fetchall()
        return tuple(rows[0]) if rows else None

    @_guarded
    def tables_with_spins(self) -> list[str]:
        """Ids of the tables that hold at least one spin that is not void, sorted: the tables
        ``audit --all`` audits (the same as ``[t["table"] for t in self.tables() if t["spins"]]``).

        One pass over one column with no counts or times: on a store of 50 M spins it takes
        about a tenth of :meth:`tables` (0.06 s against 0.6 s).
        """
        known = {r[0] for r in self.con.execute("SELECT table_id FROM tables").fetchall()}
        return sorted(r[0] for r in self.con.execute("SELECT DISTINCT table_id FROM spins WHERE NOT void").fetchall() if r[0] in known)

    @_guarded
    def tables(self) -> list[dict]:
        """Every table with its wheel and spin counts."""
        q = """SELECT t.table_id, t.equipment, t.wheel_id,
                      count(s.seq) FILTER (WHERE NOT s.void), count(s.seq) FILTER (WHERE s.void),
                      min(s.ts), max(s.ts), max(s.seq)
               FROM tables t LEFT JOIN spins s USING (table_id)
               GROUP BY ALL ORDER BY t.table_id"""
        return [
            {"table": r[0], "equipment": r[1], "wheel": r[2], "spins": r[3], "void": r[4], "first_ts": r[5], "last_ts": r[6], "last_seq": r[7]}
            for r in self.con.execute(q).fetchall()
        ]

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
    def rejects(self, *, file: str | None = None, limit: int | None = None) -> list[dict]:
        """Rejected rows (file, line, column, reason, text), optionally of one file."""
        q = 'SELECT file, line, "column", reason, text, source_id FROM rejects'
        args: list = []
        if file is not None:
            q += " WHERE file = ? OR file LIKE ?"
            args += [file, f"%{file}"]
        q += " ORDER BY source_id, file, line"
        if limit is not None:
            q += f" LIMIT {int(limit)}"
        return [dict(zip(("file", "line", "column", "reason", "text", "source_id"), r)) for r in self.con.execute(q, args).fetchall()]

    @_guarded
    def conflicts(self, *, table: str | None = None) -> list[dict]:
        q = "SELECT * FROM conflicts" + (" WHERE table_id = ?" if table else "") + " ORDER BY source_id, line"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]

    @_guarded
    def count_spins(self, table: str | None = None) -> int:
        if table is None:
            return int(self.con.execute("SELECT count(*) FROM spins").fetchall()[0][0])
        return int(self.con.execute("SELECT count(*) FROM spins WHERE table_id = ?", [table]).fetchall()[0][0])

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

        Spin order is ingest order (``seq``); when the window's timestamps are not
        non-decreasing in that order, rows are sorted by timestamp (stably), as ``certify`` does.

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
            ranges (``seq_range``, ``ts_range``) are kept, which is all an audit needs. A window
            cut by ``last`` keeps them either way (its ranges are those of the spins kept).

        Notes
        -----
        The window is read in record batches of :data:`READ_BATCH` rows into preallocated
        compact arrays, in the stored order when that is seq order (else sorted by seq in the
        database); the order check (timestamp, then spin id) runs batch by batch, and only a
        window out of order reads its sort keys whole.
        """
        equipment = self.equipment_of(table)
        where, args = ["table_id = ?"], [table]
        if since is not None:
            where.append("ts >= ?")
            args.append(_parse_when(since, "since"))
        if until is not None:
            where.append("ts < ?")
            args.append(_parse_when(until, "until"))
        if after_seq is not None:
            where.append("seq > ?")
            args.append(int(after_seq))
        if before_seq is not None:
            where.append("seq < ?")
            args.append(int(before_seq))
        where_sql = " AND ".join(where)
        n, n_ts, labelled = self.con.sql(
            f"SELECT count(*), count(ts), coalesce(bool_or(spin_label <> ''), false) FROM spins WHERE {where_sql}", params=args
        ).fetchall()[0]
        n, has_ts = int(n), bool(n_ts)
        # dealers: codes in the order of first appearance (by seq), as a dictionary encoding of the column would give
        dealer_labels = [r[0] for r in self.con.sql(
            f"SELECT coalesce(dealer, '') AS d, min(seq) AS f FROM spins WHERE {where_sql} GROUP BY 1 ORDER BY f",
            params=args).fetchall()] if n else []
        has_dealer = bool(n) and bool(self.con.sql(f"SELECT count(dealer) FROM spins WHERE {where_sql}", params=args).fetchall()[0][0])
        sid = "CASE WHEN spin_label = '' THEN CAST(spin_no AS VARCHAR) ELSE spin_label END" if with_ids else "NULL::VARCHAR"
        key = "dense_rank() OVER (ORDER BY spin_label, spin_no)" if labelled else "spin_no"
        codes = "NULL::INTEGER"
        if has_dealer:
            codes = "list_position(?::VARCHAR[], coalesce(dealer, '')) - 1"
        cols = f"""SELECT {sid} AS spin_id, seq, epoch_us(ts) AS ts, coalesce(pos, -1) AS pos, coalesce(sym, -1) AS sym, {codes} AS dealer,
                       coalesce(direction, -1) AS direction, coalesce(release, -1) AS release, coalesce(void, false) AS void, source_id,
                       {key if has_ts else 'NULL::BIGINT'} AS key
                FROM spins WHERE {where_sql}"""
        # compact columns filled batch by batch (no whole Arrow table, no int64 copies of the small columns)
        keys = keys or last is not None
        seq = np.empty(n, dtype=np.int64) if keys else None
        ts = np.empty(n, dtype=np.int64) if has_ts and keys else None
        lo_seq = lo_ts = np.iinfo(np.int64).max
        hi_seq = hi_ts = np.iinfo(np.int64).min
        pos, sym, release = (np.empty(n, dtype=np.int16) for _ in range(3))
        direction = np.empty(n, dtype=np.int8)
        void = np.empty(n, dtype=bool)
        dealer = np.empty(n, dtype=_small_codes(len(dealer_labels))) if has_dealer else None
        # first in the stored order (DuckDB keeps insertion order, which is seq order unless rows were inserted
        # otherwise): no sort of the window in the database; if seq goes backwards, read again sorted by seq
        for sort in ((True,) if labelled else (False, True)):
            ids, sources = [], set()
            ordered = True  # (timestamp, key) non-decreasing in seq order: the order certify uses is seq order
            last_ts = last_key = None
            last_seq = np.iinfo(np.int64).min
            at = 0
            rel = self.con.sql(cols + (" ORDER BY seq" if sort else ""), params=([dealer_labels] if has_dealer else []) + args)
            reader = rel.to_arrow_reader(READ_BATCH) if hasattr(rel, "to_arrow_reader") else rel.fetch_record_batch(READ_BATCH)
            in_seq_order = True
            for b in reader:  # loop over record batches
                m = b.num_rows
                if m == 0:
                    continue
                sl = slice(at, at + m)
                bseq = _arrow.ints(b.column("seq"))
                if not sort:
                    if bseq[0] <= last_seq or np.any(bseq[1:] <= bseq[:-1]):
                        in_seq_order = False
                        break
                    last_seq = bseq[-1]
                if seq is not None:
                    seq[sl] = bseq
                lo_seq, hi_seq = min(lo_seq, int(bseq.min())), max(hi_seq, int(bseq.max()))
                for name, arr in (("pos", pos), ("sym", sym), ("release", release), ("direction", direction)):
                    arr[sl] = _arrow.ints(b.column(name))
                void[sl] = _arrow.bools(b.column("void"))
                if dealer is not None:
                    dealer[sl] = _arrow.ints(b.column("dealer"))
                sources.update(x for x in pc.unique(b.column("source_id")).to_pylist() if x is not None)
                if with_ids:
                    ids.append(b.column("spin_id"))
                if has_ts:
                    t = _arrow.ints(b.column("ts"), fill=np.iinfo(np.int64).min)
                    if ts is not None:
                        ts[sl] = t
                    lo_ts, hi_ts = min(lo_ts, int(t.min())), max(hi_ts, int(t.max()))
                    if ordered:
                        k = _arrow.ints(b.column("key")).astype(np.int64)
                        if last_ts is not None:
                            t, k = np.concatenate([[last_ts], t]), np.concatenate([[last_key], k])
                        d = np.diff(t)
                        if np.any(d < 0) or np.any((d == 0) & (k[1:] < k[:-1])):
                            ordered = False
                        last_ts, last_key = t[-1], k[-1]
                at += m
            reader.close()  # drained, or left early: the connection takes no new query with a result open
            del reader, rel
            if in_seq_order:
                break
        order = None
        if not ordered:
            # the order certify uses: (timestamp, spin id, then ingest order) — total, so the file order
            # of rows with equal timestamps cannot change the sequence
            rel = self.con.sql(f"SELECT {key} AS key, epoch_us(ts) AS ts FROM spins WHERE {where_sql} ORDER BY seq", params=args)
            got = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.fetch_arrow_table()
            del rel
            sort_keys = _arrow.ints(got.column("key")).astype(np.int64)
            sort_ts = ts if ts is not None else _arrow.ints(got.column("ts"), fill=np.iinfo(np.int64).min)
            del got
            order = np.lexsort((np.arange(n), sort_keys, sort_ts))
            del sort_keys, sort_ts
            seq, ts, pos, sym, release, direction, void = (None if a is None else a[order] for a in (seq, ts, pos, sym, release, direction, void))
            if dealer is not None:
                dealer = dealer[order]
        sel = None
        if last is not None:
            if last < 1:
                raise InputError(f"--last must be a positive number of spins, got {last}")
            n_good = n - int(np.count_nonzero(void))
            if n_good > last:
                sel = _nth_true(~void, n_good - last)  # the first of the last ``last`` non-void spins
        spin_id = pa.concat_arrays(ids) if ids else pa.array([], type=pa.string())
        out = StoredSpins(
            table=table,
            equipment=equipment,
            spin_id=spin_id.take(pa.array(order)) if order is not None and with_ids else spin_id,
            seq=seq,
            ts=ts,
            pos=pos,
            sym=sym,
            dealer=dealer,
            dealer_labels=dealer_labels if has_dealer else [],
            direction=direction if np.any(direction >= 0) else None,
            release=release if np.any(release >= 0) else None,
            void=void,
            source_ids=sorted(int(x) for x in sources),
            seq_range=(lo_seq, hi_seq) if n else None,
            ts_range=(lo_ts, hi_ts) if n and has_ts else None,
        )
        if sel is not None:
            for name in ("seq", "ts", "pos", "sym", "dealer", "direction", "release", "void"):
                v = getattr(out, name)
                if v is not None:
                    setattr(out, name, v[sel:].copy())
            out.spin_id = out.spin_id.slice(sel) if with_ids else out.spin_id
            out.seq_range = (int(out.seq.min()), int(out.seq.max())) if out.n else None
            out.ts_range = (int(out.ts.min()), int(out.ts.max())) if out.n and out.ts is not None else None
        return out

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

    # ------------------------------------------------------------------ audits and alarms
    @_guarded
    def record_audit(self, rec: dict, tests: list[dict]) -> int:
        """Insert an audit record and its per-test rows; returns the audit id."""
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            aid = con.execute("SELECT coalesce(max(audit_id), 0) + 1 FROM audits").fetchall()[0][0]
            cols = [
                "table_id", "equipment", "created_utc", "since", "until", "last_n", "first_seq", "last_seq", "first_ts", "last_ts",
                "n", "void", "verdict", "seed", "alpha", "n_resamples", "report_path", "pvalues", "bias", "homogeneity", "report_sha256",
            ]
            vals = [aid] + [rec.get(c) for c in cols] + [__version__]
            names = ", ".join(["audit_id", *cols, "rngcert"])
            con.execute(f"INSERT INTO audits ({names}) VALUES ({','.join('?' * len(vals))})", vals)
            if tests:
                con.executemany(
                    "INSERT INTO audit_tests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [[aid, t["name"], t["requirement"], t["applicable"], t.get("statistic"), t.get("df"), t.get("pvalue"), t.get("pvalue_holm"), t.get("method"), t.get("reason")] for t in tests],
                )
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (a failed COMMIT has ended the transaction: its error is the one to report)
            raise
        return int(aid)

    @_guarded
    def audits(self, table: str | None = None) -> list[dict]:
        """Audit records (oldest first), with ``pvalues``/``bias``/``homogeneity`` decoded."""
        q = "SELECT * FROM audits" + (" WHERE table_id = ?" if table else "") + " ORDER BY audit_id"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        out = []
        for r in cur.fetchall():
            d = dict(zip(names, r))
            for k in ("pvalues", "bias", "homogeneity"):
                d[k] = json.loads(d[k]) if d[k] else None
            out.append(d)
        return out

    @_guarded
    def record_alarm(self, rec: dict) -> int:
        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            aid = con.execute("SELECT coalesce(max(alarm_id), 0) + 1 FROM alarms").fetchall()[0][0]
            cols = ["table_id", "source", "created_utc", "spin_count", "spin_id", "ts", "log_evidence", "log_threshold", "alternative", "guarantee"]
            vals = [aid] + [rec.get(c) for c in cols] + [__version__]
            con.execute(f"INSERT INTO alarms VALUES ({','.join('?' * len(vals))})", vals)
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)  # (a failed COMMIT has ended the transaction: its error is the one to report)
            raise
        return int(aid)

    @_guarded
    def alarms(self, table: str | None = None) -> list[dict]:
        q = "SELECT * FROM alarms" + (" WHERE table_id = ?" if table else "") + " ORDER BY alarm_id"
        cur = self.con.execute(q, [table] if table else [])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


    # ------------------------------------------------------------------ export / import (Parquet)
    @_guarded
    def export_parquet(self, folder: str | Path, *, tables: Sequence[str] | None = None) -> dict:
        """Write the spins as Parquet partitioned by table and day, with every row's provenance.

        Layout (Hive partitioning, read as one data set by Spark, Dask and DuckDB, e.g.
        ``read_parquet('DIR/*/*/*.parquet', hive_partitioning = true)``)::

            DIR/table_id=<table>/day=<YYYY-MM-DD>/data_0.parquet   (day=__HIVE_DEFAULT_PARTITION__: no timestamp)
            DIR/_rngcert/manifest.json    format, store schema, tables and their wheels, row counts
            DIR/_rngcert/sources.jsonl    one line per ingested source (path, SHA-256, counts)
            DIR/_rngcert/rejects.jsonl    the rejected rows (file, line, column, reason, text)
            DIR/_rngcert/conflicts.jsonl  the conflicts of the tables (both versions, both sources by SHA-256)

        Every source of the tables is exported, including one that added no spin (only
        duplicates, conflicts or rejects); the manifest lists every file's SHA-256 and rows and
        the spins, rejects and conflicts of each source.

        Columns of the spins: ``spin_id`` (text), ``spin_no``, ``spin_label``, ``seq``, ``ts``
        (UTC), ``result`` (the pocket label, or the symbol), ``pos``, ``sym``, ``dealer``,
        ``direction`` (0 cw, 1 ccw), ``release``, ``void``, ``equipment``, ``source_sha256``,
        ``source_path``, ``line``; the partition columns ``table_id`` and ``day`` come from the
        folder names.

        Parameters
        ----------
        folder : path
            Must not exist yet, or be empty. The export is written to a sibling temporary
            folder and renamed at the end, so a failed export leaves no partial folder.
        tables : sequence of str, optional
            Only these tables (default: all).

        Returns
        -------
        dict
            The manifest (also written to ``_rngcert/manifest.json``).

        Raises
        ------
        InputError
            The folder exists and is not empty; an unknown table.
        StorageError
            Full disk (the temporary folder is removed) or damaged store.
        """
        from rngcert.equipment.wheel import load_wheel

        folder = Path(folder)
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise InputError(f"{folder} exists and is not an empty folder: give a new folder for the export")
        known = {t["table"]: t for t in self.tables()}
        chosen = list(known) if tables is None else list(tables)
        for t in chosen:
            if t not in known:
                raise InputError(f"table {t!r} is not in store {self.path}; tables: {', '.join(sorted(known)[:20]) or '(none)'}")
        tmp = folder.parent / f".{folder.name}.rngcert-export-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tmp.mkdir(parents=True)
            con = self.con.cursor()
            try:
                # labels of every wheel in use, for the readable `result` column
                lab_rows = []
                for t in chosen:
                    eq = known[t]["equipment"]
                    w = load_wheel(eq)
                    if w.order_known:
                        lab_rows += [(t, "pos", i, str(lab)) for i, lab in enumerate(w.position_space().labels)]
                    lab_rows += [(t, "sym", i, str(sym)) for i, sym in enumerate(w.symbols)] if getattr(w, "symbols", None) else []
                labels = pa.table(
                    {
                        "table_id": pa.array([r[0] for r in lab_rows], pa.string()), "kind": pa.array([r[1] for r in lab_rows], pa.string()),
                        "code": pa.array([r[2] for r in lab_rows], pa.int16()), "label": pa.array([r[3] for r in lab_rows], pa.string()),
                    }
                )
                con.register("labels_arrow", labels)
                con.register("chosen_arrow", pa.table({"table_id": pa.array(chosen, pa.string())}))
                q = """SELECT s.table_id, CAST(s.ts AS DATE) AS day,
                              CASE WHEN s.spin_label = '' THEN CAST(s.spin_no AS VARCHAR) ELSE s.spin_label END AS spin_id,
                              s.spin_no, s.spin_label, s.seq, s.ts, coalesce(lp.label, ls.label) AS result, s.pos, s.sym, s.dealer,
                              s.direction, s.release, s.void, t.equipment, src.sha256 AS source_sha256, src.path AS source_path, s.line
                       FROM spins s JOIN chosen_arrow c USING (table_id) JOIN tables t USING (table_id) JOIN sources src USING (source_id)
                       LEFT JOIN labels_arrow lp ON lp.table_id = s.table_id AND lp.kind = 'pos' AND lp.code = s.pos
                       LEFT JOIN labels_arrow ls ON ls.table_id = s.table_id AND ls.kind = 'sym' AND ls.code = s.sym
                       ORDER BY s.seq"""
                target = str(tmp).replace("'", "''")
                con.execute(f"COPY ({q}) TO '{target}' (FORMAT PARQUET, PARTITION_BY (table_id, day), COMPRESSION zstd)").fetchall()
                meta = tmp / "_rngcert"
                meta.mkdir()
                # every source of the chosen tables: its spins or conflicts are in them, or it left
                # neither (only duplicates and rejects: its table is unknown, so it goes with every export)
                src_ids = {
                    r[0]
                    for r in con.execute(
                        """SELECT source_id FROM sources src
                           WHERE EXISTS (SELECT 1 FROM spins s JOIN chosen_arrow USING (table_id) WHERE s.source_id = src.source_id)
                              OR EXISTS (SELECT 1 FROM conflicts c JOIN chosen_arrow USING (table_id) WHERE c.source_id = src.source_id)
                              OR (NOT EXISTS (SELECT 1 FROM spins s WHERE s.source_id = src.source_id)
                                  AND NOT EXISTS (SELECT 1 FROM conflicts c WHERE c.source_id = src.source_id))"""
                    ).fetchall()
                }
                srcs = [r for r in self.sources() if r["source_id"] in src_ids]
                with open(meta / "sources.jsonl", "w", encoding="utf-8") as fh:
                    for r in srcs:
                        fh.write(json.dumps(_jsonable_row(r)) + "\n")
                sha_of = {r["source_id"]: r["sha256"] for r in srcs}
                con.register("srcids_arrow", pa.table({"source_id": pa.array(sorted(src_ids), pa.int32())}))
                rej_rows = con.execute(
                    'SELECT source_id, file, line, "column", reason, text FROM rejects JOIN srcids_arrow USING (source_id) ORDER BY source_id, line'
                ).fetchall()
                with open(meta / "rejects.jsonl", "w", encoding="utf-8") as fh:
                    for r in rej_rows:
                        fh.write(json.dumps({"source_sha256": sha_of.get(r[0]), "file": r[1], "line": r[2], "column": r[3], "reason": r[4], "text": r[5]}) + "\n")
                # conflicts of the chosen tables, with the stored spin's key (spin_no, spin_label)
                conf_rows = con.execute(
                    """SELECT c.table_id, c.spin_id, s.spin_no, s.spin_label, c.stored_pos, c.stored_sym, c.stored_void,
                              c.stored_source_id, c.stored_line, c.new_pos, c.new_sym, c.new_void, c.source_id, c.line, c.detected_utc
                       FROM conflicts c JOIN chosen_arrow USING (table_id)
                       LEFT JOIN spins s ON s.table_id = c.table_id
                            AND (CASE WHEN s.spin_label = '' THEN CAST(s.spin_no AS VARCHAR) ELSE s.spin_label END) = c.spin_id
                       ORDER BY c.source_id, c.line, c.table_id, c.spin_id"""
                ).fetchall()
                conf_names = ("table_id", "spin_id", "spin_no", "spin_label", "stored_pos", "stored_sym", "stored_void", "stored_source_sha256",
                              "stored_line", "new_pos", "new_sym", "new_void", "source_sha256", "line", "detected_utc")
                with open(meta / "conflicts.jsonl", "w", encoding="utf-8") as fh:
                    for r in conf_rows:
                        d = dict(zip(conf_names, r))
                        d["stored_source_sha256"], d["source_sha256"] = sha_of.get(d["stored_source_sha256"]), sha_of.get(d["source_sha256"])
                        fh.write(json.dumps(_jsonable_row(d)) + "\n")
                per_source = dict(con.execute("SELECT source_id, count(*) FROM spins JOIN chosen_arrow USING (table_id) GROUP BY 1").fetchall())
                n = int(sum(per_source.values()))
            finally:
                con.close()
            # every file of the export with its SHA-256 and rows (lines of the .jsonl files), checked by ingest
            files = []
            for p in sorted(tmp.rglob("*")):
                if not p.is_file():
                    continue
                rel = p.relative_to(tmp).as_posix()
                if p.suffix == ".parquet":
                    import pyarrow.parquet as pq

                    rows = int(pq.ParquetFile(p).metadata.num_rows)
                else:
                    with open(p, "rb") as fh:
                        rows = sum(1 for _ in fh)
                files.append({"path": rel, "sha256": _file_sha256(p), "rows": rows})
            n_conf_of: dict[int, int] = {}
            for r in conf_rows:
                n_conf_of[r[12]] = n_conf_of.get(r[12], 0) + 1
            n_rej_of: dict[int, int] = {}
            for r in rej_rows:
                n_rej_of[r[0]] = n_rej_of.get(r[0], 0) + 1
            manifest = {
                "rngcert_export": EXPORT_FORMAT,
                "written_by": f"rngcert {__version__}",
                "written_utc": _now().isoformat(timespec="seconds"),
                "store": str(self.path),
                "store_schema_version": self.schema_version,
                "partitioning": ["table_id", "day"],
                "spins": n,
                "rejects": len(rej_rows),
                "conflicts": len(conf_rows),
                "tables": [{"table_id": t, "equipment": known[t]["equipment"], "wheel": known[t]["wheel"], "spins": known[t]["spins"], "void": known[t]["void"]} for t in chosen],
                "sources": len(srcs),
                "per_source": [
                    {"sha256": r["sha256"], "path": r["path"], "spins": int(per_source.get(r["source_id"], 0)),
                     "rejects": n_rej_of.get(r["source_id"], 0), "conflicts": n_conf_of.get(r["source_id"], 0)}
                    for r in srcs
                ],
                "files": files,
                "read_with": "duckdb: SELECT * FROM read_parquet('DIR/*/*/*.parquet', hive_partitioning = true); "
                "spark: spark.read.parquet('DIR'); dask: dask.dataframe.read_parquet('DIR')",
            }
            (meta / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
            if folder.exists():
                folder.rmdir()
            os.replace(tmp, folder)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            # the export's own disk: an OSError, or DuckDB's Parquet writer's IOException (which the
            # store's guard would take for the store's disk)
            if "no space left" in str(exc).lower() or (isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)):
                raise StorageError(f"export to {folder} failed, nothing was written: the disk holding {folder.parent} is full ({exc}); "
                                   "free space there (or export elsewhere) and run the command again") from exc
            if isinstance(exc, OSError):
                err = storage_error(folder, exc)
                if err is not None:
                    raise StorageError(f"export to {folder} failed, nothing was written: {err}") from exc
            raise
        return manifest

    @_guarded
    def ingest_parquet(self, folder: str | Path) -> list[IngestResult]:
        """Read an :meth:`export_parquet` folder back into this store, one source at a time.

        Each original source (a log file's bytes, by SHA-256) is one transaction with the rules of
        :meth:`ingest`: a source already in this store adds nothing; spins whose (table, spin_id)
        is stored already are duplicates or conflicts; the spin order (``seq``), timestamps,
        dealers, provenance (file, SHA-256, line) and rejected rows are kept.

        Parameters
        ----------
        folder : path
            A folder written by :meth:`export_parquet`.

        Returns
        -------
        list of IngestResult
            One per source of the export, in the order they were first ingested.

        Raises
        ------
        InputError
            Not an export folder, an export format newer than this rngcert, a table stored with
            another wheel; a file of the manifest missing or differing from its SHA-256, a data
            file it does not list, or spins per source or table that differ from it (checked
            before anything is stored).
        StorageError
            Full disk or damaged store (the source's transaction is rolled back).
        """
        import duckdb

        from rngcert.collect.spinlog import RejectedRow
        from rngcert.equipment.wheel import load_wheel

        if self.read_only:
            raise InputError(f"store {self.path} is open read-only")
        folder = Path(folder)
        mpath = folder / "_rngcert" / "manifest.json"
        try:
            manifest = json.loads(mpath.read_text(encoding="utf-8"))
            fmt_version = int(manifest.get("rngcert_export", 0))
        except (OSError, ValueError, AttributeError) as exc:
            raise InputError(f"{folder}: not an rngcert export folder ({mpath}: {exc})") from None
        if fmt_version > EXPORT_FORMAT or fmt_version < 1:
            raise InputError(f"{mpath}: export format {fmt_version} is not one this rngcert {__version__} reads (1..{EXPORT_FORMAT})")
        equipment_of = {t["table_id"]: t["equipment"] for t in manifest.get("tables", [])}
        meta = folder / "_rngcert"

        def bad(what: str):
            return InputError(f"{folder}: damaged or incomplete export, nothing was ingested: {what}")

        # 1. every file the manifest lists is there with its SHA-256 and rows; no data file it does not list
        listed = manifest.get("files")
        if fmt_version >= 2:
            if not isinstance(listed, list):
                raise bad(f"{mpath} lists no files")
            missing, changed = [], []
            for f in listed:
                p = folder / f["path"]
                if not p.is_file():
                    missing.append(f"{p} ({f.get('rows')} row(s))")
                elif _file_sha256(p) != f["sha256"]:
                    changed.append(str(p))
            if missing:
                raise bad(f"{len(missing)} file(s) of the manifest are missing: {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}")
            if changed:
                raise bad(f"{len(changed)} file(s) differ from their SHA-256 in the manifest: {', '.join(changed[:10])}{' …' if len(changed) > 10 else ''}")
            data_files = [folder / f["path"] for f in listed if f["path"].endswith(".parquet") and not f["path"].startswith("_rngcert/")]
            extra = sorted(
                str(p) for p in folder.rglob("*.parquet")
                if not p.relative_to(folder).as_posix().startswith("_rngcert/") and p.relative_to(folder).as_posix() not in {f["path"] for f in listed}
            )
            if extra:
                raise bad(f"{len(extra)} data file(s) not in the manifest: {', '.join(extra[:10])}")
        else:  # format 1: no checksums; the counts below are still checked
            data_files = sorted(p for p in folder.rglob("*.parquet") if not p.relative_to(folder).as_posix().startswith("_rngcert/"))

        def jsonl(name: str, need: bool) -> list[dict]:
            p = meta / name
            if not p.is_file():
                if need:
                    raise bad(f"{p} is missing")
                return []
            try:
                return [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
            except ValueError as exc:
                raise bad(f"{p}: {exc}") from None

        sources = jsonl("sources.jsonl", True)
        rejects = jsonl("rejects.jsonl", False)
        conflicts = jsonl("conflicts.jsonl", fmt_version >= 2)
        for name, got, key in (("sources.jsonl", sources, "sources"), ("rejects.jsonl", rejects, "rejects"), ("conflicts.jsonl", conflicts, "conflicts")):
            if key in manifest and len(got) != int(manifest[key]):
                raise bad(f"{meta / name} has {len(got)} row(s), the manifest lists {manifest[key]}")
        rejects_by_sha: dict[str, list[dict]] = {}
        for r in rejects:
            rejects_by_sha.setdefault(r.get("source_sha256"), []).append(r)
        conflicts_by_sha: dict[str, list[dict]] = {}
        for r in conflicts:
            conflicts_by_sha.setdefault(r.get("source_sha256"), []).append(r)
        shas = {s_["sha256"] for s_ in sources}
        orphans = sorted({str(k) for k in list(rejects_by_sha) + list(conflicts_by_sha) if k not in shas})
        if orphans:
            raise bad(f"rejected rows or conflicts of source(s) not in {meta / 'sources.jsonl'}: {', '.join(orphans[:5])}")
        keyless = [f"table {c.get('table_id')} spin {c.get('spin_id')}" for c in conflicts if c.get("spin_no") is None or c.get("spin_label") is None]
        if keyless:
            raise bad(f"{meta / 'conflicts.jsonl'}: conflict(s) without the stored spin's key: {', '.join(keyless[:5])}")
        out: list[IngestResult] = []
        reader = duckdb.connect()  # an in-memory connection reads the Parquet files
        try:
            # 2. what the data files hold agrees with the manifest: spins per source and per table
            if data_files:
                flist = ", ".join("'" + str(p).replace("'", "''") + "'" for p in data_files)
                reader.execute(f"CREATE VIEW exported AS SELECT * FROM read_parquet([{flist}], hive_partitioning = true, hive_types_autocast = false)").fetchall()
            else:
                reader.execute(
                    """CREATE VIEW exported AS SELECT NULL::VARCHAR AS table_id, NULL::BIGINT AS spin_no, NULL::VARCHAR AS spin_label,
                              NULL::BIGINT AS seq, NULL::TIMESTAMP AS ts, NULL::SMALLINT AS pos, NULL::SMALLINT AS sym, NULL::VARCHAR AS dealer,
                              NULL::TINYINT AS direction, NULL::SMALLINT AS release, NULL::BOOLEAN AS void, NULL::INTEGER AS line,
                              NULL::VARCHAR AS equipment, NULL::VARCHAR AS source_sha256 WHERE false"""
                ).fetchall()
            got_src = dict(reader.execute("SELECT source_sha256, count(*) FROM exported GROUP BY 1").fetchall())
            got_tab = {r[0]: (r[1], r[2]) for r in reader.execute("SELECT table_id, count(*) FILTER (WHERE NOT void), count(*) FILTER (WHERE void) FROM exported GROUP BY 1").fetchall()}
            unknown = sorted(str(k) for k in got_src if k not in shas)
            if unknown:
                raise bad(f"spins of source(s) not in {meta / 'sources.jsonl'}: {', '.join(unknown[:5])}")
            short = []
            if "spins" in manifest and sum(got_src.values()) != int(manifest["spins"]):
                short.append(f"{sum(got_src.values())} spins read, the manifest lists {manifest['spins']}")
            for t in manifest.get("tables", []):
                want = (int(t.get("spins") or 0), int(t.get("void") or 0))
                if got_tab.get(t["table_id"], (0, 0)) != want:
                    short.append(f"table {t['table_id']}: {sum(got_tab.get(t['table_id'], (0, 0)))} spins read, the manifest lists {sum(want)}")
            for ps in manifest.get("per_source", []):
                if got_src.get(ps["sha256"], 0) != int(ps["spins"]):
                    short.append(f"source {ps['path']} (sha256 {ps['sha256'][:16]}…): {got_src.get(ps['sha256'], 0)} spins read, the manifest lists {ps['spins']}")
            if short:
                raise bad("; ".join(short[:10]) + (" …" if len(short) > 10 else ""))
            # 3. store, source by source
            for src in sources:
                sha = src["sha256"]
                if self.known_source(sha):
                    out.append(IngestResult(src["path"], sha, "already ingested", note=f"source of export {folder}"))
                    continue
                tbl = reader.sql(
                    """SELECT table_id, spin_no, spin_label, CAST(row_number() OVER (ORDER BY seq) - 1 AS BIGINT) AS ord, ts,
                              CAST(pos AS SMALLINT) AS pos, CAST(sym AS SMALLINT) AS sym, dealer, CAST(direction AS TINYINT) AS direction,
                              CAST(release AS SMALLINT) AS release, void, CAST(line AS INTEGER) AS line, equipment
                       FROM exported WHERE source_sha256 = $sha ORDER BY seq""",
                    params={"sha": sha},
                )
                tbl = tbl.to_arrow_table() if hasattr(tbl, "to_arrow_table") else tbl.arrow()
                eqs = set(tbl.column("equipment").to_pylist()) or {src.get("equipment")}
                if len(eqs) != 1:
                    raise InputError(f"{folder}: source {src['path']} holds spins of several wheels ({sorted(map(str, eqs))}); cannot ingest it as one")
                (equipment,) = eqs
                wheel = load_wheel(equipment)
                incoming = tbl.drop_columns(["equipment"])
                confs = conflicts_by_sha.get(sha, [])
                if confs:
                    # a conflict is a row of this source that the store did not keep: it goes in again, after
                    # the source's spins, and the rules of ingest record it as the same conflict again
                    k = len(confs)
                    cols = {
                        "table_id": [c["table_id"] for c in confs], "spin_no": [c["spin_no"] for c in confs],
                        "spin_label": [c["spin_label"] for c in confs], "ord": list(range(len(incoming), len(incoming) + k)),
                        "ts": [None] * k, "pos": [c["new_pos"] for c in confs], "sym": [c["new_sym"] for c in confs], "dealer": [None] * k,
                        "direction": [None] * k, "release": [None] * k, "void": [c["new_void"] for c in confs], "line": [c["line"] for c in confs],
                    }
                    incoming = pa.concat_tables([incoming, pa.table({f.name: pa.array(cols[f.name], f.type) for f in incoming.schema}, schema=incoming.schema)])
                rej = [RejectedRow(r["file"], r["line"], r["column"], r["reason"], r["text"]) for r in rejects_by_sha.get(sha, [])]
                rej_tbl = pa.table(
                    {
                        "file": pa.array([r.file for r in rej], type=pa.string()), "line": pa.array([r.line for r in rej], type=pa.int32()),
                        "column": pa.array([r.column for r in rej], type=pa.string()), "reason": pa.array([r.reason for r in rej], type=pa.string()),
                        "text": pa.array([r.text for r in rej], type=pa.string()),
                    }
                )
                used = sorted(set(incoming.column("table_id").to_pylist()))
                for t in used:
                    if t in equipment_of and equipment_of[t] != equipment:
                        raise InputError(f"{folder}: table {t!r} has wheel {equipment_of[t]!r} in the manifest but {equipment!r} in its spins")
                prep = {
                    "path": Path(src["path"]), "sha": sha, "format": src.get("format"), "size": src.get("size_bytes"),
                    "accepted": int(src.get("accepted") or 0), "void": int(src.get("void") or 0),
                    "n": int(src.get("rows") or len(incoming)) - sum(1 for r in rej if r.column == "*"), "m": len(incoming),
                    "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej, "used_tables": used, "rule": src.get("spin_id_rule") or "column",
                    "default_table": src.get("default_table"), "timing": {},
                }
                res = self._store_prepared(prep, wheel, str(equipment))
                res.note = f"from export {folder}"
                if res.duplicates != int(src.get("duplicates") or 0):  # repeats of stored spins are counted, not kept
                    res.note += f"; the original ingest counted {src.get('duplicates')} row(s) already stored (not kept by a store, so not exported)"
                out.append(res)
        finally:
            reader.close()
        return out

def ingest_files(
    db: str | Path,
    paths: Sequence[str | Path],
    equipment: str = "european",
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    table: str | None = None,
    wait: float = DEFAULT_WAIT,
    on_wait=None,
    on_result=None,
) -> list[IngestResult]:
    """Ingest spin logs (or ``rngcert export`` folders) into the store at ``db``, holding the
    write lock only while each file's rows are stored.

    Each file is read, hashed and parsed with no connection to the store open; a read-only
    session checks whether its bytes are already stored; then one short write session stores it
    in one transaction and closes (see "Many readers, one writer" in the module docstring), so
    audits, ``rejects`` and watches of the same store run between files instead of failing.

    Parameters
    ----------
    db : path
        The store file (created when missing).
    paths : sequence of path
        Spin logs, in time order; a folder must be an ``rngcert export`` (its ``_rngcert/``
        manifest), read back with :meth:`Store.ingest_parquet`.
    equipment, columns, fmt, table
        As in :meth:`Store.ingest` (ignored for export folders: they carry their wheels).
    wait : float
        Seconds to wait for a store held by another process at each open (default
        :data:`DEFAULT_WAIT`).
    on_wait : callable, optional
        Told DuckDB's lock message once per wait (see :class:`Store`).
    on_result : callable, optional
        Called with each :class:`IngestResult` as soon as its file is committed.

    Returns
    -------
    list of IngestResult
        One per file (per source of an export folder), in order.

    Raises
    ------
    InputError
        Missing or unreadable file; a table already stored with another wheel.
    StorageError
        Full disk, damaged store, or the store still locked after ``wait`` seconds; the files
        committed before the failure stay committed.
    """
    from rngcert.equipment.wheel import load_wheel

    paths = [Path(p) for p in paths]
    for p in paths:
        if not (p.is_file() or p.is_fifo() or (p.is_dir() and (p / "_rngcert" / "manifest.json").is_file())):
            if p.is_dir():
                raise InputError(f"{p}: a folder is ingested only when it is an `rngcert export --parquet` folder (no {p / '_rngcert' / 'manifest.json'})")
            raise InputError(f"{p}: no such file")
    with Store(db, wait=wait, on_wait=on_wait):  # creates the store (and checks its schema) once
        pass
    wheel = load_wheel(equipment)
    out: list[IngestResult] = []

    def emit(results):
        for r in results:
            out.append(r)
            if on_result is not None:
                on_result(r)

    for p in paths:
        if p.is_dir():
            with Store(db, wait=wait, on_wait=on_wait) as st:
                emit(st.ingest_parquet(p))
            continue

        def known(sha: str):
            with Store(db, read_only=True, wait=wait, on_wait=on_wait) as ro:
                return ro.known_source(sha)

        prep = prepare_file(p, wheel, str(equipment), columns, fmt, table, known)
        if isinstance(prep, IngestResult):
            emit([prep])
            continue
        try:
            with Store(db, wait=wait, on_wait=on_wait) as st:
                res = st._store_prepared(prep, wheel, str(equipment))
        finally:
            discard_prepared(prep)
        del prep
        emit([res])
    return out


def _rejects_table(rejected) -> pa.Table:
    """The rejected rows of one file as the store's ``rejects`` columns (file, line, column, reason, text)."""
    return pa.table(
        {
            "file": pa.array([r.file for r in rejected], type=pa.string()),
            "line": pa.array([r.line for r in rejected], type=pa.int32()),
            "column": pa.array([r.column for r in rejected], type=pa.string()),
            "reason": pa.array([r.reason for r in rejected], type=pa.string()),
            "text": pa.array([r.text for r in rejected], type=pa.string()),
        }
    )


def prepare_file(path: Path, wheel, equipment: str, columns, fmt, table, known) -> "IngestResult | dict":
    """Read, hash and parse one spin log into the Arrow tables to store (no store access).

    ``known(sha256)`` returns (equipment, default table) of an earlier ingest of the same bytes,
    or None; a known file is not parsed. Returns an :class:`IngestResult` when there is nothing
    to store, else the prepared file for :meth:`Store._store_prepared`.
    """
    from rngcert.collect.csvstream import is_stream, read_stream, sha256_file
    from rngcert.collect.spinlog import outcome_key, read_spin_rows, repeat_status, sha256_of

    clock = [time.perf_counter()]
    timing: dict[str, float] = {}

    def lap(what):
        now_ = time.perf_counter()
        timing[what] = timing.get(what, 0.0) + now_ - clock[0]
        clock[0] = now_

    stream = is_stream(path)  # a pipe or FIFO (<(…)) is read into memory; a file is hashed and parsed as a stream
    try:
        data = read_stream(path) if stream else None
        sha = sha256_of(data) if stream else sha256_file(path)[0]
    except OSError as exc:  # the log, not the store
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    lap("read+sha256")
    first = known(sha)
    if first:
        eq0, tab0 = first
        differs = []
        if str(eq0) != str(equipment):
            differs.append(f"equipment {eq0!r}, now {equipment!r}")
        if table is not None and table != tab0:
            differs.append(f"table {tab0!r}, now {table!r}")
        note = (
            "these bytes were first ingested with " + "; ".join(differs) + ": the stored rows are kept, the options of this call are not applied"
            if differs
            else "options of this call (e.g. --column) are not applied to bytes already stored"
        )
        return IngestResult(str(path), sha, "already ingested", note=note)
    if not stream:
        try:
            prep = _prepare_streamed(path, wheel, columns, fmt, table, sha, timing)
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
    n = rows.n
    keep = rows.accepted | rows.void  # rejected rows go to `rejects` only
    if stream and table is None and rows.table is None:
        raise InputError(f"{path} is a pipe or FIFO and the log has no table column: name its table with --table")
    default_table = table if table is not None else path.stem
    if rows.table is not None:
        tab = rows.table
        tab = pc.if_else(pc.equal(tab, ""), pa.scalar("(no table)"), tab)
    else:
        tab = pa.array(np.full(n, default_table, dtype=object), type=pa.string()) if n else pa.array([], type=pa.string())
    tab_enc = pc.dictionary_encode(tab)
    tab_codes = tab_enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    tab_labels = tab_enc.dictionary.to_pylist()
    if rows.spin_id is not None:
        sid = rows.spin_id.combine_chunks() if isinstance(rows.spin_id, pa.ChunkedArray) else rows.spin_id
        canon = pc.fill_null(pc.match_substring_regex(sid, r"^(0|-?[1-9][0-9]{0,17})$"), False)
        spin_no = pc.cast(pc.if_else(canon, sid, pa.scalar("0")), pa.int64())
        spin_label = pc.if_else(canon, pa.scalar(""), sid)
        rule = "column"
    else:
        # k-th row of its table in this file → spin_id k (1-based), vectorised cumcount
        order = np.argsort(tab_codes, kind="stable")
        sorted_codes = tab_codes[order]
        starts = np.searchsorted(sorted_codes, sorted_codes, side="left")
        ordinal = np.empty(n, dtype=np.int64)
        ordinal[order] = np.arange(n) - starts + 1
        spin_no = pa.array(ordinal)
        spin_label = pa.array(np.full(n, "", dtype=object), type=pa.string()) if n else pa.array([], type=pa.string())
        rule = "position"
    # repeated spin ids inside the file: the same rule as certify (spinlog.repeat_status): the
    # first row of a (table, spin_id) is the candidate, later ones are duplicates or conflicts
    lab_codes = pc.dictionary_encode(spin_label).indices.to_numpy(zero_copy_only=False).astype(np.int64) if n else np.zeros(0, np.int64)
    status, _ = repeat_status(
        [tab_codes, np.asarray(spin_no.to_numpy(zero_copy_only=False), dtype=np.int64), lab_codes],
        outcome_key(rows.pos, rows.sym, rows.void), keep,
    )
    m = int(keep.sum())
    sel = pa.array(keep)

    def kept(a):  # rows to store (all of them, usually: no copy then)
        return a if m == n else a.filter(sel)

    pos = np.where(rows.pos >= 0, rows.pos, -1)
    sym = np.where(rows.sym >= 0, rows.sym, -1)
    ts = pa.nulls(m, pa.int64())
    if rows.timestamp is not None:
        tsv = rows.timestamp[keep]
        ts = pa.array(tsv, type=pa.int64(), mask=tsv == np.iinfo(np.int64).min)
    ts = ts.cast(pa.timestamp("us"))
    incoming = pa.table(
        {
            "table_id": kept(tab),
            "spin_no": kept(spin_no),
            "spin_label": kept(spin_label),
            "ord": pa.array(np.flatnonzero(keep).astype(np.int64)),
            "ts": ts,
            "pos": pa.array(pos[keep].astype(np.int16), mask=pos[keep] < 0),
            "sym": pa.array(sym[keep].astype(np.int16), mask=sym[keep] < 0),
            "dealer": kept(rows.dealer) if rows.dealer is not None else pa.nulls(m, pa.string()),
            "direction": pa.array(rows.direction[keep], mask=rows.direction[keep] < 0) if rows.direction is not None else pa.nulls(m, pa.int8()),
            "release": pa.array(rows.release[keep].astype(np.int16), mask=rows.release[keep] < 0) if rows.release is not None else pa.nulls(m, pa.int16()),
            "void": pa.array(rows.void[keep]),
            "line": pa.array(rows.line[keep].astype(np.int32)),
            "rn": pa.array(np.where(status[keep] == 0, 1, 2).astype(np.int64)),  # 1: first row of its spin id in the file
        }
    )
    rej = rows.rejected
    rej_tbl = _rejects_table(rej)
    used_tables = sorted({tab_labels[c] for c in np.unique(tab_codes[keep])}) if keep.any() else []
    lap("arrow")
    return {
        "path": path, "sha": sha, "format": rows.format, "size": rows.size, "accepted": int(rows.accepted.sum()), "void": int(rows.void.sum()),
        "n": n, "m": m, "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej,
        "used_tables": used_tables, "rule": rule, "default_table": default_table, "timing": timing,
    }



def discard_prepared(prep) -> None:
    """Remove the spool file of a prepared log (:func:`prepare_file`), if it has one."""
    if isinstance(prep, dict) and isinstance(prep.get("incoming"), (str, Path)):
        shutil.rmtree(Path(prep["incoming"]).parent, ignore_errors=True)


def _sql_path(p) -> str:
    return str(p).replace("'", "''")


class _Spool:
    """The rows of a streamed CSV log, batch by batch, as the Arrow rows :meth:`Store._store_prepared`
    inserts, written to a Parquet file (memory: one batch), with what the ingest rules need
    proven on the way: the file-level checks of :func:`rngcert.collect.spinlog._file_checks`
    change nothing (no empty ``table`` value; ``spin_id`` all whole numbers or none, none
    empty), and no (table, spin id) repeats (canonical ids increasing within each table, or ids
    by position). When one of these fails, :func:`prepare_file` reads the file on the exact
    path instead (``failed`` says why)."""

    #: Rows kept in memory as Arrow batches before they are spilled to the Parquet file: a log of up
    #: to about a million spins (about 40 MB of Arrow rows) is inserted from memory, without the
    #: Parquet write and read (0.5 s of CPU for a million spins); a larger one keeps memory bounded.
    IN_MEMORY_ROWS = 1_200_000

    def __init__(self, folder: Path, default_table: str):
        self.path = folder / "incoming.parquet"
        self.default_table = default_table
        self.writer = None
        self._reset()

    def _reset(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.writer = None
        self.held: list = []  # batches not spilled yet
        self.held_rows = 0
        self.spilled = False
        self.n = self.m = self.accepted = self.void = 0
        self.failed: str | None = None
        self.no_repeats = True
        self.last: dict[str, int] = {}  # per table: last canonical spin id of a stored row, or the ordinal
        self.n_valid = self.n_text = 0
        self.has_ids: bool | None = None
        self.tables: set[str] = set()

    def reserve(self, rows: int) -> None:
        pass

    def rollback(self) -> None:
        self._reset()

    def add(self, pt: dict) -> None:
        import pyarrow.parquet as pq

        if self.failed:
            return
        n = pt["pos"].size
        keep = pt["accepted_mask"] | pt["void_mask"]
        self.has_ids = pt["spin_id"] is not None
        if pt["table"] is not None:
            tab = pt["table"]
            if n and pc.any(pc.equal(tab, "")).as_py():
                self.failed = "empty table values"
                return
        else:
            tab = pa.array(np.full(n, self.default_table, dtype=object), type=pa.string()) if n else pa.array([], type=pa.string())
        enc = pc.dictionary_encode(tab)
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        labels = enc.dictionary.to_pylist()
        if self.has_ids:
            sid = pt["spin_id"]
            if n and pc.any(pc.equal(sid, "")).as_py():
                self.failed = "empty spin ids"
                return
            canon = pc.fill_null(pc.match_substring_regex(sid, r"^(0|-?[1-9][0-9]{0,17})$"), False)
            all_canon = bool(pc.all(canon).as_py()) if n else True
            # whole-number ids as spinlog._id_value reads them (ASCII digits, at most 18), counted in
            # one vectorised pass over the rows (not one Python call per distinct id); when every id
            # is canonical (the usual case) those are the ids without a minus sign
            if all_canon:
                valid = n - int(pc.sum(pc.cast(pc.starts_with(sid, "-"), pa.int64())).as_py() or 0)
                spin_no = pc.cast(sid, pa.int64())
                spin_label = pa.repeat(pa.scalar("", pa.string()), n)
            else:
                valid = int(pc.sum(pc.cast(pc.fill_null(pc.match_substring_regex(sid, r"^[0-9]{1,18}$"), False), pa.int64())).as_py() or 0)
                spin_no = pc.cast(pc.if_else(canon, sid, pa.scalar("0")), pa.int64())
                spin_label = pc.if_else(canon, pa.scalar(""), sid)
            self.n_valid += valid
            self.n_text += n - valid
            if self.no_repeats:
                if not all_canon:
                    self.no_repeats = False  # text ids: DuckDB finds the repeats
                else:
                    no = spin_no.to_numpy(zero_copy_only=False)
                    for j, lab in enumerate(labels):
                        r = np.flatnonzero((codes == j) & keep) if len(labels) > 1 else np.flatnonzero(keep)
                        if r.size == 0:
                            continue
                        x = no[r]
                        if x[0] <= self.last.get(lab, np.iinfo(np.int64).min) or (x.size > 1 and np.any(x[1:] <= x[:-1])):
                            self.no_repeats = False
                            break
                        self.last[lab] = int(x[-1])
        else:
            # k-th row of its table in this file -> spin_id k (1-based, counting every row), carried across batches
            ordinal = np.empty(n, dtype=np.int64)
            for j, lab in enumerate(labels):
                r = np.flatnonzero(codes == j) if len(labels) > 1 else np.arange(n)
                base = self.last.get(lab, 0)
                ordinal[r] = base + 1 + np.arange(r.size)
                self.last[lab] = base + r.size
            spin_no = pa.array(ordinal)
            spin_label = pa.array(np.full(n, "", dtype=object), type=pa.string()) if n else pa.array([], type=pa.string())
        m = int(keep.sum())
        sel = pa.array(keep)

        def kept(a):
            return a if m == n else a.filter(sel)

        pos, sym = pt["pos"][keep], pt["sym"][keep]
        ts = pa.nulls(m, pa.int64())
        if pt["ts"] is not None:
            tsv = pt["ts"][keep]
            ts = pa.array(tsv, type=pa.int64(), mask=tsv == np.iinfo(np.int64).min)
        d = pt["direction"][keep] if pt["direction"] is not None else None
        rl = pt["release"][keep] if pt["release"] is not None else None
        batch = pa.table(
            {
                "table_id": kept(tab),
                "spin_no": kept(spin_no),
                "spin_label": kept(spin_label),
                "ord": pa.array(self.n + np.flatnonzero(keep).astype(np.int64)),
                "ts": ts.cast(pa.timestamp("us")),
                "pos": pa.array(pos.astype(np.int16), mask=pos < 0),
                "sym": pa.array(sym.astype(np.int16), mask=sym < 0),
                "dealer": kept(pt["dealer"]) if pt["dealer"] is not None else pa.nulls(m, pa.string()),
                "direction": pa.array(d, mask=d < 0) if d is not None else pa.nulls(m, pa.int8()),
                "release": pa.array(rl.astype(np.int16), mask=rl < 0) if rl is not None else pa.nulls(m, pa.int16()),
                "void": pa.array(pt["void_mask"][keep]),
                "line": pa.array(np.asarray(pt["lines"])[keep].astype(np.int32)),
            }
        )
        if self.writer is None and self.held_rows + m <= self.IN_MEMORY_ROWS:
            self.held.append(batch)
            self.held_rows += m
        else:
            if self.writer is None:
                self.writer = pq.ParquetWriter(self.path, batch.schema, compression="zstd")
                for b in self.held:  # spill what was held, in order
                    self.writer.write_table(b)
                self.held, self.held_rows = [], 0
            self.writer.write_table(batch)
        self.tables.update(labels[c] for c in np.unique(codes[keep]).tolist())
        self.n += n
        self.m += m
        self.accepted += int(pt["accepted_mask"].sum())
        self.void += int(pt["void_mask"].sum())

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
            self.spilled = True

    @property
    def incoming(self):
        """The rows to insert: the Parquet file's path once spilled, else one Arrow table."""
        if self.spilled:
            return self.path
        return pa.concat_tables(self.held) if self.held else None


def _prepare_streamed(path: Path, wheel, columns, fmt, table, sha: str, timing: dict):
    """:func:`prepare_file` for a regular CSV file in bounded memory: the file is parsed batch by
    batch into a :class:`_Spool` (a Parquet file in a temporary folder) that
    :meth:`Store._store_prepared` inserts from. Returns None when the file is not CSV or not in
    the shape the spool can prove (the exact, in-memory path then reads it)."""
    import tempfile

    from rngcert.collect import csvstream
    from rngcert.collect.spinlog import _capture_format, _options_iv, _read_csv_streaming, detect_format

    columns = _options_iv(_capture_format(fmt), columns)
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    csvstream.sniff_content(head, str(path))
    if (fmt if fmt != "auto" else detect_format(path, head)) != "csv":
        return None
    folder = Path(tempfile.mkdtemp(prefix="rngcert-ingest-"))
    spool = _Spool(folder, table if table is not None else path.stem)
    try:
        part = _read_csv_streaming(path, wheel, columns, text_codes=False, consume=spool)
        spool.close()
        failed = spool.failed
        if not failed and spool.has_ids and spool.n_valid and spool.n_text:
            failed = "spin ids partly whole numbers, partly text"
        if failed or spool.m == 0:
            shutil.rmtree(folder, ignore_errors=True)
            return None
    except BaseException:
        spool.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if part["sha256"] != sha:
        shutil.rmtree(folder, ignore_errors=True)
        raise InputError(f"{path}: the file changed while it was read (SHA-256 {sha[:16]}… then {part['sha256'][:16]}…); ingest it again when it is complete")
    rej = part["rejected"]
    rej_tbl = _rejects_table(rej)
    incoming = spool.incoming
    if not isinstance(incoming, Path):  # held in memory: the folder was not used
        shutil.rmtree(folder, ignore_errors=True)
    return {
        "path": path, "sha": sha, "format": "csv", "size": part["size"], "accepted": spool.accepted, "void": spool.void,
        "n": spool.n, "m": spool.m, "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej, "repeated": 0 if spool.no_repeats else None,
        "used_tables": sorted(spool.tables), "rule": "column" if spool.has_ids else "position",
        "default_table": table if table is not None else path.stem, "timing": timing,
    }


def _file_sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _jsonable_row(r: dict) -> dict:
    return {k: (v.isoformat() if isinstance(v, (_dt.datetime, _dt.date)) else v) for k, v in r.items()}


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
    if pc.count_distinct(tab).as_py() == 1 and pc.all(pc.equal(labels, "")).as_py():
        no = incoming.column("spin_no").to_numpy()
        if np.all(np.diff(no) > 0):
            return 0
    return int(con.execute("SELECT count(*) - count(DISTINCT (table_id, spin_no, spin_label)) FROM incoming_arrow").fetchall()[0][0])


#: Rows per record batch read back by :meth:`Store.spins`.
READ_BATCH = 1 << 20


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


def _parse_when(value, what: str) -> _dt.datetime:
    """ISO 8601 date or date-time → naive UTC datetime."""
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
