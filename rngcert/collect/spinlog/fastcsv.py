"""A numpy byte-level reader for CSV spin logs in the usual, well-formed shape (issue 26: the read of a 10 M-spin
CSV log cost three times a plain numpy parse).

The usual log is ASCII, comma-separated, one record a line ending in LF, no quotes, no blank lines, and every cell
in the one spelling its column is written in by exporters and the simulator: results and revolutions as 1-3
digits, spin ids as up to 16 digits, timestamps as ``YYYY-MM-DDTHH:MM:SSZ``, and void, direction, table and dealer
cells of at most 7 characters. For such a file, this module splits each block of bytes at its commas and line ends
with one comparison (every byte <= ``,`` must be a comma or the record's line end, in the header's count), reads
the cells in place (a cell of up to 8 bytes is one unaligned 64-bit load) and gives, block by block, exactly the
dictionary :func:`rngcert.collect.spinlog.core._process` gives for the same rows: the distinct cells of each text
column go through the same per-value decoders (``_resolve_labels``, ``_truthy_table``, ``_numbers_table``,
``_directions_table``), numbers and timestamps are computed from their digits.

Anything else (a quote, a CR, a blank line, a cell in another spelling, a value that the exact path would reject
or count as void by its result) raises :class:`NotCanonical`; the caller then forgets what was read and reads
the whole file on the exact path (:mod:`rngcert.collect.csvstream`), which names every malformed row by line,
column and reason. This path never imports pyarrow.
"""

from __future__ import annotations

import os
import re
import threading

import numpy as np

from rngcert.collect.spinlog.columns import _ID_DTYPE, _directions_table, _norm_text, _numbers_table, _resolve_labels, _truthy_table

#: The columns this path decodes; a file that has another known column (release_pocket, rotor_speed,
#: result_source, payout …) takes the exact path.
HANDLED = frozenset({"result", "spin_id", "timestamp", "table", "dealer", "direction", "revolutions", "void"})
_NAME = re.compile(r'[A-Za-z0-9_]+|"[A-Za-z0-9_]+"')  # header cells both parsers read alike
_U64 = np.uint64
_ONES = 0xFFFFFFFFFFFFFFFF


class NotCanonical(Exception):
    """The file (or a block of it) is not in the shape this path reads exactly: read it on the exact path."""


def _const(v: int) -> np.uint64:
    return _U64(v & _ONES)


_HI = _const(0xF0F0F0F0F0F0F0F0)
_LO = _const(0x0F0F0F0F0F0F0F0F)
_Z = _const(0x3030303030303030)
_SIX = _const(0x0606060606060606)
_P16 = _const(0x00FF00FF00FF00FF)
_P32 = _const(0x0000FFFF0000FFFF)
_FF = _U64(0xFF)
_FFFF = _U64(0xFFFF)
#: (w = 1..8) left shift that puts a w-byte cell in the top bytes of a word, and '0' bytes that fill the bottom
_SHIFT = np.array([0] + [(8 - w) * 8 for w in range(1, 9)], dtype=np.uint64)
_FILL = np.array([0] + [int.from_bytes(b"0" * (8 - w) + b"\0" * w, "little") for w in range(1, 9)], dtype=np.uint64)
#: (w = 0..8) masks of a w-byte cell in a word of 1, 2, 4 or 8 bytes
_MASKS = {size: np.array([(1 << (8 * min(w, size))) - 1 for w in range(9)], dtype=f"<u{size}") for size in (4, 8)}


def eligible(scan, encoding: str, delim: str, raw_header: list[str], resolved: dict, text_codes: bool) -> bool:
    """True when a file may be in the shape this path reads (what the line scan and the header tell); the
    blocks themselves are checked as they are read."""
    return bool(
        text_codes and encoding == "utf-8" and delim == "," and scan.ascii and not scan.sep and not scan.skip and not scan.long_lines
        and scan.bare_cr == 0 and scan.blank_lines.size == 0 and scan.first_line_no == 1 and b"\r" not in scan.first_line[:-1]
        and set(resolved) <= HANDLED and all(_NAME.fullmatch(f) for f in scan.first_line.removesuffix(b"\r").decode("ascii").split(","))
        and len(raw_header) == scan.first_line.count(b",") + 1
    )


_PAD = b"\0" * 24  # after each block: a cell's last bytes are read in words of up to 24


def iter_blocks(fh, start: int | None, block_size: int, max_line: int, crlf: bool = False):
    """The file's bytes from ``start`` (None: where it is) in pieces of about ``block_size`` bytes, each ending at a line end (the last
    given one, LF or with ``crlf`` CR LF, if the file has none) and followed by 24 zero bytes."""
    if start is not None:
        fh.seek(start)
    carry = b""
    while True:
        chunk = fh.read(block_size)
        if not chunk:
            if carry:
                yield carry + (b"\r\n" if crlf else b"\n") + _PAD
            return
        cut = chunk.rfind(b"\n")
        if cut < 0:
            carry += chunk
            if len(carry) > max_line:
                raise NotCanonical("a line longer than a block")
            continue
        block = b"".join((carry, memoryview(chunk)[: cut + 1], _PAD))  # (one copy)
        carry = chunk[cut + 1 :]
        yield block


def _split(block: bytes, k: int, crlf: bool = False):
    """(the bytes as an array, cell starts (k, n) and ends (k, n)) of a block of whole lines of ``k`` fields each
    followed by 24 zero bytes (:func:`iter_blocks`), or :class:`NotCanonical`. ``crlf``: every line ends in CR LF
    (the CR is a separator too, the end of the last cell)."""
    data = np.frombuffer(block, dtype=np.uint8)
    body = data[: len(block) - len(_PAD)]
    mask = body <= 44  # every byte up to ',' (quote, CR, tab …) but the space must be a separator
    if b" " in block:  # (a search for the byte costs a tenth of a comparison: most logs have no space)
        mask &= body != 32
    sep = np.flatnonzero(mask)
    kk = k + crlf
    n = sep.size // kk
    if sep.size != n * kk:
        raise NotCanonical("a record with another number of fields, or a byte that is not a cell's")
    if n and not (data[sep].reshape(n, kk) == _separators(k, crlf)).all():  # k - 1 commas, then the line end
        raise NotCanonical("a record with another number of fields, or a byte that is not a cell's")
    if crlf and not (sep[k::kk] == sep[k - 1 :: kk] + 1).all():
        raise NotCanonical("a CR that is not the end of its line")
    if data.size < 1 << 31:  # positions in a block as 4 bytes: every later gather and difference moves half the bytes
        sep = sep.astype(np.int32)
    starts = np.empty_like(sep)
    starts[0] = 0
    np.add(sep[:-1], 1, out=starts[1:])
    return data, starts.reshape(n, kk).T[:k], sep.reshape(n, kk).T[:k]  # (rows of strided views: no copy)


def _separators(k: int, crlf: bool) -> np.ndarray:
    out = np.full(k + crlf, 44, dtype=np.uint8)
    out[-1] = 10
    if crlf:
        out[-2] = 13
    return out


def _gather(data, s, size: int, as_: str) -> np.ndarray:
    """The ``size`` bytes from each of ``s`` viewed as ``as_`` (one gather of ``size``-byte items at every byte offset:
    an unaligned 64-bit gather costs three times as much)."""
    items = np.ndarray((data.size - size + 1,), dtype=np.dtype((np.void, size)), buffer=data, strides=(1,))
    return items[s].view(as_)


def _words(data, s, size: int = 8) -> np.ndarray:
    """The ``size`` bytes (a multiple of 8) from each of ``s``, as little-endian 64-bit words ((n,) or (n, size / 8))."""
    x = _gather(data, s, size, "<u8")
    return x.ravel() if size == 8 else x.reshape(-1, size // 8)


def _digits(data, s, w) -> np.ndarray:
    """The whole numbers written as 1-8 decimal digits at ``s`` (width ``w``), or :class:`NotCanonical`."""
    x = (_words(data, s) << _SHIFT[w]) | _FILL[w]
    if not (((x & _HI) == _Z) & (((x + _SIX) & _HI) == _Z)).all():
        raise NotCanonical("a cell that is not digits")
    x &= _LO
    x = x * _U64(10) + (x >> _U64(8))
    x = (x & _P16) * _U64(100) + ((x >> _U64(16)) & _P16)
    x = (x & _P32) * _U64(10000) + ((x >> _U64(32)) & _FFFF)
    return (x & _const(0xFFFFFFFF)).astype(np.int64)


def _small_digits(data, s, w, top: int):
    """Index of each 1..``top``-digit cell (``top`` 2 or 3) among all such spellings (``"5"`` and ``"05"`` differ),
    and the list of those spellings."""
    lo, hi = int(w.min()), int(w.max())
    if lo < 1 or hi > top:
        raise NotCanonical("a cell of another width")
    d0 = data[s] - np.uint8(48)
    if hi == 1:
        if not (d0 < 10).all():
            raise NotCanonical("a cell that is not digits")
        return d0.astype(np.int64), _SPELLINGS[top]
    d1 = data[s + 1] - np.uint8(48)
    two = w >= 2
    ok = (d0 < 10) & ((d1 < 10) | ~two)
    v = np.where(two, 10 + d0.astype(np.int64) * 10 + d1, d0)
    if hi == 3:
        d2 = data[s + 2] - np.uint8(48)
        three = w == 3
        ok &= (d2 < 10) | ~three
        v = np.where(three, 110 + (v - 10) * 10 + d2, v)
    if not ok.all():
        raise NotCanonical("a cell that is not digits")
    return v, _SPELLINGS[top]


_SPELLINGS = {t: [f"{v:0{i}d}" for i in range(1, t + 1) for v in range(10**i)] for t in (2, 3)}
#: cells of one or two characters, digits or spaces (a fixed-width export writes `` 5``): looked up by their bytes
_PAIRS = [*"0123456789 ", *(a + b for a in "0123456789 " for b in "0123456789 ")]


def _keys(data, s, w):
    """A key of each cell of 1-24 bytes: its bytes as a little-endian number of 4 or 8 bytes, or (9-24 bytes) as
    2-3 such words in one ``void`` item. Equal keys, equal cells: no byte of a cell is 0 (every byte is above ',')."""
    top = int(w.max())
    if w.min() < 1 or top > 24:
        raise NotCanonical("a text cell of another width")
    if top > 8:
        m = (top + 7) // 8
        x = _gather(data, s, 8 * m, "<u8").reshape(-1, m) & _MASKS[8][np.clip(w[:, None] - 8 * np.arange(m), 0, 8)]
        return x.view(np.dtype((np.void, 8 * m))).ravel()
    if top <= 3:  # byte by byte (a gather of bytes costs a sixth of one of 2-8 byte items)
        x = data[s].astype(np.uint32)
        for j in range(1, top):
            x |= np.where(w > j, data[s + j], 0).astype(np.uint32) << np.uint32(8 * j)
        return x
    size = 4 if top <= 4 else 8
    x = _gather(data, s, size, f"<u{size}").ravel()
    return x if int(w.min()) == top == size else x & _MASKS[size][w]


def _distinct(keys: np.ndarray, data, s, w) -> tuple[np.ndarray, list[str]]:
    """(int32 codes in order of first appearance, the distinct cells' texts) of a column of text cells (their
    :func:`_keys`)."""
    n = keys.size
    codes = np.zeros(n, dtype=np.int32)
    first = [0]
    k0 = keys[0]
    if not (keys == k0).all():
        codes[:] = -1
        i = 0
        while i < n:
            if len(first) > 8:  # many values: sorted instead of peeled
                u, idx, inv = np.unique(keys, return_index=True, return_inverse=True)
                order = np.argsort(idx, kind="stable")
                rank = np.empty_like(order)
                rank[order] = np.arange(order.size)
                codes = rank[inv.ravel()].astype(np.int32)
                first = idx[order].tolist()
                break
            codes[keys == keys[i]] = len(first) - 1
            i = int(np.argmax(codes < 0))  # the first row not yet coded (argmax stops at the first True)
            if codes[i] >= 0:
                break
            first.append(i)
    texts = [bytes(data[int(s[i]) : int(s[i]) + int(w[i])]).decode("ascii") for i in first]
    return codes, texts


# days before the first of each month, from 1900-01 to 2199-12 (a timestamp outside takes the exact path)
_Y0, _Y1 = 1900, 2200


def _month_tables():
    import datetime as _dt

    epoch = _dt.date(1970, 1, 1)
    start = np.empty((_Y1 - _Y0) * 12, dtype=np.int64)
    dim = np.empty((_Y1 - _Y0) * 12, dtype=np.int64)
    for y in range(_Y0, _Y1):
        for m in range(1, 13):
            d = _dt.date(y, m, 1)
            nxt = _dt.date(y + (m == 12), m % 12 + 1, 1)
            start[(y - _Y0) * 12 + m - 1] = (d - epoch).days
            dim[(y - _Y0) * 12 + m - 1] = (nxt - d).days
    return start, dim


_MONTHS: list = []  # (start, dim), filled once by _months()
_MONTHS_LOCK = threading.Lock()


def _months() -> list:
    """:func:`_month_tables`, computed once for the process. The two parse threads (``read_threads``) may ask at
    once: unlocked, both found the list empty and both filled it, and every later read of the process stopped
    with 'too many values to unpack' (an internal error, exit 1, on a valid log)."""
    if len(_MONTHS) != 2:
        with _MONTHS_LOCK:
            if not _MONTHS:
                _MONTHS.extend(_month_tables())
    return _MONTHS
#: ``YYYY-MM-DDTHH:MM:SSZ``: the bytes that are fixed, and where the digits are, in three words (bytes 0-7, 8-15, 16-23)
_TS_W = 20


def _pattern(text: str) -> tuple[np.uint64, np.uint64, np.uint64]:
    """(and-mask, expected value, digit adder) of an 8-character template: 'd' a digit, anything else itself."""
    a = e = c = 0
    for i, ch in enumerate(text):
        if ch == "d":
            a |= 0xF0 << (8 * i)
            e |= 0x30 << (8 * i)
            c |= 0x06 << (8 * i)
        else:
            a |= 0xFF << (8 * i)
            e |= ord(ch) << (8 * i)
    return _U64(a), _U64(e), _U64(c)


_T0, _T1, _T2 = _pattern("dddd-dd-"), _pattern("ddTdd:dd"), _pattern(":ddZ")


def _timestamps(data, s, w) -> np.ndarray:
    """int64 microseconds since the epoch of cells ``YYYY-MM-DDTHH:MM:SSZ`` (UTC), or :class:`NotCanonical`."""
    if not (w == _TS_W).all():
        raise NotCanonical("a timestamp in another spelling")
    x = _words(data, s, 24)
    x0, x1, x2 = x[:, 0], x[:, 1], x[:, 2] & _U64(0xFFFFFFFF)  # the third word: bytes 16-19 (then the next cell's)
    if (x0 == x0[0]).all():  # one year and month in the whole block (the usual log): its words decoded once
        x0 = x0[:1]
    for x, (a, e, c) in ((x0, _T0), (x1, _T1), (x2, _T2)):
        if not (((x & a) == e) & (((x + c) & a) == e)).all():
            raise NotCanonical("a timestamp in another spelling")
    x0, x1, x2 = x0 & _LO, x1 & _LO, x2 & _LO
    p0 = (x0 * _U64(10) + (x0 >> _U64(8))) & _P16  # two-digit values in bytes 0, 2, 4, 6 of each word
    p1 = (x1 * _U64(10) + (x1 >> _U64(8))) & _P16
    p2 = x2 * _U64(10) + (x2 >> _U64(8))
    year = ((p0 & _FF) * _U64(100) + ((p0 >> _U64(16)) & _FF)).astype(np.int64)
    # month: bytes 5-6 of word 0 (odd: the pair sits at byte 5 of the unmasked product)
    q0 = x0 * _U64(10) + (x0 >> _U64(8))
    month = ((q0 >> _U64(40)) & _FF).astype(np.int64)
    day = (p1 & _FF).astype(np.int64)
    q1 = x1 * _U64(10) + (x1 >> _U64(8))
    hour = ((q1 >> _U64(24)) & _FF).astype(np.int64)
    minute = ((p1 >> _U64(48)) & _FF).astype(np.int64)
    # word 2 is bytes 16-19 ":SSZ": ':' at 0, seconds at 1-2
    second = ((p2 >> _U64(8)) & _FF).astype(np.int64)
    start, dim = _months()
    ym = (year - _Y0) * 12 + month - 1
    if not (((year >= _Y0) & (year < _Y1) & (month >= 1) & (month <= 12)).all()):
        raise NotCanonical("a timestamp outside the years read here")
    if not (((day >= 1) & (day <= dim[ym]) & (hour <= 23) & (minute <= 59) & (second <= 59)).all()):
        raise NotCanonical("a timestamp that is not a time")
    return (((start[ym] + day - 1) * 24 + hour) * 60 + minute) * 60_000_000 + second * 1_000_000


# long: one block's columns decoded in _process's order from one split of its bytes, each check beside the column it reads
def process_block(block: bytes, first_line: int, names: list[str], resolved: dict, name: str, wheel, crlf: bool = False) -> dict:
    """The dictionary :func:`~rngcert.collect.spinlog.core._process` gives for the rows of ``block`` (whole lines,
    the first at physical line ``first_line``; ``names``: the header's columns; ``crlf``: lines end in CR LF), or
    :class:`NotCanonical`."""
    from rngcert.collect.csvstream import MAX_LINE

    k = len(names)
    data, starts, ends = _split(block, k, crlf)
    n = starts.shape[1]
    if n and int((ends[k - 1] - starts[0]).max()) > MAX_LINE // 2:  # (a cell of a column not read here may be long)
        raise NotCanonical("a line the exact path may reject as too long")
    col = {c: i for i, c in enumerate(names)}

    cells: dict = {}

    def cell(key):
        if key not in cells:
            j = col[resolved[key]]
            st = np.ascontiguousarray(starts[j])
            cells[key] = (data, st, ends[j] - st)
        return cells[key]

    key = _pair_keys(*cell("result"))
    lut = _result_lut(wheel, resolved["result"])
    pos = lut[0][key]
    if (pos == _NOT_READ).any():
        raise NotCanonical("a result that is not a pocket")
    sym = np.full(n, -1, dtype=_ID_DTYPE) if lut[1] is None else lut[1][key]
    void = np.zeros(n, dtype=bool)
    if "void" in resolved:
        codes, texts = _distinct(_keys(*cell("void")), *cell("void"))
        val, bad = _truthy_table([_norm_text(t) for t in texts])
        if bad.any():
            raise NotCanonical("a void cell that is not true/false")
        if len(texts) == 1:
            void[:] = val[0]
        else:
            void |= val[codes]
    if "revolutions" in resolved:
        _, s, w = cell("revolutions")
        if w.max() <= 2:
            few = _few_revolutions_pairs()[_pair_keys(*cell("revolutions"))]
            if (few > 1).any():
                raise NotCanonical("revolutions that are not digits")
            void |= few.view(bool)
        else:
            idx, _ = _small_digits(*cell("revolutions"), 3)
            void |= _few_revolutions()[idx]
    ts = ts_kinds = None
    if "timestamp" in resolved:
        ts = _timestamps(*cell("timestamp"))
        ts_kinds = {"zoneless": 0, "dateonly": 0, "zoned": n, "offsets": {"Z"} if n else set(), "example_zoneless": "", "example_dateonly": ""}
    direction = None
    if "direction" in resolved:
        codes, texts = _distinct(_keys(*cell("direction")), *cell("direction"))
        dir_u, bad = _directions_table([_norm_text(t) for t in texts])
        direction = dir_u[codes]
        if bad.any() or (dir_u[: len(texts)] < 0).any():
            raise NotCanonical("a direction that is not cw/ccw")
    texts_of = {}
    for key in ("table", "dealer"):
        if key in resolved:
            texts_of[key] = _distinct(_keys(*cell(key)), *cell(key))
            if any(t[0] == " " or t[-1] == " " for t in texts_of[key][1]):
                raise NotCanonical("a text cell with spaces around it")  # (the exact path trims them)
            if not all(t.isprintable() for t in texts_of[key][1]):  # (DEL: other control bytes are not a cell's, _split)
                raise NotCanonical("a text cell with a control character")  # (the exact path rejects its row)
    spin_id = None
    if "spin_id" in resolved:
        _, s, w = cell("spin_id")
        if w.min() < 1 or w.max() > 16:
            raise NotCanonical("a spin id of another width")
        if w.max() <= 8:
            vals = _digits(data, s, w)
        else:
            hi = np.maximum(w - 8, 0)
            lo = np.minimum(w, 8)
            vals = _digits(data, s + hi, lo)
            long = hi > 0
            if long.any():
                vals[long] += _digits(data, s[long], hi[long]) * 100_000_000
        from rngcert.collect.spinlog.core import IntIds

        spin_id = IntIds(vals)
    colnum = {c: i + 1 for i, c in enumerate(names)}
    lines = np.arange(first_line, first_line + n, dtype=np.int32)
    return {
        "name": name,
        "rows": n,
        "pos": pos,
        "sym": sym,
        "accepted_mask": ~void,
        "void_mask": void,
        "void_count": int(void.sum()),
        "rejected": [],
        "lines": lines,
        "colnames": {k: f"{resolved[k]} (column {colnum[resolved[k]]})" for k in ("spin_id", "table", "result_source") if k in resolved},
        "colindex": {k: colnum[resolved[k]] - 1 for k in ("spin_id", "table") if k in resolved},
        "line_no": None,
        "ts": ts,
        "table": texts_of.get("table"),
        "dealer": texts_of.get("dealer"),
        "payout": None,
        "multiplier": None,
        "spin_id": spin_id,
        "direction": direction,
        "release": None,
        "rotor_speed": None,
        "ball_direction": None,
        "result_source": None,
        "notes": [],
        "ts_kinds": ts_kinds,
        "spelled": {},  # (a header read by its spelling takes the exact path: _columns)
    }


_LUTS: dict = {}


def _few_revolutions() -> np.ndarray:
    """Per spelling of 1-3 digits: fewer than 3 revolutions (a void spin), by :func:`_numbers_table`."""
    if "revolutions" not in _LUTS:
        val, bad = _numbers_table(_SPELLINGS[3])
        assert not bad[:-1].any()
        _LUTS["revolutions"] = val[:-1] < 3
    return _LUTS["revolutions"]


_NOT_READ = np.iinfo(_ID_DTYPE).min  # a cell this path does not read (then the exact path reads the file)


def _pair_keys(data, s, w) -> np.ndarray:
    """Cells of 1-2 bytes as ``b0 + 256 * b1`` (``b1`` 0 for one byte: no byte of a cell is 0), or :class:`NotCanonical`."""
    if w.min() < 1 or w.max() > 2:
        raise NotCanonical("a cell of another width")
    k = data[s].astype(np.intp)
    if w.max() == 2:
        k |= np.where(w == 2, data[s + 1], 0).astype(np.intp) << 8
    return k


def _pair_table(spellings: list[str], values: np.ndarray, fill) -> np.ndarray:
    """A lookup table by :func:`_pair_keys` of the 1-2 character ``spellings``: ``values``, ``fill`` for any other key."""
    out = np.full(1 << 16, fill, dtype=values.dtype)
    keys = [ord(t[0]) + (ord(t[1]) << 8 if len(t) > 1 else 0) for t in spellings]
    out[keys] = values
    return out


def _result_lut(wheel, header: str):
    """(pos, sym or None when every one is -1) by :func:`_pair_keys` of every spelling of 1-2 digits on ``wheel``, by
    :func:`_resolve_labels`; :data:`_NOT_READ` where the exact path would reject the cell or read it as a void."""
    key = (id(wheel), header)
    if key not in _LUTS:
        spell = _PAIRS
        pos, sym, void, bad, _, _ = _resolve_labels(spell, wheel, header=header)
        ok = (bad < 0) & ~void
        pos_t = _pair_table(spell, np.where(ok, pos, _NOT_READ).astype(_ID_DTYPE), _NOT_READ)
        sym_t = None if (sym[ok] == -1).all() else _pair_table(spell, sym.astype(_ID_DTYPE), -1)
        _LUTS[key] = (pos_t, sym_t, wheel)  # (the wheel kept: its id stays its own)
    return _LUTS[key]


def _few_revolutions_pairs() -> np.ndarray:
    """By :func:`_pair_keys`: 1 for fewer than 3 revolutions (a void spin), 0 for more, 2 for a cell not of digits."""
    if "revolutions2" not in _LUTS:
        val, bad = _numbers_table([_norm_text(t) for t in _PAIRS])
        _LUTS["revolutions2"] = _pair_table(_PAIRS, np.where(bad[:-1] | np.isnan(val[:-1]), 2, val[:-1] < 3).astype(np.uint8), 2)
    return _LUTS["revolutions2"]


def _columns(first_line: bytes, name: str, columns, text_codes: bool) -> tuple[list[str], dict, bool] | None:
    """(the header's column names, the known columns resolved, whether lines end in CR LF) when a file with this
    header line (its bytes before the LF) may be read on this path, else None."""
    from rngcert.collect.spinlog.core import loose_spellings, resolve_columns
    from rngcert.errors import InputError

    crlf = first_line.endswith(b"\r")
    first_line = first_line.removesuffix(b"\r")
    if not (text_codes and first_line.isascii() and b"\r" not in first_line):
        return None
    fields = first_line.decode("ascii").split(",")
    if not all(_NAME.fullmatch(f) for f in fields):
        return None
    names = [f.strip('"') for f in fields]
    if len({c.lower() for c in names}) != len(names):
        return None
    try:
        resolved = resolve_columns(names, name, columns, names)
    except InputError:
        return None  # (the exact path raises it)
    # a column read by its spelling (Spin ID) is noted by the exact path's parts (spelling_notes), which this path has not
    return (names, resolved, crlf) if set(resolved) <= HANDLED and not loose_spellings(resolved, columns) else None


#: Files up to this size are parsed on two threads where the process has two cores. Measured (2026-12-04, quiet
#: 2-core machine, `benchmarks/bench_throughput.py --shapes csv`): a 49 MB, 1 M-spin CSV 0.75 -> 0.70 s of wall at
#: the same CPU, a 39 MB 20-table log 0.29 -> 0.24 s; a 491 MB, 10 M-spin CSV no faster (3.3-3.4 s) and 0.4-1.0
#: CPU-s more (the two parse threads, the hash thread and the consumer contend for the GIL block after block).
THREADED_PARSE_MAX_BYTES = 128 << 20


def _read_blocks(fh, names, resolved, crlf, name, wheel, then, block_size: int, on_first=None, threads: int = 1) -> tuple[list, int]:
    """``[then(part), ...]`` of the blocks of ``fh`` (positioned at the first record), and the number of rows.

    With ``threads`` > 1 the blocks are parsed on that many threads, the next ones read meanwhile (numpy releases the
    GIL: a 20-table log of 5 M spins, 39 MB, was read in 0.27 s instead of 0.37 on 2 cores, issue 26 item 6); ``then``
    and ``on_first`` run in this thread in the blocks' order, so the parts, and the first error (a block's
    :class:`NotCanonical`), are those of one thread. A block is parsed with its lines numbered from 0; its first line
    is then the line after the rows of the blocks before it (a block that parses has one record a line end, so its
    rows are its lines: no count of its line ends)."""
    from rngcert.collect import csvstream

    def blocks():
        return iter_blocks(fh, None, block_size, csvstream.MAX_LINE, crlf)

    def parse(block):
        return len(block) - len(_PAD), process_block(block, 0, names, resolved, name, wheel, crlf)

    rows, parts = 0, []

    def hand_on(got) -> None:
        nonlocal rows
        nbytes, part = got
        if on_first is not None and not parts:
            on_first(nbytes, part["rows"])
        part["lines"] += rows + 2  # (line 1 is the header)
        rows += part["rows"]
        parts.append(then(part))

    if threads <= 1:
        for b in blocks():
            hand_on(parse(b))
        return parts, rows
    from collections import deque
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="rngcert-parse") as ex:
        pending: deque = deque()
        try:
            for b in blocks():
                pending.append(ex.submit(parse, b))
                while len(pending) > threads:  # at most threads + 1 blocks in flight
                    hand_on(pending.popleft().result())
            while pending:
                hand_on(pending.popleft().result())
        finally:
            for f in pending:  # an error: the blocks after it are not parsed
                f.cancel()
    return parts, rows


def read_parts(open_fh, name: str, scan, wheel, columns, text_codes: bool, then, on_restart, *, block_size: int) -> list | None:
    """``[then(part), ...]`` of the file's blocks read on this path, or None when the file is not in its shape
    (``on_restart()`` has then been called, so that a consumer forgets the blocks it was given). ``scan``: the
    file's line scan (:func:`~rngcert.collect.csvstream.scan_lines`)."""
    from rngcert.collect import csvstream

    if scan.n_lines < 2 or not eligible(scan, "utf-8", ",", scan.first_line.split(b","), {}, text_codes):
        return None
    got = _columns(scan.first_line, name, columns, text_codes)
    if got is None:
        return None
    try:
        with open_fh() as fh:
            fh.seek((3 if scan.bom else 0) + len(scan.first_line) + 1)
            parts, rows = _read_blocks(fh, *got, name, wheel, then, block_size)
            csvstream._same_size(fh, name, scan)
        if rows + 1 != scan.n_lines:  # every line after the header was one record
            raise NotCanonical("records and lines differ")
    except NotCanonical:
        if on_restart is not None:
            on_restart()
        return None
    return parts


class _Hashed:
    """A binary file read forward while its bytes are hashed (SHA-256, on a thread of its own when the process has
    two cores: hashlib releases the GIL) and checked to be ASCII."""

    def __init__(self, fh):
        import hashlib

        from rngcert.collect import csvstream

        self.fh, self.h, self.size = fh, hashlib.sha256(), 0
        self.pool = None
        if csvstream.read_threads() > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rngcert-sha256")
        self.pending = None

    def read(self, n: int) -> bytes:
        b = self.fh.read(n)
        if self.pending is not None:
            self.pending.result()  # the bytes go into the hash in order
            self.pending = None
        if b:
            if self.pool is None:
                self.h.update(b)
            else:
                self.pending = self.pool.submit(self.h.update, b)
            if not (b[3:] if self.size == 0 and b.startswith(b"\xef\xbb\xbf") else b).isascii():  # (a UTF-8 BOM: then ASCII)
                raise NotCanonical("bytes that are not ASCII")
            self.size += len(b)
        return b

    def digest(self) -> str:
        """The hash of the bytes read (the blocks read the file to its end)."""
        if self.pending is not None:
            self.pending.result()
            self.pending = None
        return self.h.hexdigest()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def read_file(path, name: str, wheel, columns, text_codes: bool, then, on_restart, reserve=None, *, block_size: int):
    """Read a CSV log file in one pass: ``(scan, [then(part), ...])``, ``scan`` the
    :class:`~rngcert.collect.csvstream.LineScan` the line scan would give (the hash of the bytes parsed), or None
    when the file is not in the shape of this path (``on_restart()`` has then been called). ``reserve(rows)``: told,
    after the first block, about how many rows the file holds."""
    from rngcert.collect import csvstream
    from rngcert.collect.heap import keep_freed_heap

    keep_freed_heap()  # the blocks' temporaries reuse the heap, not fresh pages (rngcert.collect.heap)
    with open(path, "rb") as raw:
        fh = _Hashed(raw)
        try:
            head = fh.read(min(block_size, csvstream.MAX_LINE))
            bom = head.startswith(b"\xef\xbb\xbf")
            body = head[3:] if bom else head
            end = body.find(b"\n")
            got = None if end < 1 else _columns(body[:end], name, columns, text_codes)
            if got is None:
                return None
            first_line = body[:end]
            rest = body[end + 1 :]

            class _Rest:  # the bytes read with the header, then the file
                def read(self, n: int) -> bytes:
                    nonlocal rest
                    if rest:
                        b, rest = rest, b""
                        return b
                    return fh.read(n)

            def on_first(nbytes: int, rows: int) -> None:
                if reserve is not None and rows:
                    total = os.fstat(raw.fileno()).st_size
                    reserve(int(total / (nbytes / rows) * 1.05) + 1024)

            small = os.fstat(raw.fileno()).st_size <= THREADED_PARSE_MAX_BYTES
            parts, rows = _read_blocks(_Rest(), *got, name, wheel, then, block_size, on_first,
                                       threads=csvstream.read_threads() if small else 1)
            scan = csvstream.LineScan(fh.digest(), fh.size, rows + 1, np.zeros(0, dtype=np.int64), first_line, 1, bom, 0, (), ascii=True)
            # a file that grew or was cut while it was read is refused, as on the exact path (the bytes parsed are the
            # bytes hashed, but a log still being written may end in half a line)
            csvstream._same_size(raw, name, scan)
        except NotCanonical:
            if on_restart is not None:
                on_restart()
            return None
        finally:
            fh.close()
    if rows == 0:
        if on_restart is not None:
            on_restart()
        return None
    return scan, parts
