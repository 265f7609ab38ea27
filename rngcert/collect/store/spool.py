"""The bounded-memory path of ingest: a regular CSV log parsed batch by batch into the Arrow rows
the store inserts (held in memory, or spilled to a Parquet file in a temporary folder)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

import rngcert.scratch as scratch
from rngcert.collect import _arrow
from rngcert.errors import InputError


def refuse_table_option(path: Path, table: str | None, has_column: bool) -> None:
    """``--table`` names the table of a log *without* a table column; on a log with one it would be ignored
    (the rows keep their own tables): an input error before anything of the file is stored."""
    if table is not None and has_column:
        raise InputError(f"{path}: --table {table!r} names the table of a log without a table column, and this log has a table "
                         "column (its rows keep their own tables): leave --table out, or rename the tables in the log")


def _rejects_table(rejected) -> pa.Table:
    """The rejected rows of one file as the store's ``rejects`` columns (file, line, column, reason, text)."""
    return pa.table(
        {
            "file": _arrow.texts([r.file for r in rejected]),  # (not pa.array: that imports pandas, 0.5 s)
            "line": _arrow.array(np.asarray([r.line for r in rejected], dtype=np.int32)),
            "column": _arrow.texts([r.column for r in rejected]),
            "reason": _arrow.texts([r.reason for r in rejected]),
            "text": _arrow.texts([r.text for r in rejected]),
        }
    )



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
        self.table_column = False  # the log has a table column (a --table then names nothing)
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
        if self.failed:
            return
        n = pt["pos"].size
        keep = pt["accepted_mask"] | pt["void_mask"]
        self.has_ids = pt["spin_id"] is not None
        coded = self._table_codes(pt, n)
        if coded is None:
            return
        tab, codes, labels = coded
        if self.has_ids:
            ids = self._given_ids(pt["spin_id"], n, codes, labels, keep)
            if ids is None:
                return
            spin_no, spin_label = ids
        else:
            spin_no, spin_label = self._ordinal_ids(n, codes, labels)
        m = int(keep.sum())
        self._put(self._arrow_batch(pt, keep, n, m, tab, spin_no, spin_label), m)
        self.tables.update(labels[c] for c in np.flatnonzero(np.bincount(codes[keep], minlength=len(labels))).tolist())
        self.n += n
        self.m += m
        self.accepted += int(pt["accepted_mask"].sum())
        self.void += int(pt["void_mask"].sum())

    def _table_codes(self, pt: dict, n: int):
        """(table values, their dictionary codes, the codes' labels) of a batch; None, with ``failed`` set, on an empty table value."""
        if pt["table"] is not None:
            tab = pt["table"]
            self.table_column = True
        else:
            tab = _arrow.repeat_text(self.default_table, n)
        enc = pc.dictionary_encode(tab)
        codes = _arrow.ints(enc.indices).astype(np.int64)
        labels = enc.dictionary.to_pylist()
        if n and "" in labels:  # (the distinct values: no second pass over the rows)
            self.failed = "empty table values"
            return None
        return tab, codes, labels

    def _given_ids(self, sid, n: int, codes: np.ndarray, labels: list, keep: np.ndarray):
        """(spin_no, spin_label) of a batch's spin ids, counting whole-number and text ids and watching for repeats per table;
        None, with ``failed`` set, on an empty id."""
        if n and pc.any(pc.equal(sid, _arrow.text_scalar(""))).as_py():
            self.failed = "empty spin ids"
            return None
        canonical = _canonical_ids(sid) if n else None
        all_canon = canonical is not None or not n
        if canonical is None and n:
            canon = pc.fill_null(pc.match_substring_regex(sid, r"^(0|-?[1-9][0-9]{0,17})$"), _arrow.bool_scalar(False))
            all_canon = bool(pc.all(canon).as_py())
        # whole-number ids as spinlog._id_value reads them (ASCII digits, at most 18), counted in
        # one vectorised pass over the rows (not one Python call per distinct id); when every id
        # is canonical (the usual case) those are the ids without a minus sign
        if all_canon:
            if canonical is not None:
                spin_no = canonical
                valid = n - int(np.count_nonzero(_arrow.ints(spin_no) < 0))
            else:
                valid = n - int(pc.sum(pc.cast(pc.starts_with(sid, "-"), pa.int64())).as_py() or 0)
                spin_no = pc.cast(sid, pa.int64())
            spin_label = _arrow.repeat_text("", n)
        else:
            valid = int(pc.sum(pc.cast(pc.fill_null(pc.match_substring_regex(sid, r"^[0-9]{1,18}$"), _arrow.bool_scalar(False)), pa.int64())).as_py() or 0)
            spin_no = pc.cast(pc.if_else(canon, sid, _arrow.text_scalar("0")), pa.int64())
            spin_label = pc.if_else(canon, _arrow.text_scalar(""), sid)
        self.n_valid += valid
        self.n_text += n - valid
        if self.no_repeats:
            if not all_canon:
                self.no_repeats = False  # text ids: DuckDB finds the repeats
            else:
                no = _arrow.ints(spin_no)
                for j, lab in enumerate(labels):
                    r = np.flatnonzero((codes == j) & keep) if len(labels) > 1 else np.flatnonzero(keep)
                    if r.size == 0:
                        continue
                    x = no[r]
                    if x[0] <= self.last.get(lab, np.iinfo(np.int64).min) or (x.size > 1 and np.any(x[1:] <= x[:-1])):
                        self.no_repeats = False
                        break
                    self.last[lab] = int(x[-1])
        return spin_no, spin_label

    def _ordinal_ids(self, n: int, codes: np.ndarray, labels: list):
        """(spin_no, spin_label) of a batch without spin ids: the k-th row of its table in this file is spin k (1-based,
        counting every row), carried across batches."""
        ordinal = np.empty(n, dtype=np.int64)
        for j, lab in enumerate(labels):
            r = np.flatnonzero(codes == j) if len(labels) > 1 else np.arange(n)
            base = self.last.get(lab, 0)
            ordinal[r] = base + 1 + np.arange(r.size)
            self.last[lab] = base + r.size
        spin_no = _arrow.array(ordinal)
        spin_label = _arrow.repeat_text("", n)
        return spin_no, spin_label

    def _arrow_batch(self, pt: dict, keep: np.ndarray, n: int, m: int, tab, spin_no, spin_label) -> pa.Table:
        """The kept rows (accepted or void) of a batch as the spool's Arrow table."""
        sel = _arrow.mask(keep)

        def kept(a):
            return a if m == n else a.filter(sel)

        pos, sym = pt["pos"][keep], pt["sym"][keep]
        ts = pa.nulls(m, pa.int64())
        if pt["ts"] is not None:
            tsv = pt["ts"][keep]
            ts = _arrow.array(tsv.astype(np.int64, copy=False), null=tsv == np.iinfo(np.int64).min)
        d = pt["direction"][keep] if pt["direction"] is not None else None
        rl = pt["release"][keep] if pt["release"] is not None else None
        return pa.table(
            {
                "table_id": kept(tab),
                "spin_no": kept(spin_no),
                "spin_label": kept(spin_label),
                "ord": _arrow.array(self.n + np.flatnonzero(keep).astype(np.int64)),
                "ts": ts.cast(pa.timestamp("us")),
                "pos": _arrow.array(pos.astype(np.int16), null=pos < 0),
                "sym": _arrow.array(sym.astype(np.int16), null=sym < 0),
                "dealer": kept(pt["dealer"]) if pt["dealer"] is not None else pa.nulls(m, pa.string()),
                "direction": _arrow.array(d.astype(np.int8, copy=False), null=d < 0) if d is not None else pa.nulls(m, pa.int8()),
                "release": _arrow.array(rl.astype(np.int16), null=rl < 0) if rl is not None else pa.nulls(m, pa.int16()),
                "void": _arrow.array(pt["void_mask"][keep]),
                "line": _arrow.array(np.asarray(pt["lines"])[keep].astype(np.int32)),
            }
        )

    def _put(self, batch: pa.Table, m: int) -> None:
        """Hold ``batch`` (``m`` rows) in memory, or write it (after what was held) to the spool's Parquet file."""
        import pyarrow.parquet as pq

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


_ID_BYTES = np.zeros(256, dtype=bool)
_ID_BYTES[list(b"0123456789-")] = True
_POW10 = 10 ** np.arange(1, 19, dtype=np.int64)  # 10 .. 10**18


def _canonical_ids(sid):
    """The spin ids of a batch as int64 when every one is canonical (``0`` or ``-?[1-9][0-9]{0,17}``, the shape
    the store keeps as a number), else None (then the regular expression sorts them out). A cast and one look
    at the bytes instead of a regular expression over every row: the cast reads ``[+-]?digits`` (and more), the
    bytes rule out all but digits and ``-``, and a canonical id is exactly as long as its number written out."""
    if not isinstance(sid, pa.Array) or sid.null_count or not pa.types.is_string(sid.type):
        return None
    view = _arrow.byte_view(sid)
    if view is None:
        return None
    starts, ends, data = view
    if starts.size == 0 or not _ID_BYTES[data[int(starts[0]) : int(ends[-1])]].all():
        return None
    try:
        v = pc.cast(sid, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    x = _arrow.ints(v)
    if not bool(((x > -_POW10[-1]) & (x < _POW10[-1])).all()):
        return None  # 19 digits or more: not a spin counter
    a = np.abs(x)
    width = np.searchsorted(_POW10, a, side="right") + 1 + (x < 0)
    return v if bool(np.array_equal(width, ends - starts)) else None


def csv_scan(path: Path, fmt) -> "object | None":
    """The line scan (:func:`rngcert.collect.csvstream.scan_lines`: SHA-256, lines) of a regular file that
    :func:`_prepare_streamed` reads as CSV, or None for any other format. Its hash is the file's: ingest
    reads the bytes once for both. Content that is not a text log is refused here (as it is there)."""
    from rngcert.collect import csvstream
    from rngcert.collect.spinlog import detect_format

    if fmt not in ("auto", "csv"):  # (a capture format is checked where it always was: after the hash, for a new file)
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
            csvstream.sniff_content(head, str(path))
            if (fmt if fmt != "auto" else detect_format(path, head)) != "csv":
                return None
            fh.seek(0)
            return csvstream.scan_lines(fh)
    except OSError as exc:  # the log, not the store
        raise InputError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def _prepare_streamed(path: Path, wheel, columns, fmt, table, sha: str, timing: dict, scan=None):
    """:func:`prepare_file` for a regular CSV file in bounded memory: the file is parsed batch by
    batch into a :class:`_Spool` (a Parquet file in a temporary folder) that
    :meth:`Store._store_prepared` inserts from. Returns None when the file is not CSV or not in
    the shape the spool can prove (the exact, in-memory path then reads it). ``scan``: the file's
    :func:`csv_scan`, when the caller has it (the file is then not scanned again)."""

    from rngcert.collect import csvstream
    from rngcert.collect.spinlog import _capture_format, _options_iv, _read_csv_streaming, detect_format

    columns = _options_iv(_capture_format(fmt), columns)
    if scan is None:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
        csvstream.sniff_content(head, str(path))
        if (fmt if fmt != "auto" else detect_format(path, head)) != "csv":
            return None
    folder = Path(scratch.make("rngcert-ingest-"))
    spool = _Spool(folder, table if table is not None else path.stem)
    try:
        part = _read_csv_streaming(path, wheel, columns, text_codes=False, consume=spool, scan=scan)
        spool.close()
        failed = spool.failed
        if not failed and spool.has_ids and spool.n_valid and spool.n_text:
            failed = "spin ids partly whole numbers, partly text"
        if failed or spool.m == 0:
            scratch.remove(folder)
            return None
    except BaseException:
        spool.close()
        scratch.remove(folder)
        raise
    if table is not None and spool.table_column:
        scratch.remove(folder)
        refuse_table_option(path, table, True)
    if part["sha256"] != sha:
        scratch.remove(folder)
        raise InputError(f"{path}: the file changed while it was read (SHA-256 {sha[:16]}… then {part['sha256'][:16]}…); ingest it again when it is complete")
    rej = part["rejected"]
    rej_tbl = _rejects_table(rej)
    incoming = spool.incoming
    if not isinstance(incoming, Path):  # held in memory: the folder was not used
        scratch.remove(folder)
    return {
        "path": path, "sha": sha, "format": "csv", "size": part["size"], "accepted": spool.accepted, "void": spool.void,
        "n": spool.n, "m": spool.m, "incoming": incoming, "rej_tbl": rej_tbl, "rej": rej, "repeated": 0 if spool.no_repeats else None,
        "used_tables": sorted(spool.tables), "rule": "column" if spool.has_ids else "position",
        "default_table": table if table is not None else path.stem, "timing": timing,
    }
