"""Adversarial inputs for the numpy byte-level CSV reader (:mod:`rngcert.collect.spinlog.fastcsv`): each is read
with and without that path and must give the same log, rows and store (the exact path names every malformed row);
a property test mixes valid and odd cells in small logs and compares the two paths' reads of them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcert.collect import csvstream

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_fast_paths import CASES, _read_all  # noqa: E402
from test_csv_numpy_path import _spy, _without_numpy_path  # noqa: E402

_OK = CASES["valid"]


def _row(**kw) -> bytes:
    cells = {"sid": "61", "ts": "2026-01-01T00:01:01Z", "t": "T1", "d": "D2", "dir": "cw", "rev": "6", "v": "false", "r": "7"}
    cells.update(kw)
    return (",".join(cells.values()) + "\n").encode()


def _extra_column(rows: list[str]) -> bytes:
    return ("spin_id,result,comment\n" + "".join(f"{i},{i % 37},c{i}\n" for i in range(1, 50)) + "".join(rows)).encode()


ADVERSARIAL = {
    # a line longer than csvstream.MAX_LINE, made long by a column this path does not read: the exact path rejects it unread
    "line longer than MAX_LINE (a long comment)": _extra_column(["50,5," + "x" * (csvstream.MAX_LINE + 50_000) + "\n", "51,6,c\n"]),
    "line just under MAX_LINE (a long comment)": _extra_column(["50,5," + "x" * (csvstream.MAX_LINE - 100) + "\n", "51,6,c\n"]),
    # (break2) tables named like numbers ("1", "01", "1.0" are three tables); "07" and "7" one spin id (a conflict)
    "tables named like numbers": b"".join(_row(sid=str(i), t=("1", "01", "1.0")[i % 3], r=str(i % 37)) for i in range(1, 90)),
    "ids 07 and 7": b"".join(_row(sid=str(i), r=str(i % 37)) for i in range(1, 60)) + _row(sid="07", r="9"),
    "a hex id among counters": b"".join(_row(sid=str(100 + i), r=str(i % 37)) for i in range(60)) + _row(sid="0x65", r="9"),
    "BOM and quoted header names": b"\xef\xbb\xbf" + b"".join(_row(sid=str(i), r=str(i % 37)) for i in range(1, 60)),
    "300 columns this path does not read": (
        "result," + ",".join(f"x{j}" for j in range(300)) + ",spin_id\n" + "".join(f"{i % 37}," + "a," * 300 + f"{i}\n" for i in range(1, 40))).encode(),
    "a table first seen after the first block": b"".join(_row(sid=str(i), t="T1" if i < 300 else "T2", r=str(i % 37)) for i in range(1, 360)),
}
_HEAD = b"spin_id,timestamp,table,dealer,direction,revolutions,void,result\n"
for _k in ("tables named like numbers", "ids 07 and 7", "a hex id among counters", "a table first seen after the first block"):
    ADVERSARIAL[_k] = _HEAD + ADVERSARIAL[_k]
ADVERSARIAL["BOM and quoted header names"] = (b"\xef\xbb\xbf" + _HEAD.replace(b"spin_id,", b'"spin_id",').replace(b",result", b',"result"')
                                              + ADVERSARIAL["BOM and quoted header names"][3:])


def _compare(case: str, data: bytes, tmp_path, block_size: int = 4096) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(CASES, case, data)
        mp.setattr(csvstream, "BLOCK_SIZE", block_size)
        with pytest.MonkeyPatch.context() as off:
            _without_numpy_path(off)
            want = _read_all(case, tmp_path / "exact")
        got = _read_all(case, tmp_path / "numpy")
    assert got == want


@pytest.mark.parametrize("block_size", [4096, csvstream.BLOCK_SIZE])
@pytest.mark.parametrize("case", sorted(ADVERSARIAL))
def test_adversarial_inputs_read_the_same(case, block_size, tmp_path):
    _compare(case, ADVERSARIAL[case], tmp_path, block_size)


def test_a_line_longer_than_max_line_takes_the_exact_path(tmp_path, monkeypatch):
    taken = _spy(monkeypatch)
    monkeypatch.setitem(CASES, "long", ADVERSARIAL["line longer than MAX_LINE (a long comment)"])
    got = _read_all("long", tmp_path / "x")
    assert not taken[0]
    assert "longer than" in str(got["log"])


#: per column: spellings of the usual shape and odd ones (each odd one either takes the exact path or reads the same)
_CELLS = {
    "spin_id": ["1", "2", "17", "0005", "1234567890123456", "0", "12345678901234567", "-3", "+4", " 5", "0x1", "\u0663", "", "1.0", "9223372036854775807"],
    "timestamp": ["2026-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "1900-01-01T00:00:00Z", "2199-12-31T23:59:59Z", "2100-02-29T00:00:00Z",
                  "1900-02-29T00:00:00Z", "1899-12-31T23:59:59Z", "2200-01-01T00:00:00Z", "2026-01-01t00:00:00z", "2026-01-01T00:00:00.5Z",
                  "2026-01-01T00:00:00+01:00", "2026-04-31T00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00", ""],
    "table": ["T1", "T2", "t1", "T1 ", " T1", "A" * 24, "A" * 25, "", "NULL", "'=T1", "T\t1", "Tisch-\u00c4"],
    "dealer": ["D1", "D2", "d1", "D1 ", "D 1", "", "NA", "=A1", "\u00a0D1"],
    "direction": ["cw", "ccw", "CW", "acw", "clockwise", " cw", "up", "", "null"],
    "revolutions": ["5", "3", "2", "0", "05", "002", "999", "1000", " 5", "5 ", "  ", "1.5", "-1", "1_0", "nan", ""],
    "void": ["false", "true", "False", "0", "1", "no", "yes", " true", "maybe", "", "NULL"],
    "result": ["0", "7", "36", "00", "05", "007", "37", " 5", "5 ", "+5", "-0", "void", "", "x", "\u0663", "7.0", "result"],
}
_HEADERS = ["spin_id,timestamp,table,dealer,direction,revolutions,void,result", "result,spin_id", "spin_id,result,comment", "result",
            '"table","result","void","revolutions"', "Result,Spin_ID,Timestamp"]


@st.composite
def _logs(draw) -> tuple[bytes, bool]:
    """(a small log, whether every cell is in the usual shape: then the numpy path must read it)."""
    head = draw(st.sampled_from(_HEADERS))
    cols = [c.strip('"').lower() for c in head.split(",")]
    n = draw(st.integers(1, 12))
    odd = draw(st.sampled_from([0.0, 0.05, 0.3]))
    rows = []
    for i in range(n):
        cells = []
        for c in cols:
            if c == "comment":
                cells.append(draw(st.sampled_from(["", "c", "a b", "x" * 30])))
            elif draw(st.floats(0, 1)) < odd:
                cells.append(draw(st.sampled_from(_CELLS[c])))
            else:
                cells.append(str(i + 1) if c == "spin_id" else _CELLS[c][draw(st.integers(0, 2))])
        rows.append(",".join(cells))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = head + end + end.join(rows) + draw(st.sampled_from([end, ""]))
    return text.encode(), odd == 0.0


def _log_both_ways(p: Path, data: bytes):
    """(read_spin_log's log of ``data`` with the numpy path, without it, whether each read tried took it)."""
    from test_csv_fast_paths import _outcome, _spinlog_view

    from rngcert.collect.spinlog import read_spin_log
    from rngcert.equipment.wheel import load_wheel

    p.write_bytes(data)
    eu = load_wheel("european")
    with pytest.MonkeyPatch.context() as mp:
        _without_numpy_path(mp)
        want = _outcome(lambda: _spinlog_view(read_spin_log(p, eu)))
    with pytest.MonkeyPatch.context() as mp:
        taken = _spy(mp)
        got = _outcome(lambda: _spinlog_view(read_spin_log(p, eu)))
    return got, want, taken


@settings(max_examples=40, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(_logs())
def test_small_logs_of_valid_and_odd_cells_read_the_same(tmp_path_factory, log):
    data, usual = log
    got, want, taken = _log_both_ways(tmp_path_factory.mktemp("log") / "log.csv", data)
    assert got == want
    assert taken[0] or not usual  # (a log of the usual cells only is read on the numpy path: the comparison is not of a path with itself)


def _two_blocks() -> bytes:
    """A log of a little more than one block (csvstream.BLOCK_SIZE) in the usual shape."""
    head = "spin_id,timestamp,table,dealer,direction,revolutions,void,result\n"
    rows = [f"{i},2026-01-{1 + i // 86400 % 28:02d}T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,T{i % 3},D{i % 5},{'cw' if i % 2 else 'ccw'},"
            f"{5 + i % 4},{'true' if i % 97 == 0 else 'false'},{i * 7 % 37}\n" for i in range(1, csvstream.BLOCK_SIZE // 45 + 3000)]
    return (head + "".join(rows)).encode()


def test_the_two_block_log_takes_the_numpy_path(tmp_path, monkeypatch):
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.equipment.wheel import load_wheel

    data = _two_blocks()
    assert len(data) > csvstream.BLOCK_SIZE + 100_000
    p = tmp_path / "log.csv"
    p.write_bytes(data)
    taken = _spy(monkeypatch)
    read_spin_log(p, load_wheel("european"))
    assert taken == [True]


@pytest.mark.parametrize("case", ["tables named like numbers", "ids 07 and 7", "BOM and quoted header names", "300 columns this path does not read",
                                  "a table first seen after the first block"])
def test_the_usual_adversarial_logs_take_the_numpy_path(case, tmp_path, monkeypatch):
    """(Else their comparison above would compare the exact path with itself.)"""
    from rngcert.collect.spinlog import read_spin_log
    from rngcert.equipment.wheel import load_wheel

    p = tmp_path / "log.csv"
    p.write_bytes(ADVERSARIAL[case])
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4096)
    taken = _spy(monkeypatch)
    read_spin_log(p, load_wheel("european"))
    assert taken[:1] == [True]


@pytest.mark.parametrize("shift", [-1, 0, 1])
@pytest.mark.parametrize("odd", ["CRLF from here", "space", "NUL", "CR", "e-acute", "byte dropped"])
def test_an_oddity_at_the_block_boundary_reads_the_same(odd, shift, tmp_path):
    """The oddity at the first block's end (the numpy path has handed the first block on when it meets it): the
    whole file is read again on the exact path, as without the numpy path."""
    base = _two_blocks()
    at = csvstream.BLOCK_SIZE + shift
    data = {"CRLF from here": base[:at] + base[at:].replace(b"\n", b"\r\n"), "space": base[:at] + b" " + base[at + 1 :],
            "NUL": base[:at] + b"\0" + base[at + 1 :], "CR": base[:at] + b"\r" + base[at + 1 :],
            "e-acute": base[:at] + "\u00e9".encode() + base[at + 2 :], "byte dropped": base[:at] + base[at + 1 :]}[odd]
    got, want, _ = _log_both_ways(tmp_path / "log.csv", data)
    assert got == want
