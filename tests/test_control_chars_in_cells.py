"""A control character (U+0000-U+0008, U+000B, U+000C, U+000E-U+001F, U+007F) inside a cell that rngcert keeps as a
label (table, dealer, text spin id, result_source, payout, multiplier) or inside the result cell is a corrupted cell:
its row is rejected, with file, line, column and the code point, on every reader path (the CSV numpy path hands such a
file to the exact path; pyarrow's CSV path; the line-by-line path; JSON Lines, streamed and whole, pyarrow's blocks and
Python's; ingest), never kept as a label (a NUL inside ``D1`` made a fifth dealer ``D\\x001`` with one spin), and no raw
control byte reaches rejects.csv, report.json, report.html or the store."""

from __future__ import annotations

import csv
import io
import json
import re

import duckdb
import numpy as np
import pyarrow as pa
import pytest
from test_csv_fast_paths import CASES, HEADER, _read_all, _rows
from test_csv_numpy_path import _spy, _without_numpy_path
from test_spinlog_stream_shapes import _both, _snapshot

import rngcert.collect.spinlog.jsonl as jsonl
from rngcert.collect import _arrow, csvstream
from rngcert.collect.spinlog import fastcsv, read_spin_log, read_spin_rows
from rngcert.collect.spinlog.columns import control_chars
from rngcert.collect.spinlog.core import RejectedRow, resolve_columns
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")
#: the control characters of the rule, as a pattern (text) and bytes
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
CONTROL_B = re.compile(b"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _why(key: str, cp: int) -> str:
    return f"control character U+{cp:04X} in the {key} column (a corrupted cell: the row is not used)"


def _no_control(obj) -> bool:
    """True when no text inside ``obj`` (nested lists, tuples, dicts) holds a control character."""
    if isinstance(obj, str):
        return CONTROL.search(obj) is None
    if isinstance(obj, dict):
        return all(_no_control(k) and _no_control(v) for k, v in obj.items())
    if isinstance(obj, (list, tuple)):
        return all(_no_control(x) for x in obj)
    return True


# ---------------------------------------------------------------------------- CSV: the numpy path, pyarrow's path, ingest
#: (key of the column, its position in HEADER, row index, the cell, code point): the usual log of test_csv_fast_paths
#: (spin_id,timestamp,table,dealer,direction,revolutions,void,result) with one cell changed
CSV_EDITS = {
    "NUL in a dealer": ("dealer", 3, 700, "D\x001", 0x00),
    "DEL in a dealer": ("dealer", 3, 701, "D\x7f2", 0x7F),  # (DEL is above ',': the numpy path reads the cell, then refuses it)
    "unit separator in a table": ("table", 2, 702, "T\x1f1", 0x1F),
    "form feed before a result": ("result", 7, 703, "\x0c17", 0x0C),  # (str.strip took it for white space: pocket 17)
    "backspace in a spin id": ("spin_id", 0, 704, "705\x08", 0x08),
    "ESC in a dealer of a void row": ("dealer", 3, 705, "\x1bD3", 0x1B),
}
N_CSV = 1500


def _csv_with(edit: str) -> tuple[bytes, int]:
    """(the log, the file line of the changed row)."""
    key, j, i, cell, _ = CSV_EDITS[edit]
    rows = _rows(N_CSV)
    cells = rows[i].split(",")
    cells[j] = cell
    if edit.endswith("of a void row"):
        cells[6] = "true"
    rows[i] = ",".join(cells)
    return (HEADER + "\n".join(rows) + "\n").encode(), i + 2


@pytest.mark.parametrize("edit", sorted(CSV_EDITS))
def test_csv_row_with_a_control_character_is_rejected_on_every_path(edit, tmp_path, monkeypatch):
    key, j, _, cell, cp = CSV_EDITS[edit]
    data, line = _csv_with(edit)
    monkeypatch.setitem(CASES, edit, data)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4096)  # several blocks on every path
    taken = _spy(monkeypatch)
    got = _read_all(edit, tmp_path / "numpy")
    assert not taken[0]  # the numpy path refused the file (a control byte is no cell of its shape) ...
    with pytest.MonkeyPatch.context() as mp:
        _without_numpy_path(mp)
        want = _read_all(edit, tmp_path / "exact")
    assert got == want  # ... and the exact path read it: the same spins, rejects and stored rows
    col = f"{key} (column {j + 1})"
    shown = cell.translate({cp: f"\\x{cp:02x}"})
    for how in ("log", "rows"):
        assert got[how][0] == "ok", got[how]
        assert [(r["line"], r["column"], r["reason"], r["text"]) for r in got[how][1]["rejected"]] == [(line, col, _why(key, cp), shown)]
    src = got["log"][1]["sources"][0]
    assert (src["rows"], src["accepted"] + src["void"], src["rejected"]) == (N_CSV, N_CSV - 1, 1)  # the other rows are read
    assert sorted(got["log"][1]["T1"]["labels"]) == ["D1", "D2", "D3", "D4"]
    assert [k for k in got["log"][1] if k not in ("rejected", "notes", "sources")] == ["T1"]
    assert _no_control([got["log"], got["ingest"], got["store"], got["rows"][1]["rejected"]])  # labels, rejects, notes, the store's rows
    rows = got["rows"][1]  # (every row of the file, rejected ones included, for the store: those of spins are clean)
    live = np.asarray(rows["accepted"]) | np.asarray(rows["void"])
    assert _no_control([c for k in ("table", "dealer", "spin_id") for c, ok in zip(rows[k], live.tolist()) if ok])
    assert got["store"]["rejects"] == [("<tmp>/log.csv", line, col, _why(key, cp), shown)]
    assert len(got["store"]["spins"]) == N_CSV - 1


def test_the_same_log_without_the_control_character_takes_the_numpy_path(tmp_path, monkeypatch):
    """(Else the comparison above would compare the exact path with itself.)"""
    data, _ = _csv_with("DEL in a dealer")
    monkeypatch.setitem(CASES, "clean", data.replace(b"D\x7f2", b"D2"))
    taken = _spy(monkeypatch)
    got = _read_all("clean", tmp_path / "x")
    assert taken[0] and got["log"][1]["rejected"] == []


def test_the_numpy_path_refuses_a_block_with_a_control_character_in_a_text_cell():
    names = ["spin_id", "table", "dealer", "result"]
    resolved = resolve_columns(names, "log", {}, names)
    ok = b"1,T1,D1,5\n2,T1,D2,6\n" + fastcsv._PAD
    assert fastcsv.process_block(ok, 2, names, resolved, "log", EU)["dealer"][1] == ["D1", "D2"]
    for bad in (b"1,T1,D1,5\n2,T1,D\x7f2,6\n", b"1,T\x7f,D1,5\n2,T1,D2,6\n", b"1,T1,D1,5\n2,T1,D\x002,6\n", b"1,T1,D1,5\x7f\n2,T1,D2,6\n"):
        with pytest.raises(fastcsv.NotCanonical):
            fastcsv.process_block(bad + fastcsv._PAD, 2, names, resolved, "log", EU)


# ---------------------------------------------------------------------------- CSV: a small, odd log (exact and line-by-line paths)
def _odd_csv(path, *, unclosed_quote: bool = False):
    """A semicolon-separated CRLF log with text spin ids, quoted cells and the columns the numpy path does not read
    (result_source, payout, multiplier), a control character in six of its cells; ``unclosed_quote``: one more line
    whose quote never closes (the file is then read line by line)."""
    head = "spin_id;table;dealer;result;result_source;payout;multiplier"
    rows = [f'R{i};"T{1 + i % 2}";D{i % 3};{(i * 7) % 37};wheel;35;x{1 + i % 2}' for i in range(1, 200)]
    bad = {10: ("dealer", '"D\x001"', 0x00), 20: ("table", "T\x1e2", 0x1E), 30: ("result", "3\x7f", 0x7F),
           40: ("result_source", "wheel\x1b", 0x1B), 50: ("payout", "3\x005", 0x00), 60: ("multiplier", "x\x0b", 0x0B),
           70: ("spin_id", "R\x0370", 0x03)}
    col = {k: i for i, k in enumerate(head.split(";"))}
    want = []
    for i, (key, cell, cp) in bad.items():
        cells = rows[i].split(";")
        cells[col[key]] = cell
        rows[i] = ";".join(cells)
        want.append((i + 2, f"{key} (column {col[key] + 1})", _why(key, cp), cell.strip('"').translate({cp: f"\\x{cp:02x}"})))
    if unclosed_quote:
        rows[100] = 'R101;"T2;D1;5;wheel;35;x1'
    path.write_bytes(("\r\n".join([head] + rows) + "\r\n").encode())
    return path, want


@pytest.mark.parametrize("unclosed_quote", [False, True])
def test_odd_csv_log_rejects_each_corrupted_row_on_the_exact_path(tmp_path, monkeypatch, unclosed_quote):
    p, want = _odd_csv(tmp_path / "odd.csv", unclosed_quote=unclosed_quote)
    fast, slow, _ = _both(monkeypatch, [p])  # the compact (streamed) read and the exact read
    assert _snapshot(fast) == _snapshot(slow)
    rows = read_spin_rows(p, EU)
    for got in (fast.rejected, slow.rejected, rows.rejected):
        mine = [(r.line, r.column, r.reason, r.text) for r in got if r.column != "*"]
        assert mine == want
    assert [r.line for r in fast.rejected if r.column == "*"] == ([102] if unclosed_quote else [])
    assert any("read line by line" in x for x in fast.notes) is unclosed_quote
    assert fast.sources[0].accepted == 199 - len(want) - unclosed_quote
    assert sorted(fast.tables) == ["T1", "T2"] and all(sorted(t.dealer_labels) == ["D0", "D1", "D2"] for t in fast.tables.values())
    assert _no_control(_snapshot(fast)) and _no_control([r.to_dict() for r in rows.rejected])


# ---------------------------------------------------------------------------- JSON Lines
def _jsonl_log(path, *, raw_del: bool = False, id_cell: bool = True, n: int = 900):
    """A JSON Lines log with a control character in four cells (``id_cell``: one of them a spin id), as a JSON escape
    (``\\u0000``), or (``raw_del``) as the raw byte DEL, which JSON allows in a string (such blocks are parsed by pyarrow's
    reader)."""
    objs = [{"spin_id": i, "table": f"T{1 + i % 2}", "dealer": f"D{i % 3}", "result": (i * 7) % 37} for i in range(1, n + 1)]
    cp = {"dealer": 0x7F, "table": 0x7F, "result": 0x7F, "spin_id": 0x7F} if raw_del else {"dealer": 0x00, "table": 0x1F, "result": 0x0B, "spin_id": 0x02}
    edits = {100: ("dealer", "D\x001"), 300: ("table", "T\x1f2"), 500: ("result", "\x0b5"), 700: ("spin_id", "R\x02")}
    if not id_cell:
        edits.pop(700)
    want = []
    for i, (key, cell) in edits.items():
        cell = CONTROL.sub(chr(cp[key]), cell)
        objs[i][key] = cell
        want.append((i + 1, f"{key} (column {list(objs[i]).index(key) + 1})", _why(key, cp[key]), cell.translate({cp[key]: f"\\x{cp[key]:02x}"})))
    path.write_text("\n".join(json.dumps(o, ensure_ascii=not raw_del) for o in objs) + "\n", encoding="utf-8")
    return path, want


@pytest.mark.parametrize("raw_del", [False, True])
@pytest.mark.parametrize("id_cell", [False, True])
@pytest.mark.parametrize("block", [2000, 1 << 22])
def test_jsonl_row_with_a_control_character_is_rejected_streamed_and_exact(tmp_path, monkeypatch, raw_del, id_cell, block):
    p, want = _jsonl_log(tmp_path / "spins.jsonl", raw_del=raw_del, id_cell=id_cell)
    assert (b"\\u00" in p.read_bytes()) is not raw_del and (b"\x7f" in p.read_bytes()) is raw_del
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", block)
    fast, slow, streamed = _both(monkeypatch, [p])
    assert streamed is not id_cell  # (a text id among whole numbers: the exact path, as for any other such id)
    assert _snapshot(fast) == _snapshot(slow)
    assert [(r.line, r.column, r.reason, r.text) for r in fast.rejected] == want
    assert fast.sources[0].accepted == 900 - len(want) and len(want) == 3 + id_cell
    assert sorted(fast.tables) == ["T1", "T2"] and all(sorted(t.dealer_labels) == ["D0", "D1", "D2"] for t in fast.tables.values())
    assert _no_control(_snapshot(fast))
    if raw_del:  # (pyarrow's reader takes a block with a raw DEL in a string: the comparison below compares two parsers)
        cols, k = jsonl._fast_block(b"".join(p.read_bytes().splitlines(keepends=True)[95:105]), ["spin_id", "table", "dealer", "result"])
        assert k == 10 and control_chars(cols["dealer"]).tolist() == [-1] * 5 + [0x7F] + [-1] * 4
    with monkeypatch.context() as m:  # pyarrow's blocks (raw DEL) and Python's lines agree
        m.setattr(jsonl, "_fast_block", lambda *a, **k: None)
        assert _snapshot(read_spin_log([p], EU)) == _snapshot(fast)


# ---------------------------------------------------------------------------- ingest and the store
def test_ingest_rejects_the_corrupted_rows_and_stores_no_control_character(tmp_path, cli):
    csv_p, want_csv = _odd_csv(tmp_path / "odd.csv")
    js_p, want_js = _jsonl_log(tmp_path / "spins.jsonl")
    db = tmp_path / "s.duckdb"
    res = cli("ingest", csv_p, js_p, "--db", db)
    assert res.exit_code == 0, res.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        rejects = con.execute('SELECT file, line, "column", reason, text FROM rejects ORDER BY file, line').fetchall()
        dealers = sorted(r[0] for r in con.execute("SELECT DISTINCT dealer FROM spins").fetchall())
        tables = sorted(r[0] for r in con.execute("SELECT DISTINCT table_id FROM spins").fetchall())
        n = con.execute("SELECT count(*) FROM spins").fetchone()[0]
    finally:
        con.close()
    assert [r[1:] for r in rejects if r[0] == str(csv_p)] == want_csv
    assert [r[1:] for r in rejects if r[0] == str(js_p)] == want_js
    assert dealers == ["D0", "D1", "D2"] and tables == ["T1", "T2"] and n == 199 - len(want_csv) + 900 - len(want_js)
    out = cli("rejects", "--db", db, "--csv")
    assert out.exit_code == 0 and CONTROL.search(out.output) is None
    listed = list(csv.reader(io.StringIO(out.output)))
    assert [r[3] for r in listed[1:]].count(_why("dealer", 0)) == 2 and ["D\\x001"] == sorted({r[4] for r in listed[1:] if r[4].startswith("D")})


# ---------------------------------------------------------------------------- certify: the report and rejects.csv
def test_certify_keeps_the_corrupted_row_out_of_the_dealers_and_the_report_files(tmp_path, cli):
    """The log of the issue: 1,999 spins of three dealers, a NUL inside one dealer cell (line 501)."""
    rows = ["spin_id,dealer,result"] + [f"{i},D{i % 3},{(i * 7) % 37}" for i in range(1, 2000)]
    rows[500] = "500,D\x001,3"
    log = tmp_path / "n1.csv"
    log.write_text("\n".join(rows) + "\n")
    res = cli("certify", log, "--seed", 1, "--resamples", 999, "--no-plots", "--json", "--out", tmp_path / "out")
    rep = json.loads(res.output)
    assert sorted(rep["tables"][0]["dealers"]) == ["D0", "D1", "D2"]
    assert rep["rejected_count"] == 1 and rep["tables"][0]["n"] == 1998
    assert [(r["line"], r["column"], r["reason"], r["text"]) for r in rep["rejected_sample"]] == [(501, "dealer (column 2)", _why("dealer", 0), "D\\x001")]
    (folder,) = (tmp_path / "out").iterdir()
    for name in ("report.json", "report.html", "rejects.csv"):
        assert CONTROL_B.search((folder / name).read_bytes()) is None, name
    assert _why("dealer", 0) in (folder / "report.html").read_text(encoding="utf-8")
    listed = list(csv.reader(io.StringIO((folder / "rejects.csv").read_text(encoding="utf-8"))))
    assert listed == [["file", "line", "column", "reason", "text"], [str(log), "501", "dealer (column 2)", _why("dealer", 0), "D\\x001"]]


# ---------------------------------------------------------------------------- the pieces
def test_control_chars_of_every_kind_of_string_array():
    vals = ["D1", "D\x001", None, "", "\x7f", "a\tb\r\nc", "Zoë\x1f", "x\x0c\x00"]
    want = [-1, 0, -1, -1, 0x7F, -1, 0x1F, 0x0C]
    arr = _arrow.texts(vals)
    assert control_chars(arr).tolist() == want
    assert control_chars(pa.chunked_array([arr.slice(0, 3), arr.slice(3)])).tolist() == want
    assert control_chars(arr.slice(2)).tolist() == want[2:] and control_chars(arr.slice(0, 1)) is None
    assert control_chars(arr.cast(pa.large_string())).tolist() == want
    assert control_chars(_arrow.texts(["a", "b\tc", "", "é"])) is None and control_chars(_arrow.texts([])) is None
    every = [chr(c) for c in range(0x80)]
    got = control_chars(_arrow.texts(every))
    assert np.flatnonzero(got >= 0).tolist() == [c for c in range(0x80) if CONTROL.match(chr(c))]


def test_a_rejected_row_shows_control_characters_escaped():
    r = RejectedRow("f.csv", 3, "dealer\x01", "bad \x00", "D\x001\t\x7f")
    assert (r.column, r.reason, r.text) == ("dealer\\x01", "bad \\x00", "D\\x001\t\\x7f")
    assert RejectedRow("f.csv", 3, "*", "x", "Zoë\t'=1").text == "Zoë\t'=1"  # text without one: as it was
