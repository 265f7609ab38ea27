"""Permanence lists read in constant memory (issue 26): the shape casinos publish, pocket numbers
separated by commas, semicolons, vertical bars or white space, many or one a line.

The file is read in blocks of :data:`CHUNK` bytes cut at a line end and parsed with numpy: every
byte is classed (digit, blank, separator, line end, other), the digit runs are the tokens, and a
token of one to three digits is looked up in a table that :func:`rngcert.collect.spinlog._resolve_labels`
filled once for the 1,110 such strings (so ``07``, ``00`` and ``37`` mean on this path exactly what they
mean on the exact path). A line holding any other byte (a letter, a ``.``, a non-ASCII byte, a
vertical tab) or a longer token is read by the exact reader, :func:`rngcert.collect.spinlog._read_permanence`,
on just those lines: titles (c20), words, labels spelled in letters and decimals keep their rules, and
their line numbers are the file's. Each block's spins go to a :class:`rngcert.collect.spinlog._CompactLog`
(1 byte a spin for the outcome, plus the line start and table code), so a 10^8-spin list needs a few
hundred MB, not a copy of the file per stage.

The encoding is decided as the exact reader decides it for the whole file (UTF-8 with or without BOM,
else Latin-1); only the lines read by the exact reader can hold non-ASCII bytes, so only they are
checked. When invalid UTF-8 is found after non-ASCII bytes were already read as UTF-8, the file is
read again as Latin-1 (the compact log forgets the first pass). A list whose commas stand before a ``0`` (ten or more, and most of
its commas) may write its numbers with decimal commas (``15,0``), which the exact reader decides on the whole file:
the commas are counted here and the caller sends such a list to the exact reader.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np

from rngcert.collect._lazy import pa
from rngcert.collect.heap import keep_freed_heap
from rngcert.errors import NoDataError

#: Bytes read and parsed at a time: the reader's working memory is about 100 times this (1 << 18: 26 MB), and
#: blocks that fit the CPU caches parse faster than larger ones (0.08 CPU-s a million spins here against 0.12 s at 4 MB).
CHUNK = 1 << 18

_BLANK, _NL, _DIGIT, _SEP, _ODD = 0, 1, 2, 3, 4  # (a line holding a byte of class >= _DIGIT is not blank)
_CLASS = np.full(256, _ODD, dtype=np.uint8)
_CLASS[48:58] = _DIGIT
_CLASS[[9, 13, 32]] = _BLANK  # tab, CR, space: white space for the split and the trim alike
_CLASS[[44, 59, 124]] = _SEP  # ',', ';' and '|'
_CLASS[10] = _NL
#: The code of a digit string of length 1, 2, 3 is its value plus 0, 10 or 110 (``7``, ``07`` and ``007``
#: are three strings: the wheel decides what each means): the index of :func:`_token_table`'s strings.
_MAX_DIGITS = 3


@functools.lru_cache(maxsize=4096)
def field_name(field: int) -> str:
    """The ``column`` of a rejected token of a permanence list, ``field 3``: one string a field number, shared by its
    rows (a list of another wheel's labels has millions of rejected tokens)."""
    return f"field {int(field)}"


def _code_table() -> np.ndarray:
    """``_CODE[d0 * 121 + d1 * 11 + d2]``: the code of a token from the digit values of its first three bytes
    (10 for a byte that is not a digit: the token ended before it)."""
    t = np.zeros(11**3, dtype=np.int16)
    for d0 in range(10):
        for d1 in range(11):
            for d2 in range(11):
                t[d0 * 121 + d1 * 11 + d2] = d0 if d1 == 10 else (d0 * 10 + d1 + 10 if d2 == 10 else d0 * 100 + d1 * 10 + d2 + 110)
    return t


_CODE = _code_table()


class NeedWholeLines(Exception):
    """A line longer than a block holds text or a number of more than three digits: the exact
    reader, which sees whole lines, must read the list (titles and words are judged per line)."""


class _Latin1(Exception):
    """Invalid UTF-8 found after non-ASCII bytes were read as UTF-8: read the file again as Latin-1."""


def _token_table(wheel, _resolve_labels):
    """(texts, pos, sym, void, bad, reasons) of every digit string of 1 to 3 digits, by code."""
    texts = [str(d) for d in range(10)] + [f"{d:02d}" for d in range(100)] + [f"{d:03d}" for d in range(1000)]
    pos, sym, void, bad, reasons, _ = _resolve_labels(texts, wheel)  # (a list, distinct: no pyarrow column, no pyarrow import)
    return texts, pos, sym, void, bad, reasons


def _blocks(p: Path, data: bytes | None):
    if data is not None:
        for a in range(0, len(data), CHUNK):
            yield data[a : a + CHUNK]
        return
    with open(p, "rb") as fh:
        while True:
            b = fh.read(CHUNK)
            if not b:
                return
            yield b


#: :data:`_CLASS` as a ``bytes.translate`` table (one C pass over a block, no index array).
_CLASS_BYTES = _CLASS.tobytes()
#: Each byte's digit value, 10 for a byte that is not a digit (a ``bytes.translate`` table).
_DIGIT_VALUE_BYTES = bytes(b - 48 if 48 <= b < 58 else 10 for b in range(256))
#: Both at once for :func:`_simple_scan` (one pass over a block, not two): a digit's value 0-9, a line end 10,
#: white space 11, a separator 12, any other byte 13 (:data:`_CLASS` and :data:`_DIGIT_VALUE_BYTES` in one).
_V_NL, _V_ODD = 10, 13
_VALUE_CLASS_BYTES = bytes(min(v, 10) if c in (_DIGIT, _NL) else {_BLANK: 11, _SEP: 12, _ODD: 13}[c]
                           for v, c in zip(_DIGIT_VALUE_BYTES, _CLASS.tolist()))


def _simple_scan(buf: bytes):
    """The tokens of a block in the usual shape, in a few passes over its bytes: ``(nl, starts,
    length, tok_line, dv)`` (the first four as :meth:`_Reader._scan` gives them, ``length`` None where there are
    several tokens on a line or separators: not needed, only checked to be at most three; ``dv``: the digit value
    of every byte of ``buf + b"\\n\\n"``, 10 for a byte that is not a digit), or None when the block is not
    simple (a byte of another class, a token of more than three digits, a line without a token: blank, or
    separators only), and the general scan must read it. ``buf`` ends with a line end."""
    # a line end before the first byte and two after the last; the values of _VALUE_CLASS_BYTES
    val = np.frombuffer((b"\n" + buf + b"\n\n").translate(_VALUE_CLASS_BYTES), dtype=np.uint8)
    cls = val[: len(buf) + 1]
    lo, hi = int(cls.min()), int(cls.max())
    if hi >= _V_ODD:
        return None
    nl = np.flatnonzero(cls[1:] == _V_NL)
    if hi == _V_NL and lo < _V_NL:  # digits and line ends only: a line is its one token
        starts = np.empty_like(nl)
        starts[:1] = 0
        np.add(nl[:-1], 1, out=starts[1:])
        length = nl - starts
        if nl.size == 0 or int(length.min()) < 1 or int(length.max()) > _MAX_DIGITS:  # (a blank line, a long token)
            return None
        return nl, starts, length, np.arange(nl.size, dtype=np.int32), val[1:]
    dig = cls < _V_NL  # (dig[j]: byte j - 1 of the block is a digit; dig[0], the line end before it, is not)
    first = dig[1:] & ~dig[:-1]  # a token's first digit: a digit after a byte that is not one
    starts = np.flatnonzero(first)
    d = dig[1:]
    np.logical_and(d[3:], d[2:-1], out=first[3:])  # (first reused) four digits in a row: a token longer than three
    first[3:] &= d[1:-2]
    first[3:] &= d[:-3]
    if starts.size == 0 or bool(first[3:].any()):
        return None
    del cls, dig, first, d
    n_lines, n_tok = nl.size, starts.size
    # (token lengths are not made: only their bound is checked, above; a token cannot hold a line end, so one that
    # starts before a line's end ends there)
    if n_tok == n_lines:  # one token a line?
        if starts[0] < nl[0] and bool(np.all(starts[1:] > nl[:-1])) and bool(np.all(starts < nl)):
            return nl, starts, None, np.arange(n_lines, dtype=np.int32), np.minimum(val[1:], _V_NL)
        return None
    per_line = np.diff(np.searchsorted(starts, nl), prepend=0)  # tokens before each line end, line by line
    if not per_line.all():
        return None
    return nl, starts, None, np.repeat(np.arange(n_lines, dtype=np.int32), per_line), np.minimum(val[1:], _V_NL)


class _Reader:
    def __init__(self, name: str, wheel, consume, encoding: str, hooks):
        self.name, self.wheel, self.consume, self.enc = name, wheel, consume, encoding
        self.row, self.read_lines, self.resolve = hooks
        self.texts, self.pos, self.sym, self.void, self.bad, self.reasons = _token_table(wheel, self.resolve)
        self.by_digits = [a[_CODE] for a in (self.pos, self.sym, self.void, self.bad)]  # the same, looked up by _CODE's index
        # 1 where a token is void or not a pocket: a block without one (the usual) needs neither array looked up
        self.flag_by_digits = (self.by_digits[2].astype(bool) | (self.by_digits[3] >= 0)).view(np.uint8)
        # position and symbol side by side in one 4-byte entry: a block takes both with one gather, and a token is void or
        # not read exactly when it is neither a position nor a symbol (both -1: the entry -1), so one comparison finds
        # the flagged ones (checked here for every entry; otherwise the three lookups)
        pair = np.ascontiguousarray(np.stack([self.by_digits[0], self.by_digits[1]], axis=1))
        packed = pair.view(np.int32).ravel() if pair.dtype == np.int16 else None
        self.pos_sym_by_digits = packed if packed is not None and np.array_equal(packed == -1, self.flag_by_digits.astype(bool)) else None
        self.line0 = 0  # lines before the current block
        self.rows = self.blank = self.void_count = 0
        self.rejected: list = []
        self.nonascii = False  # non-ASCII bytes already read as UTF-8
        # a line longer than a block is cut after a separator: the next block continues it
        self.cont = False  # the block starts inside a line
        self.open_tokens = 0  # tokens of that line in earlier blocks
        self.open_filled = 0  # 1 if that line had a byte other than white space

    # long: one block's parse (scan, token codes, rejects, odd lines, hand-on) shares the block's arrays and frees them in order
    def block(self, buf: bytes, open_end: bool = False) -> None:
        """Parse lines and hand their spins on: ``buf`` ends with a line end, or with ``open_end``
        after a separator inside a line that the next block continues."""
        RejectedRow = self.row
        if open_end:
            buf = buf + b"\n"
        cont = self.cont
        b = np.frombuffer(buf, dtype=np.uint8)
        fast = None if cont or open_end else _simple_scan(buf)
        if fast is not None:
            nl, starts, length, tok_line, dv = fast
            n_lines, any_odd = nl.size, False
        else:
            nl, n_lines, starts, length, tok_line, odd_line, any_odd = self._scan(b, cont, open_end)
            dv = np.frombuffer((buf + b"\n\n").translate(_DIGIT_VALUE_BYTES), dtype=np.uint8)
        # each token's code from the digit values of its first three bytes (10: not a digit; the block ends
        # with a line end, so only the third byte of a last one-digit token can lie beyond it: a line end added
        # after the block stands for it), made for every byte in three dense passes and taken at the starts
        every = np.multiply(dv[:-2], 121, dtype=np.uint16)
        every += np.multiply(dv[1:-1], 11, dtype=np.uint16)
        every += dv[2:]
        ci = every[starts].astype(np.intp)
        del dv, every
        del starts, length
        ps = None if self.pos_sym_by_digits is None else np.take(self.pos_sym_by_digits, ci)
        clean = not (self.flag_by_digits[ci].any() if ps is None else (ps == -1).any())
        if not clean:
            pos, sym, void, bad = (a[ci] for a in self.by_digits)
        else:  # every token a pocket: nothing void, nothing rejected
            if ps is None:
                pos, sym = self.by_digits[0][ci], self.by_digits[1][ci]
            else:
                pos_sym = ps.view(np.int16).reshape(-1, 2)
                pos, sym = pos_sym[:, 0], pos_sym[:, 1]
            del ps
            void, bad = np.zeros(ci.size, dtype=self.by_digits[2].dtype), None  # (bad: made only when odd lines join them)
        lines = tok_line + (self.line0 + 1)
        last = int(np.count_nonzero(tok_line == n_lines - 1)) if open_end else 0  # tokens of the open line
        rej = []
        r = np.zeros(0, dtype=np.intp) if clean else np.flatnonzero(bad >= 0)
        if r.size:
            field = r - np.searchsorted(tok_line, tok_line[r]) + 1
            if cont:
                field += np.where(tok_line[r] == 0, self.open_tokens, 0)
            rej = [RejectedRow(self.name, ln, field_name(f), self.reasons[w], self.texts[c])
                   for ln, f, w, c in zip(lines[r].tolist(), field.tolist(), bad[r].tolist(), _CODE[ci[r]].tolist())]
        del tok_line, ci
        if any_odd:
            if bad is None:
                bad = np.full(pos.size, -1, dtype=self.by_digits[3].dtype)
            o = self._odd_lines(b, nl, np.flatnonzero(odd_line))
            pos, sym, void, bad, lines = (np.concatenate([x, y]) for x, y in zip((pos, sym, void, bad, lines), o[:5]))
            order = np.argsort(lines, kind="stable")
            pos, sym, void, bad, lines = pos[order], sym[order], void[order], bad[order], lines[order]
            rej = sorted(rej + o[5], key=lambda x: x.line)
            clean = False
        self.rejected.extend(rej)
        self.rows += int(pos.size)
        self.void_count += 0 if clean else int(np.count_nonzero(void))
        if open_end:
            self.open_tokens = last + (self.open_tokens if cont and n_lines == 1 else 0)
            self.line0 += n_lines - 1
        else:
            self.open_tokens = self.open_filled = 0
            self.line0 += n_lines
        self.cont = open_end
        acc = np.ones(pos.size, dtype=bool) if clean else (bad < 0) & ~void
        self.consume.add({"pos": pos, "sym": sym, "accepted_mask": acc, "void_mask": void, "line_no": lines})

    def _scan(self, b: np.ndarray, cont: bool, open_end: bool):
        """The tokens of a block in any shape (:func:`_simple_scan` covers the usual one): line ends,
        token starts, lengths and lines, the lines the exact reader must read; counts the blank lines."""
        cls = _CLASS[b]
        is_nl = cls == _NL
        nl = np.flatnonzero(is_nl)
        n_lines = nl.size
        line_of = np.cumsum(is_nl, dtype=np.int32)  # line (in the block) of each byte that is not a line end
        del is_nl
        # blank lines: nothing but tabs, CRs and spaces (lines with other bytes are counted by the exact reader)
        filled = np.cumsum(cls >= _DIGIT, dtype=np.int32)[nl]
        per_line = np.diff(filled, prepend=np.int32(0))
        if cont:
            per_line[0] += self.open_filled
        if open_end:  # (the open line is counted when it ends)
            self.open_filled = int(per_line[-1] > 0)
            per_line = per_line[:-1]
        self.blank += int(np.count_nonzero(per_line == 0))
        del per_line
        del filled
        dig = (cls == _DIGIT).view(np.int8)
        edge = np.flatnonzero(np.diff(dig, prepend=np.int8(0), append=np.int8(0)))
        starts, ends = edge[0::2], edge[1::2]
        del edge, dig
        tok_line = line_of[starts]
        length = ends - starts
        del ends
        odd_line = np.zeros(n_lines, dtype=bool)
        odd_pos = np.flatnonzero(cls == _ODD)
        if odd_pos.size:
            odd_line[line_of[odd_pos]] = True
        del cls, line_of
        long = length > _MAX_DIGITS
        if long.any():
            odd_line[tok_line[long]] = True
        any_odd = bool(odd_line.any())
        if any_odd and ((cont and odd_line[0]) or (open_end and odd_line[-1])):
            raise NeedWholeLines("a line longer than a block holds text or a long number")
        if any_odd:
            keep = ~odd_line[tok_line]
            starts, length, tok_line = starts[keep], length[keep], tok_line[keep]
        return nl, n_lines, starts, length, tok_line, odd_line, any_odd

    def _odd_lines(self, b: np.ndarray, nl: np.ndarray, k: np.ndarray):
        """The lines ``k`` of the block read by the exact reader: (pos, sym, void, bad, line) of their
        tokens, and their rejected rows (titles, tokens that are not pockets), with the file's lines."""
        RejectedRow, _read_permanence, _resolve_labels = self.row, self.read_lines, self.resolve
        lo = np.r_[0, nl[:-1] + 1][k]
        hi = nl[k] + 1
        mark = np.zeros(b.size + 1, dtype=np.int32)
        np.add.at(mark, lo, 1)
        np.add.at(mark, hi, -1)
        sub = b[np.cumsum(mark[:-1]) > 0].tobytes()
        if not sub.isascii():
            if self.enc == "utf-8":
                try:
                    sub.decode("utf-8")
                except UnicodeDecodeError:
                    if self.nonascii:
                        raise _Latin1() from None
                    self.enc = "latin-1"  # nothing read so far depended on it
            self.nonascii = True
        real = k + (self.line0 + 1)  # the file's line of each of these lines
        cols, sub_lines, title_rej, blank, _, field = _read_permanence(sub, self.name, self.wheel, encoding=self.enc)
        self.blank += blank
        self.rows += len(title_rej)
        rej = [RejectedRow(self.name, int(real[x.line - 1]), x.column, x.reason, x.text) for x in title_rej]
        flat = cols["result"]
        lines = real[np.asarray(sub_lines, dtype=np.int64) - 1] if len(flat) else np.zeros(0, np.int64)
        pos, sym, void, bad, reasons, _ = _resolve_labels(flat, self.wheel)
        r = np.flatnonzero(bad >= 0)
        if r.size:
            texts = flat.take(pa.array(r)).to_pylist()
            rej += [RejectedRow(self.name, int(lines[i]), field_name(field[i]), reasons[bad[i]], "" if t is None else str(t)[:200])
                    for i, t in zip(r.tolist(), texts)]
        return pos, sym, void, bad, lines, rej


def read_permanence(p: Path, wheel, consume, hooks, *, data: bytes | None = None) -> dict:
    """Read a permanence list into ``consume`` (a :class:`rngcert.collect.spinlog._CompactLog`,
    its file begun) block by block; returns the file's description (rows, void, rejected rows,
    blank lines, notes, SHA-256, size) as :func:`rngcert.collect.spinlog._read_file` gives it,
    without per-row arrays, and ``commas``: (the file's commas, those before a ``0``), for the caller to
    decide whether the list may have decimal commas (then the exact reader must read it), and ``cr_only``: the
    file has CRs and no LF (classic Mac line ends: the exact reader reads its lines).

    Parameters
    ----------
    p : Path
        The file (named so in rejects and notes).
    wheel : Wheel
        The wheel whose labels the tokens are.
    consume : _CompactLog
        Receives each block's spins (``add``); ``rollback`` when the file is read again as Latin-1.
    hooks : tuple
        ``(RejectedRow, _read_permanence, _resolve_labels)`` of :mod:`rngcert.collect.spinlog` (the
        exact reader's rules, passed in: this module does not import the spin-log module).
    data : bytes, optional
        The file's bytes when already read (standard input, a FIFO).

    Raises
    ------
    NoDataError
        The file holds nothing but white space (or a byte-order mark).
    """
    name = str(p)
    keep_freed_heap()  # the blocks' temporaries reuse the heap, not fresh pages (rngcert.collect.heap)
    try:
        return _read(p, name, wheel, consume, hooks, data, "utf-8")
    except _Latin1:
        consume.rollback()
        return _read(p, name, wheel, consume, hooks, data, "latin-1")


def _count_commas(blk: bytes, commas: list) -> None:
    """Count the commas of a block and those before a ``0`` into ``commas`` (``[commas, before a 0, the block
    before ended with a comma]``): a list whose commas stand before a ``0`` (most of them, ten or more) may have decimal commas
    (:func:`rngcert.collect.spinlog.permanence.decimal_commas`, decided by the exact reader on the whole file)."""
    a = np.frombuffer(blk, dtype=np.uint8)
    comma = a == 44  # (numpy's compare and count: a few times faster than bytes.count here)
    n = int(np.count_nonzero(comma))
    if n:
        commas[1] += int(np.count_nonzero(comma[:-1] & (a[1:] == 48)))
    commas[1] += commas[2] and blk[:1] == b"0"
    commas[0] += n
    commas[2] = blk[-1:] == b","


def _read(p: Path, name: str, wheel, consume, hooks, data: bytes | None, encoding: str) -> dict:
    rd = _Reader(name, wheel, consume, encoding, hooks)
    h = hashlib.sha256()
    size = 0
    content = False
    carry = b""
    first = True
    commas = [0, 0, False]  # commas, commas before a 0, whether the last block ended with a comma
    ends = [False, False]  # a CR, an LF seen (CRs and no LF: classic Mac line ends, read by the exact reader)
    for blk in _blocks(p, data):
        h.update(blk)
        size += len(blk)
        _count_commas(blk, commas)
        ends[0] = ends[0] or b"\r" in blk
        ends[1] = ends[1] or b"\n" in blk
        if not content and blk.strip(b"\xef\xbb\xbf \t\r\n"):
            content = True
        buf = carry + blk if carry else blk
        if first and (len(buf) >= 3 or not b"\xef\xbb\xbf".startswith(buf)):  # (a mark cut by the block's end: judged on the next)
            first = False
            if encoding == "utf-8" and buf.startswith(b"\xef\xbb\xbf"):  # utf-8-sig: the mark is not text
                buf = buf[3:]
                rd.nonascii = True  # as Latin-1 it would be three characters of the first line
        cut = buf.rfind(b"\n") + 1
        if cut == 0:
            if len(buf) >= CHUNK:  # a line longer than a block: cut after its last separator (between two tokens)
                cut = max(buf.rfind(sep) for sep in (b",", b";", b"|", b" ", b"\t", b"\r")) + 1
                if cut:
                    carry = buf[cut:]
                    rd.block(buf[:cut], open_end=True)
                    continue
            carry = buf
            continue
        carry = buf[cut:]
        rd.block(buf[:cut] if cut < len(buf) else buf)
        del buf
    if not content:
        raise NoDataError(f"{name}: the file is empty: no spins to certify")
    if carry or rd.cont:
        rd.block(carry + b"\n")  # a last line without a line end (or the end of one cut after a separator: it may be blank)
    notes = [] if rd.enc == "utf-8" else [f"{name}: not valid UTF-8; read as latin-1"]
    return {"name": name, "rows": rd.rows, "void_count": rd.void_count, "rejected": rd.rejected, "notes": notes, "format": "permanence",
            "sha256": h.hexdigest(), "blank": rd.blank, "size": size, "extra_ids": [], "commas": (commas[0], commas[1]),
            "cr_only": ends[0] and not ends[1]}
