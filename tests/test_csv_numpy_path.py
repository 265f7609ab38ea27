"""The numpy byte-level reader of CSV logs in the usual shape (:mod:`rngcert.collect.spinlog.fastcsv`, issue 26
item 2) against the exact pyarrow path it short-cuts: on valid logs (random ones included) each of its blocks is
the dictionary ``_process`` gives for the same rows, and whole reads (compact log, exact rows, ingest) are equal
with it and without it, on valid logs and on malformed ones of every kind (quotes, BOM, CRLF, blank lines, text
ids, ids out of order, extra or missing fields, non-ASCII text, timestamps that are not times, cells in other
spellings, the shared cases c01-c18), each of which either takes the exact path or reads the same.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from rngcert.collect import csvstream
from rngcert.collect.spinlog import core as spin_core
from rngcert.collect.spinlog import fastcsv
from rngcert.equipment.wheel import load_wheel

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_fast_paths import CASES, _read_all  # noqa: E402

HEADER = '"spin_id","timestamp","table","dealer","direction","revolutions","void","result"'
CASES_DIR = Path("/work/shared/cases")


def _random_log(seed: int, n: int = 400, *, shuffle_cols: bool = False, crlf: bool = False) -> bytes:
    """A random log in the usual shape: ids of 1-16 digits (some zero-padded), timestamps from 1900 to 2199 (leap
    days, ends of months), tables and dealers of 1-7 or 1-24 characters, revolutions 0-999 (some padded), void true/false,
    results 0-36 on a European wheel."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, 10 ** rng.integers(1, 17, n))
    pad = rng.random(n) < 0.1
    sid = [f"{v:0{int(w)}d}" if p else str(v) for v, p, w in zip(ids.tolist(), pad.tolist(), rng.integers(1, 17, n).tolist())]
    base = dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc)
    secs = rng.integers(0, int((dt.datetime(2199, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc) - base).total_seconds()), n)
    special = [dt.datetime(2024, 2, 29, 23, 59, 59), dt.datetime(2000, 2, 29), dt.datetime(1970, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59),
               dt.datetime(2199, 12, 31, 23, 59, 59), dt.datetime(1900, 1, 1), dt.datetime(2026, 12, 31, 12)]
    ts = [(base + dt.timedelta(seconds=int(s))).strftime("%Y-%m-%dT%H:%M:%SZ") for s in secs]
    for i, d in enumerate(special):
        ts[(i * 37) % n] = d.strftime("%Y-%m-%dT%H:%M:%SZ")
    alphabet = list("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:/~")
    names = ["".join(rng.choice(alphabet, int(rng.integers(1, 8 if seed % 2 else 25)))) for _ in range(int(rng.integers(1, 12)))]
    tables = rng.choice(names[: max(1, len(names) // 3)], n)
    dealers = rng.choice(names, n)
    dirs = rng.choice(["cw", "ccw", "CW", "Ccw", "acw"][: int(rng.integers(1, 6))], n)
    revs = [f"{v:0{int(w)}d}" for v, w in zip(rng.integers(0, 1000, n).tolist(), rng.integers(1, 4, n).tolist())]
    revs = [r if len(r) <= 3 else r[-3:] for r in revs]
    void = rng.choice(["false", "true", "False", "0", "1", "no"][: int(rng.integers(1, 7))], n)
    res = rng.integers(0, 37, n).tolist()
    cols = [sid, ts, tables.tolist(), dealers.tolist(), dirs.tolist(), revs, void.tolist(), [str(r) for r in res]]
    head = HEADER.split(",")
    order = rng.permutation(8) if shuffle_cols else np.arange(8)
    nl = "\r\n" if crlf else "\n"
    lines = [",".join(head[j] for j in order)] + [",".join(cols[j][i] for j in order) for i in range(n)]
    return (nl.join(lines) + nl).encode()


def _blocks_equal(data: bytes, block: int = 1500, wheel: str = "european") -> int:
    """Check every block of ``data`` (a log in the usual shape) against ``_process`` of pyarrow's columns of the
    same rows; returns the number of blocks."""
    from rngcert.collect._lazy import pacsv

    eu = load_wheel(wheel)
    first = data.split(b"\n", 1)[0]
    names = [f.strip('"') for f in first.decode().split(",")]
    resolved = spin_core.resolve_columns(names, "log", {}, names)
    line, count = 2, 0
    for b in fastcsv.iter_blocks(io.BytesIO(data), len(first) + 1, block, csvstream.MAX_LINE):
        got = fastcsv.process_block(b, line, names, resolved, "log", eu)
        t = pacsv.read_csv(io.BytesIO(first + b"\n" + b[: -len(fastcsv._PAD)]), convert_options=pacsv.ConvertOptions(
            column_types={h: "string" for h in names}, strings_can_be_null=False, quoted_strings_can_be_null=False))
        cols = {h: t.column(h).combine_chunks() for h in names}
        want = spin_core._process(cols, np.arange(line, line + t.num_rows), [], "log", eu, {}, None, names, text_codes=True, id_numbers=True)
        _same(got, want)
        line += got["rows"]
        count += 1
    return count


def _same(a, b, where: str = "") -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), where
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif dataclasses.is_dataclass(a):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    else:
        assert a == b and type(a) is type(b), where


@pytest.mark.parametrize("seed", range(12))
def test_each_block_is_what_the_exact_path_gives(seed):
    assert _blocks_equal(_random_log(seed, shuffle_cols=seed % 3 == 1)) > 1


def test_a_log_of_the_usual_spellings_reads_on_this_path():
    rng = np.random.default_rng(5)
    rows = [f"{i},2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,T{i % 3},D{i % 4},{'cw' if i % 2 else 'ccw'},{i % 9},"
            f"{'true' if i % 50 == 0 else 'false'},{r}" for i, r in enumerate(rng.integers(0, 37, 3000).tolist(), 1)]
    assert _blocks_equal((HEADER + "\n" + "\n".join(rows) + "\n").encode()) > 10


@pytest.mark.parametrize("wheel, results", [("american", ["0", "00", "36", "7"]), ("money-wheel-52", ["1", "2", "5", "10", "20", "40"]),
                                            ("crazy-time", ["1", "2", "5", "10"]), ("money-wheel-52", ["0", "51", "12"])])
def test_blocks_on_other_wheels(wheel, results):
    rng = np.random.default_rng(9)
    rows = [f"{i},2026-03-01T10:{i // 60 % 60:02d}:{i % 60:02d}Z,T1,D1,cw,5,false,{r}" for i, r in enumerate(rng.choice(results, 3000).tolist(), 1)]
    data = (HEADER + "\n" + "\n".join(rows) + "\n").encode()
    try:
        assert _blocks_equal(data, wheel=wheel) > 10
    except fastcsv.NotCanonical:  # only where the exact path rejects a result (a section number on a wheel of unknown order)
        eu = load_wheel(wheel)
        assert any(spin_core._resolve_labels([r], eu)[3][0] >= 0 for r in results)


#: malformed or unusual logs, each a kind this path must leave to the exact path (or read the same)
def _variants() -> dict[str, bytes]:
    ok = CASES["valid"]
    lines = ok.decode().split("\n")
    v = {
        "CRLF": ok.replace(b"\n", b"\r\n"),
        "CRLF, no final line end": ok.replace(b"\n", b"\r\n")[:-2],
        "CRLF, last line ends in CR": ok.replace(b"\n", b"\r\n")[:-1],
        "LF and CRLF mixed": ok.replace(b"\n", b"\r\n", 20),
        "CRLF header, LF rows": ok.replace(b"\n", b"\r\n", 1),
        "CRLF with a CR inside a line": ok.replace(b"\n", b"\r\n").replace(b",T1,", b",T\r1,", 1),
        "quoted cell": ok.replace(b",T1,", b',"T1",', 1),
        "blank line inside": ok.replace(b"\n", b"\n\n", 5)[: len(ok) + 5],
        "id out of order": "\n".join(lines[:5] + [lines[7], lines[6], lines[5]] + lines[8:]).encode(),
        "extra field": ok.replace(b",false,", b",false,x,", 1),
        "missing field": ok.replace(b",false,", b",", 1),
        "timestamp Feb 30": ok.replace(b"2026-01-01T00:00:05Z", b"2026-02-30T00:00:05Z"),
        "timestamp second 60": ok.replace(b"2026-01-01T00:00:05Z", b"2026-01-01T00:00:60Z"),
        "timestamp hour 24": ok.replace(b"2026-01-01T00:00:05Z", b"2026-01-01T24:00:05Z"),
        "timestamp month 13": ok.replace(b"2026-01-01T00:00:05Z", b"2026-13-01T00:00:05Z"),
        "timestamp with offset": ok.replace(b"2026-01-01T00:00:05Z", b"2026-01-01T00:00:05+01:00"),
        "timestamp with fraction": ok.replace(b"2026-01-01T00:00:05Z", b"2026-01-01T00:00:05.5Z"),
        "timestamp year 1899": ok.replace(b"2026-01-01T00:00:05Z", b"1899-01-01T00:00:05Z"),
        "timestamp space": ok.replace(b"2026-01-01T00:00:05Z", b"2026-01-01 00:00:05Z"),
        "result 00": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,00\n",
        "result 37": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,37\n",
        "result 05": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,05\n",
        "result void": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,void\n",
        "result empty": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,\n",
        "revolutions 1 (void)": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,1,false,7\n",
        "revolutions of 4 digits": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,1000,false,7\n",
        "void true": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,true,7\n",
        "void TRUE": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,TRUE,7\n",
        "void maybe": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,maybe,7\n",
        "direction up": ok + b"61,2026-01-01T00:01:01Z,T1,D2,up,6,false,7\n",
        "direction empty": ok + b"61,2026-01-01T00:01:01Z,T1,D2,,6,false,7\n",
        "table of 8 characters": ok + b"61,2026-01-01T00:01:01Z,TABLE-08,D2,cw,6,false,7\n",
        "table of 17 characters": ok + b"61,2026-01-01T00:01:01Z,ROULETTE-TABLE-04,D2,cw,6,false,7\n",
        "table of 25 characters": ok + b"61,2026-01-01T00:01:01Z,ROULETTE-TABLE-0000000004,D2,cw,6,false,7\n",
        "empty dealer": ok + b"61,2026-01-01T00:01:01Z,T1,,cw,6,false,7\n",
        "repeated header": ok + HEADER.encode() + b"\n",
        "id of 17 digits": ok + b"12345678901234567,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n",
        "id of 16 digits": ok + b"1234567890123456,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n",
        "id negative": ok + b"-61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n",
        "id repeated": ok + b"60,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n",
        "tab inside a cell": ok.replace(b",T1,", b",T\t1,", 1),
        "fixed-width results": ("spin_id,result\n" + "".join(f"{100000000 + i},{i % 37:2d}\n" for i in range(3000))).encode(),
        "spaces in cells": re.sub(rb",false,(\d)\n", rb",false, \1\n", ok).replace(b",5,", b", 5,").replace(b",cw,", b",cw ,")
        .replace(b",false,", b", false,", 7).replace(b",T1,", b",T 1,"),
        "space before a table": ok.replace(b",T1,", b", T1,", 1),
        "space after a dealer": ok.replace(b",D2,", b",D2 ,", 1),
        "space for a result": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false, \n",
        "spaces for revolutions": ok + b"61,2026-01-01T00:01:01Z,T1,D2,cw,  ,false,7\n",
        "space in a spin id": ok + b"6 1,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n",
        "DEL at the edge of a cell": ok.replace(b",D2,", b",D2\x7f,", 1),
        "unquoted header": ok.replace(HEADER.encode(), HEADER.replace('"', "").encode()),
        "header with a space": ok.replace(b'"table"', b'"table name"'),
        "header in capitals": ok.replace(b'"result"', b'"Result"'),
        "header-only": (HEADER + "\n").encode(),
        "one row, no final newline": (HEADER + "\n1,2026-01-01T00:00:00Z,T1,D1,cw,5,false,3").encode(),
        "sep= line": b"sep=,\n" + ok,
        "columns reordered": ("result,spin_id,void,dealer\n" + "\n".join(f"{i % 37},{i},false,D{i % 3}" for i in range(1, 80)) + "\n").encode(),
        "a column this path does not read": ok.replace(b'"dealer"', b'"rotor_speed"'),
        "release pocket": ("spin_id,release_pocket,result\n" + "\n".join(f"{i},{i % 37},{(i * 7) % 37}" for i in range(1, 60)) + "\n").encode(),
    }
    for p in sorted(CASES_DIR.glob("c*.csv")):
        v[p.name] = p.read_bytes()
    return v


VARIANTS = _variants()
VARIANTS.update({f"random log {s}": _random_log(s, 300, shuffle_cols=s % 2 == 1) for s in (21, 22)})
VARIANTS["random log, CRLF"] = _random_log(23, 200, crlf=True)


def _without_numpy_path(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(fastcsv, "read_file", lambda *a, **k: None)
    mp.setattr(fastcsv, "read_parts", lambda *a, **k: None)


def _spy(mp: pytest.MonkeyPatch) -> list[bool]:
    """Whether each read that tried this path took it."""
    taken: list[bool] = []
    for fn in ("read_file", "read_parts"):
        real = getattr(fastcsv, fn)

        def spy(*a, _real=real, **k):
            out = _real(*a, **k)
            taken.append(out is not None)
            return out

        mp.setattr(fastcsv, fn, spy)
    return taken


@pytest.mark.parametrize("case", sorted(VARIANTS))
def test_reads_are_the_same_with_and_without_this_path(case, tmp_path, monkeypatch):
    monkeypatch.setitem(CASES, case, VARIANTS[case])
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4096)  # several blocks on both paths
    with pytest.MonkeyPatch.context() as mp:
        _without_numpy_path(mp)
        want = _read_all(case, tmp_path / "exact")
    got = _read_all(case, tmp_path / "numpy")
    assert got == want


@pytest.mark.parametrize("case", ["valid", "valid, no final newline", "BOM", "one dealer, void column of one value, several tables", "two tables",
                                  "fixed-width results", "spaces in cells", "CRLF", "CRLF, no final line end", "random log, CRLF"])
def test_the_usual_logs_take_this_path(case, tmp_path, monkeypatch):
    """(Else the comparisons above would compare the exact path with itself.)"""
    taken = _spy(monkeypatch)
    monkeypatch.setitem(CASES, case, VARIANTS.get(case, CASES.get(case)))
    _read_all(case, tmp_path / "x")
    assert taken[0]  # read_spin_log (certify's read); the exact rows and ingest keep text cells: the pyarrow path


@pytest.mark.parametrize("case", ["LF and CRLF mixed", "CRLF with a CR inside a line", "quoted cell", "blank line inside", "extra field", "timestamp Feb 30", "result void", "void maybe",
                                  "c04-fifteen-percent-unreadable.csv", "sep= line", "release pocket"])
def test_logs_of_other_shapes_take_the_exact_path(case, tmp_path, monkeypatch):
    taken = _spy(monkeypatch)
    monkeypatch.setitem(CASES, case, VARIANTS[case])
    _read_all(case, tmp_path / "x")
    assert not any(taken)


def test_a_file_that_changes_while_read_is_refused_on_this_path(tmp_path):
    eu = load_wheel("european")
    p = tmp_path / "log.csv"
    p.write_bytes(CASES["valid"])
    with open(p, "rb") as fh:
        scan = csvstream.scan_lines(fh)
    with open(p, "ab") as fh:
        fh.write(b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,false,7\n")
    from rngcert.errors import InputError

    with pytest.raises(InputError, match="changed while it was read"):
        fastcsv.read_parts(lambda: open(p, "rb"), str(p), scan, eu, {}, True, lambda x: x, None, block_size=1 << 20)


@pytest.mark.parametrize("change", ["grows", "cut"])
def test_a_file_that_changes_during_the_one_pass_read_is_refused(tmp_path, monkeypatch, change):
    """The one-pass read hashes the bytes it parses (a line appended while it reads is read and hashed); a file
    that is not the size read when the read ends (grown after it, or cut) is refused as on the exact path
    (test_csv_changed_while_read.py): a log still being written may end in half a line."""
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.errors import InputError

    p = tmp_path / "log.csv"
    p.write_bytes(CASES["valid"])
    real = fastcsv._Hashed.digest

    def changing(self):
        if change == "grows":
            with open(p, "ab") as fh:
                fh.write(b"61,2026-01-01T00:01:01Z,T1,D2,cw,6,fa")
        else:
            with open(p, "r+b") as fh:
                fh.truncate(len(CASES["valid"]) // 2)
        return real(self)

    monkeypatch.setattr(fastcsv._Hashed, "digest", changing)
    with pytest.raises(InputError, match=r"log\.csv: the file changed while it was read \(\d+ bytes when hashed, \d+ after parsing\)"):
        read_spin_log(p, load_wheel("european"))


@pytest.mark.parametrize("case", ["valid", "valid, no final newline", "BOM", "random log 21", "random log 22", "CRLF", "CRLF, no final line end",
                                  "random log, CRLF"])
def test_the_one_pass_read_gives_the_line_scan(case, tmp_path):
    """Hash, size, line count, header line, BOM: what :func:`csvstream.scan_lines` gives for the same file."""
    import hashlib

    data = VARIANTS.get(case, CASES.get(case))
    p = tmp_path / "log.csv"
    p.write_bytes(data)
    got = fastcsv.read_file(p, str(p), load_wheel("european"), {}, True, lambda x: None, None, block_size=4096)
    assert got is not None
    with open(p, "rb") as fh:
        want = csvstream.scan_lines(fh)
    assert got[0].sha256 == want.sha256 == hashlib.sha256(data).hexdigest()
    for f in dataclasses.fields(want):
        a, b = getattr(got[0], f.name), getattr(want, f.name)
        assert (np.array_equal(a, b) and a.dtype == b.dtype) if isinstance(a, np.ndarray) else a == b, f.name
