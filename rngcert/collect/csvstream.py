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

A log file in the usual shape (ASCII, commas, LF, no quotes or blank lines, cells in their usual spellings) is
hashed and parsed in one pass by numpy instead (:mod:`rngcert.collect.spinlog.fastcsv`); anything else, or a
block of such a file that is not in that shape, is read here.
"""

from __future__ import annotations

import codecs
import csv as _csv
import hashlib
import io
import os
import re
from dataclasses import dataclass, replace
from typing import BinaryIO, Iterator

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa, pacsv
from rngcert.collect.heap import keep_freed_heap
from rngcert.errors import InputError, NoDataError

#: Bytes hashed and scanned at a time (the scan holds about three times this). 1 MiB: the scan's temporaries stay in
#: the heap the allocator keeps (rngcert.collect.heap) instead of being mapped and zeroed afresh for every chunk.
_CHUNK = 1 << 20
_SHORT = 16  # only lines this short are inspected for emptiness
#: Bytes per record batch. pyarrow's streaming reader holds memory in proportion to it (a bare read of a
#: 10 M-spin log peaks at 230 MB with 4 MiB blocks, 110 MB with 1 MiB), and a block must hold a MAX_LINE line.
BLOCK_SIZE = 2 << 20
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
    bare_cr: int = 0  # carriage returns not followed by LF (pyarrow would end a record there)
    long_lines: tuple = ()  # (line, start byte, end byte) of lines longer than MAX_LINE
    sep: str = ""  # the delimiter an Excel "sep=;" first line declares ("" when there is none)
    skip: tuple = ()  # (start byte, end byte) of lines before the header that are not CSV (the "sep=" line)
    ascii: bool = False  # every byte after the BOM is ASCII (then valid UTF-8: the parser need not check it again)
    utf8: bool = True  # every byte after the BOM is UTF-8 text (else the file is read as Latin-1: detect_encoding)


# long: one pass over the byte stream (hash on its own thread, blank lines, line ends, BOM, long lines): its state is carried from chunk to chunk in
#   locals
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
    bare_cr = 0
    last_byte = b""
    line_start = 0  # byte offset where that line starts
    long_lines: list[tuple[int, int, int]] = []
    ascii_only = True  # (bytes.isascii: 0.15 ms a MiB, against 0.5 ms a MiB that pyarrow's UTF-8 check of every string costs)
    utf8 = codecs.getincrementaldecoder("utf-8")()  # None once a byte is not UTF-8 text (a file that is not ASCII is decoded whole)
    from concurrent.futures import ThreadPoolExecutor

    keep_freed_heap()

    # the hash runs on its own thread while this one scans the chunk (hashlib releases the GIL)
    hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rngcert-sha256") if read_threads() > 1 else None
    hashed = None
    while True:
        chunk = fh.read(_CHUNK)
        if hashed is not None:
            hashed.result()  # the previous chunk is in the hash: chunks go in in order
            hashed = None
        if not chunk:
            break
        if hasher is None:
            h.update(chunk)
        else:
            hashed = hasher.submit(h.update, chunk)
        if last_byte == b"\r" and not chunk.startswith(b"\n"):
            bare_cr += 1
        last_byte = chunk[-1:]
        cr = chunk.count(b"\r") if b"\r" in chunk else 0  # (a search for the byte is much faster than a count: most logs have no CR)
        if cr:
            bare_cr += cr - chunk.count(b"\r\n") - (1 if chunk.endswith(b"\r") else 0)
        if size == 0 and chunk.startswith(b"\xef\xbb\xbf"):
            bom = True
            size += 3
            line_start = 3
            chunk = chunk[3:]  # the BOM is not content of the first line
        if ascii_only:
            ascii_only = chunk.isascii()
        if not ascii_only and utf8 is not None:  # (from the first chunk that is not ASCII: the ones before leave no state)
            try:
                utf8.decode(chunk)
            except UnicodeDecodeError:
                utf8 = None
        at = size  # file offset of chunk[0]
        size += len(chunk)
        arr = np.frombuffer(chunk, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        if nl.size:  # lines longer than MAX_LINE (vectorised over the chunk's line ends; the first began in earlier chunks)
            width = np.diff(nl, prepend=line_start - at - 1)
            width -= 1  # bytes of each line ending in this chunk, without its line end
            if int(width.max()) > MAX_LINE:
                ends_abs = at + nl
                starts_abs = ends_abs - width
                for k in np.flatnonzero(width > MAX_LINE).tolist():
                    long_lines.append((line_no + k, int(starts_abs[k]), int(ends_abs[k])))
            line_start = at + int(nl[-1]) + 1
        if nl.size == 0:
            prev_tail = prev_tail + chunk
            if first_line is not None and len(prev_tail) > _SHORT:
                prev_tail = prev_tail[-(_SHORT + 1) :]
            elif len(prev_tail) > MAX_LINE + 1:  # the header line is kept whole, up to the longest line read
                prev_tail = prev_tail[: MAX_LINE + 1]
            continue
        # the line continuing from the previous chunk ends at nl[0]
        first_len = len(prev_tail) + int(nl[0])
        if first_len <= _SHORT and (prev_tail + chunk[: nl[0]]) in (b"", b"\r"):
            blanks.append(line_no)
        elif first_line is None:
            first_line, first_line_no = (prev_tail + chunk[: nl[0]]), line_no
        base = line_no + 1
        # a blank line is empty or a lone CR: some line after the first is 0 or 1 bytes long (the widths are at hand; searching the
        # bytes for "\n\n" and "\n\r\n" cost a third of the scan)
        if nl.size > 1 and bool((width[1:] <= 1).any()):
            width = width[1:]  # the lines that begin after the chunk's first line end
            empty = width == 0
            cr1 = np.flatnonzero(width == 1)
            empty[cr1[arr[nl[cr1] + 1] == 13]] = True
            blanks.extend((base + np.flatnonzero(empty)).tolist())
        if first_line is None and nl.size > 1:
            starts, ends = nl[:-1] + 1, nl[1:]
            # first non-blank line among the complete lines of this chunk
            for i in range(min(starts.size, 1000)):
                seg = chunk[starts[i] : ends[i]]
                if seg not in (b"", b"\r"):  # the header is the first line pyarrow does not skip
                    first_line, first_line_no = seg, base + i
                    break
        n_nl += nl.size
        line_no += nl.size
        prev_tail = chunk[nl[-1] + 1 :]
        if len(prev_tail) > _SHORT + 1:
            prev_tail = prev_tail[: _SHORT + 1] if first_line is not None else prev_tail
    if hasher is not None:
        hasher.shutdown()
    n_lines = n_nl + (1 if prev_tail else 0)
    if size - line_start > MAX_LINE:
        long_lines.append((line_no, line_start, size))
    if prev_tail == b"\r":
        blanks.append(line_no)  # a last line of just a CR (pyarrow ends a line at a CR at the end of the file)
    if first_line is None and prev_tail not in (b"", b"\r"):
        first_line, first_line_no = prev_tail, line_no
    if first_line is not None and first_line.startswith(b"\xef\xbb\xbf"):
        first_line = first_line[3:]
    if utf8 is not None:
        try:
            utf8.decode(b"", final=True)  # (a character cut at the end of the file)
        except UnicodeDecodeError:
            utf8 = None
    scan = LineScan(h.hexdigest(), size, n_lines, np.asarray(sorted(set(blanks)), dtype=np.int64), first_line or b"", first_line_no, bom, bare_cr,
                    tuple(long_lines), ascii=ascii_only, utf8=utf8 is not None)
    return _excel_sep(fh, scan)


_SEP_LINE = re.compile(rb"sep=(.)\r?")


def _excel_sep(fh: BinaryIO, scan: LineScan) -> LineScan:
    """Honour Excel's ``sep=;`` first line: it declares the delimiter and is not the header. The
    scan's header becomes the next non-blank line, and the ``sep=`` line is a byte range the CSV
    reader skips (it is neither a row nor a blank line)."""
    m = _SEP_LINE.fullmatch(scan.first_line)
    if not m or m.group(1) in (b"\r", b"\n", b'"'):
        return scan
    fh.seek(0)
    head = fh.read(MAX_LINE + (1 << 16))
    fh.seek(0)
    starts = [0] + (np.flatnonzero(np.frombuffer(head, dtype=np.uint8) == 10) + 1).tolist()
    n0 = scan.first_line_no  # 1-based line of "sep="
    if n0 >= len(starts):
        return scan
    lo = starts[n0 - 1] + (3 if scan.bom and n0 == 1 else 0)
    hi = starts[n0] - 1  # its newline stays: the line becomes an empty line, which the reader skips
    for no in range(n0 + 1, len(starts) + 1):
        a = starts[no - 1]
        b = starts[no] - 1 if no < len(starts) else len(head)
        line = head[a:b]
        if line not in (b"", b"\r"):
            if no == len(starts) and len(head) >= MAX_LINE:
                return scan  # (the header is beyond what was read: leave the file as it is)
            return replace(scan, first_line=line, first_line_no=no, sep=m.group(1).decode("latin-1"), skip=((lo, hi),))
    return scan


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
    fields, delim = _raw_header(scan, name, encoding)
    return [f.strip().strip('"').strip() for f in fields], delim


def _raw_header(scan: LineScan, name: str, encoding: str) -> tuple[list[str], str]:
    """The header's fields as written (spaces kept) and the delimiter."""
    line = scan.first_line.decode(encoding, "replace").rstrip("\r\n")
    if "\r" in line:
        if scan.n_lines <= 1 or line.count("\r") >= 2:
            raise InputError(f"{name}: line {scan.first_line_no}: lines end in a bare CR (classic Mac); convert the file to LF or CRLF line ends")
        raise InputError(f"{name}: line {scan.first_line_no}: the header has a carriage return (CR) inside it; remove it from the header line")
    delim = scan.sep or (max(("\t", ";", ","), key=line.count) if any(d in line for d in "\t;,") else ",")
    try:
        fields = next(iter(_csv.reader([line], delimiter=delim)), [])
    except _csv.Error as exc:
        raise InputError(f"{name}: line {scan.first_line_no}: not a CSV header: {exc}") from None
    try:  # a quote opened and never closed swallows the lines after the header in every CSV parser
        next(iter(_csv.reader([line], delimiter=delim, strict=True)), [])
    except _csv.Error:
        col = len(next(iter(_csv.reader([line[: line.rfind('"')] + "x"], delimiter=delim)), [])) if '"' in line else len(fields)
        raise InputError(
            f"{name}: line {scan.first_line_no}, column {col}: the header has a quote that is never closed "
            f"({fields[col - 1] if 0 < col <= len(fields) else line!r}); close the quote or remove it from the header line") from None
    return fields, delim


def detect_encoding(scan: LineScan, head: bytes) -> str:
    """UTF-8 (default), UTF-16 by its BOM; Latin-1 when the file is not valid UTF-8 (``scan.utf8``: decided on the whole
    file, as for JSON Lines, so that a Latin-1 byte past the first block is read as the same byte early is)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    return "utf-8" if scan.utf8 else "latin-1"


# ---------------------------------------------------------------------------- what a file is
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed", "decompress it first (gunzip -k FILE) and certify the .csv inside"),
    (b"PK\x03\x04", "a ZIP archive (an .xlsx workbook is one)", "extract the log (unzip), or export the sheet as CSV"),
    (b"\xfd7zXZ\x00", "xz-compressed", "decompress it first (unxz -k FILE)"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed", "decompress it first (unzstd FILE)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office document (.xls)", "export the sheet as CSV"),
    (b"%PDF-", "a PDF document", "export the data as CSV"),
    (b"SQLite format 3\x00", "an SQLite database", "export the table as CSV"),
)
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0c\x1a")  # tab, LF, CR, form feed, DOS end-of-file


def sniff_content(head: bytes, name: str) -> None:
    """Refuse, with what the file is, bytes that are not a text log: compressed or archived data,
    UTF-16 without a byte-order mark, or binary data. ``head`` is the start of the file.

    Raises
    ------
    InputError
        Naming the kind of content and what to do.
    """
    for magic, what, todo in _MAGIC:
        if head.startswith(magic) and (magic != b"\x1f\x8b" or len(head) > 2):
            raise InputError(f"{name}: the file is {what}, not a text log: {todo}")
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == b"1AY&SY":
        raise InputError(f"{name}: the file is bzip2-compressed, not a text log: decompress it first (bunzip2 -k FILE)")
    sample = head[:8192]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return  # UTF-16 with its BOM: the readers name it
    even = sample[0::2]
    odd = sample[1::2]
    if len(sample) >= 4:
        z_even, z_odd = even.count(0) / max(len(even), 1), odd.count(0) / max(len(odd), 1)
        if max(z_even, z_odd) > 0.3 and min(z_even, z_odd) < 0.05:
            order = "LE" if z_odd > z_even else "BE"
            raise InputError(
                f"{name}: the file looks like UTF-16-{order} text without a byte-order mark (every other byte is 0); "
                "save it as UTF-8 (or ASCII) CSV and certify that"
            )
    body = sample.rstrip(b"\x00")  # NUL padding at the end of a log cut short is not the content
    if body:
        ctrl = sum(1 for c in body if c < 32 and c not in _TEXT_CONTROLS) + body.count(0x7F)
        if ctrl >= 8 and ctrl / len(body) > 0.05:  # (a few stray control bytes in a short text are not binary)
            raise InputError(
                f"{name}: binary data, not a text log ({ctrl / len(body):.0%} of the first {len(body)} bytes are control bytes); "
                "if it is compressed or a spreadsheet, decompress it or export it as CSV first"
            )


# ---------------------------------------------------------------------------- parsing
class LinesMerged(Exception):
    """pyarrow's records and the file's lines disagree (a quoted field ran past its line, or a
    block boundary fell inside one huge line): the file is parsed again line by line."""


class _CRFilter:
    """A binary stream that shows pyarrow a bare CR (one not followed by LF) as the visible
    character U+240D (or a space in a non-UTF-8 file): pyarrow would end a record at it, and one
    physical line must stay one record so that line numbers stay right."""

    def __init__(self, fh: BinaryIO, utf8: bool):
        self._fh = fh
        self._carry = b""  # a CR at the end of the last chunk read: is an LF next?
        self._out = b""  # translated bytes not yet returned (the mark is longer than a CR)
        self._eof = False
        self._mark = "\u240d".encode() if utf8 else b" "
        self.closed = False

    def _fill(self, n: int) -> None:
        chunk = self._fh.read(n)
        if not chunk:  # end of file: a CR left over ends the last line (as pyarrow reads it)
            self._eof = True
            self._out += self._carry
            self._carry = b""
            return
        data = self._carry + chunk
        self._carry = b""
        if data.endswith(b"\r"):
            self._carry, data = b"\r", data[:-1]
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", self._mark)
        self._out += data

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            while not self._eof:
                self._fill(1 << 20)
            data, self._out = self._out, b""
            return data
        while len(self._out) < n and not self._eof:
            self._fill(n)
        data, self._out = self._out[:n], self._out[n:]
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def _arrow_names(scan: LineScan, delim: str, encoding: str, fallback: list[str]) -> list[str]:
    """The column names exactly as pyarrow reads them from the header (spaces, quotes), so that
    every column can be typed as text whatever pyarrow would infer."""
    try:
        t = pacsv.read_csv(
            io.BytesIO(scan.first_line.rstrip(b"\r\n") + b"\n"),
            read_options=pacsv.ReadOptions(use_threads=False, encoding=encoding),
            parse_options=pacsv.ParseOptions(delimiter=delim, newlines_in_values=False),
        )
        return t.column_names
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return fallback


def _check_header(header: list[str], name: str) -> None:
    if not header:
        raise NoDataError(f"{name}: the file is empty")
    if len(set(h.lower() for h in header)) != len(header):
        raise InputError(f"{name}: the header names a column twice: {header}")


# long: one generator around pyarrow's CSV reader: its setup (long lines, BOM, bare CRs) and the record-to-line mapping share the reader's state and
#   its close on every exit
def iter_csv_batches(fh: BinaryIO, name: str, scan: LineScan, *, block_size: int = 16 << 20, encoding: str = "utf-8") -> Iterator[tuple[dict, np.ndarray, list]]:
    """Yield ``(columns, lines, rejected)`` per record batch.

    ``columns`` maps each header name to a pyarrow string array; ``lines`` are the physical line
    numbers of the batch's rows; ``rejected`` lists ``(line, text, reason)`` of malformed rows
    found so far that were not yet reported.

    Every column is read as text, whatever its values look like (no type inference). Raises
    :class:`LinesMerged` (after the last batch, or at the block that fails) when pyarrow's
    records do not match the file's lines one to one; :func:`read_csv_parts` then parses the
    file again with :func:`iter_csv_lines`.
    """
    raw, delim = _raw_header(scan, name, encoding)
    header = [f.strip().strip('"').strip() for f in raw]
    _check_header(header, name)
    names = _arrow_names(scan, delim, encoding, raw)
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
    if scan.long_lines or scan.skip:  # each long line (and an Excel "sep=" line) becomes an empty line, which the CSV reader skips
        fh = io.BufferedReader(_Blanked(fh, [(lo, hi) for _, lo, hi in scan.long_lines] + list(scan.skip), 3 if scan.bom else 0), buffer_size=1 << 20)
    src = _CRFilter(fh, encoding == "utf-8") if scan.bare_cr else fh
    try:
        reader = pacsv.open_csv(
            src,
            read_options=pacsv.ReadOptions(use_threads=False, block_size=block_size, encoding=encoding),
            parse_options=pacsv.ParseOptions(delimiter=delim, invalid_row_handler=handler, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={h: pa.string() for h in names}, strings_can_be_null=False, quoted_strings_can_be_null=False,
                check_utf8=not (scan.ascii and encoding == "utf-8"),  # ASCII bytes are valid UTF-8 (U+240D, the bare-CR mark, too)
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise LinesMerged(f"{exc}") from None
    # the reader is closed however the caller stops (an error in its first batch, a generator dropped):
    # a reader left open keeps pyarrow's read-ahead reading the Python file on an I/O thread, and a
    # process that exits meanwhile aborted (exit 134) instead of returning its exit code
    try:
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
                raise LinesMerged(f"{exc}") from None
            if len(invalid) > reported:
                bad_lines = rec_to_line([r for r, _, _ in invalid if r is not None])
                skipped_lines = np.unique(np.concatenate([blank, bad_lines]))
            new, long_rows = long_rows, []
            for r, text, reason in invalid[reported:]:
                if r is None or "\n" in text:
                    raise LinesMerged("a malformed record spans lines")
                new.append((int(rec_to_line([r])[0]), text, reason))
            reported = len(invalid)
            n = batch.num_rows
            # targets: lines these rows would have with nothing skipped after the header
            targets = scan.first_line_no + 1 + done + np.arange(n, dtype=np.int64)
            lines = _map_lines(targets, skipped_lines[skipped_lines > scan.first_line_no])
            done += n
            cols = {h: batch.column(i) for i, h in enumerate(batch.schema.names)}
            if any(not pa.types.is_string(c.type) for c in cols.values()):
                cols = {h: c.cast(pa.string()) for h, c in cols.items()}  # (never expected: every column is typed as text)
            yield cols, lines, new
        for r, text, _ in invalid[reported:]:
            if r is None or "\n" in text:
                raise LinesMerged("a malformed record spans lines")
        # every non-blank line after the header (long lines count as blank) is one record, or the parse merged lines
        records = scan.n_lines - int(np.count_nonzero(blank > scan.first_line_no)) - scan.first_line_no
        if done + len(invalid) != records:
            raise LinesMerged(f"{done + len(invalid)} records in {records} lines")  # a quoted field ran over lines
        if len(invalid) > reported or long_rows:
            new = long_rows + [(int(rec_to_line([r])[0]), t, why) for r, t, why in invalid[reported:]]
            yield {h: _arrow.texts([]) for h in names}, np.zeros(0, dtype=np.int64), new
    finally:
        reader.close()


def _line_fields(b: bytes, encoding: str, delim: str, k: int, mark: str) -> tuple[list[str] | None, str, str]:
    """One physical line of :func:`iter_csv_lines` parsed on its own: ``(fields, "", "")``, or ``(None, its
    text (200 characters), why it is rejected)``. ``mark`` stands for a bare CR inside the line."""
    b = b[:-1] if b.endswith(b"\n") else b
    b = b[:-1] if b.endswith(b"\r") else b
    try:
        text = b.decode(encoding)
    except UnicodeDecodeError as exc:
        return None, b[:200].decode(encoding, "replace"), f"not valid {encoding} text ({exc.reason} at byte {exc.start})"
    text = text.replace("\r", mark)
    try:
        fields = next(_csv.reader([text], delimiter=delim, strict=True), [""])
    except _csv.Error as exc:
        if "field limit" in str(exc):
            return None, text[:200], f"a field is longer than {_csv.field_size_limit():,} characters (the line has {len(text):,}): not a spin record"
        return None, text[:200], f"quoting is not valid CSV ({exc}); a quote must close on its line"
    if len(fields) != k:
        return None, text[:200], f"expected {k} fields, found {len(fields)}"
    return fields, "", ""


def iter_csv_lines(fh: BinaryIO, name: str, scan: LineScan, *, batch_rows: int = 100_000, encoding: str = "utf-8") -> Iterator[tuple[dict, np.ndarray, list]]:
    """Like :func:`iter_csv_batches`, parsing each physical line on its own (Python's csv
    module, strict quoting). Slower; used when pyarrow's records do not match the lines: a line
    whose quotes do not close, or whose bytes are not text in ``encoding``, or whose field count
    is wrong, is rejected with its line and reason, and no other line is affected."""
    raw, delim = _raw_header(scan, name, encoding)
    header = [f.strip().strip('"').strip() for f in raw]
    _check_header(header, name)
    k = len(raw)
    blank = set(scan.blank_lines.tolist())
    cols: list[list[str]] = [[] for _ in range(k)]
    lines: list[int] = []
    rejected: list[tuple[int, str, str]] = []

    def flush():
        out = ({h: _arrow.texts(c) for h, c in zip(raw, cols)}, np.asarray(lines, dtype=np.int64), list(rejected))  # (not pa.array: it imports pandas)
        for c in cols:
            c.clear()
        lines.clear()
        rejected.clear()
        return out

    if scan.bom:
        fh.read(3)
    mark = "\u240d" if encoding == "utf-8" else " "  # as _CRFilter shows a bare CR
    for no, b in enumerate(fh, start=1):
        if no <= scan.first_line_no or no in blank:
            continue
        fields, text, why = _line_fields(b, encoding, delim, k, mark)
        if fields is None:
            rejected.append((no, text, why))
            continue
        for c, v in zip(cols, fields):
            c.append(v)
        lines.append(no)
        if len(lines) >= batch_rows:
            yield flush()
    if lines or rejected:
        yield flush()


def read_threads() -> int:
    """Threads that turn parsed batches into spins while the next batch is parsed: the cores
    this process may use, at most 2 (pyarrow's kernels and numpy release the GIL)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


def prefetch(items, depth: int):
    """Iterate ``items`` on a thread of its own, at most ``depth`` items ahead of the caller
    (pyarrow's parser releases the GIL: the next batches are parsed while this thread hands
    the last ones on). Items, and an exception raised by the iteration, arrive in the order of
    the plain loop; a caller that stops early stops the thread."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def run():
        try:
            for x in items:
                if not put((0, x)):
                    return
            put((1, None))
        except BaseException as exc:  # handed to the caller, raised there at its place in the order
            put((2, exc))
        finally:  # on this thread, before the caller's join returns: the source's reader is closed
            close = getattr(items, "close", None)
            if close is not None:
                close()

    t = threading.Thread(target=run, name="rngcert-parse", daemon=True)
    t.start()
    try:
        while True:
            kind, x = q.get()
            if kind == 0:
                yield x
            elif kind == 1:
                return
            else:
                raise x
    finally:
        stop.set()
        t.join()


def ordered_map(func, batches, then=None, *, threads: int = 1):
    """``[then(func(*b)) for b in batches]``, with ``func`` run on ``threads`` threads while
    the next batches are produced; ``then`` runs in this thread, in the batches' order, so its
    results (and any exception, raised at its batch) are those of the serial loop. With
    ``threads`` > 1 the batches are also produced on a thread of their own (:func:`prefetch`),
    so that producing them (parsing) runs beside ``then``. At most ``2 * threads + 2`` batches
    are in flight, so memory stays bounded."""
    then = then or (lambda r: r)
    if threads <= 1:
        try:
            return [then(func(*b)) for b in batches]
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    out = []
    ahead = prefetch(batches, threads)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rngcert-read") as pool:
        pending: deque = deque()
        try:
            for b in ahead:
                pending.append(pool.submit(func, *b))
                while len(pending) > threads:
                    out.append(then(pending.popleft().result()))
            while pending:
                out.append(then(pending.popleft().result()))
        finally:
            for f in pending:  # an exception: the batches not yet handed on are dropped
                f.cancel()
            ahead.close()  # stops and joins the parsing thread now, not whenever the generator is collected
    return out


def _same_size(fh, name: str, scan: LineScan) -> None:
    """Raise :class:`InputError` when the file parsed is no longer the size the line scan hashed: it
    grew or was cut while it was read (a log still being written), so the rows parsed and the SHA-256
    that the report or the store gives for them would not be of the same bytes."""
    try:
        size = os.fstat(fh.fileno()).st_size
    except (AttributeError, OSError, io.UnsupportedOperation):  # bytes in memory: nothing can change them
        return
    if size != scan.size:
        raise InputError(f"{name}: the file changed while it was read ({scan.size} bytes when hashed, {size} after parsing); "
                         "read it again when it is complete")


def read_csv_parts(open_fh, name: str, scan: LineScan, process, *, block_size: int, encoding: str, on_restart=None, then=None,
                   threads: int = 1) -> tuple[list, str | None]:
    """Parse a CSV file batch by batch and return ``[then(process(cols, lines, rejected)), ...]``.

    ``open_fh()`` opens the file (binary) afresh. pyarrow parses first; when its records do not
    match the file's lines (:class:`LinesMerged`: an unbalanced quote swallowed the next lines, a
    line longer than a block), the file is parsed again line by line, so that no line is merged
    into another or lost. Returns the parts and a note when the slower path was taken.

    ``process`` may reduce each batch to a summary; with ``threads`` > 1 it runs on that many
    threads (it must then be thread-safe: a pure function of its batch) while the next batch is
    parsed. ``then`` (default: the identity) runs on the calling thread in file order: a
    consumer that keeps what it needs (returning None, or a description) goes there.
    ``on_restart()``, when given, is called before the second, line-by-line pass, so that such
    a consumer can forget the batches of the first pass.
    """
    keep_freed_heap()  # the batches' temporaries reuse the heap, not fresh pages (rngcert.collect.heap)
    try:
        with open_fh() as fh:
            parts = ordered_map(process, iter_csv_batches(fh, name, scan, block_size=block_size, encoding=encoding), then, threads=threads)
            _same_size(fh, name, scan)
            return parts, None
    except LinesMerged as exc:
        why = str(exc)[:160]
    if on_restart is not None:
        on_restart()
    with open_fh() as fh:
        parts = ordered_map(process, iter_csv_lines(fh, name, scan, encoding=encoding), then, threads=threads)
        _same_size(fh, name, scan)
    return parts, (
        f"{name}: read line by line, because the fast CSV parser's records did not match the file's lines "
        f"(an unclosed quote, a very long line, or bytes that are not text; detail: {why}): each line is one record, malformed lines are rejected"
    )


#: A pipe or FIFO that sends nothing for this many seconds is given up (never block forever).
STREAM_IDLE_SECONDS = 30.0
#: A stream is read into memory; longer ones must be saved to a file first.
STREAM_MAX_BYTES = 2 << 30


def is_stream(path) -> bool:
    """True for a pipe or FIFO (``<(…)``, ``/dev/stdin`` fed by a pipe); False for a regular
    file. Anything else (missing, a folder, a terminal or other device, a socket) is an
    :class:`InputError` that says what the path is."""
    import stat

    p = str(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISREG(st.st_mode):
        return False
    if stat.S_ISFIFO(st.st_mode):
        return True
    what = (
        "a folder" if stat.S_ISDIR(st.st_mode)
        else "a terminal or other character device" if stat.S_ISCHR(st.st_mode)
        else "a block device" if stat.S_ISBLK(st.st_mode)
        else "a socket" if stat.S_ISSOCK(st.st_mode)
        else "not a regular file"
    )
    raise InputError(f"{p}: is {what}, not a log file; give a file, or pipe the log in with <(…)")


def read_stream(path, *, idle: float | None = None) -> bytes:
    """Read a pipe or FIFO to its end without ever blocking forever.

    The FIFO is opened non-blocking: one that no process writes to reads as empty at once (the
    caller then reports an empty log); a writer that sends nothing for ``idle`` seconds
    (default :data:`STREAM_IDLE_SECONDS`) is given up with an :class:`InputError`."""
    import select

    idle = STREAM_IDLE_SECONDS if idle is None else idle
    p = str(path)
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(f"{p}: cannot be read: {exc.strerror or exc}") from None
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            try:
                b = os.read(fd, 1 << 20)
            except BlockingIOError:
                ready, _, _ = select.select([fd], [], [], idle)
                if not ready:
                    raise InputError(f"{p}: no data for {idle:g} s from this pipe/FIFO (is anything writing to it?); nothing was read") from None
                continue
            if not b:
                break
            size += len(b)
            if size > STREAM_MAX_BYTES:
                raise InputError(f"{p}: the stream is longer than {STREAM_MAX_BYTES >> 30} GiB; save it to a file and give the file")
            chunks.append(b)
    finally:
        os.close(fd)
    return b"".join(chunks)


def sha256_file(path, *, chunk: int = _CHUNK) -> tuple[str, int]:
    """SHA-256 (hex) and size of a file, hashed chunk by chunk (memory: one chunk)."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while True:
            b = fh.read(chunk)
            if not b:
                break
            h.update(b)
            size += len(b)
    return h.hexdigest(), size


def open_source(path, data: bytes | None = None) -> BinaryIO:
    """A binary stream over ``data`` if given, else over the file."""
    return io.BytesIO(data) if data is not None else open(path, "rb")


_RELEASE_EVERY = 8  # batches (of BLOCK_SIZE bytes) between two releases
_released = [0]


def release_arrow_memory(force: bool = False) -> None:
    """Return freed Arrow buffers to the operating system (mimalloc/jemalloc keep them by default),
    so that peak memory of a streamed read stays near the size of its result. Called once per
    batch, it releases every ``_RELEASE_EVERY``-th call (or when ``force``): giving the pages back
    after every 2 MiB batch made the kernel fault them in again, about 0.3 s of system time on a
    10 M-spin log, for some 30 MB less peak."""
    _released[0] += 1
    if not force and _released[0] % _RELEASE_EVERY:
        return
    try:
        pa.default_memory_pool().release_unused()
    except AttributeError:  # older pyarrow
        pass
