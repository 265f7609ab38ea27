"""Permanence lists (the format casinos publish): pocket numbers in spin order, one table per file.
"""

from __future__ import annotations

import re

import numpy as np

from rngcert.collect import _arrow
from rngcert.collect._lazy import pa, pc
from rngcert.collect.spinlog.columns import _decode, _norm_text
from rngcert.collect.spinlog.core import RejectedRow
from rngcert.collect.spinlog.jsonl import _text_of
from rngcert.equipment.wheel import VOID_TOKENS, Wheel

#: A number written with a decimal comma (``15,0``): digits, a comma, zeros, then a blank, ``;``, ``|`` or the line's end.
_DECIMAL_COMMA = re.compile(r"(?<=\d),0+(?=[ \t\r\n;|]|$)")
#: ... a list needs at least this many such commas, and at least :data:`DECIMAL_COMMA_SHARE` of its commas such, to
#: be read as decimal commas.
DECIMAL_COMMA_MIN = 10
DECIMAL_COMMA_SHARE = 0.5


def decimal_commas(text: str) -> bool:
    """Whether a permanence list writes its numbers with a decimal comma (``15,0 32,0 …``, an export of a
    German or French spreadsheet): at least :data:`DECIMAL_COMMA_MIN` commas before zeros that end a number,
    and at least :data:`DECIMAL_COMMA_SHARE` of its commas such. A comma-separated list cannot look like that
    (its commas precede any number; 1 in 37 is a 0, and a line's last number only is followed by its end), so
    those commas are not separators there: split on them, ``15,0`` gave the spins 15 and 0 (and one line
    ``1,2,3`` among 20,000 such numbers made certify FAIL pocket 0). The other commas still separate spins."""
    n = text.count(",")
    m = len(_DECIMAL_COMMA.findall(text)) if n >= DECIMAL_COMMA_MIN else 0
    return m >= DECIMAL_COMMA_MIN and m >= DECIMAL_COMMA_SHARE * n


def _read_permanence(data: bytes, name: str, wheel: Wheel | None = None, encoding: str | None = None):
    text = _text_of(data)[0] if encoding is None else data.decode(encoding)  # (given: the whole file's, for some of its lines)
    if "\r" in text and "\n" not in text:  # classic Mac line ends (CR alone): lines, not one line with titles and numbers run together
        text = text.replace("\r", "\n")
    if decimal_commas(text):  # (lines and their numbers stay where they were: only ",0" goes)
        text = _DECIMAL_COMMA.sub("", text)
    raw = text.encode("utf-8")
    # one string per line, each keeping its newline (trimmed with the other whitespace below)
    nl = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 0x0A)
    lines_arr = _arrow.strings(np.concatenate([[0], nl + 1, [len(raw)]]), raw)
    lines_arr = pc.utf8_trim_whitespace(lines_arr)
    blank = _arrow.ints(pc.utf8_length(lines_arr)) == 0
    if text.endswith("\n"):
        blank = blank[:-1]
    flat, parent = _tokens(lines_arr)
    nonempty = _arrow.ints(pc.utf8_length(flat)) > 0
    flat = flat.filter(_arrow.mask(nonempty))
    parent = parent[nonempty]
    rejects: list[RejectedRow] = []
    if wheel is not None and parent.size:
        # a line that is mostly words is a title ("Spielbank Tisch 1 19.04.2026"), not spins (c20):
        # rejected whole with its line, and none of its numbers taken as a spin
        title = _title_lines(flat, parent, wheel, len(lines_arr))
        if title.any():
            for ln in np.flatnonzero(title).tolist():
                rejects.append(RejectedRow(name, ln + 1, "line", "a title or text line (mostly words, not results): rejected whole, no spin taken from it",
                                           str(lines_arr[ln].as_py())[:200]))
            keep = ~title[parent]
            flat = flat.filter(_arrow.mask(keep))
            parent = parent[keep]
    # field number within the line (1-based), vectorised
    first = np.r_[True, parent[1:] != parent[:-1]] if parent.size else np.zeros(0, bool)
    grp_start = np.flatnonzero(first)
    pos_in_line = np.arange(parent.size) - np.repeat(grp_start, np.diff(np.r_[grp_start, parent.size]))
    return {"result": flat}, parent + 1, rejects, int(blank.sum()), ["result"], pos_in_line + 1


def _tokens(lines_arr: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """The tokens of a permanence list's lines and the line of each (vectorised). A line holding a comma,
    semicolon or vertical bar is split on those, and a piece of it that is not words alone further on white space;
    a line without one is split on white space. So ``Coin Flip, 2`` gives the two-word label ``Coin Flip``
    and ``2`` (split on every blank it gave ``Coin`` and ``Flip``, which no alias can read), while ``17 22, 5``
    gives 17, 22 and 5 as the streamed read of digits does, and ``17 22 x`` or ``1;31 x 17`` keeps its numbers."""
    pieces = pc.split_pattern_regex(lines_arr, r"[,;|]")
    piece_line = _arrow.ints(pc.list_parent_indices(pieces)).astype(np.int64)
    flat = pc.utf8_trim_whitespace(pc.list_flatten(pieces))
    delim = _arrow.bools(pc.match_substring_regex(lines_arr, r"[,;|]"))
    # a piece of words (``Coin Flip``, ``No Spin``) stays one token; one that mixes numbers and a word (``31 x 17``) splits
    words = _arrow.bools(pc.match_substring_regex(flat, r"[^\W\d_]")) & ~_arrow.bools(pc.match_substring_regex(flat, r"(?:^|\s)\d+(?:\s|$)"))
    whole = delim[piece_line] & words
    if whole.any():
        one = pa.ListArray.from_arrays(pa.array(np.arange(len(flat) + 1, dtype=np.int32)), flat)
        split = pc.if_else(_arrow.mask(whole), one, pc.split_pattern_regex(flat, r"\s+"))
    else:
        split = pc.split_pattern_regex(flat, r"\s+")
    parent = piece_line[_arrow.ints(pc.list_parent_indices(split)).astype(np.int64)]
    return pc.list_flatten(split), parent


def _title_lines(flat: pa.Array, parent: np.ndarray, wheel: Wheel, n_lines: int) -> np.ndarray:
    """(n_lines,) bool: lines of a permanence list that are titles or text: at least half of their
    tokens are not results the wheel reads (a number, a label, an alias, a void word) and one of
    them has a letter. A line of numbers with one stray word keeps its numbers (the word alone is
    rejected)."""
    numeric = _arrow.bools(pc.match_substring_regex(flat, r"^\d+([.,]0+)?$"))
    bad = ~numeric
    letter = np.zeros(parent.size, dtype=bool)
    if bad.any():
        rows = np.flatnonzero(bad)
        other = flat.take(_arrow.array(rows))
        idx, uniq = _decode(other)
        positions, symbols = wheel.token_table()
        ok_u = np.array([_norm_text(u) in positions or _norm_text(u) in symbols or _norm_text(u) in VOID_TOKENS for u in uniq] + [False])
        let_u = np.array([bool(re.search(r"[^\W\d_]", u or "")) for u in uniq] + [False])
        bad[rows] = ~ok_u[idx]
        letter[rows] = let_u[idx]
    n_tok = np.bincount(parent, minlength=n_lines)
    n_bad = np.bincount(parent, weights=bad, minlength=n_lines)
    n_let = np.bincount(parent, weights=letter, minlength=n_lines)
    return (n_let > 0) & (2 * n_bad >= n_tok) & (n_tok > 0)
