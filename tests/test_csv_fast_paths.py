"""The cheaper paths of the CSV reader and of ingest (issue 26, items 2 and 4) against the paths they short-cut,
on valid and on malformed logs: the same spins, the same rejects (file, line, column, reason, text), the same notes
and the same stored rows.

* ``scan.ascii``: an ASCII file is parsed without pyarrow's UTF-8 check (off: the check runs);
* ``_already_clean``: a text column with nothing to trim is not trimmed (off: ``utf8_trim_whitespace`` always);
* ``_one_value``: a column of one value (one table, void ``false`` only) is not hashed (off: ``dictionary_encode``);
* ``_canonical_ids``: whole-number spin ids proven canonical by a cast and their widths (off: the regular expression);
* ``csv_scan``: ingest hashes a CSV file by its line scan (off: ``sha256_file`` first, then the scan);
* ingest builds its Arrow rows without ``pa.array`` (which imports pandas, about 0.5 s).
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import textwrap

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from rngcert.collect import _arrow, csvstream
from rngcert.collect.spinlog import columns as spin_columns
from rngcert.collect.spinlog import core as spin_core
from rngcert.collect.spinlog import read_spin_log, read_spin_rows
from rngcert.collect.store import ingest as store_ingest
from rngcert.collect.store import ingest_files
from rngcert.collect.store import spool as store_spool
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError

HEADER = '"spin_id","timestamp","table","dealer","direction","revolutions","void","result"\n'


def _rows(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    res = rng.integers(0, 37, n)
    return [f"{i + 1},2026-01-01T00:{i // 60 % 60:02d}:{i % 60:02d}Z,T1,D{i % 4 + 1},{'cw' if i % 2 else 'ccw'},{5 + i % 3},false,{r}"
            for i, r in enumerate(res.tolist())]


def _log(edits: dict[int, str] | None = None, n: int = 60, extra: list[str] | None = None, head: str = HEADER, end: str = "\n") -> bytes:
    rows = _rows(n)
    for k, v in (edits or {}).items():
        rows[k] = v
    return (head + "\n".join(rows + (extra or [])) + end).encode("utf-8") if isinstance(head, str) else head


CASES = {
    "valid": _log(),
    "valid, no final newline": _log(end=""),
    "malformed rows": _log({3: "4,2026-01-01T00:00:03Z,T1,D4,cw,5,false", 5: "6,2026-01-01T00:00:05Z,T1,D2,cw,6,false,x",
                            7: "8,2026-01-01T00:00:07Z,T1,D4,cw,6,false,", 9: "10,2026-01-01T00:00:09Z,T1,D2,cw,6,false,00",
                            11: "12,yesterday,T1,D4,cw,6,false,5", 13: "14,2026-01-01T00:00:13Z,T1,D2,up,6,false,5",
                            15: "16,2026-01-01T00:00:15Z,T1,D4,cw,6,maybe,5", 17: "18,2026-01-01T00:00:17Z,T1,D2,cw,-1,false,5",
                            19: "20,2026-01-01T00:00:19Z,T1,D4,cw,6,false,5,extra", 21: ""}),
    "ids with spaces and signs": _log({2: " 3,2026-01-01T00:00:02Z,T1,D3,cw,5,false,1", 4: "005,2026-01-01T00:00:04Z,T1,D1,cw,5,false,1",
                                       6: "+7,2026-01-01T00:00:06Z,T1,D3,cw,5,false,1", 8: "-9,2026-01-01T00:00:08Z,T1,D1,cw,5,false,1",
                                       10: "-0,2026-01-01T00:00:10Z,T1,D3,cw,5,false,1"}),
    "ids not numbers": _log({2: "abc,2026-01-01T00:00:02Z,T1,D3,cw,5,false,1", 4: ",2026-01-01T00:00:04Z,T1,D1,cw,5,false,1",
                             6: "1e3,2026-01-01T00:00:06Z,T1,D3,cw,5,false,1", 8: "2.5,2026-01-01T00:00:08Z,T1,D1,cw,5,false,1"}),
    "ids of 19 digits": _log({30: "1234567890123456789,2026-01-01T00:00:30Z,T1,D3,cw,5,false,1"}),
    "text around table and dealer": _log({1: "2,2026-01-01T00:00:01Z, T1,D2 ,cw,5,false,1", 2: "3,2026-01-01T00:00:02Z,T1,'=D3,cw,5,false,1",
                                          3: '4,2026-01-01T00:00:03Z,"T1 ",D4,cw,5,false,1', 4: "5,2026-01-01T00:00:04Z,T1,\u00a0D1,cw,5,false,1"}),
    "non-ASCII text": _log({1: "2,2026-01-01T00:00:01Z,T1,Zoë,cw,5,false,1", 2: "3,2026-01-01T00:00:02Z,Tisch-Ä,D3,cw,5,false,1"}),
    "empty table value": _log({5: "6,2026-01-01T00:00:05Z,,D2,cw,6,false,5"}),
    "bare CR and blank lines": _log({5: "6,2026-01-01T00:00:05Z,T1,D2\r,cw,6,false,5", 6: "", 7: "\r"}),
    "BOM": b"\xef\xbb\xbf" + _log(),
}
CASES["malformed last line"] = _log(extra=["61,2026-01-01T00:01:01Z,T1,D2,cw,6"])
CASES["text ids"] = _log(head=HEADER).replace(b"\n1,", b"\nR1,", 1).replace(b"\n2,", b"\nR2,", 1)
_speed_rows = [f"{i + 1},T1,{r},{s}" for i, (r, s) in enumerate(zip(range(40), ["31.5", "", " 30", "fast", "-2", "inf", "29,5", "28"] * 5))]
CASES["rotor speeds"] = ("spin_id,table,result,rotor_speed\n" + "\n".join(_speed_rows) + "\n").encode()
CASES["rotor speeds, all numbers"] = ("spin_id,table,result,rotor_speed\n" + "\n".join(f"{i + 1},T1,{i % 37},{30 + i / 8}" for i in range(40)) + "\n").encode()
CASES["one dealer, void column of one value, several tables"] = _log().replace(b",D2,", b",D1,").replace(b",D3,", b",D1,").replace(b",D4,", b",D1,")
CASES["two tables"] = _log({k: _rows(60)[k].replace(",T1,", ",T2,") for k in range(0, 60, 7)})
# bytes that are not UTF-8 in one line (the line-by-line path rejects it), and a file that is Latin-1 throughout
_bad = _log()
CASES["invalid UTF-8 in a line"] = _bad.replace(b",D3,", b",D\xff3,", 1)
CASES["Latin-1 file"] = _log().replace(b",D3,", b",D\xe93,")


def _spinlog_view(log) -> dict:
    out = {"rejected": [r.to_dict() for r in log.rejected], "notes": list(log.notes), "sources": [s.to_dict() for s in log.sources]}
    for name, t in sorted(log.tables.items()):
        out[name] = {k: (None if v is None else np.asarray(v).tolist()) for k, v in
                     (("outcomes", t.outcomes), ("release", t.release), ("dealer", t.dealer), ("direction", t.direction))}
        out[name]["labels"] = list(t.dealer_labels)
        out[name]["notes"] = list(t.notes)
    return out


def _rows_view(rows) -> dict:
    def plain(v):
        if v is None:
            return None
        if isinstance(v, (pa.Array, pa.ChunkedArray)):
            return v.to_pylist()
        if isinstance(v, tuple):
            return [np.asarray(v[0]).tolist(), list(v[1])]
        if hasattr(v, "values"):
            return np.asarray(v.values).tolist()
        return np.asarray(v).tolist()

    return {f.name: ([r.to_dict() for r in rows.rejected] if f.name == "rejected" else plain(getattr(rows, f.name)))
            for f in dataclasses.fields(rows) if f.name not in ("path",)}


def _store_view(db) -> dict:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            "spins": con.execute("SELECT * EXCLUDE (source_id) FROM spins ORDER BY seq").fetchall(),
            "rejects": con.execute('SELECT file, line, "column", reason, text FROM rejects ORDER BY line, "column"').fetchall(),
            "sources": con.execute("SELECT * EXCLUDE (source_id, ingested_utc, path) FROM sources").fetchall(),
        }
    finally:
        con.close()


def _outcome(fn):
    try:
        return ("ok", fn())
    except InputError as exc:
        return (type(exc).__name__, re.sub(r"/\S+/", "", str(exc)))


def _slow_paths(mp: pytest.MonkeyPatch) -> None:
    """Every short-cut of this module switched off (the paths as they were before it)."""
    scan = csvstream.scan_lines
    mp.setattr(csvstream, "scan_lines", lambda fh: dataclasses.replace(scan(fh), ascii=False))
    mp.setattr(spin_columns, "_already_clean", lambda col: False)
    mp.setattr(spin_columns, "_one_value", lambda col: False)
    mp.setattr(spin_core, "_one_value", lambda col: False)
    mp.setattr(store_spool, "_canonical_ids", lambda sid: None)
    mp.setattr(store_ingest, "csv_scan", lambda path, fmt: None)


def _normalise(obj, tmp: str):
    if isinstance(obj, str):
        return obj.replace(tmp, "<tmp>")
    if isinstance(obj, (list, tuple)):
        return type(obj)(_normalise(x, tmp) for x in obj)
    if isinstance(obj, dict):
        return {k: _normalise(v, tmp) for k, v in obj.items()}
    return obj


def _read_all(case: str, d) -> dict:
    """The case read by read_spin_log (compact) and read_spin_rows (exact), and ingested into a new store."""
    d.mkdir()
    eu = load_wheel("european")
    p = d / "log.csv"
    p.write_bytes(CASES[case])
    got = {"log": _outcome(lambda: _spinlog_view(read_spin_log(p, eu))), "rows": _outcome(lambda: _rows_view(read_spin_rows(p, eu)))}
    got["ingest"] = _outcome(lambda: [r.summary() for r in ingest_files(d / "s.duckdb", [p], "european")])
    got["store"] = _store_view(d / "s.duckdb") if got["ingest"][0] == "ok" else None
    return _normalise(got, str(d))


@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_and_slow_paths_read_and_store_the_same(case, tmp_path):
    with pytest.MonkeyPatch.context() as mp:
        _slow_paths(mp)
        want = _read_all(case, tmp_path / "slow")
    got = _read_all(case, tmp_path / "fast")
    assert got == want
    assert want["log"][0] != "ok" or want["ingest"][0] == "ok"  # (the cases are logs that certify and ingest read)


def test_the_cases_take_the_paths_they_test(tmp_path):
    """The fast paths are taken where they should be (else the comparison above would compare a path with itself)."""
    for case, ascii_ in (("valid", True), ("non-ASCII text", False), ("BOM", True), ("invalid UTF-8 in a line", False)):
        scan = csvstream.scan_lines(__import__("io").BytesIO(CASES[case]))
        assert scan.ascii is ascii_, case
    ids = _arrow.texts(["1", "22", "-3", "0", "999999999999999999"])
    assert _arrow.ints(store_spool._canonical_ids(ids)).tolist() == [1, 22, -3, 0, 999999999999999999]
    assert spin_columns._already_clean(_arrow.texts(["T1", "D 2", ""])) is True
    assert spin_columns._already_clean(_arrow.texts(["T1", " D2"])) is False
    assert spin_columns._one_value(_arrow.texts(["T1"] * 5)) and not spin_columns._one_value(_arrow.texts(["T1"] * 4 + ["T2"]))
    assert not spin_columns._one_value(_arrow.texts(["T1", "T2", "T1"]))


@pytest.mark.parametrize("vals", [["a", "a", "a"], ["a", "b", "a"], ["a", "a", "b"], ["b", "a", "a", "a", "b"], ["", ""], ["a"], [], ["a", "a ", "a"]])
def test_one_value_decodes_as_the_dictionary_does(vals):
    arr = _arrow.texts(vals)
    got = spin_columns._decode(arr)
    enc = pc.dictionary_encode(arr)
    assert got[0].dtype == np.int32 and got[0].tolist() == _arrow.ints(enc.indices).tolist() and got[1] == enc.dictionary.to_pylist()


_CANON = re.compile(r"^(0|-?[1-9][0-9]{0,17})$")
_ID_PIECES = ["", "0", "-0", "00", "007", "7", "+7", "-7", "12", "-12", "1e3", "2.5", " 5", "5 ", "abc", "0x1A", "0x174876E800",
              "9" * 18, "9" * 19, "-" + "9" * 18, "1" + "0" * 17, "1" + "0" * 18, "-", "--5", "5-", "9223372036854775807",
              "-9223372036854775808", "٣"]


@pytest.mark.parametrize("seed", range(40))
def test_canonical_ids_agree_with_the_regular_expression(seed):
    """``_canonical_ids`` says "all canonical" (and gives their numbers) exactly when the regular expression matches every id."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 8))
    vals = [str(int(v)) for v in rng.integers(-10**6, 10**6, k)] + [_ID_PIECES[i] for i in rng.integers(0, len(_ID_PIECES), int(rng.integers(0, 3)))]
    rng.shuffle(vals)
    arr = _arrow.texts(vals)
    got = store_spool._canonical_ids(arr)
    want = all(_CANON.match(v) for v in vals)
    assert (got is not None) == want, vals
    if got is not None:
        assert _arrow.ints(got).tolist() == [int(v) for v in vals]


@pytest.mark.parametrize("piece", _ID_PIECES)
def test_canonical_ids_of_each_shape(piece):
    arr = _arrow.texts(["1", piece, "3"])
    assert (store_spool._canonical_ids(arr) is not None) == bool(_CANON.match(piece)), piece


_TEXT_PIECES = ["T1", "", " T1", "T1 ", "\tT1", "T1\r", "\u00a0T1", "T1\u2003", "'=A1", "'x", "a'b", "Zoë", "ë", "\x1cT", "T\x1f", "\x7fT", "a b"]


@pytest.mark.parametrize("seed", range(30))
def test_already_clean_only_when_cleaning_changes_nothing(seed):
    rng = np.random.default_rng(seed)
    vals = [_TEXT_PIECES[i] for i in rng.integers(0, len(_TEXT_PIECES), int(rng.integers(1, 6)))]
    arr = _arrow.texts(vals)
    full = pc.utf8_trim_whitespace(arr)
    if pc.any(pc.starts_with(full, "'")).as_py():
        full = pc.replace_substring_regex(full, r"^'([=+\-@\t\r'])", r"\1")
    if spin_columns._already_clean(arr):
        assert full.to_pylist() == vals
    assert spin_columns._clean_text(arr).to_pylist() == full.to_pylist()


def test_arrow_builders_equal_pa_array():
    null = np.array([False, True, False, False])
    for dt in (np.int8, np.int16, np.int32, np.int64):
        v = np.array([1, -1, 3, 4], dtype=dt)
        assert _arrow.array(v).equals(pa.array(v))
        assert _arrow.array(v, null=null).equals(pa.array(v, mask=null))
    b = np.arange(19) % 3 == 0
    assert _arrow.array(b).equals(pa.array(b))
    assert _arrow.texts(["a", "", "é", "xyz"]).equals(pa.array(["a", "", "é", "xyz"], type=pa.string()))
    assert _arrow.texts([]).equals(pa.array([], type=pa.string()))
    assert _arrow.repeat_text("T1", 3).equals(pa.array(["T1"] * 3)) and _arrow.repeat_text("", 0).equals(pa.array([], type=pa.string()))
    assert _arrow.text_scalar("0").equals(pa.scalar("0"))


@pytest.mark.parametrize("case", ["malformed rows", "rotor speeds", "malformed last line", "text ids"])
def test_reading_a_csv_log_does_not_import_pandas(case, tmp_path):
    """A malformed row (its cell's text taken by index), a rotor-speed column and text ids made the reader import pandas."""
    p = tmp_path / "log.csv"
    p.write_bytes(CASES[case])
    code = textwrap.dedent(f"""
        import sys
        from rngcert.collect.spinlog import read_spin_log
        from rngcert.equipment.wheel import load_wheel
        log = read_spin_log({str(p)!r}, load_wheel("european"))
        print("pandas" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("case", ["malformed rows", "ids not numbers", "empty table value", "two tables"])
def test_ingest_of_a_csv_log_does_not_import_pandas(case, tmp_path):
    """``pa.array``, ``pa.scalar`` and ``to_numpy`` import pandas through pyarrow's shim (0.5 CPU-s at every ingest); the
    streamed ingest, and the exact one that a log the spool cannot prove takes (an empty id or table value), build their
    rows without them."""
    p = tmp_path / "log.csv"
    p.write_bytes(CASES[case])
    code = textwrap.dedent(f"""
        import sys
        from rngcert.collect.store import ingest_files
        r = ingest_files({str(tmp_path / 's.duckdb')!r}, [{str(p)!r}], "european")
        assert r[0].status == "ingested", r[0].summary()
        print("pandas" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
