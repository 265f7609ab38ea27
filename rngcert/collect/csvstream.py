"""Streaming CSV reading for spin logs: bounded memory, exact physical line numbers.

A 10 M-spin export is several hundred MB of text; holding it and all its columns as strings
would need several GB. This module reads it in two streaming passes:

1. :func:`scan_lines` hashes the bytes (SHA-256), counts lines and finds the empty ones (nothing
   but an optional CR: the lines pyarrow skips), 64 MiB at a time; a line of spaces is a record,
   and is rejected as malformed like any other unreadable row;
2. :func:`iter_csv_batches` parses record batches with pyarrow's streaming reader (every column as
   text) and gives each row its physical line number.

Line numbers: pyarrow reports a malformed row by its record number (non-blank lines, header = 1).
Physical lines are recovered from the sorted list of skipped lines (blank lines and malformed
rows): for the j-th good row, with target ``t = j + first data line``, the number of skipped lines
before it is ``k = searchsorted(s_i − i, t, "right")`` and its line is ``t + k``. Fields with
embedded newlines are not supported in spin logs (``newlines_in_values=False``), so one record is
one line.
"""

from __future__ import annotations

import csv as _csv
import hashlib
import io
from dataclasses import dataclass
from typing import BinaryIO, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from rngcert.errors import InputError, NoDataError

_CHUNK = 64 << 20
_SHORT = 16  # only lines this short are inspected for emptiness
BLOCK_SIZE = 4 << 20  #: bytes per record batch (small blocks keep peak memory low; speed is the same)
#: A line longer than this is not a spin record: it is rejected (its first bytes kept) and every
#: other row is read (case c10: one 16 MB line made the whole log unreadable).
MAX_LINE = 1 << 20
_KEEP = 200  # characters of a long line kept in the rejects


@dataclass(frozen=True)
class LineScan:
    """What one pass over the bytes tells: hash, size, line count, blank lines, first line."""

    sha256: str
    size: int
    n_lines: int
    blank_lines: np.ndarray  # sorted 1-based physical line numbers
    first_line: bytes  # first non-blank line (BOM removed), for the header
    first_line_no: int
    bom: bool
    long_lines: tuple = ()  # (line, start byte, end byte) of lines longer than MAX_LINE


def scan_lines(fh: BinaryIO) -> LineScan:
    """Hash and scan a binary stream for blank lines (see module docstring)."""
    h = hashlib.sha256()
    size = 0
    n_nl = 0
    blanks: list[int] = []
    prev_tail = b""  # bytes of the current (unfinished) line carried from the previous chunk
    first_line = None
    first_line_no = 0
    bom = False
    line_no = 1  # 1-based number of the line that starts at the beginning of prev_tail
    line_start = 0  # byte offset where that line starts
    long_lines: list[tuple[int, int, int]] = []
    while True:
        chunk = fh.read(_CHUNK)
        if not chunk:
            break
        h.update(chunk)
        if size == 0 and chunk.startswith(b"\xef\xbb\xbf"):
            bom = True
            size += 3
            line_start = 3
            chunk = chunk[3:]  # the BOM is not content of the first line
        at = size  # file offset of chunk[0]
        size += len(chunk)
        arr = np.frombuffer(chunk, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        if nl.size:  # lines longer than MAX_LINE (vectorised over the chunk's line ends)
            ends_abs = at + nl
            starts_abs = np.concatenate([[line_start], ends_abs[:-1] + 1])
            for k in np.flatnonzero(ends_abs - starts_abs > MAX_LINE).tolist():
                long_lines.append((line_no + k, int(starts_abs[k]), int(ends_abs[k])))
            line_start = int(ends_abs[-1]) + 1
        if nl.size == 0:
            prev_tail = (prev_tail + chunk)[-(_SHORT + 1) :] if len(prev_tail) + len(chunk) > _SHORT else prev_tail + chunk
            continue
        # the line continuing from the previous chunk ends at nl[0]
        first_len = len(prev_tail) + int(nl[0])
        if first_len <= _SHORT and not (prev_tail + chunk[: nl[0]]).strip(b"\r"):
            blanks.append(line_no)
        elif first_line is None and (prev_tail + chunk[: nl[0]]).strip(b"\xef\xbb\xbf \t\r\n"):
            first_line, first_line_no = (prev_tail + chunk[: nl[0]]), line_no
        starts = nl[:-1] + 1
        ends = nl[1:]
        short = np.flatnonzero(ends - starts <= _SHORT)
        base = line_no + 1
        for i in short.tolist():
            if not chunk[starts[i] : ends[i]].strip(b"\r"):
                blanks.append(base + i)
        if first_line is None and starts.size:
            # first non-blank line among the complete lines of this chunk
            for i in range(min(starts.size, 1000)):
                seg = chunk[starts[i] : ends[i]]
                if seg.strip():
                    first_line, first_line_no = seg, base + i
                    break
        n_nl += nl.size
        line_no += nl.size
        prev_tail = chunk[nl[-1] + 1 :]
        if len(prev_tail) > _SHORT + 1:
            prev_tail = prev_tail[: _SHORT + 1] if first_line is not None else prev_tail
    n_lines = n_nl + (1 if prev_tail else 0)
    if size - line_start > MAX_LINE:
        long_lines.append((line_no, line_start, size))
    if prev_tail and len(prev_tail) <= _SHORT and not prev_tail.strip(b"\r"):
        blanks.append(line_no)
    if first_line is None and prev_tail.strip(b"\xef\xbb\xbf \t\r\n"):
        first_line, first_line_no = prev_tail, line_no
    if first_line is not None and first_line.startswith(b"\xef\xbb\xbf"):
        first_line = first_line[3:]
    return LineScan(h.hexdigest(), size, n_lines, np.asarray(sorted(set(blanks)), dtype=np.int64), first_line or b"", first_line_no, bom, tuple(long_lines))


class _Blanked(io.RawIOBase):
    """A read-only view of a binary stream in which the given byte ranges are left out (each long
    line becomes an empty line, which the CSV reader skips)."""

    def __init__(self, fh: BinaryIO, ranges, pos: int):
        self.fh, self.ranges, self.pos = fh, sorted(ranges), pos

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        want = len(b)
        for lo, hi in self.ranges:  # a handful of ranges at most
            if lo <= self.pos < hi:
                self.fh.seek(hi)
                self.pos = hi
            elif self.pos < lo:
                want = min(want, lo - self.pos)
                break
        data = self.fh.read(want)
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


def _map_lines(targets: np.ndarray, skipped: np.ndarray) -> np.ndarray:
    """Physical lines of rows whose line would be ``targets`` if no line were skipped."""
    if skipped.size == 0:
        return targets
    u = skipped - np.arange(skipped.size)
    return targets + np.searchsorted(u, targets, side="right")


def header_fields(scan: LineScan, name: str = "<log>", encoding: str = "utf-8") -> tuple[list[str], str]:
    """Column names and delimiter (comma, tab or semicolon, whichever the header uses most)."""
    line = scan.first_line.decode(encoding, "replace").rstrip("\r\n")
    if "\r" in line:
        raise InputError(f"{name}: line 1: lines end in a bare CR (classic Mac); convert the file to LF or CRLF line ends")
    delim = max(("\t", ";", ","), key=line.count) if any(d in line for d in "\t;,") else ","
    try:
        fields = next(iter(_csv.reader([line], delimiter=delim)), [])
    except _csv.Error as exc:
        raise InputError(f"{name}: line {scan.first_line_no}: not a CSV header: {exc}") from None
    return [f.strip().strip('"').strip() for f in fields], delim


def detect_encoding(scan: LineScan, head: bytes) -> str:
    """UTF-8 (default), UTF-16 by its BOM; Latin-1 when the first 64 KiB are not valid UTF-8."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the end of the sample
            return "latin-1"
    return "utf-8"


def iter_csv_batches(fh: BinaryIO, name: str, scan: LineScan, *, block_size: int = 16 << 20, encoding: str = "utf-8") -> Iterator[tuple[dict, np.ndarray, list]]:
    """Yield ``(columns, lines, rejected)`` per record batch.

    ``columns`` maps each header name to a pyarrow string array; ``lines`` are the physical line
    numbers of the batch's rows; ``rejected`` lists ``(line, text, reason)`` of malformed rows
    found so far that were not yet reported.
    """
    header, delim = header_fields(scan, name, encoding)
    if not header:
        raise NoDataError(f"{name}: the file is empty")
    if len(set(h.lower() for h in header)) != len(header):
        raise InputError(f"{name}: the header names a column twice: {header}")
    invalid: list[tuple[int, str, str]] = []

    def handler(row):
        invalid.append((row.number, row.text, f"expected {row.expected_columns} fields, found {row.actual_columns}"))
        return "skip"

    long_rows = []
    if scan.long_lines:
        for line, lo, hi in scan.long_lines:
            fh.seek(lo)
            head = fh.read(_KEEP * 4).decode(encoding, "replace")[:_KEEP]
            long_rows.append((line, head + "…", f"line of {hi - lo:,} bytes, longer than the {MAX_LINE:,} bytes a spin-log line may have: rejected unread (first {_KEEP} characters kept)"))
        fh.seek(0)
    if scan.bom:
        fh.read(3)
    if scan.long_lines:
        fh = io.BufferedReader(_Blanked(fh, [(lo, hi) for _, lo, hi in scan.long_lines], 3 if scan.bom else 0), buffer_size=1 << 20)
    try:
        reader = pacsv.open_csv(
            fh,
            read_options=pacsv.ReadOptions(use_threads=False, block_size=block_size, encoding=encoding),
            parse_options=pacsv.ParseOptions(delimiter=delim, invalid_row_handler=handler, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={h: pa.string() for h in header}, strings_can_be_null=False, quoted_strings_can_be_null=False
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: not a readable CSV file: {exc}") from None
    blank = scan.blank_lines
    if long_rows:  # left out: skipped like blank lines when numbering the records
        blank = np.unique(np.concatenate([blank, np.asarray([r[0] for r in long_rows], dtype=np.int64)]))
    # record number r (non-blank lines, header = 1) → physical line
    rec_to_line = lambda r: _map_lines(np.asarray(r, dtype=np.int64), blank)  # noqa: E731
    reported = 0
    done = 0
    skipped_lines = blank
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            break
        except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
            raise InputError(f"{name}: not a readable CSV file: {exc}") from None
        if len(invalid) > reported:
            bad_lines = rec_to_line([r for r, _, _ in invalid if r is not None])
            skipped_lines = np.unique(np.concatenate([blank, bad_lines]))
        new, long_rows = long_rows, []
        for r, text, reason in invalid[reported:]:
            line = int(rec_to_line([r])[0]) if r is not None else -1
            new.append((line, text, reason))
        reported = len(invalid)
        n = batch.num_rows
        # targets: lines these rows would have with nothing skipped after the header
        targets = scan.first_line_no + 1 + done + np.arange(n, dtype=np.int64)
        lines = _map_lines(targets, skipped_lines[skipped_lines > scan.first_line_no])
        done += n
        cols = {h: batch.column(i) for i, h in enumerate(batch.schema.names)}
        yield cols, lines, new
    if len(invalid) > reported or long_rows:
        new = long_rows + [(int(rec_to_line([r])[0]) if r is not None else -1, t, why) for r, t, why in invalid[reported:]]
        yield {h: pa.array([], type=pa.string()) for h in header}, np.zeros(0, dtype=np.int64), new


def open_source(path, data: bytes | None = None) -> BinaryIO:
    """A binary stream over ``data`` if given, else over the file."""
    return io.BytesIO(data) if data is not None else open(path, "rb")


def release_arrow_memory() -> None:
    """Return freed Arrow buffers to the operating system (mimalloc/jemalloc keep them by default),
    so that peak memory of a streamed read stays near the size of its result."""
    try:
        pa.default_memory_pool().release_unused()
    except AttributeError:  # older pyarrow
        pass
