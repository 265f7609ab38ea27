"""Review of the numpy byte-level CSV reader (:mod:`rngcert.collect.spinlog.fastcsv`) against the exact path
(pyarrow, :mod:`rngcert.collect.csvstream`): every field of the SpinLog (tables with their spins, order, voids,
dealers, directions, notes and findings; rejected rows with lines and reasons; sources with hash and counts; notes;
period) must be the same, with many small blocks (block boundaries everywhere), on one and two parse threads, with
faults planted early or late (a late fault sends the whole file to the exact path, which must forget the blocks
already read), and with several files read one after the other.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from _support import compact_read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rngcert.collect import csvstream
from rngcert.collect.spinlog import fastcsv
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError, NoDataError

sys.path.insert(0, str(Path(__file__).parent))
from test_csv_numpy_path import _spy, _without_numpy_path  # noqa: E402


def _plain(v):
    """A value of a SpinLog field as plain, comparable data (arrays with their dtype)."""
    if isinstance(v, np.ndarray):
        return ("array", str(v.dtype), v.tolist())
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return (type(v).__name__, {f.name: _plain(getattr(v, f.name)) for f in dataclasses.fields(v)})
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _view(log) -> dict:
    """Every field of a SpinLog: tables (every TableSpins field), sources, rejected rows, notes, period, level."""
    return {
        "level": log.level,
        "space": repr(log.space),
        "tables": {name: _plain(t) for name, t in log.tables.items()},
        "order": list(log.tables),
        "sources": [s.to_dict() for s in log.sources],
        "rejected": [r.to_dict() for r in log.rejected],
        "notes": list(log.notes),
        "period": log.period,
    }


def _outcome(fn):
    try:
        return ("ok", fn())
    except (InputError, NoDataError) as exc:
        return (type(exc).__name__, re.sub(r"/\S+/", "", str(exc)))


def _reader(paths, stdin: bool):
    """A read of ``paths`` by read_spin_log; ``stdin``: the first file given as ``-`` (its bytes in memory, so
    :func:`fastcsv.read_parts` after a line scan instead of the one-pass :func:`fastcsv.read_file`)."""
    import io
    import types

    from rngcert.collect.spinlog import read_spin_log

    if not stdin:
        return lambda w: read_spin_log(paths, w)
    data = Path(paths[0]).read_bytes()

    def read(w):
        with pytest.MonkeyPatch.context() as m:
            m.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))
            return read_spin_log(["-", *paths[1:]], w)

    return read


def _both(paths, wheel: str, block_size: int, threads: int, stdin: bool = False):
    """(the read with the numpy path, blocks of ``block_size`` bytes on ``threads`` threads (3: two, the blocks parsed
    on one); the exact read; taken)."""
    eu = load_wheel(wheel)
    read = _reader(paths, stdin)
    with pytest.MonkeyPatch.context() as off:
        _without_numpy_path(off)
        want = _outcome(lambda: _view(read(eu)))
    with pytest.MonkeyPatch.context() as on:
        for fn in ("read_file", "read_parts"):  # small blocks for the numpy path only (the exact path's are pyarrow's, as in use)
            real = getattr(fastcsv, fn)
            on.setattr(fastcsv, fn, lambda *a, _real=real, **k: _real(*a, **{**k, "block_size": block_size}))
        taken = _spy(on)
        on.setattr(csvstream, "read_threads", lambda: min(threads, 2))
        if threads == 3:  # two threads, but the blocks parsed on one (a file above THREADED_PARSE_MAX_BYTES): the hash on its own thread
            on.setattr(fastcsv, "THREADED_PARSE_MAX_BYTES", 0)
        got = _outcome(lambda: _view(read(eu)))
    return got, want, taken


def _check(tmp_path, files: list[bytes], wheel: str = "european", block_size: int = 160, threads: int = 1, stdin: bool = False):
    paths = []
    for i, data in enumerate(files):
        p = tmp_path / f"log{i}.csv"
        p.write_bytes(data)
        paths.append(p)
    got, want, taken = _both(paths, wheel, block_size, threads, stdin)
    assert got == want
    return got, taken


# ---------------------------------------------------------------------------- generated logs
_COLS = ["spin_id", "timestamp", "table", "dealer", "direction", "revolutions", "void", "result"]
_EDGE_TS = ["2000-02-29T23:59:59Z", "2024-02-29T00:00:00Z", "1999-12-31T23:59:59Z", "2000-01-01T00:00:00Z", "2026-12-31T23:59:59Z",
            "1900-01-01T00:00:00Z", "2199-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "2026-04-30T12:00:00Z", "2100-02-28T00:00:00Z"]
_BAD_TS = ["1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-01-01T24:00:00Z", "2026-01-01T00:00:60Z", "2026-04-31T00:00:00Z",
           "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-01T00:60:00Z"]
_VOIDS = ["false", "False", "FALSE", "0", "no", "true", "True", "TRUE", "1", "yes"]
#: cells planted once (each either read the same on the numpy path or sends the file to the exact path)
_FAULTS = {
    "spin_id": ["12345678", "123456789", "1234567890123456", "12345678901234567", "007", "0", "00000000000000000", " 5", "5 ", "x", "", "-1"],
    "timestamp": _BAD_TS + ["2026-01-01T00:00:00", "2026-01-01 00:00:00Z", " 2026-01-01T00:00:00Z", ""],
    "table": ["T\t1", "T 1", " T1", "", "A" * 24, "A" * 25, '"T1"', "t1", "T1;2"],
    "dealer": ["D 1", "D1 ", "", "=A1", "D\x7f"],
    "direction": ["CW", "acw", "up", "", " cw"],
    "revolutions": ["0", "1", "2", "00", "002", "3", "1000", " 3", "x", ""],
    "void": _VOIDS + ["maybe", "", " true"],
    "result": ["00", "05", "007", "37", "36", "0", " 5", "void", "", "x", "result"],
}


@st.composite
def _logs(draw, wheel: str = "european"):
    """(bytes of a log of usual cells with gaps, repeats, conflicts and at most two planted odd cells; usual)."""
    k = draw(st.integers(1, len(_COLS)))
    cols = draw(st.permutations(_COLS))[:k]
    if "result" not in cols:
        cols = cols[:-1] + ["result"] if cols else ["result"]
    cols = list(dict.fromkeys(cols))
    n = draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    ids = np.cumsum(rng.choice([0, 1, 1, 1, 1, 2, 5], n)) + int(rng.choice([0, 1, 99_999_990, 10**15, 9_999_999_999_999_990]))
    pockets = ["0", "00", *map(str, range(1, 37))] if wheel == "american" else list(map(str, range(37)))
    res = rng.choice(pockets, n)
    base = np.datetime64("2026-12-31T23:58:00") if rng.random() < 0.5 else np.datetime64(rng.choice(_EDGE_TS)[:-1])
    ts = [str(base + np.timedelta64(int(s), "s")) + "Z" for s in np.cumsum(rng.integers(0, 90, n))]
    names = ["T1", "T2", "Tisch-3", "ROULETTE-TABLE-0004", *(f"tbl.{j:0{int(rng.integers(1, 18))}d}" for j in range(int(rng.integers(0, 14))))]
    tables = rng.choice(names[: int(rng.integers(1, len(names) + 1))], n)
    cell = {"spin_id": [str(v) for v in ids], "timestamp": ts, "table": tables.tolist(),
            "dealer": rng.choice(["D1", "D2", "Ann", "bob_7", *(f"d{j}" for j in range(int(rng.integers(0, 12))))], n).tolist(), "direction": rng.choice(["cw", "ccw", "Cw"], n).tolist(),
            "revolutions": rng.choice(["5", "12", "3", "007", "99"], n).tolist(), "void": rng.choice(_VOIDS[: int(rng.integers(1, 11))], n).tolist(),
            "result": res.tolist()}
    rows = [[cell[c][i] for c in cols] for i in range(n)]
    if draw(st.integers(0, 4)) == 0:  # rows out of order: ids and times going back (runs, or none at all)
        cut = draw(st.integers(0, n))
        rows = rows[cut:] + rows[:cut] if draw(st.booleans()) else [rows[i] for i in rng.permutation(n)]
    usual = True
    for _ in range(draw(st.integers(0, 2))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, len(cols) - 1))
        rows[i][j] = draw(st.sampled_from(_FAULTS[cols[j]]))
        usual = False
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    quoted = draw(st.booleans())
    head = ",".join(f'"{c}"' if quoted else c for c in cols)
    text = head + nl + nl.join(",".join(r) for r in rows) + draw(st.sampled_from([nl, ""]))
    bom = b"\xef\xbb\xbf" if draw(st.integers(0, 5)) == 0 else b""
    return bom + text.encode(), usual


_SETTINGS = settings(max_examples=60, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))


@_SETTINGS
@given(_logs(), st.sampled_from([64, 97, 160, 1024]), st.sampled_from([1, 2, 3]), st.booleans())
def test_generated_logs_read_the_same(tmp_path_factory, log, block_size, threads, stdin):
    data, usual = log
    got, taken = _check(tmp_path_factory.mktemp("g"), [data], block_size=block_size, threads=threads, stdin=stdin)
    assert taken[0] or not usual or data.find(b"\n") >= block_size  # (the one-pass read looks for the header in its first block)


@_SETTINGS
@given(_logs("american"), st.sampled_from([64, 160]))
def test_generated_american_logs_read_the_same(tmp_path_factory, log, block_size):
    data, usual = log
    _check(tmp_path_factory.mktemp("a"), [data], wheel="american", block_size=block_size)


@settings(max_examples=25, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
@given(_logs(), _logs(), st.sampled_from([64, 160]), st.sampled_from([1, 2]))
def test_two_files_read_the_same(tmp_path_factory, a, b, block_size, threads):
    """The second file's late fault must not take away what the first file gave."""
    _check(tmp_path_factory.mktemp("two"), [a[0], b[0]], block_size=block_size, threads=threads)


# ---------------------------------------------------------------------------- planted by hand, across block boundaries
_HEAD = "spin_id,timestamp,table,dealer,direction,revolutions,void,result\n"


def _rows(n: int, first: int = 1) -> list[str]:
    return [f"{i},2026-12-31T{12 + i // 3600 % 12:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z,T{i % 2},D{i % 3},{'cw' if i % 2 else 'ccw'},"
            f"{3 + i % 5},{'true' if i % 41 == 0 else 'false'},{i * 7 % 37}" for i in range(first, first + n)]


def _log(rows: list[str], end: str = "\n") -> bytes:
    return (_HEAD + "\n".join(rows) + end).encode()


def _planted() -> dict[str, bytes]:
    r = _rows(300)
    late = len(r) - 3
    out = {
        "valid": _log(r),
        "no final newline": _log(r, ""),
        "header only": _HEAD.encode(),
        "header only, no newline": _HEAD[:-1].encode(),
        "one row": _log(r[:1]),
        "CRLF": _log(r).replace(b"\n", b"\r\n"),
        "CRLF no final line end": _log(r, "").replace(b"\n", b"\r\n"),
        "BOM": b"\xef\xbb\xbf" + _log(r),
        "duplicate id far apart (same result)": _log(r + [r[5].replace("false", "false")]),
        "conflicting id far apart": _log(r + [re.sub(r",\d+$", ",36" if not r[5].endswith(",36") else ",35", r[5])]),
        "gap every row": _log([re.sub(r"^\d+", str(3 * i + 1), x) for i, x in enumerate(r)]),
        "ids going back": _log(r[:200] + _rows(100, 150)),
        "early reject, late quote": _log([r[0].replace(",cw,", ",up,")] + r[1:late] + [r[late].replace(",T", ',"T', 1).replace(",D", '",D', 1)] + r[late + 1:]),
        "early reject, late space": _log([r[0] + "x"] + r[1:late] + [r[late].replace(",T", ", T", 1)] + r[late + 1:]),
        "early reject, late tab": _log([r[0][:-1] + "x"] + r[1:late] + [r[late].replace(",T", ",\tT", 1)] + r[late + 1:]),
        "late CR": _log(r[:late] + [r[late] + "\r"] + r[late + 1:]),
        "late blank line": _log(r[:late] + [""] + r[late:]),
        "late leap day 1900": _log(r[:late] + [re.sub(r",\d{4}-\d\d-\d\dT", ",1900-02-29T", r[late])] + r[late + 1:]),
        "late hour 24": _log(r[:late] + [re.sub(r"T\d\d:", "T24:", r[late])] + r[late + 1:]),
        "late second 60": _log(r[:late] + [re.sub(r":\d\dZ", ":60Z", r[late])] + r[late + 1:]),
        "late id of 17 digits": _log(r[:late] + [re.sub(r"^\d+", "12345678901234567", r[late])] + r[late + 1:]),
        "ids of 16 digits": _log([re.sub(r"^\d+", lambda m: str(10**15 + int(m.group())), x) for x in r]),
        "ids of 9 digits with leading zeros": _log([re.sub(r"^\d+", lambda m: f"{int(m.group()):09d}", x) for x in r]),
        "late result 00": _log(r[:late] + [re.sub(r",\d+$", ",00", r[late])] + r[late + 1:]),
        "late result 05": _log(r[:late] + [re.sub(r",\d+$", ",05", r[late])] + r[late + 1:]),
        "late revolutions 2": _log(r[:late] + [r[late].replace(",false,", ",false,").replace(f",{3 + (late + 1) % 5},", ",2,", 1)] + r[late + 1:]),
        "void spellings": _log([x.replace(",false,", "," + ["False", "FALSE", "0", "no"][i % 4] + ",").replace(",true,", "," + ["True", "1", "yes"][i % 3] + ",")
                                for i, x in enumerate(r)]),
        "a late non-ASCII byte": _log(r[:late] + [r[late].replace(",D", ",\u00e9D", 1)] + r[late + 1:]),
        "a late long line": _log(r[:late] + [r[late] + "," + "x" * 5000] + r[late + 1:]),
    }
    return out


PLANTED = _planted()


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("block_size", [64, 150, 4096])
@pytest.mark.parametrize("case", sorted(PLANTED))
def test_planted_faults_read_the_same(case, block_size, threads, tmp_path):
    _check(tmp_path, [PLANTED[case]], block_size=block_size, threads=threads)


@pytest.mark.parametrize("case", ["valid", "no final newline", "one row", "CRLF", "CRLF no final line end", "BOM", "duplicate id far apart (same result)",
                                  "conflicting id far apart", "gap every row", "ids going back", "ids of 16 digits", "ids of 9 digits with leading zeros",
                                  "void spellings"])
def test_the_planted_usual_logs_take_the_numpy_path(case, tmp_path):
    """(Else the comparison above would compare the exact path with itself.)"""
    _, taken = _check(tmp_path, [PLANTED[case]], block_size=150)
    assert taken[:1] == [True]


@pytest.mark.parametrize("case", ["early reject, late quote", "early reject, late space", "early reject, late tab", "late CR", "late blank line",
                                  "late leap day 1900", "late hour 24", "late second 60", "late id of 17 digits",
                                  "a late non-ASCII byte", "a late long line"])
def test_a_late_fault_leaves_the_file_to_the_exact_path(case, tmp_path):
    got, taken = _check(tmp_path, [PLANTED[case]], block_size=150)
    assert taken[:1] == [False]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("tail", ["whole lines", "a last line without its line end", "half a line"])
def test_a_log_that_grows_while_read_gives_the_exact_read_of_what_was_read(tail, threads, tmp_path, monkeypatch):
    """Lines appended while the numpy path reads (after its first block) are read and hashed with the rest; the
    log is then the exact path's read of the file as it ended (a last line without its line end read as the exact
    path reads it; half a line sends the file to the exact path, which rejects it)."""
    from rngcert.collect.spinlog import read_spin_log

    p = tmp_path / "log.csv"
    p.write_bytes(PLANTED["valid"])
    extra = "\n".join(_rows(40, 301)) + "\n"
    extra += {"whole lines": "", "a last line without its line end": "341,2026-12-31T12:05:41Z,T1,D2,cw,4,false,5",
              "half a line": "341,2026-12-31T12:05:41Z,T1,D2,cw,4,fal"}[tail]
    real = fastcsv.process_block
    grown = []

    def growing(*a, **k):
        if not grown:
            grown.append(1)
            with open(p, "a") as fh:
                fh.write(extra)
        return real(*a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fastcsv, "process_block", growing)
        mp.setattr(csvstream, "read_threads", lambda: threads)
        for fn in ("read_file",):
            real_fn = getattr(fastcsv, fn)
            mp.setattr(fastcsv, fn, lambda *a, _real=real_fn, **k: _real(*a, **{**k, "block_size": 512}))
        taken = _spy(mp)
        got = _outcome(lambda: _view(read_spin_log(p, load_wheel("european"))))
    assert grown and taken[:1] == [tail != "half a line"]  # (half a line has too few fields: the exact path rejects it)
    with pytest.MonkeyPatch.context() as off:
        _without_numpy_path(off)
        want = _outcome(lambda: _view(read_spin_log(p, load_wheel("european"))))
    assert got == want
    assert got[0] == "ok" and got[1]["sources"][0]["rows"] == 300 + 40 + (tail != "whole lines")


_SMALL = {
    "one column": b"result\n5\n00\n7\n",
    "one column, blank line": b"result\n5\n\n7\n",
    "one column, CRLF, no final line end": b"result\r\n5\r\n7",
    "quoted header, CRLF": b'"spin_id","result"\r\n1,5\r\n2,7\r\n',
    "a column not read, empty and spaced cells": b"spin_id,comment,result\n1,,5\n2,a b,7\n3, ,9\n",
    "a column not read, a hash sign": b"spin_id,comment,result\n1,#1,5\n2,x,7\n",
    "names twice in two cases": b"Result,result\n5,6\n",
    "header with a trailing comma": b"spin_id,result,\n1,5,\n2,7,\n",
    "ids 7 and 007 (one id, two results)": b"spin_id,result\n7,5\n8,6\n007,9\n",
    "id 0 and 00": b"spin_id,result\n0,5\n00,5\n1,7\n",
}


@pytest.mark.parametrize("case", sorted(_SMALL))
@pytest.mark.parametrize("columns", [None, {"result": "Number"}])
def test_small_shapes_read_the_same(case, columns, tmp_path):
    data = _SMALL[case] if columns is None else re.sub(rb"(?i)^(.*?)\bresult\b", rb"\1Number", _SMALL[case], count=1)
    p = tmp_path / "log.csv"
    p.write_bytes(data)
    eu = load_wheel("european")
    from rngcert.collect.spinlog import read_spin_log

    with pytest.MonkeyPatch.context() as off:
        _without_numpy_path(off)
        want = _outcome(lambda: _view(read_spin_log(p, eu, columns=columns)))
    got = _outcome(lambda: _view(read_spin_log(p, eu, columns=columns)))
    assert got == want


def _compact_and_exact(tmp_path, monkeypatch, rows: list[str]):
    """The log ``spin_id,timestamp,result`` of ``rows`` read by certify's read (compact where it can) and by the exact read."""
    from rngcert.collect.spinlog import read_spin_log

    p = tmp_path / "log.csv"
    p.write_bytes(("spin_id,timestamp,result\n" + "\n".join(rows) + "\n").encode())
    eu = load_wheel("european")
    got = read_spin_log(p, eu, min_round_interval=5.0)
    with compact_read(monkeypatch, exact=True):
        want = read_spin_log(p, eu, min_round_interval=5.0)
    return got, want


@pytest.mark.parametrize("in_runs", [False, True])
def test_the_compact_read_notes_what_the_exact_read_notes_of_whole_minute_times(in_runs, tmp_path, monkeypatch):
    """Found by a review (with the numpy path's small blocks a log in runs of ids was read by the runs, with
    pyarrow's one batch by the sort, and only the sort gave the note): with certify's minimum round interval (5 s),
    a log whose timestamps are whole minutes gets 'Near-duplicate rounds not checked: the timestamps are whole
    minutes ...' on the exact read (order._mark_near_duplicates), and now on the compact read that certify uses too."""
    rows = [f"{i},2026-01-01T{i // 60:02d}:{i % 60:02d}:00Z,{i * 7 % 37}" for i in range(1, 100)]
    got, want = _compact_and_exact(tmp_path, monkeypatch, rows[50:] + rows[:50] if in_runs else rows)
    assert any("too coarse" in n for n in want.tables["log"].notes)
    assert got.tables["log"].notes == want.tables["log"].notes


@pytest.mark.parametrize("in_runs", [False, True])
def test_the_compact_read_notes_what_the_exact_read_notes_of_fast_rounds(in_runs, tmp_path, monkeypatch):
    """Rounds logged every 3 s with a minimum round interval of 5 s: the exact read notes that the near-duplicate check
    does not apply (median spacing under twice the interval); the compact read gives the same tables and notes (it
    hands such a log to the exact read: rows closer than twice the interval)."""
    rows = [f"{i},2026-01-01T00:{3 * i // 60:02d}:{3 * i % 60:02d}Z,{i * 7 % 37}" for i in range(1, 100)]
    got, want = _compact_and_exact(tmp_path, monkeypatch, rows[50:] + rows[:50] if in_runs else rows)
    assert any("rounds are logged every 3 s (median)" in n for n in want.tables["log"].notes)
    assert got.tables["log"].notes == want.tables["log"].notes
    assert got.tables["log"].outcomes.tolist() == want.tables["log"].outcomes.tolist()
