"""CSV spin logs read in batches (:mod:`rngcert.collect.csvstream`) through the row-to-spin core.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect.spinlog.columns import _join_kinds, timestamp_notes
from rngcert.collect.spinlog.core import RejectedRow, _concat_parts, _process, unread_columns
from rngcert.errors import InputError, NoDataError

#: Per-row entries of the dictionary :func:`_process` returns (the rest describes the file).
_ROW_KEYS = ("pos", "sym", "accepted_mask", "void_mask", "lines", "line_no", "ts", "direction", "release", "table", "dealer", "spin_id",
             "rotor_speed", "ball_direction", "result_source", "payout", "multiplier")


# long: the streaming CSV read: scan, encoding, the batch function run on read threads and the join of the parts share the open source
def _read_csv_streaming(p: Path, wheel, columns, *, data: bytes | None = None, text_codes: bool = True, consume=None, scan=None,
                        table: str | None = None) -> dict:
    """Stream a CSV log batch by batch through :func:`_process` and join the parts.

    With ``consume`` (a :class:`_CompactLog`), each batch is handed to ``consume.add`` and only
    its description (counts, rejected rows, notes) is kept: the returned dictionary has no
    per-row arrays. ``scan``: the file's :func:`~rngcert.collect.csvstream.scan_lines`, when the
    caller has it already (ingest hashes the file by scanning it: the bytes are not read twice). ``table``: the file's
    table when it has no table column (its name without the extension by default), where the ids of rows it cannot
    split count as present."""
    from rngcert.collect import csvstream
    from rngcert.collect.spinlog import fastcsv

    name = str(p)

    def reduce(out):
        if consume is None:
            return out
        consume.add(out)
        return {k: (None if k in _ROW_KEYS else v) for k, v in out.items()}

    on_restart = None if consume is None else consume.rollback
    parts = None
    one_pass = scan is None and data is None
    if one_pass:  # a file in the usual shape: hashed and parsed in one pass, by numpy
        got = fastcsv.read_file(p, name, wheel, columns, text_codes, reduce, on_restart, None if consume is None else consume.reserve,
                                block_size=csvstream.BLOCK_SIZE)
        if got is not None:
            scan, parts = got
    head = b""
    if parts is None:
        with csvstream.open_source(p, data) as fh:
            head = fh.read(1 << 16)
            fh.seek(0)
            if scan is None:
                scan = csvstream.scan_lines(fh)
    encoding = csvstream.detect_encoding(scan, head)
    if encoding == "utf-16":
        raise InputError(f"{name}: the file is UTF-16; save it as UTF-8 (or ASCII) CSV and certify that")
    if scan.size == 0 or not scan.first_line.strip(b" \t\r\n"):
        raise NoDataError(f"{name}: the file is empty: no spins to certify")
    header, delim = csvstream.header_fields(scan, name, encoding)

    def process(cols, lines, bad):  # a pure function of its batch: run on the read threads
        rej = [RejectedRow(name, line, "*", reason, text[:200]) for line, text, reason in bad]
        out = _process(cols, lines, rej, name, wheel, columns, None, header, text_codes=text_codes, id_numbers=consume is not None)
        del cols, lines
        csvstream.release_arrow_memory()
        return out

    if consume is not None and parts is None:
        consume.reserve(scan.n_lines)
    how = None
    if parts is None and not one_pass and encoding == "utf-8" and delim == ",":  # (a scan given by the caller, or bytes in memory)
        parts = fastcsv.read_parts(lambda: csvstream.open_source(p, data), name, scan, wheel, columns, text_codes, reduce, on_restart,
                                   block_size=csvstream.BLOCK_SIZE)
    if parts is None:  # anything else on pyarrow's exact path
        parts, how = csvstream.read_csv_parts(lambda: csvstream.open_source(p, data), name, scan, process, block_size=csvstream.BLOCK_SIZE, encoding=encoding,
                                              on_restart=on_restart, then=reduce, threads=csvstream.read_threads())
        csvstream.release_arrow_memory(force=True)
    if not parts:  # header only
        parts.append(reduce(_process({h: _arrow.texts([]) for h in header}, np.zeros(0, np.int64), [], name, wheel, columns, None, header, text_codes=text_codes)))
    kinds = _join_kinds([pt.get("ts_kinds") for pt in parts])
    part = _concat_parts(parts)
    part["ts_kinds"] = kinds
    part["notes"] = list(part["notes"]) + timestamp_notes(name, kinds) + unread_columns(name, header, columns)
    if how:
        part["notes"] = list(part["notes"]) + [how]
    if encoding != "utf-8":
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as {encoding}"]
    if scan.sep:
        part["notes"] = list(part["notes"]) + [f"{name}: the first line 'sep={scan.sep}' (Excel) names the delimiter: fields read as separated by {scan.sep!r}"]
    # ids and tables of rows the reader could not split (they are rejected, but their ids are not gaps)
    idx = part.get("colindex", {})
    extra, extra_text = [], []
    if "spin_id" in idx:
        import csv as _csv
        import re

        from rngcert.collect.spinids import PREFIXED_ID

        own = table or Path(name).stem  # (a file without a table column is one table, named after it: the id is in that table, no other)
        for r in part["rejected"]:
            if r.column != "*":
                continue
            try:
                fields = next(_csv.reader([r.text], delimiter=delim), [])
            except _csv.Error:
                continue
            sid = fields[idx["spin_id"]].strip() if len(fields) > idx["spin_id"] else ""
            t = (fields[idx["table"]].strip() if len(fields) > idx["table"] else None) if "table" in idx else own
            if sid.isascii() and sid.isdigit() and len(sid) <= 18:
                extra.append((t, int(sid)))
            elif sid.isascii() and re.fullmatch(PREFIXED_ID, sid):  # (a text id of a prefix and a number, R1200: present too)
                extra_text.append((t, sid))
    part["extra_ids"] = extra
    part["extra_text_ids"] = extra_text
    part["format"] = "csv"
    part["sha256"] = scan.sha256
    part["blank"] = int(scan.blank_lines.size)
    part["size"] = scan.size
    return part
