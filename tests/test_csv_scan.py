"""The line scan that precedes every CSV read (rngcert.collect.csvstream.scan_lines): blank
lines, line count, header line and hash, whatever the chunk boundaries, against the plain
definition (a line is what ``split(b"\\n")`` gives; blank means empty or a lone CR)."""

import hashlib

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rngcert.collect import csvstream

PIECES = [b"", b"\r", b"a", b"ab,c", b"\r\r", b" ", b"x" * 20, b"1,2\r", b"\xc3\xa9,7"]


def _reference(data: bytes):
    bom = data.startswith(b"\xef\xbb\xbf")
    body = data[3:] if bom else data
    lines = body.split(b"\n")
    if lines and lines[-1] == b"":
        lines = lines[:-1]  # a final newline ends the last line; it does not start one
    blank = [i for i, s in enumerate(lines, 1) if s in (b"", b"\r")]
    first = next(((i, s) for i, s in enumerate(lines, 1) if s not in (b"", b"\r")), (0, b""))
    return len(lines), blank, first, bom


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=60), st.sampled_from([b"", b"\n", b"\r\n"]), st.booleans(),
       st.sampled_from([3, 7, 64, 1 << 20]))  # (8 MiB in use: a BOM is never split)
def test_scan_matches_the_definition_for_any_chunking(pieces, end, bom, chunk):
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(pieces) + end
    old = csvstream._CHUNK
    csvstream._CHUNK = chunk
    try:
        import io

        got = csvstream.scan_lines(io.BytesIO(data))
    finally:
        csvstream._CHUNK = old
    n, blank, (first_no, first), has_bom = _reference(data)
    assert got.sha256 == hashlib.sha256(data).hexdigest() and got.size == len(data)
    assert got.n_lines == n and got.bom == has_bom
    assert got.blank_lines.tolist() == blank
    assert (got.first_line_no, got.first_line) == (first_no, first)


def test_lean_log_of_short_lines_is_scanned_without_a_python_loop_per_line(tmp_path):
    """A lean export ("T000,28" lines) once made the scan loop in Python over every line; the
    result must stay exact for a million of them (blank lines at known places)."""
    rng = np.random.default_rng(2)
    rows = [f"T{t:03d},{r}" for t, r in zip(rng.integers(0, 50, 1_000_000), rng.integers(0, 37, 1_000_000))]
    for at in (10, 500_000, 999_999):
        rows[at] = ""
    p = tmp_path / "lean.csv"
    p.write_bytes(("table,result\n" + "\n".join(rows) + "\n").encode())
    with open(p, "rb") as fh:
        got = csvstream.scan_lines(fh)
    assert got.n_lines == 1_000_001 and got.blank_lines.tolist() == [12, 500_002, 1_000_001]


def test_prefetch_keeps_order_raises_in_place_and_stops_with_its_caller():
    """The parse thread of ordered_map (csvstream.prefetch): items in order, an exception of the
    producer raised after the items before it, and a caller that stops early stops the producer."""
    import threading

    import pytest

    def produce(n, fail_at=None):
        for i in range(n):
            if i == fail_at:
                raise ValueError(f"bad batch {i}")
            yield i

    assert list(csvstream.prefetch(produce(50), 2)) == list(range(50))
    got = []
    with pytest.raises(ValueError, match="bad batch 7"):
        for x in csvstream.prefetch(produce(20, fail_at=7), 3):
            got.append(x)
    assert got == list(range(7))
    it = csvstream.prefetch(produce(10**9), 2)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()  # the producer sees the stop and ends (it would otherwise run for ever)
    assert not any(t.name == "rngcert-parse" and t.is_alive() for t in threading.enumerate())
    # ordered_map with threads: the results and the exception of the serial loop
    batches = [(i,) for i in range(30)]
    assert csvstream.ordered_map(lambda i: i * i, batches, threads=2) == [i * i for i in range(30)]

    def then(r):
        if r == 100:
            raise KeyError("at 10")
        return r

    with pytest.raises(KeyError):
        csvstream.ordered_map(lambda i: i * i, batches, then, threads=2)
