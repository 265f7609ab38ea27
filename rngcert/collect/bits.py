"""Raw-bit collectors for electronic RNGs: device dumps (binary or ASCII) read into bit arrays.

Named bit generators and foreign word sources are simulated sources: :mod:`rngcert.simulate.sources`.

Bits are returned as ``uint8`` arrays of 0/1 (one element per bit), shape (n,) for one stream
or (m, n) for m streams, or packed eight to a byte (``numpy.packbits`` order, MSB first).

Bit order conventions (documented once, used everywhere):

* **Bit generators** (:mod:`rngcert.simulate.sources`). Each raw output word contributes its
  bits most significant first (:func:`words_to_bits`); words in output order.
* **Binary dumps.** Bytes in file order; within a byte most significant bit first by default
  (``bit_order="big"``), least significant first with ``bit_order="little"``.
* **ASCII dumps.** The characters ``0`` and ``1`` in file order; whitespace (space, tab, CR,
  LF, VT, FF) is ignored; any other byte is an error (the format of sts-2.1.2's ``data.e``).

A dump shorter than requested is an error; nothing is ever rewound, wrapped or replayed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from rngcert.errors import InputError, NoDataError

__all__ = ["words_to_bits", "pack_bits", "unpack_bits", "parse_ascii_bits", "read_bits", "read_bit_streams", "BitDump", "check_binary_dump", "check_repeats"]

def words_to_bits(words, width: int) -> np.ndarray:
    """Unpack unsigned words into bits, most significant bit of each word first.

    Parameters
    ----------
    words : (k,) array_like of unsigned int
    width : {8, 16, 32, 64}

    Returns
    -------
    (k * width,) ndarray of uint8
    """
    if width not in (8, 16, 32, 64):
        raise InputError(f"width={width!r}; allowed: 8, 16, 32, 64")
    w = np.asarray(words).astype(f">u{width // 8}")
    return np.unpackbits(w.view(np.uint8))


def pack_bits(bits) -> np.ndarray:
    """Pack 0/1 bits eight to a byte along the last axis, MSB first (zero-padded)."""
    return np.packbits(np.asarray(bits, dtype=np.uint8), axis=-1)


def unpack_bits(packed, n: int) -> np.ndarray:
    """Inverse of :func:`pack_bits`: the first n bits along the last axis."""
    return np.unpackbits(np.asarray(packed, dtype=np.uint8), axis=-1, count=int(n))


_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True


_BOMS = {b"\xef\xbb\xbf": "UTF-8", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}


def _bad_ascii_byte(data: bytes, off: int) -> str:
    """Where the first byte that is not a bit or whitespace is (line, column, byte offset), and what it is."""
    line = data.count(b"\n", 0, off) + 1
    col = off - (data.rfind(b"\n", 0, off) + 1) + 1
    where = f"line {line}, column {col}, byte offset {off}"
    bom = next((enc for mark, enc in _BOMS.items() if off == 0 and data.startswith(mark)), None)
    if bom:
        return (f"{where}: the file starts with a {bom} byte-order mark; an ASCII bit file holds only the characters '0', '1' "
                f"and whitespace{'' if bom == 'UTF-8' else ', one byte each'}: save it as plain ASCII (without BOM)")
    looks = _ascii_looks_like(data)
    return (f"{where}: character {bytes([data[off]])!r} is not '0', '1' or "
            "whitespace; an ASCII bit file may hold only these" + (f". The file looks like {looks}" if looks else ""))


def _utf16_unmarked(data: bytes) -> bool:
    """Whether ``data`` is UTF-16 text without a byte-order mark: every other byte NUL, the others printable text."""
    a = np.frombuffer(data[: len(data) // 2 * 2], dtype=np.uint8)
    if a.size < 4:
        return False
    even, odd = a[0::2], a[1::2]
    return any(bool((z == 0).all()) and bool(_TEXT[t].all()) for z, t in ((even, odd), (odd, even)))


def _ascii_looks_like(data: bytes) -> str:
    """What a file given as ``--format ascii`` looks like when it is not ASCII bits (case c17 the other way round):
    UTF-16 text, a binary dump, a hex dump or bits with separators; empty when nothing is clear."""
    if _utf16_unmarked(data):
        return "UTF-16 text without a byte-order mark (every other byte is NUL): save it as plain ASCII"
    a = np.frombuffer(data, dtype=np.uint8)
    other = int((~_TEXT[a]).sum())
    if other * 10 >= a.size:
        return (f"binary data, not text ({other:,} of its {a.size:,} bytes are neither printable ASCII nor whitespace): "
                "a raw dump is read with --format binary")
    t = a[~_WS[a]]
    if t.size and bool(_HEX[t].all()) and bool(((t > 57) | (t < 48)).any()):
        return "a hex dump (hexadecimal digits): convert it to bytes (xxd -r -p FILE > FILE.bin) and give --format binary"
    seps = sorted(set(bytes(t[(t != 48) & (t != 49)].tolist()).decode("latin-1")))
    if len(seps) == 1 and seps[0] in ",;:|-_.":
        return f"bits separated by {seps[0]!r}: remove the separators (tr -d '{seps[0]}' < FILE > FILE.txt)"
    return ""


def parse_ascii_bits(data: bytes) -> np.ndarray:
    """Parse ASCII '0'/'1' text, whitespace ignored.

    Raises
    ------
    NoDataError
        No bit at all (empty or whitespace only).
    InputError
        Any other byte; the message names its byte offset and the character.
    """
    a = np.frombuffer(data, dtype=np.uint8)
    isbit = (a == 48) | (a == 49)
    bad = ~(isbit | _WS[a])
    if bad.any():
        off = int(np.argmax(bad))
        raise InputError(_bad_ascii_byte(data, off))
    bits = a[isbit] - 48
    if bits.size == 0:
        raise NoDataError("no bits found: the input is empty or holds only whitespace")
    return bits


#: A binary dump is refused when every byte is below this (case c17): 2 or more of its 8 bits never
#: set, which a uniform byte source gives with probability 4**-L over L bytes.
SMALL_BYTE_BOUND = 64
#: Shortest dump the shape checks judge (a shorter one is too short for any SP 800-22 test anyway).
MIN_CHECKED_BYTES = 16


def check_binary_dump(data: bytes, path: str = "the dump") -> None:
    """Refuse a file given as a binary dump whose bytes cannot be a generator's output (case c17).

    * every byte is the character ``0`` or ``1`` or whitespace: an ASCII bit file (``--format
      ascii``), which read as bytes would FAIL every test with p < 1e-300;
    * text (ASCII, or UTF-8/UTF-16 with a byte-order mark): hex digits (a hex dump), decimal
      numbers (words written one per line), base64, '0'/'1' after a byte-order mark, or any printable
      text from :data:`MIN_TEXT_BYTES` bytes on; read as bytes, text fails every test;
    * every byte is below :data:`SMALL_BYTE_BOUND` (e.g. 0 to 36): outcomes stored one per byte
      (pockets, cards) or bits one per byte (0 and 1), not packed bits; every byte 0 is an erased
      dump or a source stuck at 0.

    A uniform source of L bytes looks like any of these with probability at most 4**-L (printable
    text: below 1e-25 from 64 bytes); files shorter than :data:`MIN_CHECKED_BYTES` are not judged.

    Raises
    ------
    InputError
        Naming what the file looks like and what to do instead.

    Examples
    --------
    >>> check_binary_dump(bytes(range(256)))   # bytes of every value: a dump
    >>> check_binary_dump(b"0110 1001 1110 0001 0101")
    Traceback (most recent call last):
    ...
    rngcert.errors.InputError: the dump: every byte is the character '0' or '1' (20 bits as text, ...
    """
    a = np.frombuffer(data, dtype=np.uint8)
    if a.size < MIN_CHECKED_BYTES:
        return
    isbit = (a == 48) | (a == 49)
    if bool(np.all(isbit | _WS[a])) and isbit.any():
        raise InputError(
            f"{path}: every byte is the character '0' or '1' ({int(isbit.sum()):,} bits as text, with whitespace): this is an ASCII "
            "bit file, not a binary dump; read as bytes it would fail every test. Give --format ascii"
        )
    packed = next((what for magic, what in _CONTAINERS if re.match(magic, data, re.DOTALL)), None)
    if packed:
        raise InputError(
            f"{path}: starts with the signature of {packed}, not raw generator output; a uniform source starts so with "
            "probability below 2^-27. Unpack it and certify the capture itself")
    if _utf16_unmarked(data):
        raise InputError(
            f"{path}: every other byte is NUL and the others are printable text: this is UTF-16 text without a byte-order mark, "
            "not a binary dump; read as bytes it would fail every test. Save it as plain ASCII ('0'/'1' bits: --format ascii; "
            "hex digits: xxd -r -p)")
    _refuse_text(data, path)
    top = int(a.max())
    if top < SMALL_BYTE_BOUND:
        values = np.unique(a)
        what = ("an erased or unwritten dump, or a source stuck at 0 (every byte is 0)" if top == 0 else
                "bits stored one per byte (every byte is 0 or 1), not packed eight to a byte" if top <= 1 else
                f"outcomes stored one per byte (pockets, cards, dice: {values.size} distinct values from {int(values[0])} to {top}), "
                "not raw generator output")
        raise InputError(
            f"{path}: every one of its {a.size:,} bytes is below {top + 1}, which random bytes are with probability "
            f"{(top + 1) / 256:.2g}^{a.size:,}: this looks like {what}. rngcert bits needs the generator's raw bits "
            + ("(check the capture: a device whose output really is all zeros has failed)" if top == 0 else
               "(pack them: numpy.packbits, or write them as ASCII 0/1 and give --format ascii)" if top <= 1 else
               "(certify outcomes with `rngcert certify` as a spin log, one per line; `rngcert scaling` gives a mapping's exact bias)")
        )


#: Signatures of compressed and container files (at least 27 fixed bits each: gzip's reserved flag bits are 0): a
#: capture given compressed is tested as its compressed stream, not as the generator's bits.
_CONTAINERS = (
    (rb"\x1f\x8b\x08[\x00-\x1f]", "a gzip file (gunzip it)"), (rb"PK\x03\x04", "a zip archive (unzip it)"),
    (rb"\xfd7zXZ\x00", "an xz file (unxz it)"), (rb"BZh[1-9](1AY&SY|\x17rE8P\x90)", "a bzip2 file (bunzip2 it)"),
    (rb"\x28\xb5\x2f\xfd", "a zstd file (unzstd it)"), (rb"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (rb"%PDF-", "a PDF document"), (rb"\x89PNG\r\n\x1a\n", "a PNG image"),
)
#: Shortest dump judged as text: a uniform source's L bytes are all printable ASCII or whitespace
#: with probability (101/256)**L, below 1e-25 from 64 bytes on (hex digits: (22/256)**L < 4**-L).
MIN_TEXT_BYTES = 64
_HEX = np.zeros(256, dtype=bool)
_HEX[list(b"0123456789abcdefABCDEF")] = True
_B64 = np.zeros(256, dtype=bool)
_B64[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")] = True
_TEXT = _WS.copy()
_TEXT[32:127] = True


def _as_text(data: bytes) -> tuple[np.ndarray, str] | None:
    """The bytes of ``data`` as ASCII text (a UTF-8 or UTF-16 byte-order mark dropped) and the encoding, or None."""
    enc, body = "ASCII", data
    if data.startswith(b"\xef\xbb\xbf"):
        enc, body = "UTF-8 with a byte-order mark", data[3:]
    elif data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            enc, body = "UTF-16", data.decode("utf-16").encode("ascii")
        except (UnicodeError, ValueError):
            return None
    t = np.frombuffer(body, dtype=np.uint8)
    return (t, enc) if t.size and bool(_TEXT[t].all()) else None


def _refuse_text(data: bytes, path: str) -> None:
    """Refuse a dump that is text: hex digits (a hex dump), decimal numbers, or any printable text."""
    text = _as_text(data)
    if text is None:
        return
    t, enc = text
    hexdump = bool((_HEX[t] | _WS[t]).all())
    if len(data) < (MIN_CHECKED_BYTES if hexdump else MIN_TEXT_BYTES):
        return
    decimal = bool((((t >= 48) & (t <= 57)) | _WS[t]).all())
    bits = bool((((t == 48) | (t == 49)) | _WS[t]).all())
    what = ("the character '0' or '1': an ASCII bit file (save it as plain ASCII, without a byte-order mark, and give --format ascii)"
            if bits else
            "decimal numbers written as text (e.g. words one per line): write the words as raw bytes" if decimal else
            "hexadecimal digits: a hex dump as text; convert it to bytes (xxd -r -p FILE > FILE.bin)" if hexdump else
            "base64 text: decode it to bytes (base64 -d FILE > FILE.bin)" if bool((_B64[t] | _WS[t]).all()) else
            "printable text, not raw bytes: write the generator's raw output as bytes")
    raise InputError(
        f"{path}: every one of its {t.size:,} characters ({enc}) is {what}{'' if bits else ', or give ASCII 0/1 with --format ascii'}. "
        "Read as bytes, text fails every test whatever the generator (a byte of text is never above 127)")


@dataclass(frozen=True)
class BitDump:
    """Bits read from a device dump plus the provenance a report needs.

    Attributes
    ----------
    bits : (n,) ndarray of uint8
    path : str
    sha256 : str
        Of the file's bytes.
    fmt : {"ascii", "binary"}
    bit_order : {"big", "little"} or None
        None for ASCII.
    n_bits : int
        Bits available in the file (``bits`` may be a prefix of them).
    """

    bits: np.ndarray
    path: str
    sha256: str
    fmt: str
    bit_order: str | None
    n_bits: int

    def provenance(self) -> dict:
        return {"path": self.path, "sha256": self.sha256, "format": self.fmt,
                "bit_order": self.bit_order, "bits_in_file": self.n_bits,
                "bits_used": int(self.bits.size)}


def read_bits(path, *, fmt: str, bit_order: str = "big", n: int | None = None) -> BitDump:
    """Read a device's raw dump.

    Parameters
    ----------
    path : str or os.PathLike
    fmt : {"ascii", "binary"}
        Required: rngcert does not guess (a text file read as binary would silently become
        bits).
    bit_order : {"big", "little"}
        Binary only: MSB first (default) or LSB first within each byte.
    n : int, optional
        Use the first n bits; the file must hold at least n (never rewound or replayed).

    Raises
    ------
    NoDataError
        Empty file / no bits.
    InputError
        Unknown format or bit order, a non-bit character in ASCII, fewer than n bits.
    """
    if fmt not in ("ascii", "binary"):
        raise InputError(f"fmt={fmt!r}; allowed: 'ascii', 'binary'")
    if bit_order not in ("big", "little"):
        raise InputError(f"bit_order={bit_order!r}; allowed: 'big' (MSB first), 'little'")
    path = os.fspath(path)
    # a binary dump's bytes past the n bits, and past what its shape checks judge, are hashed and counted, not kept
    want = max(-(-int(n) // 8), _JUDGED_BYTES) if fmt == "binary" and n is not None and int(n) == n and n >= 1 else None
    data, digest, size = _read_file(path, want)
    if size == 0:
        raise NoDataError(f"{path}: the file is empty")
    if fmt == "ascii":
        try:
            bits = parse_ascii_bits(data)
        except NoDataError as e:
            raise NoDataError(f"{path}: {e}") from None
        except InputError as e:
            raise InputError(f"{path}: {e}") from None
        order = None
    else:
        check_binary_dump(data, path)
        if want is not None:
            data = data[: -(-int(n) // 8)]
        bits = np.unpackbits(np.frombuffer(data, dtype=np.uint8), bitorder=bit_order)
        order = bit_order
    total = 8 * size if fmt == "binary" else int(bits.size)
    if n is not None:
        if int(n) != n or n < 1:
            raise InputError(f"n={n!r}; a positive number of bits is required")
        if total < n:
            raise InputError(f"{path}: holds {total} bits, {int(n)} requested; a dump is never "
                             "rewound or replayed to make up the length")
        bits = bits[: int(n)]
    bits = np.ascontiguousarray(bits)
    bits.flags.writeable = False
    return BitDump(bits, path, digest, fmt, order, total)


def _holds(path, bits: int) -> bool:
    """Whether ``path`` is a regular file of at least ``bits`` bits (else it is read whole, and a short one refused by name)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and 8 * st.st_size >= bits


#: Bytes of a binary dump that :func:`check_binary_dump` judges at least, however few bits are tested.
_JUDGED_BYTES = 1 << 16
#: Bytes hashed at a time past the part of a binary dump that is read into memory.
_HASH_CHUNK = 1 << 20


def _read_file(path: str, want: int | None) -> tuple[bytes, str, int]:
    """(bytes read, SHA-256 of the whole file, its size in bytes).

    With ``want``, a regular file's first ``want`` bytes only are kept in memory and the rest is hashed in
    chunks (a 1 GB capture of which 100 streams of 10**6 bits are tested held 10 GB); a pipe is read whole."""
    try:
        with open(path, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/urandom, /dev/hwrng: read whole, it never ends
                raise InputError(
                    f"{path}: a device, not a dump: rngcert bits certifies a capture that the report can hash and "
                    "`rngcert verify --rerun` can read again. Capture a fixed number of bytes first (head -c 12500000 "
                    f"{path} > dump.bin: 100 streams of 10^6 bits) and certify that file")
            if want is None or not stat.S_ISREG(mode):
                data = fh.read()
                return data, hashlib.sha256(data).hexdigest(), len(data)
            data = fh.read(want)
            h, size = hashlib.sha256(data), len(data)
            while chunk := fh.read(_HASH_CHUNK):
                h.update(chunk)
                size += len(chunk)
            return data, h.hexdigest(), size
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}") from None


def read_bit_streams(path, m: int, n: int, *, fmt: str, bit_order: str = "big", dump: BitDump | None = None):
    """Split a dump into m consecutive, non-overlapping streams of n bits.

    ``dump``, when given, is the file already read by :func:`read_bits` (a pipe such as
    ``/dev/stdin`` can be read once only); it is split instead of reading ``path`` again.

    Returns
    -------
    streams : (m, n) ndarray of uint8
    dump : BitDump
        Provenance (``dump.bits`` holds the m * n bits used).

    Raises
    ------
    InputError
        When the file holds fewer than m * n bits (the message says how many streams of n bits
        it does hold).
    """
    if int(m) != m or m < 1 or int(n) != n or n < 1:
        raise InputError(f"m={m!r}, n={n!r}; positive integers are required")
    need = int(m) * int(n)
    if dump is not None and dump.bits.size == dump.n_bits:
        full = dump
    else:  # a binary dump: only the bits tested are read into memory (the rest is hashed and counted)
        full = read_bits(path, fmt=fmt, bit_order=bit_order, n=need if fmt == "binary" and _holds(path, need) else None)
    if full.n_bits < need:
        raise InputError(f"{full.path}: holds {full.n_bits} bits, {m} streams of {n} bits need "
                         f"{need} (the file has {full.n_bits // int(n)} whole streams); a dump "
                         "is never rewound or replayed")
    used = full.bits[:need]
    check_repeats(used, int(n), full.path, byte_aligned=full.fmt == "binary")
    dump = BitDump(used, full.path, full.sha256, full.fmt, full.bit_order, full.n_bits)
    return used.reshape(int(m), int(n)), dump


#: Bits of the probe whose recurrence shows a dump holding the same output twice (a fair source
#: repeats 128 given bits at a given place with probability 2**-128).
REPEAT_PROBE_BITS = 128
#: A recurrence closer than this is a short period (a stuck or cycling source), which the battery
#: itself FAILs; only a longer one (a copy that each stream alone cannot show) is refused here.
SHORT_PERIOD_BITS = 1024


def _recurrence(bits: np.ndarray, start: int, stop: int) -> int | None:
    """First bit offset p > start where bits[start:start + 128] occur again within bits[:stop], or None.

    Searched in the packed bytes at each of the 8 bit alignments (8 ``bytes.find`` calls)."""
    probe = bits[start:start + REPEAT_PROBE_BITS]
    if probe.size < REPEAT_PROBE_BITS or stop - start < 2 * REPEAT_PROBE_BITS:
        return None
    hay = np.packbits(bits[start + 1:stop]).tobytes()  # offsets from start + 1
    best = None
    for s in range(8):
        i = hay.find(np.packbits(probe[s:s + 120]).tobytes())
        while i >= 0 and 8 * i - s < 0:
            i = hay.find(np.packbits(probe[s:s + 120]).tobytes(), i + 1)
        if i >= 0 and (best is None or 8 * i - s < best):
            best = 8 * i - s
    return None if best is None else start + 1 + best


def _random_looking(probe: np.ndarray) -> bool:
    """Whether 128 bits have 40 to 88 ones and 40 to 88 changes, as all but about 1e-5 of fair blocks do: a
    run of zeros or a stuck pattern at the start of a dump recurs in a bad source without being a copy."""
    ones = int(probe.sum())
    changes = int(np.count_nonzero(np.diff(probe.astype(np.int8))))
    return probe.size == REPEAT_PROBE_BITS and 40 <= ones <= 88 and 40 <= changes <= 88


def check_repeats(bits: np.ndarray, n: int, path: str = "the dump", *, byte_aligned: bool = False) -> None:
    """Refuse bits that hold the same output twice at a distance a stream cannot show.

    Three checks on the bits to be tested: the dump's first 128 bits, when they look random (not a
    run of zeros: :func:`_random_looking`), recurring at bit p >= 1024 (a file written twice, a
    dump concatenated with itself, a generator restarted from its seed); two identical streams
    of n bits; and any 1,024 bits that recur 1,024 bits or more later, found from 64-bit probes
    every :data:`COPY_STRIDE` bits (a capture included twice when files were joined; about 0.2 s
    per 10**8 bits of a binary dump, 1.5 s of an ASCII one). SP 800-22 tests each stream alone, so a stream and its copy
    both pass (two copies of a good stream PASS). A recurrence closer than 1,024 bits is a short
    period, which the battery FAILs, and is left to it.

    Parameters
    ----------
    bits : (N,) ndarray of uint8
    n : int
        Bits per stream (N a multiple of it).
    path : str
        Named in the message.
    byte_aligned : bool
        A binary file: a copy starts on a whole byte, so only byte offsets are searched.

    Raises
    ------
    InputError
        Naming where the copy starts.
    """
    p = _recurrence(bits, 0, bits.size) if _random_looking(bits[:REPEAT_PROBE_BITS]) else None
    if p is not None and p >= SHORT_PERIOD_BITS:
        raise InputError(
            f"{path}: its first {REPEAT_PROBE_BITS} bits occur again at bit {p:,}: the dump holds the same output twice "
            f"(a file written twice or joined to itself, or a generator restarted from the same seed); a fair source repeats "
            f"{REPEAT_PROBE_BITS} given bits with probability 2^-{REPEAT_PROBE_BITS}, and SP 800-22, which tests each stream "
            f"alone, would pass both copies. Certify one copy (its first {p:,} bits), or find why the source repeats")
    rows = bits.reshape(-1, n)
    if rows.shape[0] >= 2 and n >= REPEAT_PROBE_BITS:
        _identical_rows(rows, n, path)
    hit = _copied_block(bits, byte_aligned)
    if hit is not None:
        p, i = hit
        raise InputError(
            f"{path}: bits {p:,} to {p + SHORT_PERIOD_BITS - 1:,} occur again at bit {i:,}: the dump holds the same output twice "
            f"(a capture included twice when files were joined, or a generator restarted from the same seed); a fair source "
            f"repeats {SHORT_PERIOD_BITS:,} given bits with probability 2^-{SHORT_PERIOD_BITS:,}, and SP 800-22, which tests each "
            "stream alone, would pass both copies. Remove the copy, or find why the source repeats")


#: Probes of the copied-block search: 64 bits every COPY_STRIDE bits (a copy of COPY_STRIDE + 1,088 bits or
#: more holds one); a hit counts when 1,024 bits at both places agree.
COPY_STRIDE = 8192


def _copied_block(bits: np.ndarray, byte_aligned: bool = False) -> tuple[int, int] | None:
    """(p, i): bits p.. and i.. agree over 1,024 bits, |i - p| >= 1,024, p a probe that looks random; or None.

    Every bit offset i is searched (every byte offset when ``byte_aligned``: a binary file's copies
    are whole bytes): for each bit shift s and byte phase t, the packed bits viewed as 64-bit words
    are the windows at offsets s + 8 (t + 8 q), looked up among the sorted probes."""
    span, size = SHORT_PERIOD_BITS, bits.size
    pos = np.arange(0, size - span, COPY_STRIDE)
    if pos.size == 0 or size < 2 * span:
        return None
    probe_bits = bits[pos[:, None] + np.arange(64)]
    ones, changes = probe_bits.sum(axis=1), np.count_nonzero(np.diff(probe_bits.astype(np.int8), axis=1), axis=1)
    ok = (ones >= 16) & (ones <= 48) & (changes >= 16) & (changes <= 48)  # not a run of zeros or a stuck pattern
    values = np.packbits(probe_bits[ok], axis=1).view(">u8").ravel()
    if values.size == 0:
        return None
    order = np.argsort(values, kind="stable")
    values, pos = values[order], pos[ok][order]
    prefix = np.zeros(1 << 24, dtype=bool)  # the probes' top 24 bits: a window whose prefix is not here is no hit
    prefix[values >> np.uint64(40)] = True
    for s in range(1 if byte_aligned else 8):
        packed = np.packbits(bits[s:])
        for t in range(8):
            words = packed[t:t + (packed.size - t) // 8 * 8].view(">u8")
            cand = np.flatnonzero(prefix[words >> np.uint64(40)])
            k = np.searchsorted(values, words[cand]).clip(max=values.size - 1)
            for q, kq in zip(cand[values[k] == words[cand]].tolist(), k[values[k] == words[cand]].tolist()):
                i, p = s + 8 * (t + 8 * q), int(pos[kq])
                if abs(i - p) >= span and i + span <= size and np.array_equal(bits[p:p + span], bits[i:i + span]) \
                        and _recurrence(bits, p, p + span + REPEAT_PROBE_BITS) is None:  # not a short period
                    return min(p, i), max(p, i)
    return None


def _identical_rows(rows: np.ndarray, n: int, path: str) -> None:
    """Refuse two identical streams (unless the stream itself has a short period, which the battery FAILs)."""
    seen: dict[bytes, int] = {}
    for i, key in enumerate(hashlib.sha256(np.packbits(r).tobytes()).digest() for r in rows):
        j = seen.setdefault(key, i)
        if j != i and _recurrence(rows[i], 0, min(n, SHORT_PERIOD_BITS + REPEAT_PROBE_BITS)) is None:
            raise InputError(
                f"{path}: streams {j + 1} and {i + 1} of {n:,} bits (bits {j * n:,} and {i * n:,} on) are identical: the dump "
                f"holds the same output twice; a fair source repeats {n:,} bits with probability 2^-{n:,}, and SP 800-22, which "
                "tests each stream alone, would pass both copies. Remove the copy, or find why the source repeats")


