"""A CSV log's encoding is decided on the whole file, as a JSON Lines log's is: a Latin-1 log whose first byte that is
not ASCII comes after the first 64 KiB (a dealer who joins late, `Jürgen`) is read as Latin-1 with its note, as the same
log with that byte early is; its rows were rejected as 'not valid utf-8 text'."""

from __future__ import annotations

import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.collect import csvstream
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _rows(n=12000, seed=8):
    r = random.Random(seed)
    rows = [[str(i), str(r.randrange(37)), r.choice(["Ann", "Bob"]), "T1"] for i in range(1, n + 1)]
    for i in range(10000, 10400, 7):  # (past the first 64 KiB: about 15 bytes a row)
        rows[i][2] = "J\xfcrgen"
    return rows


def _read(path, exact, monkeypatch):
    with compact_read(monkeypatch, exact=exact):
        log = spinlog.read_spin_log([path], EU)
    (t,) = log.tables.values()
    return log, t


@pytest.mark.parametrize("exact", [False, True])
def test_a_latin1_byte_past_64_kib_is_read_as_latin1(exact, tmp_path, monkeypatch):
    rows = _rows()
    csv = tmp_path / "log.csv"
    csv.write_bytes(("spin_id,result,dealer,table\n" + "".join(",".join(x) + "\n" for x in rows)).encode("latin-1"))
    assert b"\xfc" not in csv.read_bytes()[: 1 << 16]
    jl = tmp_path / "log.jsonl"
    jl.write_bytes(("\n" + "".join(f'{{"spin_id": {a}, "result": {b}, "dealer": "{c}", "table": "{d}"}}\n' for a, b, c, d in rows)).encode("latin-1"))
    log, t = _read(csv, exact, monkeypatch)
    assert log.rejected == [] and log.sources[0].accepted == 12000
    assert "Jürgen" in t.dealer_labels
    assert f"{csv}: not valid UTF-8; read as latin-1" in log.notes
    jlog, jt = _read(jl, exact, monkeypatch)
    assert jt.outcomes.tolist() == t.outcomes.tolist() and jt.dealer.tolist() == t.dealer.tolist() and jt.dealer_labels == t.dealer_labels


def test_the_scan_tells_whether_the_whole_file_is_utf8(tmp_path):
    import io

    ascii_ = b"a,b\n" * 30000
    for data, utf8 in [(ascii_, True), (ascii_ + "J\u00fcrgen\n".encode(), True), (ascii_ + b"J\xfcrgen\n", False),
                       (ascii_ + "\u20ac".encode()[:2], False)]:  # (a character cut at the end of the file)
        scan = csvstream.scan_lines(io.BytesIO(data))
        assert scan.utf8 is utf8
        assert csvstream.detect_encoding(scan, data[: 1 << 16]) == ("utf-8" if utf8 else "latin-1")
