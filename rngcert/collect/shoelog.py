"""Card-scanner shoe logs (DESIGN §3 "Shoe log"), their writer, and the Shinn riffle data.

Format: CSV with a header, one row per card in dealing order; columns (case-insensitive)
``shoe_id``, ``position`` (1-based), ``card`` required; ``table``, ``timestamp``, ``stage``
(``before`` / ``after`` a shuffle), ``dealer``, ``shift`` and ``rotated`` (the card lies turned
end for end: ``1``/``0``, ``true``/``false``, ``yes``/``no``) optional. Card tokens
``A 2-9 T|10 J Q K`` + ``S H D C`` + optional ``#k`` deck serial (``QH#3``). Without a ``stage``
column every shoe is a dealt shoe (``after``). Consecutive shoes of a table are taken in the
order of their timestamps (ISO 8601, read as UTC when no zone is given; ordered as times, not as
text) when every shoe has one, otherwise in file order (a scanner writes shoes as they are dealt).

Validation (never silently fixed):

* a row that cannot be read (unknown card token, position not a positive integer, wrong
  number of fields, unknown stage, a timestamp that is not a date and time) is **rejected**: kept as a ``RejectedRow`` (file, line,
  column, reason, text) and counted;
* a shoe (one ``table``, ``shoe_id``, ``stage``) must be a legal multiset of ``decks`` decks: all
  52·decks cards, or — for a dealt shoe — a prefix of one (dealing stops at the cutting card).
  A missing position, a duplicated position, a card present more often than the decks hold,
  a duplicated serial (``QH#3`` twice), a serial above ``decks``, a mix of serialised and
  unserialised tokens, or a missing card in a complete shoe is a :class:`ShoeProblem` naming
  file, line, shoe, position and reason; the shoe is excluded from the tests and counted.

:func:`write_shoe_log` writes the same format, so ``rngcert shuffle simulate`` output and real
scanner logs take the same path.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rngcert.collect import _arrow
from rngcert.collect.spinlog import RejectedRow, _timestamps
from rngcert.equipment.cards import MAX_DECKS, parse_cards, token_table
from rngcert.errors import InputError, NoDataError

__all__ = ["RejectedRow", "ShoeProblem", "ShoeLog", "read_shoe_log", "write_shoe_log", "ShinnRiffles", "read_shinn_riffles"]

REQUIRED = ("shoe_id", "position", "card")
OPTIONAL = ("table", "timestamp", "stage", "dealer", "shift", "rotated")
STAGES = ("before", "after")
#: No timestamp (an empty cell, or no column).
_NO_TIME = np.iinfo(np.int64).min
_ROTATED = {"1": 1, "0": 0, "true": 1, "false": 0, "yes": 1, "no": 0, "y": 1, "n": 0, "": -1}
#: Suit symbols a scanner or a spreadsheet writes, read as the suit letters (black and white forms;
#: an emoji variation selector after the symbol is ignored).
SUIT_SYMBOLS = {"♠": "S", "♤": "S", "♥": "H", "♡": "H", "♦": "D", "♢": "D", "♣": "C", "♧": "C"}
#: Rows that are not cards of the decks but that scanners log: jokers and the cutting card. Each is
#: rejected by name (file, line, column, token, reason) and its shoe read without it, the positions
#: after it renumbered; upper-cased, without spaces, hyphens or underscores.
NON_CARDS = {**{t: "a joker" for t in ("JK", "JKR", "JOKER", "JOKER1", "JOKER2", "RJ", "BJ", "REDJOKER", "BLACKJOKER",
                                        "BIGJOKER", "SMALLJOKER", "LITTLEJOKER", "🃏", "🂿", "🃟")},
             **{t: "the cutting card" for t in ("CUT", "CC", "CUTCARD", "CUTTINGCARD", "CUTTER", "CUTCARDS", "PLASTIC", "YELLOW",
                                                 "SHUFFLECARD", "STOPCARD")}}


def normalise_card_token(token: str) -> str:
    """A card token with suit symbols read as letters (``10♥`` -> ``10H``, ``Q♠`` -> ``QS``)."""
    t = str(token).replace("\ufe0f", "")
    for sym, letter in SUIT_SYMBOLS.items():
        if sym in t:
            t = t.replace(sym, letter)
    return t


def non_card(token: str) -> str | None:
    """What a token that is not a card of the decks is (``"a joker"``, ``"the cutting card"``), or None."""
    t = str(token).strip().upper()
    for ch in " -_":
        t = t.replace(ch, "")
    return NON_CARDS.get(t)


@dataclass(frozen=True)
class ShoeProblem:
    """A shoe that is not a legal multiset of its decks (or a dealt prefix of one)."""

    file: str
    line: int
    table: str
    shoe: str
    stage: str
    position: int
    reason: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line > 0 else self.file
        tbl = f"table {self.table}, " if self.table else ""
        pos = f", position {self.position}" if self.position > 0 else ""
        return f"{where}: {tbl}shoe {self.shoe} ({self.stage}){pos}: {self.reason}"


@dataclass
class ShoeLog:
    """The accepted shoes of one or more shoe-log files.

    Attributes
    ----------
    decks : int
    serialised : bool
        Every token carried a deck serial, so card codes are unique within a shoe
        (``code = (serial-1)*52 + face``); otherwise ``code = face`` (0..51, repeated per deck).
    after_ids : list of (table, shoe_id)
        Accepted dealt shoes.
    after : (n_shoes, L) ndarray of int16
        Their cards, truncated to the common dealt length L = min(lengths) so the tests get a
        rectangular array (use ``lengths`` for the full prefixes).
    lengths : (n_shoes,) ndarray of int
    pair_ids : list of (table, shoe_id)
        Shoes with a complete accepted order both before and after the shuffle.
    pair_before, pair_after : (n_pairs, 52·decks) ndarray of int16 or None
    rejected : list of RejectedRow
    problems : list of ShoeProblem
    sources : list of dict
        path, sha256, rows, rejected rows, shoes accepted/rejected per file.
    notes : list of str
        How the shoes were ordered where it is not the file's order (shoe ids that count by one).
    """

    decks: int
    serialised: bool
    after_ids: list
    after: np.ndarray
    lengths: np.ndarray
    pair_ids: list
    pair_before: np.ndarray | None
    pair_after: np.ndarray | None
    rejected: list = field(default_factory=list)
    problems: list = field(default_factory=list)
    sources: list = field(default_factory=list)
    dealt: np.ndarray | None = None
    rotated: np.ndarray | None = None
    meta: list = field(default_factory=list)
    columns: tuple = ()
    notes: list = field(default_factory=list)

    @property
    def n_shoes(self) -> int:
        return len(self.after_ids)

    def sequence(self) -> dict:
        """Accepted dealt shoes grouped by table, each table's shoes in dealing order.

        Returns
        -------
        dict
            table -> list of indices into ``after_ids`` / ``dealt``, ordered by time (the parsed
            timestamp of the shoe's first card) when every shoe of the table has one, else by shoe
            id when the ids are a counter (whole numbers counting by one), else by file and first
            line: the ranks the reader gave (``meta[i]["rank"]``).
        """
        by: dict = {}
        for i, m in enumerate(self.meta):
            by.setdefault(m["table"], []).append(i)
        out = {}
        for t, idx in by.items():
            if all(self.meta[i].get("rank") is not None for i in idx):  # the reader's order (time, a shoe-id counter, or file)
                idx = sorted(idx, key=lambda i: self.meta[i]["rank"])
            elif all(self.meta[i].get("timestamp_us") is not None for i in idx):
                idx = sorted(idx, key=lambda i: (self.meta[i]["timestamp_us"], self.meta[i]["file"], self.meta[i]["line"]))
            else:
                idx = sorted(idx, key=lambda i: (self.meta[i]["file"], self.meta[i]["line"]))
            out[t] = idx
        return out


def _read_table(path: Path, data: bytes):
    """Columns (trimmed lower-case names → text arrays), physical line of each row, and rejects;
    read with the spin-log CSV reader (:mod:`rngcert.collect.csvstream`): every column as text,
    exact physical lines, a line whose quotes do not close or whose field count is wrong rejected
    on its own."""
    from rngcert.collect import csvstream

    name = str(path)
    csvstream.sniff_content(data[: 1 << 16], name)
    scan = csvstream.scan_lines(io.BytesIO(data))
    if scan.size == 0 or not scan.first_line.strip(b" \t\r\n"):
        raise NoDataError(f"{name}: the file is empty")
    encoding = csvstream.detect_encoding(scan, data[: 1 << 16])
    if encoding == "utf-16":
        raise InputError(f"{name}: the file is UTF-16; save it as UTF-8 (or ASCII) CSV")
    batches, how = csvstream.read_csv_parts(
        lambda: io.BytesIO(data), name, scan, lambda c, ln, bad: (c, ln, bad), block_size=1 << 24, encoding=encoding
    )
    header, _ = csvstream.header_fields(scan, name, encoding)
    raw = list(batches[0][0]) if batches else header
    cols = {}
    for i, c in enumerate(raw):
        arrs = [b[0][c] for b in batches if len(b[0][c])]
        arr = pa.concat_arrays([a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrs]) if arrs else pa.array([], type=pa.string())
        cols[header[i].lower() if i < len(header) else str(c).strip().lower()] = arr
    missing = [c for c in REQUIRED if c not in cols]
    if missing:
        raise InputError(f"{name}: line {scan.first_line_no}: missing column(s) {missing}; a shoe log needs {list(REQUIRED)} "
                         f"and may have {list(OPTIONAL)}, found {header}")
    row_lines = np.concatenate([b[1] for b in batches]) if batches else np.zeros(0, np.int64)
    rejects = [RejectedRow(name, int(line), "*", reason, text[:200]) for b in batches for line, text, reason in b[2]]
    if how:
        rejects = sorted(rejects, key=lambda r: r.line)
    return cols, row_lines.astype(np.int64), rejects


def _encode(arr: pa.Array, lower: bool = False) -> tuple[np.ndarray, list]:
    """Trimmed (and optionally lower-cased) strings → (int64 codes per row, distinct values)."""
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    arr = pc.utf8_trim_whitespace(pc.fill_null(arr, _arrow.text_scalar("")))
    arr = pc.replace_substring_regex(arr, r"^'([=+\-@\t\r'])", r"\1")  # as written by write_shoe_log (csvsafe)
    if lower:
        arr = pc.utf8_lower(arr)
    d = arr.dictionary_encode()
    return d.indices.to_numpy(zero_copy_only=False).astype(np.int64), d.dictionary.to_pylist()


def _global_ids(local_codes: np.ndarray, names: list, table: dict) -> np.ndarray:
    """Map per-file dictionary codes to ids shared by all files (``table``: name → id)."""
    lut = np.array([table.setdefault(nm, len(table)) for nm in names], dtype=np.int64)
    return lut[local_codes] if lut.size else np.zeros(0, dtype=np.int64)


def _optional_columns(cols: dict, n: int, ids: SimpleNamespace) -> tuple:
    """(timestamp, dealer and shift ids per row (-1: empty or no column), time in µs, timestamp unreadable, rotated 1/0 (-1: no
    column, -2: unreadable)) of one shoe log."""
    opt: dict = {}
    for oc in ("timestamp", "dealer", "shift"):
        if oc in cols:
            ids.seen.add(oc)
            c_, nm_ = _encode(cols[oc])
            opt[oc] = np.where(np.array([x == "" for x in nm_], dtype=bool)[c_] if n else np.zeros(0, bool), -1,
                               _global_ids(c_, nm_, ids.opt[oc]))
        else:
            opt[oc] = np.full(n, -1, dtype=np.int64)
    # timestamps are parsed (ISO 8601, UTC when no zone is given): consecutive shoes of a table are
    # ordered by time, never by the text of the cell (which puts "9:58" after "10:05")
    ts_us = np.full(n, _NO_TIME, dtype=np.int64)
    ts_bad = np.zeros(n, dtype=bool)
    if "timestamp" in cols and n:
        filled = opt["timestamp"] >= 0
        if filled.any():
            fi_ = np.flatnonzero(filled)
            vals, bad_ = _timestamps(cols["timestamp"].take(pa.array(fi_)))
            ts_us[fi_] = np.where(bad_, _NO_TIME, vals)
            ts_bad[fi_] = bad_
    if "rotated" in cols:
        ids.seen.add("rotated")
        rc_, rn_ = _encode(cols["rotated"], lower=True)
        rlut = np.array([_ROTATED.get(t, -2) for t in rn_], dtype=np.int64)
        rot = rlut[rc_] if n else np.zeros(0, np.int64)
    else:
        rot = np.full(n, -1, dtype=np.int64)
    return opt, ts_us, ts_bad, rot


def _shoe_columns(cols: dict, n: int, ids: SimpleNamespace) -> SimpleNamespace:
    """The columns of one shoe log parsed per row (positions, cards, stage, shoe and table ids shared by all files, the
    optional columns, timestamps, orientation); a value that does not parse is -1 (or flagged), for the row checks."""
    c = SimpleNamespace()
    pos_c, pos_names = _encode(cols["position"])
    # a position is a whole number of a few digits (a shoe has at most 416 cards); "999…9" is not one
    pos_lut = np.array([int(t) if t.isascii() and t.isdigit() and len(t) <= 9 else -1 for t in pos_names], dtype=np.int64)
    c.pos = pos_lut[pos_c] if n else np.zeros(0, np.int64)
    c.pos_empty = np.array([t == "" for t in pos_names], dtype=bool)[pos_c] if n else np.zeros(0, bool)
    c.card_c, card_names = _encode(cols["card"])
    f_lut, s_lut, ok_lut = parse_cards([normalise_card_token(t) for t in card_names])
    c.face, c.serial, c.good_card = f_lut[c.card_c], s_lut[c.card_c], ok_lut[c.card_c]
    c.nc_names = [non_card(t) for t in card_names]
    c.nc_lut = np.array([x is not None for x in c.nc_names], dtype=bool)
    c.is_nc = c.nc_lut[c.card_c] if n else np.zeros(0, bool)
    if "stage" in cols:
        st_c, st_names = _encode(cols["stage"], lower=True)
        st_lut = np.array([STAGES.index(t) if t in STAGES else -1 for t in st_names], dtype=np.int64)
        c.stage = st_lut[st_c]
    else:
        c.stage = np.ones(n, dtype=np.int64)
    sh_c, sh_names = _encode(cols["shoe_id"])
    c.sid = _global_ids(sh_c, sh_names, ids.shoes)
    c.no_table = np.zeros(n, dtype=bool)
    if "table" in cols:
        tb_c, tb_names = _encode(cols["table"])
        c.tid = _global_ids(tb_c, tb_names, ids.tables)
        empty = np.array([t == "" for t in tb_names], dtype=bool)
        if empty.any() and not empty.all():  # (a column empty on every row is no table at all, as for spin logs)
            c.no_table = empty[tb_c]
    else:
        c.tid = np.full(n, ids.tables.setdefault("", len(ids.tables)), dtype=np.int64)
    c.opt, c.ts_us, c.ts_bad, c.rot = _optional_columns(cols, n, ids)
    return c


def _shoe_row_checks(c: SimpleNamespace, cols: dict, lines: np.ndarray, name: str, shoes: dict, file_rej: list) -> tuple:
    """(row accepted, row is a joker or cutting card read around, row has an empty shoe id) of one shoe log; each rejected
    row added to ``file_rej`` with its first fault."""
    n = lines.size
    inv_shoe = {v: k for k, v in shoes.items()}
    badshoe = np.array([inv_shoe[i] == "" for i in range(len(inv_shoe))], dtype=bool)[c.sid] if n else np.zeros(0, bool)
    ok = np.ones(n, dtype=bool)
    # a joker or the cutting card: rejected by name; when its shoe, position and stage are readable the
    # shoe is read without it (the positions after it renumbered), not lost
    # (a non-card row with an empty position took no number: read around without renumbering)
    skip = c.is_nc & ~badshoe & ((c.pos >= 1) | c.pos_empty) & (c.stage >= 0) & ~c.no_table
    for mask, col, reason in ((badshoe, "shoe_id", "empty shoe_id"),
                              (c.no_table, "table", "empty table value (the other rows of the file name a table)"),
                              ((c.pos < 1) & ~(c.is_nc & c.pos_empty), "position", "position is not a positive integer"),
                              *((c.is_nc & (c.card_c == k), "card", f"{c.nc_names[k]}, not a card of the decks: the row is left out"
                                 + " and its shoe read without it (later positions renumbered)")
                                for k in np.flatnonzero(c.nc_lut)),
                              (~c.good_card, "card", "unknown card token (expected e.g. QH, 10S, 10♥, QH#3)"),
                              (c.stage < 0, "stage", "stage must be 'before' or 'after'"),
                              (c.rot < -1, "rotated", "rotated must be 1/0, true/false or yes/no"),
                              (c.ts_bad, "timestamp", "timestamp is not an ISO 8601 date and time (e.g. 2026-01-01T09:58:00Z)")):
        bad = np.flatnonzero(mask & ok)
        if bad.size:
            texts = cols[col].take(pa.array(bad)).to_pylist()
            file_rej.extend(RejectedRow(name, int(lines[i]), col, f"{reason}: {t!r}", str(t)[:200])
                            for i, t in zip(bad, texts))
        ok &= ~mask
    return ok, skip, badshoe


def _read_shoe_file(fi: int, path: Path, ids: SimpleNamespace) -> tuple:
    """Read file ``fi`` of a shoe log and check its rows: (its accepted rows' arrays, the (table, shoe, stage, line, file) of
    its rejected rows that name a shoe or None, the (table, shoe, stage, position) of its skipped non-card rows, its source
    entry, its rejected rows)."""
    from rngcert.collect import csvstream

    try:
        data = csvstream.read_stream(path) if csvstream.is_stream(path) else path.read_bytes()
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}") from None
    name = str(path)
    cols, lines, rej = _read_table(path, data)
    n = lines.size
    file_rej = list(rej)
    c = _shoe_columns(cols, n, ids)
    ok, skip, badshoe = _shoe_row_checks(c, cols, lines, name, ids.shoes, file_rej)
    tid, sid, stage, pos = c.tid, c.sid, c.stage, c.pos
    bad = np.flatnonzero(~ok & ~badshoe & ~skip)
    rk = None
    if bad.size:
        rk = np.stack([tid[bad], sid[bad], np.where(stage[bad] < 0, 1, stage[bad]), lines[bad], np.full(bad.size, fi)], axis=1)
        rk = _rejects_of_tables(rk, c.no_table[bad], tid[~c.no_table], sid[~c.no_table])
    keep = np.flatnonzero(ok)
    other = _other_cells(cols, n)
    part = {"file": np.full(keep.size, fi, dtype=np.int64), "tid": tid[keep], "sid": sid[keep],
            "stage": stage[keep], "pos": pos[keep], "face": c.face[keep].astype(np.int64),
            "serial": c.serial[keep].astype(np.int64), "line": lines[keep].astype(np.int64),
            "rot": c.rot[keep], "ts": c.opt["timestamp"][keep], "ts_us": c.ts_us[keep], "dealer": c.opt["dealer"][keep],
            "shift": c.opt["shift"][keep], "card_c": c.card_c[keep], "other": other[keep]}
    sk = np.flatnonzero(skip & (pos >= 1))  # the rows the positions after them are renumbered around
    # (with every cell that makes two of them exact repeats: one line sent twice took one number)
    skipped = (np.stack([tid[sk], sid[sk], stage[sk], pos[sk], np.full(sk.size, fi), c.card_c[sk], c.opt["timestamp"][sk],
                         c.opt["dealer"][sk], c.opt["shift"][sk], c.rot[sk], other[sk]], axis=1) if sk.size else np.zeros((0, 11), np.int64))
    # data rows: those read as fields and the lines the CSV reader rejected on their own (quotes, field count)
    source = {"path": name, "sha256": hashlib.sha256(data).hexdigest(), "rows": int(n) + len(rej),
              "accepted_rows": int(ok.sum()), "rejected_rows": len(file_rej), "non_card_rows": int(skip.sum())}
    return part, rk, skipped, source, file_rej


#: Columns whose cells a row's shoe key or :data:`_REPEAT_FIELDS` compare as written (the others are compared by
#: :func:`_other_cells`).
_COMPARED_AS_WRITTEN = ("shoe_id", "table", "card", "timestamp", "dealer", "shift")


def _other_cells(cols: dict, n: int) -> np.ndarray:
    """A code per row of its cells as written in the columns not compared as written elsewhere: ``position``, ``stage``,
    ``rotated`` (read as numbers or words: '011' is position 11, 'After' the stage after) and the columns a shoe log does
    not read (a read id, a reader's confidence). Two rows are exact repeats of each other only when these agree too."""
    other = [cols[k] for k in cols if k not in _COMPARED_AS_WRITTEN]
    if not n:
        return np.zeros(n, dtype=np.int64)
    text = [pc.fill_null(a.cast(pa.string()), _arrow.text_scalar("")) for a in other]
    return _encode(pc.binary_join_element_wise(*text, "\x1f") if len(text) > 1 else text[0])[0]


def _rejects_of_tables(rk: np.ndarray, no_table: np.ndarray, tid: np.ndarray, sid: np.ndarray) -> np.ndarray:
    """The keys ``(table, shoe, stage, line, file)`` of a file's rejected rows, a row rejected for its empty ``table`` cell
    given to every table of the file that has a shoe of its id (``tid``, ``sid``: the rows that name a table): that shoe
    lost a row and is not accepted as if dealt to that card."""
    if not no_table.any():
        return rk
    pairs = np.unique(np.stack([sid, tid], axis=1), axis=0) if sid.size else np.zeros((0, 2), np.int64)
    out = [rk[~no_table]]
    for row in rk[no_table]:  # rejected rows only (few); a row whose shoe id no table has stays where it was read
        tids = pairs[pairs[:, 0] == row[1], 1]
        out.append(np.array([[t, *row[1:]] for t in tids], dtype=np.int64).reshape(-1, 5) if tids.size else row[None, :])
    return np.concatenate(out)


def _group_checks(R: dict, gkey: np.ndarray, N: int, decks: int, min_prefix: int, serialised: bool) -> tuple:
    """The accepted rows sorted by shoe (``gkey``: table, shoe, stage) and position, and the checks of each shoe as a group:
    (sorted rows, first row and length of each shoe, its key and stage, shoe fails a check, most and fewest copies of one card
    in it, shoe complete). A shoe fails on gaps or repeats of positions, too many cards or copies of a card, deck serials
    out of range or mixed, spanning files, or (not complete) a ``before`` shoe or a prefix shorter than ``min_prefix``."""
    # sort rows by shoe, then position; group boundaries
    order = np.lexsort((R["pos"], gkey))
    R = {k: v[order] for k, v in R.items()}
    gkey = gkey[order]
    M = gkey.size
    starts = np.flatnonzero(np.r_[True, gkey[1:] != gkey[:-1]]) if M else np.zeros(0, np.int64)
    G = starts.size
    length = np.diff(np.r_[starts, M])
    grp = np.repeat(np.arange(G), length)
    rank = np.arange(M) - starts[grp] if M else np.zeros(0, np.int64)
    keys = gkey[starts] if G else np.zeros(0, np.int64)
    g_stage = keys % 2
    bad = np.zeros(G, dtype=bool)
    bad |= np.bincount(grp, weights=(R["pos"] != rank + 1), minlength=G) > 0  # gaps, duplicates
    bad |= length > N
    bad |= np.bincount(grp, weights=(R["serial"] > decks), minlength=G) > 0
    nser = np.bincount(grp, weights=(R["serial"] > 0), minlength=G)
    bad |= (nser > 0) & (nser < length)  # mixed serialised / unserialised in one shoe
    bad |= (np.minimum.reduceat(R["file"], starts) != np.maximum.reduceat(R["file"], starts)) if G else bad
    # card multiplicities, in chunks of shoes to bound memory
    chunk = max(1, 4_000_000 // N)
    max_face = np.zeros(G, dtype=np.int64)  # most copies of one card in the shoe
    min_face = np.zeros(G, dtype=np.int64)
    for g0 in range(0, G, chunk):  # loop over chunks of shoes, vectorised inside
        g1 = min(G, g0 + chunk)
        r0, r1 = starts[g0], (starts[g1] if g1 < G else M)
        local = grp[r0:r1] - g0
        fc = np.bincount(local * 52 + R["face"][r0:r1], minlength=(g1 - g0) * 52).reshape(g1 - g0, 52)
        bad[g0:g1] |= (fc > decks).any(axis=1)
        max_face[g0:g1] = fc.max(axis=1) if g1 > g0 else 0
        min_face[g0:g1] = fc.min(axis=1) if g1 > g0 else 0
        if serialised:
            code = (R["serial"][r0:r1] - 1) * 52 + R["face"][r0:r1]
            sc = np.bincount(local * N + np.clip(code, 0, N - 1), minlength=(g1 - g0) * N).reshape(g1 - g0, N)
            bad[g0:g1] |= (sc > 1).any(axis=1)
    complete = length == N
    bad |= ~complete & ((g_stage == 0) | (length < min_prefix))
    return R, starts, length, keys, g_stage, bad, max_face, min_face, complete


def _shoe_problems(rej_keys: list, S_: int, keys, bad, starts, length, R: dict, paths: list, rejected: list, label,
                   shoe_rules: tuple) -> list:
    """The problems of every shoe that fails (``bad``, to which the shoes with rejected rows are added here) and of every shoe
    whose rows were all rejected; ``shoe_rules`` are the last arguments of :func:`_check_shoe`."""
    # shoes with rejected rows
    rej_first: dict = {}
    if rej_keys:
        rk = np.concatenate(rej_keys)
        rej_file: dict = {}
        for t, s_, st, ln, fi in rk.tolist():  # rejected rows only (few)
            rej_first.setdefault(((t * S_ + s_) * 2 + st), []).append(ln)
            rej_file.setdefault(((t * S_ + s_) * 2 + st), fi)
    key_index = {int(k): i for i, k in enumerate(keys.tolist())}
    extra_problem_keys = []
    for k in rej_first:
        if k in key_index:
            bad[key_index[k]] = True
        else:
            extra_problem_keys.append(k)
    problems: list[ShoeProblem] = []
    rej_at = {(r.file, r.line): r for r in rejected}  # why each rejected row was rejected (few)
    for gi in np.flatnonzero(bad):  # messages only for shoes that fail
        r0, r1 = starts[gi], starts[gi] + length[gi]
        t, s_, st = label(int(keys[gi]))
        files = np.unique(R["file"][r0:r1])
        fname = str(paths[int(files[0])])
        if files.size > 1:
            problems.append(ShoeProblem(fname, int(R["line"][r0]), t, s_, st, 0,
                                        f"shoe spans files {[str(paths[int(f)]) for f in files]}; shoes must not span files"))
        d = {"file": fname, "pos": R["pos"][r0:r1], "lines": R["line"][r0:r1], "face": R["face"][r0:r1],
             "serial": R["serial"][r0:r1], "rejected_lines": rej_first.get(int(keys[gi]), []), "rejects": rej_at}
        probs = _check_shoe(d, t, s_, st, *shoe_rules)
        problems.extend(probs or [ShoeProblem(fname, int(R["line"][r0]), t, s_, st, 0, "shoe rejected")])
    for k in extra_problem_keys:  # shoes whose every row was rejected
        t, s_, st = label(k)
        ln = rej_first[k]
        fname = str(paths[rej_file[k]])
        problems.append(ShoeProblem(fname, ln[0], t, s_, st, 0,
                                    f"all {len(ln)} row(s) of this shoe rejected (first at line {ln[0]}{_why(rej_at, fname, ln[0])})"))
    return problems


def _read_shoe_files(paths: list) -> tuple:
    """Every file of a shoe log read and its rows checked: (the accepted rows of all files as concatenated arrays, the ids
    shared by the files (tables, shoes, optional columns, columns seen), keys of the rejected rows that name a shoe, skipped
    non-card rows, source entries, rejected rows)."""
    rejected: list[RejectedRow] = []
    sources = []
    parts = []  # per file: accepted-row arrays
    rej_keys = []  # (table id, shoe id, stage, line) of rejected rows that name a shoe
    skipped = []  # (table id, shoe id, stage, position) of joker and cutting-card rows: their shoes are read without them
    ids = SimpleNamespace(tables={}, shoes={}, opt={"timestamp": {}, "dealer": {}, "shift": {}}, seen=set())
    for fi, path in enumerate(paths):
        part, rk, sk, source, file_rej = _read_shoe_file(fi, path, ids)
        if rk is not None:
            rej_keys.append(rk)
        parts.append(part)
        skipped.append(sk)
        sources.append(source)
        rejected.extend(file_rej)
    R = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return R, ids, rej_keys, skipped, sources, rejected


def _before_as_shoes(R: dict, rej_keys: list, skipped: list, orders: bool) -> None:
    """Files of orders before a shuffle (``orders``) that hold no dealt shoe: their ``before`` rows (accepted, rejected and
    non-card rows alike) are read as the shoes, in place."""
    if not orders or not R["stage"].size or np.any(R["stage"] == 1):
        return
    R["stage"][:] = 1
    for arr in (*rej_keys, *skipped):
        if arr.size:
            arr[:, 2] = 1


def _renumber(R: dict, gkey: np.ndarray, skipped: list, S_: int) -> None:
    """Positions in ``R`` renumbered around the skipped non-card rows: a card after k of them in its shoe moves k up. A
    non-card row whose position a card of its shoe also holds took no number of its own: nothing is renumbered for it."""
    sk = np.concatenate(skipped) if skipped else np.zeros((0, 11), np.int64)
    sk = np.unique(sk, axis=0)  # a non-card row sent twice (every cell the same) is one card's place, not two
    if sk.size:
        # renumber: a card after k non-card rows of its shoe moves k positions up (vectorised by sorted keys)
        B = np.int64(10**9 + 1)
        skey = ((sk[:, 0] * S_ + sk[:, 1]) * 2 + sk[:, 2]) * B + sk[:, 3]
        skey = np.sort(skey[~np.isin(skey, gkey * B + R["pos"])])
        R["pos"] = R["pos"] - (np.searchsorted(skey, gkey * B + R["pos"], side="left") - np.searchsorted(skey, gkey * B, side="left"))


#: The columns of an accepted row that must all be equal for a later row to be an exact repeat of it (besides its shoe):
#: the card as written (``card_c``: 'QH' and 'Q♥' are one card but two reads) and the other cells as written (``other``).
_REPEAT_FIELDS = ("file", "pos", "face", "serial", "rot", "ts", "dealer", "shift", "card_c", "other")


def _drop_exact_repeats(R: dict, gkey: np.ndarray, paths: list, sources: list, rejected: list, label) -> tuple:
    """Rows that repeat an earlier row of the same file exactly (same table, shoe, stage, position, card, deck serial,
    orientation, timestamp, dealer and shift: a scanner that sent one read twice) are counted once, as a spin log's exact
    duplicates are: each later copy is a rejected row naming the line it repeats, counted in its file's
    ``repeated_rows`` (not unreadable), and its shoe is kept. A repeated position holding another card stays a shoe
    problem. Returns the accepted rows (without the cells as written, ``card_c`` and ``other``, which only this needs) and
    their shoe keys without the copies."""
    cells, R = R, {k: v for k, v in R.items() if k not in ("card_c", "other")}
    M = gkey.size
    if M < 2:
        return R, gkey
    order = np.lexsort((R["line"], R["pos"], gkey))
    same = gkey[order][1:] == gkey[order][:-1]
    for f in _REPEAT_FIELDS:
        v = cells[f][order]
        same &= v[1:] == v[:-1]
    if not same.any():
        return R, gkey
    # a run of copies names the first line of the run (the row kept)
    dup = np.flatnonzero(same) + 1
    first = np.flatnonzero(np.r_[True, ~same])
    kept_of = first[np.searchsorted(first, dup, side="right") - 1]
    drop = order[dup]
    by_file: dict = {}
    for row, kept in zip(drop.tolist(), order[kept_of].tolist()):  # the copies only
        fi = int(R["file"][row])
        table, shoe, stage = label(int(gkey[row]))
        where = f"table {table}, " if table else ""
        rejected.append(RejectedRow(str(paths[fi]), int(R["line"][row]), "*",
                                    f"exact repeat of line {int(R['line'][kept])} ({where}shoe {shoe}, {stage}, position {int(R['pos'][row])}, "
                                    "the same card): counted once", _fmt(int(R["face"][row]), int(R["serial"][row]))))
        by_file[fi] = by_file.get(fi, 0) + 1
    for fi, k in by_file.items():
        src = sources[fi]
        src["repeated_rows"] = k
        src["accepted_rows"] = int(src["accepted_rows"]) - k
        src["rejected_rows"] = int(src["rejected_rows"]) + k
    rank = {str(p): i for i, p in enumerate(paths)}
    rejected.sort(key=lambda r: (rank.get(r.file, len(paths)), r.line))  # (stable: the rows of one line keep their order)
    keep = np.ones(M, dtype=bool)
    keep[drop] = False
    return {k: v[keep] for k, v in R.items()}, gkey[keep]


def _dealt_shoes(after_g, starts, length, codes, R: dict, names: list, opt_names: dict, N: int, ranks: dict) -> tuple:
    """(full dealt prefixes padded with -1, their orientation, per-shoe metadata) of the accepted dealt shoes ``after_g``;
    ``ranks``: each shoe's place among all dealt shoes of its table (:func:`_dealt_ranks`)."""
    # full dealt prefixes (padded with -1), orientation and per-shoe metadata of the dealt shoes
    dealt_full = np.full((after_g.size, N), -1, dtype=np.int16)
    rot_full = np.full((after_g.size, N), -1, dtype=np.int8)
    meta = []
    for i, g in enumerate(after_g.tolist()):  # one entry per accepted shoe (vectorised per shoe)
        r0, ln = starts[g], length[g]
        dealt_full[i, :ln] = codes[r0:r0 + ln]
        rot_full[i, :ln] = R["rot"][r0:r0 + ln]
        meta.append({"table": names[g][0], "shoe": names[g][1], "file": int(R["file"][r0]), "line": int(R["line"][r0]),
                     "timestamp": opt_names["timestamp"].get(int(R["ts"][r0]), "") if R["ts"][r0] >= 0 else "",
                     "timestamp_us": int(R["ts_us"][r0]) if R["ts_us"][r0] != _NO_TIME else None,
                     "dealer": opt_names["dealer"].get(int(R["dealer"][r0]), "") if R["dealer"][r0] >= 0 else "",
                     "shift": opt_names["shift"].get(int(R["shift"][r0]), "") if R["shift"][r0] >= 0 else "",
                     "length": int(ln), "rank": ranks.get(g)})
    return dealt_full, rot_full, meta


def _dealt_ranks(keys, g_stage, good, starts, R: dict, rej_keys: list, S_: int, shoe_names: dict, table_names: dict | None = None,
                 notes: list | None = None) -> dict:
    """``{group: rank}`` of each accepted dealt shoe among *all* the dealt shoes of its table, those left out for problems
    (or with every row rejected) included, in the order :meth:`ShoeLog.sequence` uses (time when every shoe has a
    timestamp, else file and line): two accepted shoes were dealt one after the other only when their ranks are
    consecutive, so a shoe is never rebuilt from a shoe that was not the one dealt before it. A table whose shoe ids
    are whole numbers counting up by one (at least 3/4 of its steps) leaves a rank free where its ids skip: a shoe
    that is not in the log. Without timestamps, a table whose shoe ids are such a counter is ranked in id order
    whatever the file's order (a newest-first export chained every shoe to the one dealt after it), and a sentence
    saying so is appended to ``notes``."""
    entries: dict = {}
    for g in np.flatnonzero(g_stage == 1).tolist():  # one entry per shoe
        r0 = starts[g]
        ts = int(R["ts_us"][r0])
        entries.setdefault(int(keys[g]) // 2 // S_, []).append((None if ts == _NO_TIME else ts, int(R["file"][r0]), int(R["line"][r0]), g,
                                                                shoe_names[int(keys[g]) // 2 % S_]))
    if rej_keys:  # shoes whose every row was rejected: no group, placed at their first rejected line
        rk = np.concatenate(rej_keys)
        known = set(keys.tolist())
        first: dict = {}
        for t, s_, st, ln, fi in rk.tolist():  # rejected rows only (few)
            k = (t * S_ + s_) * 2 + st
            if st == 1 and k not in known:
                first[k] = min(first.get(k, (fi, ln)), (fi, ln))
        for k, (fi, ln) in first.items():
            entries.setdefault(k // 2 // S_, []).append((None, fi, ln, -1, shoe_names[k // 2 % S_]))
    ranks = {}
    for t, es in entries.items():
        timed = all(e[0] is not None for e in es)
        es.sort(key=lambda e: (e[0], e[1], e[2]) if timed else (e[1], e[2]))
        if not timed and _id_counter([e[4] for e in es]):  # shoe ids that count by one: their order, whatever the file's
            moved = sum(1 for a, b in zip(es, sorted(es, key=lambda e: int(e[4]))) if a is not b)
            if moved:
                es.sort(key=lambda e: int(e[4]))
                if notes is not None:
                    tn = (table_names or {}).get(t, "")
                notes.append(f"{'table ' + str(tn) + ': ' if tn else ''}the shoes are taken in the order of "
                                 f"their shoe ids ({es[0][4]} to {es[-1][4]}, a counter), not the file's: {moved:,} of {len(es):,} "
                                 "dealt shoes stand elsewhere in the file (an export sorted another way, newest first or by card); "
                                 "each shoe's order before the shuffle is rebuilt from the shoe whose id comes before it")
        r = np.cumsum(_rank_steps([e[4] for e in es]))
        ranks.update({e[3]: int(r[i]) for i, e in enumerate(es) if e[3] >= 0 and good[e[3]]})
    return ranks


def _id_counter(ids: list) -> bool:
    """Shoe ids that are whole numbers counting by one (sorted, at least 3/4 of the steps are +1; at least 3 shoes):
    a scanner's shoe counter, which gives the dealing order."""
    if len(ids) < 3 or not all(str(x).isascii() and str(x).isdigit() and len(str(x)) <= 12 for x in ids):
        return False
    v = np.sort(np.array([int(x) for x in ids], dtype=np.int64))
    return bool(np.mean(np.diff(v) == 1) >= 0.75)


def _rank_steps(ids: list) -> np.ndarray:
    """Rank steps between a table's consecutive shoes (0 for the first): 1, or 2 where whole-number ids that count
    up by one (at least 3/4 of the steps) skip, a shoe missing from the log."""
    steps = np.ones(len(ids), dtype=np.int64)
    steps[:1] = 0
    if len(ids) < 3 or not all(str(x).isascii() and str(x).isdigit() and len(str(x)) <= 12 for x in ids):
        return steps
    d = np.diff(np.array([int(x) for x in ids], dtype=np.int64))
    if np.mean(d == 1) >= 0.75:
        steps[1:] += d != 1
    return steps


def _before_after_pairs(after_g, complete, names: list, before_of: dict, codes, starts, N: int) -> tuple:
    """(ids, before orders, after orders) of the complete dealt shoes whose order before the shuffle was logged too."""
    pair_a = [g for g in after_g if complete[g] and names[g][:2] in before_of]
    if pair_a:
        pair_b = np.array([before_of[names[g][:2]] for g in pair_a])
        pair_a = np.array(pair_a)
        pb = codes[starts[pair_b][:, None] + np.arange(N)[None, :]]
        pa_ = codes[starts[pair_a][:, None] + np.arange(N)[None, :]]
        pair_ids = [names[g][:2] for g in pair_a]
    else:
        pb = pa_ = None
        pair_ids = []
    return pair_ids, pb, pa_


def _count_problems(sources: list, problems: list) -> None:
    """Each source's shoes with problems and its problem findings."""
    for src in sources:
        # shoes left out, not symptoms: one card replaced by another is a duplicate, an excess and a missing card
        src["shoe_problems"] = len({(p.table, p.shoe, p.stage) for p in problems if p.file == src["path"]})
        src["shoe_problem_findings"] = sum(1 for p in problems if p.file == src["path"])


#: A dealt shoe shorter than this share of its log's median dealt shoe is a shoe cut short (a scanner that stopped, a shoe
#: abandoned): a shoe problem, left out, because the game-level tests, the rank tests and the trackers play every shoe only
#: to the length of the shortest one.
CUT_SHORT = 0.5


def read_shoe_log(paths: Sequence[str | Path] | str | Path, *, decks: int, min_prefix: int = 1, cut_short: float = CUT_SHORT,
                  orders: bool = False) -> ShoeLog:
    """Read and validate card-scanner shoe logs.

    Parameters
    ----------
    paths : path or sequence of paths
        CSV shoe logs (DESIGN §3).
    decks : int
        Decks per shoe (1..8).
    min_prefix : int
        Shortest dealt shoe accepted as a prefix (e.g. the cards in front of the cutting card);
        shorter dealt shoes are reported as problems. ``before`` shoes must be complete.
    cut_short : float
        A dealt shoe shorter than this share of the median dealt shoe of the log (among the shoes
        without another problem) is a problem too: a shoe cut short (:data:`CUT_SHORT`; 0 turns the
        check off).
    orders : bool
        The files give orders before a shuffle (``--before FILE``): when they hold no dealt shoe, their ``before``
        shoes are read as the shoes (a file of ``stage = before`` rows only is the natural such file).

    Returns
    -------
    ShoeLog

    Raises
    ------
    InputError
        A file that cannot be read as CSV or lacks a required column (naming file and line).
    NoDataError
        No shoe at all could be accepted.

    Notes
    -----
    Parsing is vectorised: each column is dictionary-encoded by pyarrow and only the distinct
    tokens are parsed in Python; shoes are checked with sorted-array group operations, and the
    per-shoe messages are built only for shoes that fail.
    """
    if isinstance(decks, bool) or not isinstance(decks, (int, np.integer)) or not 1 <= decks <= MAX_DECKS:
        raise InputError(f"decks must be an integer in 1..{MAX_DECKS}, got {decks!r}")
    decks = int(decks)
    N = 52 * decks
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = [Path(p) for p in paths]
    R, ids, rej_keys, skipped, sources, rejected = _read_shoe_files(paths)
    _before_as_shoes(R, rej_keys, skipped, orders)
    tables, shoes_ids, opt_ids, seen_columns = ids.tables, ids.shoes, ids.opt, ids.seen
    opt_names = {k: {v: nm for nm, v in d.items()} for k, d in opt_ids.items()}
    table_names = {v: k for k, v in tables.items()}
    shoe_names = {v: k for k, v in shoes_ids.items()}
    S_ = max(len(shoes_ids), 1)
    gkey = (R["tid"] * S_ + R["sid"]) * 2 + R["stage"]
    _renumber(R, gkey, skipped, S_)
    label = lambda k: (table_names[k // 2 // S_], shoe_names[k // 2 % S_], STAGES[k % 2])  # noqa: E731  (a shoe key's names)
    R, gkey = _drop_exact_repeats(R, gkey, paths, sources, rejected, label)
    any_serial = bool(np.any(R["serial"] > 0))
    any_unserial = bool(np.any(R["serial"] == 0))
    serialised = any_serial and not any_unserial
    R, starts, length, keys, g_stage, bad, max_face, min_face, complete = _group_checks(R, gkey, N, decks, min_prefix, serialised)
    short = _short_floor(length, g_stage, bad, cut_short, complete)
    problems = _shoe_problems(rej_keys, S_, keys, bad, starts, length, R, paths, rejected, label,
                              (N, decks, min_prefix, serialised, any_serial and any_unserial, short))
    _count_problems(sources, problems)
    good = ~bad
    _check_deck_count(decks, length, max_face, min_face, good, bad, g_stage, [label(int(k)) for k in keys.tolist()], paths)
    codes = (R["serial"] - 1) * 52 + R["face"] if serialised else R["face"]
    codes = codes.astype(np.int16)
    names = [label(int(k)) for k in keys.tolist()]
    order_notes: list = []
    after_g = sorted((g for g in np.flatnonzero(good & (g_stage == 1))), key=lambda g: names[g][:2])
    if not after_g:
        raise NoDataError(f"no shoe could be accepted from {[str(p) for p in paths]}: "
                          f"{len(rejected)} rows rejected, {len(problems)} shoe problems"
                          + (f"; first: {problems[0]}" if problems else ""))
    after_g = np.array(after_g)
    lengths = length[after_g]
    L = int(lengths.min())
    after = codes[starts[after_g][:, None] + np.arange(L)[None, :]]
    before_of = {names[g][:2]: g for g in np.flatnonzero(good & (g_stage == 0))}
    dealt_full, rot_full, meta = _dealt_shoes(after_g, starts, length, codes, R, names, opt_names, N,
                                              _dealt_ranks(keys, g_stage, good, starts, R, rej_keys, S_, shoe_names, table_names, order_notes))
    pair_ids, pb, pa_ = _before_after_pairs(after_g, complete, names, before_of, codes, starts, N)
    return ShoeLog(decks, serialised, [names[g][:2] for g in after_g], after, lengths,
                   pair_ids, pb, pa_, rejected, problems, sources, dealt_full, rot_full if "rotated" in seen_columns else None, meta,
                   tuple(sorted(seen_columns)), order_notes)


def _short_floor(length: np.ndarray, g_stage: np.ndarray, bad: np.ndarray, share: float, complete: np.ndarray) -> tuple[int, float, float]:
    """(fewest cards a dealt shoe may hold before it is a shoe cut short, the median dealt shoe it is measured against,
    ``share``): ``share`` of the median length of the dealt shoes without another problem; 0 cards when the check is off.
    The dealt shoes cut short are marked in ``bad`` (in place)."""
    ok = length[(g_stage == 1) & ~bad]
    if not ok.size or share <= 0:
        return 0, 0.0, share
    med = float(np.median(ok))
    floor = int(math.ceil(share * med))
    bad |= (g_stage == 1) & ~complete & (length < floor)
    return floor, med, share


def _log_p_at_most(decks: int, d: int, L_max: int) -> list[float]:
    """For L = 0..L_max, log P(every card face appears at most ``d`` times among the first L
    cards of a shuffled shoe of ``decks`` decks) = log([x^L] (sum_{j<=d} C(decks, j) x^j)^52 /
    C(52·decks, L)), by exact integer arithmetic (one polynomial power for every L)."""
    from math import comb, log

    poly = [comb(decks, j) for j in range(d + 1)]
    acc = [1]
    for _ in range(52):  # 52 faces; integer polynomial product truncated at degree L_max
        nxt = [0] * min(len(acc) + d, L_max + 1)
        for i, a in enumerate(acc):
            if a:
                for j, b in enumerate(poly):
                    if i + j <= L_max:
                        nxt[i + j] += a * b
        acc = nxt
    return [(-math.inf if L >= len(acc) or acc[L] == 0 else log(acc[L]) - log(comb(52 * decks, L))) for L in range(L_max + 1)]


def _check_deck_count(decks, length, max_face, min_face, good, bad, g_stage, names, paths) -> None:
    """The card multiset of the shoes against ``decks`` (a wrong ``--decks`` is an input error,
    not a verdict): a log whose shoes never hold any card more than ``d < decks`` times, when
    shoes of ``decks`` decks would almost surely (probability of the contrary < 1e-9, exact
    hypergeometric count) — e.g. one complete deck in each shoe with ``--decks 2`` — or a log in
    which most shoes hold some card more often than ``decks`` decks can."""
    N = 52 * decks
    G = length.size
    where = ", ".join(str(p) for p in paths)
    over = np.flatnonzero(max_face > decks)
    if G >= 3 and over.size * 2 > G:  # one bad shoe is a shoe problem; most shoes: the declared decks are wrong
        g = int(over[0])
        t, shoe, st = names[g]
        tbl = f"table {t}, " if t else ""
        raise InputError(
            f"{where}: {over.size} of {G} shoes hold some card more often than --decks {decks} allows "
            f"({tbl}shoe {shoe}: a card {int(max_face[g])} times in {int(length[g])} cards; {decks} deck(s) hold each card {'once' if decks == 1 else f'{decks} times'}): "
            f"the shoes have more decks than declared; check --decks"
        )
    ok = np.flatnonzero(good)
    if ok.size == 0:
        return
    d_obs = int(max_face[ok].max())
    if d_obs >= decks:
        return
    table = _log_p_at_most(decks, d_obs, int(length[ok].max()))
    logp = float(sum(table[int(L)] for L in length[ok].tolist()))
    if logp >= math.log(1e-9):
        return
    g = int(ok[0])
    t, shoe, st = names[g]
    tbl = f"table {t}, " if t else ""
    L = int(length[g])
    full = [i for i in ok.tolist() if min_face[i] == max_face[i] and length[i] == 52 * max_face[i]]
    if full:
        k = int(max_face[full[0]])
        t2, shoe2, _ = names[full[0]]
        first = ", ".join(str(names[i][1]) for i in full[:5]) + (" …" if len(full) > 5 else "")
        raise InputError(
            f"{where}: {len(full)} of {ok.size} shoes (shoe {first}) hold exactly {k} complete deck(s) "
            f"({52 * k} cards, each card {'once' if k == 1 else f'{k} times'}), not the {N} cards of --decks {decks}: "
            f"{N - 52 * k} cards ({decks - k} deck(s)) missing from every such shoe; check --decks"
        )
    raise InputError(
        f"{where}: no shoe holds any card more than {d_obs} time(s) ({tbl}shoe {shoe}: {L} cards, at most {int(max_face[g])} of a card), "
        f"which shoes of --decks {decks} would show with probability below 1e-9: the shoes look like {d_obs}-deck shoes; check --decks"
    )


def _fmt(face: int, serial: int = 0) -> str:
    tok = token_table(False)[face]
    return f"{tok}#{serial}" if serial > 0 else tok


def _why(rejects: dict, file: str, line: int) -> str:
    """", column card, token 'ZZ': unknown card token" for a rejected row (empty when unknown)."""
    r = rejects.get((file, int(line)))
    if r is None:
        return ""
    return f", column {r.column}, token {r.text!r}: {r.reason.rsplit(': ', 1)[0]}"


def _position_problems(P, pos: np.ndarray, lines: np.ndarray, N: int, decks: int) -> list[ShoeProblem]:
    """The positions of a shoe's cards that repeat, lie past its ``N`` cards, or are missing (five of each
    named), in position order; ``P(line, position, reason)`` makes a problem."""
    out = []
    o = np.argsort(pos, kind="stable")
    ps, ls = pos[o], lines[o]
    dup = np.flatnonzero(ps[1:] == ps[:-1]) + 1
    for i in dup[:5]:
        out.append(P(ls[i], ps[i], f"position {ps[i]} appears twice (also line {ls[i - 1]})"))
    up = np.unique(ps)
    top = int(up.max())
    if top > N:
        out.append(P(ls[-1], top, f"extra cards: position {top} but {decks} deck(s) hold {N} cards"))
    gaps = np.setdiff1d(np.arange(1, min(top, N) + 1), up)
    for g in gaps[:5]:
        out.append(P(-1, g, f"position {g} missing"))
    if gaps.size > 5:
        out.append(P(-1, 0, f"{gaps.size} positions missing in all"))
    return out


def _check_shoe(d, table, shoe, stage, N, decks, min_prefix, serialised, mixed, short=(0, 0.0, 0.0)) -> list[ShoeProblem]:
    """Every reason a shoe is not a legal multiset of ``decks`` decks (or a dealt prefix of one); ``short``: (fewest cards
    of a dealt shoe not cut short, the log's median dealt shoe, the share) from :func:`_short_floor`."""
    f = d["file"]
    out = []
    P = lambda line, pos, reason: ShoeProblem(f, int(line), table, shoe, stage, int(pos), reason)  # noqa: E731
    pos, lines, face, serial = d["pos"], d["lines"], d["face"], d["serial"]
    rej_lines = d.get("rejected_lines", [])
    k = pos.size
    if rej_lines:
        out.append(P(rej_lines[0], 0, f"{len(rej_lines)} row(s) of this shoe rejected (first at line {rej_lines[0]}"
                                      f"{_why(d.get('rejects') or {}, f, rej_lines[0])}); the shoe cannot be checked as a whole"))
    if k == 0:
        return out
    out += _position_problems(P, pos, lines, N, decks)
    if mixed and not serialised:
        if np.any(serial > 0) and np.any(serial == 0):
            out.append(P(lines[int(np.argmin(pos))], 0, "mix of serialised (#k) and unserialised card tokens"))  # the first card's line
    if np.any(serial > decks):
        i = int(np.flatnonzero(serial > decks)[0])
        out.append(P(lines[i], pos[i], f"deck serial #{serial[i]} but the shoe has {decks} deck(s)"))
    if serialised:
        code = (serial.astype(np.int64) - 1) * 52 + face
        oc = np.argsort(code, kind="stable")
        dpos = np.flatnonzero(code[oc][1:] == code[oc][:-1]) + 1
        for i in dpos[:5]:
            a, b = oc[i - 1], oc[i]
            out.append(P(lines[b], pos[b], f"duplicated serial card {_fmt(face[b], serial[b])} (also at line {lines[a]}, position {pos[a]})"))
    counts = np.bincount(face, minlength=52)
    for fc in np.flatnonzero(counts > decks)[:5]:
        where = np.flatnonzero(face == fc)
        i = where[decks]
        out.append(P(lines[i], pos[i], f"card {_fmt(fc)} appears {counts[fc]} times; {decks} deck(s) hold {decks}"))
    complete = k == N
    if complete:
        for fc in np.flatnonzero(counts < decks)[:5]:
            out.append(P(-1, 0, f"missing card {_fmt(fc)}: {counts[fc]} of {decks}"))
        if serialised:
            have = np.zeros(N, dtype=bool)
            code = (serial.astype(np.int64) - 1) * 52 + face
            have[code[(code >= 0) & (code < N)]] = True
            for c in np.flatnonzero(~have)[:5]:
                out.append(P(-1, 0, f"missing card {_fmt(c % 52, c // 52 + 1)}"))
    if not complete and not out:
        why = _short_shoe(k, stage, N, min_prefix, short)
        if why:
            out.append(P(-1, k + 1, why))
    return out


def _short_shoe(k: int, stage: str, N: int, min_prefix: int, short: tuple) -> str | None:
    """Why a shoe of ``k`` of its ``N`` cards (and no other problem) is left out, or None for a dealt prefix."""
    if stage == "before":
        return f"order before the shuffle has {k} of {N} cards; it must hold the whole shoe"
    if k < min_prefix:
        return f"dealt shoe has {k} cards, fewer than the {min_prefix} in front of the cutting card: missing card(s) from position {k + 1}"
    if k < short[0]:
        return (f"dealt shoe stops after {k} cards, under {short[2]:.0%} of the log's median dealt shoe ({short[1]:.0f} cards): a shoe "
                "cut short (a scanner that stopped, a shoe abandoned); left out, because the game-level tests, the rank tests and "
                "the trackers play every shoe only to the length of the shortest")
    return None


from rngcert.collect.shinn import ShinnRiffles, read_shinn_riffles  # noqa: E402  (their own modules; importable from here as before)
from rngcert.collect.shoewrite import write_shoe_log  # noqa: E402
