"""The store's file: its schema and migrations, the connection (waiting for a lock), and how a
failure of the file becomes a :class:`StorageError` (see :mod:`rngcert.collect.store`)."""

from __future__ import annotations

import datetime as _dt
import errno
import functools
import time
from pathlib import Path

from rngcert import __version__
from rngcert.errors import InputError, StorageError

#: Version of the store's schema. Bump when the tables change; older rngcert versions refuse a
#: store with a higher version (they would misread it), newer ones migrate older stores.
SCHEMA_VERSION = 2  # 2: audits.report_sha256 (the hash of the audit's report.json)

DEFAULT_DB = Path("data") / "rngcert.duckdb"

#: Key prefix (then the source's SHA-256) in ``meta`` of a source stored in part: from an ``export --table`` folder that
#: held its spins of some tables only; the value names those tables (``Store.known_source`` refuses the rest).
PARTIAL_SOURCE_KEY = "partial_source "

#: Seconds a command waits for a store locked by another process before it gives up (exit 3).
DEFAULT_WAIT = 120.0

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
    elif ("corrupt" in low or "not a valid duckdb" in low or "checksum" in low or "could not read enough bytes" in low  # (cut short)
          or isinstance(exc, duckdb.SerializationException)):
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


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)



class StoreBase:
    """An open store file: connection, lifecycle, schema and migrations (the parts of
    :class:`~rngcert.collect.store.Store` every other part builds on)."""

    def __init__(self, path: str | Path = DEFAULT_DB, *, read_only: bool = False, wait: float = 0.0, on_wait=None):
        self.path = Path(path)
        self.con = None
        if read_only and not self.path.is_file():
            if self.path.is_dir():
                raise InputError(f"store {self.path} is a folder, not a store file (an `rngcert export` folder is read back with: rngcert ingest {self.path} --db NEW.duckdb)")
            raise InputError(f"store {self.path} does not exist; create it with: rngcert ingest LOG --db {self.path}")
        if not read_only and self.path.is_file() and not self.path.stat().st_mode & 0o222:
            # the permission bits are the archive mark (as audit's --no-record check): respected even by root, whom the OS lets write
            raise StorageError(f"store {self.path} is read-only (mode {self.path.stat().st_mode & 0o777:o}): it is not written; read it "
                               "(audit --no-record, rejects, export), or make it writable (chmod u+w) to change it")
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
    def __enter__(self) -> "StoreBase":
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
