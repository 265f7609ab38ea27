"""The spin-log collector's entry points: :func:`read_spin_log` (files to per-table spins, exact or compact)
and :func:`read_spin_rows` (every row of one file, for the store).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from rngcert.collect._lazy import pa
from rngcert.collect.spinlog.capture import _capture_format, _options_iv, _read_capture, _read_feed
from rngcert.collect.spinlog.columns import _resolve_labels, timestamp_notes
from rngcert.collect.spinlog.compact import _CompactLog, _NeedExact, _NeedSort
from rngcert.collect.spinlog.core import (
    SECOND_SOURCE_REASON,
    RejectedRow,
    SourceInfo,
    SpinLog,
    _file_checks,
    _process,
    _span,
    sha256_of,
    spelling_notes,
    unread_columns,
)
from rngcert.collect.spinlog.csv import _read_csv_streaming
from rngcert.collect.spinlog.detect import detect_format
from rngcert.collect.spinlog.jsonl import _present_ids, _read_jsonl, _read_jsonl_streaming, _text_of
from rngcert.collect.spinlog.order import DUPLICATE_REASON, NEAR_DUPLICATE_REASON, _assemble_tables, _mark_near_duplicates, _mark_repeats, _split_sources
from rngcert.collect.spinlog.permanence import DECIMAL_COMMA_MIN, DECIMAL_COMMA_SHARE, _read_permanence, decimal_commas
from rngcert.collect.spinlog.tablenames import STDIN_NAME, same_name_note, tables_of
from rngcert.equipment.wheel import Wheel
from rngcert.errors import NoDataError


# long: 34 lines of docstring and 9 of signature of the public reader; the code is the reading pipeline in order (files, sources, repeats, near
#   duplicates, tables)
def read_spin_log(
    paths: Sequence[str | Path] | str | Path,
    wheel: Wheel,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    pool: bool = False,
    min_round_interval: float = 0.0,
    names: Sequence[str] | None = None,
) -> SpinLog:
    """Read one or more spin logs for ``wheel``.

    Parameters
    ----------
    paths : path or sequence of paths
        Log files, in time order when several (their spins are concatenated per table).
    wheel : Wheel
        The wheel the log was recorded on; results are resolved against its labels.
    columns : mapping, optional
        ``{our_name: name_in_file}`` for foreign column names, e.g. ``{"result": "Number"}``.
    fmt : {"auto", "csv", "jsonl", "permanence"} or "feed:ID-or-TOML"
        File format; "auto" detects from the extension and first line (and the packaged live
        result feeds, :mod:`rngcert.collect.feed`, from their ``detect`` pattern); ``feed:`` names a
        packaged feed or a feed definition file.
    pool : bool
        Pool all tables into one sequence (default: one sequence per ``table``).
    min_round_interval : float
        Seconds: two rows of a table with the same result (and the same ``payout`` and
        ``multiplier`` where the log has them) closer in time than this are one round logged
        twice (a scraper's double read): counted once, the later row rejected, and the pairs
        reported as a data-integrity finding (:data:`NEAR_DUPLICATE_RULE`). 0 (the default
        here; ``certify`` uses 5 s) turns the check off.
    names : sequence of str, optional
        The paths the files are named by, one per path (default: ``paths``): a file without a ``table`` column is the
        table :func:`~rngcert.collect.spinlog.tablenames.tables_of` names. ``verify --rerun`` gives the paths the
        report recorded.

    Returns
    -------
    SpinLog

    Raises
    ------
    InputError
        Unknown format, missing ``result`` column, a mapped column that is not in the file.
    NoDataError
        A file with no readable spin at all (empty, header only, or every row rejected).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    columns = _options_iv(_capture_format(fmt), columns)
    streams: dict[str, bytes] = {}  # pipes and FIFOs are read once, whichever path reads them
    paths = [_stdin_path(p, streams) for p in paths]
    try:
        try:
            return _read_spin_log_compact(paths, wheel, columns, fmt, pool, streams, min_round_interval, names=names)
        except _NeedSort:  # spin ids in no order: read again, sorting them out of core
            try:
                return _read_spin_log_compact(paths, wheel, columns, fmt, pool, streams, min_round_interval, sort=True, names=names)
            except OSError:  # (no room for the sort's temporary files: the exact path below, in memory)
                pass
    except _NeedExact:
        pass  # not the usual shape: the exact path below reads the log again, keeping every row's keys

    parts = []
    sources = []
    rejected: list[RejectedRow] = []
    notes: list[str] = []
    file_table = tables_of(paths, names)
    for p in paths:
        part = _read_file(p, wheel, columns, fmt, data=streams.get(str(p)), table=file_table[str(p)])
        _check_readable(part, int(part["accepted_mask"].sum()), wheel)
        part["file_table"] = file_table[str(p)]
        part["notes"] = list(part["notes"]) + spelling_notes(part["name"], part.get("spelled"))
        parts.append(part)
    if not pool and (split := same_name_note([str(p) for p in (paths if names is None else names)])):
        notes.append(split)
    comparisons = _split_sources(parts, wheel)
    repeat_notes = _mark_repeats(parts, wheel)
    near = _mark_near_duplicates(parts, wheel, min_round_interval, pool)
    for part in parts:
        rejected.extend(part["rejected"])
        notes.extend(part["notes"])
        sources.append(
            _source_info(part, int(part["accepted_mask"].sum()))
        )
    if not any(pt["accepted_mask"].any() or pt["void_mask"].any() for pt in parts):
        first = next(r for pt in parts for r in pt["rejected"])
        raise NoDataError(f"no readable spin in {', '.join(pt['name'] for pt in parts)}: every row is rejected (first: {first.file}:{first.line}: {first.reason})")

    # Level: positions if every accepted result resolved to a position.
    all_pos = all(np.all(pt["pos"][pt["accepted_mask"]] >= 0) for pt in parts)
    if wheel.kind == "roulette" or (wheel.order_known and all_pos):
        level, space, key = "position", wheel.position_space(), "pos"
    else:
        level, space, key = "symbol", wheel.symbol_space(), "sym"
        if wheel.order_known:
            notes.append("results are symbols, not section numbers: tests that need the wheel order do not apply")
    tables = _assemble_tables(parts, key, pool, notes, repeat_notes)
    for pt, comp_of in zip(parts, comparisons):
        pt.setdefault("source_comparison", {})
        for tname, comp in comp_of.items():
            pt["source_comparison"].setdefault(tname, []).extend(comp)
    for pt in parts:
        for tname, comp in (pt.get("source_comparison") or {}).items():
            target = tables.get(tname) or (tables.get("(all)") if pool else None)
            if target is not None:
                target.source_comparison.extend(comp)
    for tname, f in near.items():
        if tname in tables:
            if f.get("note_only"):  # the check could not be applied: a note, not a finding
                tables[tname].notes.append(f["text"])
            else:
                tables[tname].findings.append(f)
    period = None
    for pt in parts:
        if pt.get("ts") is not None:
            live = pt["accepted_mask"] | pt["void_mask"]
            if live.any():
                period = _span(period, pt["ts"][live])
    return SpinLog(wheel, level, space, tables, sources, rejected, notes, period, file_table)




def _stdin_path(p, streams: dict[str, bytes]):
    """``-`` (the Unix convention for standard input): read standard input once into ``streams``
    and name it :data:`STDIN_NAME`; any other path is returned as it is."""
    if str(p) != "-":
        return p
    if STDIN_NAME not in streams:
        import sys

        src = getattr(sys.stdin, "buffer", None)
        streams[STDIN_NAME] = src.read() if src is not None else sys.stdin.read().encode("utf-8")
    return Path(STDIN_NAME)


def _source_info(part: dict, accepted: int, name: str | None = None) -> SourceInfo:
    """The provenance of one read file: its rows, accepted, void, rejected (and of those, exact
    duplicates and near-duplicate rounds: read, and counted once; a second result source's rows)."""
    # one pass over the rejected rows (millions, in an export of another wheel), then one test per distinct reason
    reasons = Counter(r.reason for r in part["rejected"])
    dups = sum(c for why, c in reasons.items() if why.startswith((DUPLICATE_REASON, NEAR_DUPLICATE_REASON)))
    near = sum(c for why, c in reasons.items() if why.startswith(NEAR_DUPLICATE_REASON))
    second = sum(c for why, c in reasons.items() if why.startswith(SECOND_SOURCE_REASON))
    return SourceInfo(name or part["name"], part["sha256"], part["format"], part["rows"], accepted, part["void_count"], len(part["rejected"]),
                      part["blank"], dups, second_source=second, near_duplicates=near)


def _check_readable(part: dict, accepted: int, wheel: Wheel | None = None) -> None:
    """A file with no accepted and no void spin is a :class:`NoDataError` naming its commonest reasons,
    and the packaged wheel whose labels its rejected cells are, when one is (case c14's kind: a
    money-wheel list given to the European default is not 500 'title lines')."""
    if accepted == 0 and part["void_count"] == 0:
        reasons: dict[str, int] = {}
        for r in part["rejected"]:
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
        top = sorted(reasons.items(), key=lambda kv: -kv[1])[:3]
        detail = "; ".join(f"{c}× {r}" for r, c in top) if top else "no data rows"
        if not top and str(part.get("format", "")).startswith("protocol:") and part.get("notes"):
            detail = part["notes"][0]  # what the capture held (a protocol whose 'ignore' message matches every line: 0 game-state messages)
        hint = (_wheel_of_rejected(part["rejected"], wheel) or _colour_hint(part["rejected"], wheel)) if wheel is not None else None
        raise NoDataError(f"{part['name']}: no readable spin in {part['rows']} row(s) ({detail})" + (f"; {hint}" if hint else ""))


#: Rejected rows whose cells :func:`_wheel_of_rejected` reads (the first of the file).
_HINT_ROWS = 1000


def _wheel_of_rejected(rejected, wheel: Wheel) -> str | None:
    """'the results look like the W wheel's labels: certify with --equipment W' when another packaged
    wheel reads every token of the first :data:`_HINT_ROWS` rejected rows (a permanence line's tokens,
    a result cell), else None."""
    import re

    from rngcert.equipment.wheel import VOID_TOKENS, load_wheel, packaged_wheels

    cells = [r for r in rejected[:_HINT_ROWS] if r.text and (r.column == "line" or "is not a pocket/section" in r.reason)]  # results only
    tokens = {t.strip().strip("\"'").strip().lower() for r in cells for t in (re.split(r"[,;|\s]+", r.text) if r.column == "line" else [r.text])}
    tokens.discard("")
    if not tokens:
        return None
    for wid in packaged_wheels():  # (four wheels)
        if wid == wheel.id:
            continue
        pos, sym = load_wheel(wid).token_table()
        if all(t in pos or t in sym or t in VOID_TOKENS for t in tokens):
            return f"the results look like the {wid} wheel's labels: certify with --equipment {wid}"
    return None


#: A result cell that is a pocket and its colour ("17 Red", "Black 20", "0-green", "32R"): the colour words of
#: English, French and German permanence lists and their initials.
_POCKET_AND_COLOUR = r"^\s*(?:(\d{1,2}|00)\s*[-/,;:]?\s*({c})|({c})\s*[-/,;:]?\s*(\d{1,2}|00))\s*$"
_COLOURS = "red|black|green|rouge|noir|vert|rot|schwarz|grün|gruen|r|b|g|n|v|s"


def _colour_hint(rejected, wheel: Wheel) -> str | None:
    """'the results give each pocket with its colour ...' when most of the first :data:`_HINT_ROWS` rejected
    result cells (or lines of a permanence list) are a pocket of ``wheel`` and a colour word, else None."""
    import re

    cells = [r.text.strip() for r in rejected[:_HINT_ROWS] if r.text and (r.column == "line" or "is not a pocket/section" in r.reason)]
    if not cells:
        return None
    pattern = re.compile(_POCKET_AND_COLOUR.replace("{c}", _COLOURS), re.IGNORECASE)
    pos, _ = wheel.token_table()
    both = [m for m in map(pattern.match, cells) if m and (m.group(1) or m.group(4)).lower() in pos]
    if len(both) < 0.9 * len(cells):
        return None
    shown = ", ".join(repr(c) for c in dict.fromkeys(cells[:3]))
    return (f"the results give each pocket with its colour ({shown}): rngcert reads a result as the pocket alone (its "
            "colour follows from the wheel), so write the number only in the result column")


def _read_spin_log_compact(paths, wheel, columns, fmt, pool, streams: dict[str, bytes], min_round_interval: float = 0.0, sort: bool = False,
                           names: Sequence[str] | None = None) -> SpinLog:
    """:func:`read_spin_log` in constant memory per spin: CSV logs streamed batch by batch, JSON Lines
    block by block (:func:`_read_jsonl_streaming`) and permanence lists block by block
    (:mod:`rngcert.collect.permstream`), into a :class:`_CompactLog`, which keeps only the
    small-integer arrays the tests need (spin ids out of file order in runs, and text ids of letters
    and a number: :mod:`rngcert.collect.spinlog.idorder`). Raises :class:`_NeedExact` when a log is
    not in a shape it can prove equal to the exact path's reading (the exact path then reads it), and
    :class:`_NeedSort` when the spin ids of a table are in no order (then ``sort``: they are sorted out of
    core, :mod:`rngcert.collect.spinlog.idsort`)."""
    acc = _CompactLog(wheel, pool, min_round_interval, sort=sort)
    try:
        return _read_compact(acc, paths, wheel, columns, fmt, streams, names)
    finally:
        if acc.sorter is not None:
            acc.sorter.close()


# long: the files one after the other, each by its format's reader (CSV, JSON Lines, permanence list), into one accumulator
def _read_compact(acc: _CompactLog, paths, wheel, columns, fmt, streams: dict[str, bytes], names: Sequence[str] | None = None) -> SpinLog:
    """The files read one after the other into ``acc`` (:func:`_read_spin_log_compact`; ``names`` as in :func:`read_spin_log`)."""
    from rngcert.collect import csvstream

    metas, sources, rejected, notes, counts = [], [], [], [], []
    file_table = tables_of(paths, names)
    if not acc.pool and (split := same_name_note([str(p) for p in (paths if names is None else names)])):
        notes.append(split)
    for p in paths:
        p = Path(p)
        name = str(p)
        data = streams.get(name)
        if data is None and csvstream.is_stream(p):
            data = streams[name] = csvstream.read_stream(p)
        if data is None:
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
        else:
            if not data.strip(b"\xef\xbb\xbf \t\r\n"):
                raise NoDataError(f"{name}: the file is empty (a FIFO that no process writes to reads as empty): no spins to certify")
            head = data[: 1 << 16]
        csvstream.sniff_content(head, name)
        f = fmt if fmt != "auto" else detect_format(p, head)
        if f not in ("csv", "permanence", "jsonl") or (f == "permanence" and columns):
            raise _NeedExact("not a CSV log, a JSON Lines log or a permanence list")
        if f == "permanence" and decimal_commas(head[: head.rfind(b"\n") + 1].decode("latin-1")):
            raise _NeedExact("a permanence list with decimal commas")  # (the exact read decides on the whole file)
        acc.begin(file_table[name])
        n0 = acc.pos.n
        if f == "permanence":
            from rngcert.collect import permstream

            most = ((data is not None and len(data)) or p.stat().st_size) // 2 + 1  # at most one spin per two bytes
            for g in (acc.pos, acc.sym, acc.tab, acc.line_start):  # (only the columns a list has: no other is filled)
                if g is not None:
                    g.reserve(most)
            try:
                part = permstream.read_permanence(p, wheel, acc, (RejectedRow, _read_permanence, _resolve_labels), data=data)
            except permstream.NeedWholeLines as exc:
                raise _NeedExact(str(exc)) from None
            n_commas, before_zero = part.pop("commas")
            if before_zero >= DECIMAL_COMMA_MIN and before_zero >= DECIMAL_COMMA_SHARE * n_commas:  # (the head alone cannot tell: the exact
                raise _NeedExact("most commas of the permanence list stand before a 0: maybe decimal commas")  # reader decides on the whole file)
            if part.pop("cr_only"):
                raise _NeedExact("a permanence list with CR line ends and no LF")
        elif f == "jsonl":
            part = _read_jsonl_streaming(p, wheel, columns, data=data, consume=acc, table=file_table[name])
        else:
            part = _read_csv_streaming(p, wheel, columns, data=data, consume=acc, table=file_table[name])  # (the file-level checks hold: see _CompactLog.add)
        accepted = acc.pos.n - n0
        _check_readable(part, accepted, wheel)
        metas.append(part)
        notes.extend(part["notes"] + spelling_notes(name, part.get("spelled")))
        counts.append(accepted)
    level, space, tables = acc.finish(metas, notes)
    if acc.repeat_rejected is not None:  # the rows repeated spin ids reject (ids sorted out of core), as _mark_repeats rejects them (compact)
        from rngcert.collect.spinlog.rejects import RejectedRows

        rejected, per_file = RejectedRows.merge([pt["rejected"] for pt in metas], acc.repeat_rejected)
        for i, part in enumerate(metas):
            part["rejected"] = per_file[i]
            if i in acc.repeat_removed:
                counts[i] -= acc.repeat_removed[i][0]
                part["void_count"] -= acc.repeat_removed[i][1]
    for i, part in enumerate(metas):
        if acc.repeat_rejected is None:
            rejected.extend(part["rejected"])
        sources.append(_source_info(part, counts[i], str(paths[i])))
    if acc.repeat_rejected and not any(counts) and not any(pt["void_count"] for pt in metas):  # (every row left out: as the exact path says it)
        first = rejected[0]
        raise NoDataError(f"no readable spin in {', '.join(pt['name'] for pt in metas)}: every row is rejected (first: {first.file}:{first.line}: {first.reason})")
    return SpinLog(wheel, level, space, tables, sources, rejected, notes, acc.period, file_table)


def _read_file(p, wheel, columns, fmt, *, data: bytes | None = None, text_codes: bool = True, table: str | None = None) -> dict:
    """Read and resolve one file (``data`` instead of reading ``p`` when given).

    CSV files are streamed in record batches (bounded memory, see
    :mod:`rngcert.collect.csvstream`); JSON Lines and permanence lists are read whole, and so
    are pipes and FIFOs (``<(…)``). Bytes that are not a text log (compressed, binary, UTF-16
    without a byte-order mark) are refused with what they are. ``table``: the file's table when it has no
    ``table`` column (:func:`~rngcert.collect.spinlog.tablenames.file_tables`; default its name without the extension).
    """
    from rngcert.collect import csvstream

    p = Path(p)
    name = str(p)
    stream = False
    if data is None:
        if csvstream.is_stream(p):
            stream = True
            data = csvstream.read_stream(p)
        else:
            with open(p, "rb") as fh:
                head = fh.read(1 << 16)
            csvstream.sniff_content(head, name)
            f = fmt if fmt != "auto" else detect_format(p, head)
            if f == "csv":
                return _file_checks(_read_csv_streaming(p, wheel, columns, text_codes=text_codes, table=table), text_codes)
            data = p.read_bytes()
    if not data.strip(b"\xef\xbb\xbf \t\r\n"):
        why = " (a FIFO that no process writes to reads as empty)" if stream else ""
        raise NoDataError(f"{name}: the file is empty{why}: no spins to certify")
    csvstream.sniff_content(data[: 1 << 16], name)
    f = fmt if fmt != "auto" else detect_format(p, data)
    if f.startswith("protocol"):
        return _file_checks(_read_capture(data, name, f, wheel, columns, text_codes), text_codes)
    fieldpos = None
    if f == "csv":
        return _file_checks(_read_csv_streaming(p, wheel, columns, data=data, text_codes=text_codes, table=table), text_codes)
    if f.startswith("feed:"):
        return _file_checks(_read_feed(data, name, f[5:], wheel, columns, text_codes, table), text_codes)
    if f == "jsonl":
        present: list = []  # (table, spin id) of the lines rejected before their fields were read
        cols, lines, rej, blank, header = _read_jsonl(data, name, columns, present)
        if not cols and rej:  # (not "no 'result' column (columns: )": no line gave a column at all)
            raise NoDataError(f"{name}: no readable spin in {len(rej)} line(s): none is a JSON object (first: line {rej[0].line}: "
                              f"{rej[0].reason}); is it JSON Lines? (--format {fmt})" if fmt != "auto" else
                              f"{name}: no readable spin in {len(rej)} line(s): none is a JSON object (first: line {rej[0].line}: {rej[0].reason})")
    else:
        cols, lines, rej, blank, header, fieldpos = _read_permanence(data, name, wheel)
    part = _process(cols, lines, rej, name, wheel, columns, fieldpos, header, text_codes=text_codes)
    if f == "jsonl":  # (their ids are in the file: not gaps)
        part["extra_ids"], part["extra_text_ids"] = _present_ids(present, "table" in part["colindex"], table or Path(name).stem)
    part["notes"] = list(part["notes"]) + timestamp_notes(name, part.get("ts_kinds")) + unread_columns(name, header, columns)
    if f == "permanence" and decimal_commas(_text_of(data)[0]):
        part["notes"] = list(part["notes"]) + [f"{name}: numbers written with a decimal comma (15,0): read as 15; the comma does not separate spins"]
    if _text_of(data)[1] != "utf-8":  # (the reader decoded it the same way)
        part["notes"] = list(part["notes"]) + [f"{name}: not valid UTF-8; read as latin-1"]
    part.update(format=f, sha256=sha256_of(data), blank=blank, size=len(data))
    return _file_checks(part, text_codes)


@dataclass
class SpinRows:
    """Every row of one log file, in file order, for the store (:mod:`rngcert.collect.store`).

    Rows are the readable records of the file (for permanence lists: each number). A row is
    either accepted, void, or rejected (then also listed in ``rejected``); ``line`` gives its
    1-based physical line. Rows the CSV reader could not split into fields (wrong number of
    fields) are not rows here; they are only in ``rejected``.

    Attributes
    ----------
    path, sha256, format : str
        Source file, SHA-256 of its bytes, detected format.
    size : int
        Bytes read.
    line : (n,) int64
        Physical line of each row.
    pos, sym : (n,) int64
        Wheel position / symbol id of the result, -1 where none.
    accepted, void : (n,) bool
        Row status (rejected rows are neither).
    timestamp : (n,) int64 or None
        Microseconds since the epoch, UTC (meaningless where the row is rejected).
    table, dealer, spin_id : pyarrow string Array or None
        The trimmed text of these columns ("" where empty), None when the file has no such column.
    direction : (n,) int8 or None
        0 cw, 1 ccw, -1 unknown.
    release : (n,) int64 or None
        Release position, -1 unknown.
    rejected : list of RejectedRow
    blank_lines : int
    """

    path: str
    sha256: str
    format: str
    size: int
    line: np.ndarray
    pos: np.ndarray
    sym: np.ndarray
    accepted: np.ndarray
    void: np.ndarray
    timestamp: np.ndarray | None
    table: pa.Array | None
    dealer: pa.Array | None
    spin_id: pa.Array | None
    direction: np.ndarray | None
    release: np.ndarray | None
    rejected: list[RejectedRow]
    blank_lines: int

    @property
    def n(self) -> int:
        return int(self.line.size)


#: :class:`SpinRows` field <- key of the part :func:`_read_file` returns (``line`` apart: made int64)
_SPIN_ROWS_FROM_PART = {
    "path": "name", "sha256": "sha256", "format": "format", "size": "size", "pos": "pos", "sym": "sym",
    "accepted": "accepted_mask", "void": "void_mask", "timestamp": "ts", "table": "table", "dealer": "dealer",
    "spin_id": "spin_id", "direction": "direction", "release": "release", "rejected": "rejected", "blank_lines": "blank",
}


def read_spin_rows(
    path: str | Path,
    wheel: Wheel,
    *,
    columns: Mapping[str, str] | None = None,
    fmt: str = "auto",
    data: bytes | None = None,
) -> SpinRows:
    """Read every row of one spin log with its status and line (the arrays :func:`read_spin_log`
    is built on), for the store.

    Parameters
    ----------
    path : path
        The log file (its name is used in rejects; it is read unless ``data`` is given).
    wheel : Wheel
        The wheel the log was recorded on.
    columns, fmt
        As in :func:`read_spin_log`.
    data : bytes, optional
        The file's bytes, when already read (e.g. a tail of a growing log prefixed by its header).

    Returns
    -------
    SpinRows

    Raises
    ------
    InputError
        Unknown format, missing ``result`` column, a mapped column that is not in the file.
    NoDataError
        The file is empty. (A file whose rows are all rejected is returned, not raised.)
    """
    columns = _options_iv(_capture_format(fmt), columns)
    pt = _read_file(path, wheel, columns, fmt, data=data, text_codes=False)
    return SpinRows(line=np.asarray(pt["lines"], dtype=np.int64), **{field: pt[key] for field, key in _SPIN_ROWS_FROM_PART.items()})
