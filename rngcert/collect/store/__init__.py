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
  that grows by appending keeps its numbers. A table holds one such log (its grown versions start
  with its bytes, whatever their name): another positional log, or a log with spin ids, in a table of positional
  spins (or the reverse) is refused before anything is stored, since its ids would collide. Logs without a ``table`` column go to the table
  given by ``table=`` (CLI ``--table``), by default the file's name without extension.
* **Idempotent.** A file whose SHA-256 is already in ``sources`` adds nothing. Otherwise only
  rows whose (table, spin_id) is new are inserted: a grown log adds exactly its new rows; rows
  already stored with the same result are counted as duplicates; rows stored with a *different*
  result (or void flag) are conflicts, recorded in ``conflicts`` and reported, never overwritten.
  Within one file, the first row of a repeated spin_id is stored and the later ones are duplicates
  or conflicts in the same way.
* **A conflict keeps neither result** (the rule of ``certify``, case c07): a spin id with a row in
  ``conflicts`` is left out of what :meth:`Store.spins` reads back (audits, watch), both rows are
  rejected rows of the audit (file, line, column ``result``, reason) and of ``rngcert rejects``,
  and the audit's notes say how many spin ids were left out. Nothing is deleted: the stored row
  and the conflicting one stay in the store with their provenance.
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

Modules, by concern: :mod:`.schema` (schema and migrations, the connection, storage errors),
:mod:`.ingest` (the rules of ingest) with :mod:`.spool` (a large CSV log in bounded memory),
:mod:`.queries`, :mod:`.records` (audits and alarms), :mod:`.export` (Parquet export and import),
:mod:`.core` (:class:`Store`, which combines them, and :func:`ingest_files`).
"""

from rngcert.collect.store.core import Store, ingest_files
from rngcert.collect.store.export import EXPORT_FORMAT
from rngcert.collect.store.ingest import IngestResult, discard_prepared, prepare_file
from rngcert.collect.store.queries import StoredSpins, col_of
from rngcert.collect.store.schema import (
    DEFAULT_DB,
    DEFAULT_WAIT,
    SCHEMA_VERSION,
    StoreBusyError,
    StoreVersionError,
    storage_error,
)
from rngcert.errors import StorageError

__all__ = [
    "DEFAULT_DB", "DEFAULT_WAIT", "EXPORT_FORMAT", "SCHEMA_VERSION", "IngestResult", "StorageError", "Store",
    "StoreBusyError", "StoreVersionError", "StoredSpins", "col_of", "discard_prepared", "ingest_files",
    "prepare_file", "storage_error",
]
