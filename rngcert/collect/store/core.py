"""The :class:`Store` (its parts combined) and :func:`ingest_files`, which opens it once per file."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from rngcert.collect.store.export import ExportMixin
from rngcert.collect.store.ingest import IngestMixin, IngestResult, check_table_name, discard_prepared, prepare_file
from rngcert.collect.store.queries import QueriesMixin
from rngcert.collect.store.records import RecordsMixin
from rngcert.collect.store.schema import DEFAULT_WAIT, StoreBase
from rngcert.errors import InputError


class Store(IngestMixin, QueriesMixin, RecordsMixin, ExportMixin, StoreBase):
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

    # the parts, by concern: schema.StoreBase (connection, lifecycle, schema and migrations),
    # ingest.IngestMixin, queries.QueriesMixin, records.RecordsMixin, export.ExportMixin


def _ingest_paths(paths: Sequence[str | Path]) -> list[Path]:
    """The paths to ingest, each checked before the store is opened: a file, a FIFO, or an ``rngcert export`` folder."""
    paths = [Path(p) for p in paths]
    for p in paths:
        if not (p.is_file() or p.is_fifo() or (p.is_dir() and (p / "_rngcert" / "manifest.json").is_file())):
            if p.is_dir():
                raise InputError(f"{p}: a folder is ingested only when it is an `rngcert export --parquet` folder (no {p / '_rngcert' / 'manifest.json'})")
            raise InputError(f"{p}: no such file")
    return paths


def _stored_equipment(equipment: str, wheel) -> str:
    """How the store names a table's wheel: a packaged id as given; a lab's wheel file by its absolute
    path, so that an audit run from another folder finds it (a relative 'eq/w.toml' stopped ``audit``
    elsewhere with "equipment file 'eq/w.toml' does not exist")."""
    from rngcert.equipment.wheel import packaged_wheels

    if wheel.id in packaged_wheels() and Path(str(equipment)).suffix != ".toml":
        return equipment
    return str(Path(str(equipment)).resolve())


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
    in one transaction and closes (see "Many readers, one writer" in :mod:`rngcert.collect.store`), so
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

    paths = _ingest_paths(paths)
    check_table_name(table)  # before the store is created
    with Store(db, wait=wait, on_wait=on_wait):  # creates the store (and checks its schema) once
        pass
    wheel = load_wheel(equipment)
    equipment = _stored_equipment(equipment, wheel)
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
