"""Constant memory for every input shape (issue 26, item 3): the streamed readers of JSON Lines
logs give exactly what the exact path (every row's keys kept) gives: rows, rejects with line,
column and reason, duplicates, conflicts, gaps, notes, findings and the spins of every table,
whatever the block size."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from _support import compact_read, force_exact_read

import rngcert.collect.spinlog as spinlog
import rngcert.collect.spinlog.jsonl as jsonl
import rngcert.collect.spinlog.read as spinlog_read
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")


def _snapshot(log) -> str:
    out = [log.level, [s.to_dict() for s in log.sources], [r.to_dict() for r in log.rejected], list(log.notes), log.period]
    for name, t in log.tables.items():
        out.append([name, t.void, list(t.notes), t.findings, t.dealer_labels, list(t.source_comparison)]
                   + [None if a is None else np.asarray(a).astype(np.int64).tolist() for a in (t.outcomes, t.release, t.dealer, t.direction)])
    return json.dumps(out, default=str)


def _both(monkeypatch, paths, **kw):
    """(streamed read, exact read, whether the streamed path took it)."""
    with compact_read(monkeypatch) as (_, taken):
        fast = spinlog.read_spin_log(paths, EU, **kw)
    with compact_read(monkeypatch, exact=True):
        slow = spinlog.read_spin_log(paths, EU, **kw)
    return fast, slow, bool(taken)


def _jsonl(path, *, n=900, seed=5, oddities=True, dupes=True, tables=("T1", "T2")):
    """A JSON Lines log of interleaved tables: numbers and text as JSON numbers or strings, voids
    as booleans; with ``oddities``: blank and white-space lines, a line that is not JSON, an array,
    a key given twice, a float, an escaped character, an unknown pocket and a gap; with ``dupes`` an exact
    duplicate and a conflict."""
    rng = np.random.default_rng(seed)
    ids = {t: 1000 * i for i, t in enumerate(tables)}
    out = []
    for i in range(n):
        t = tables[int(rng.integers(0, len(tables)))]
        ids[t] += 1
        if oddities and i == 400:
            ids[t] += 4  # a gap
        res = int(rng.integers(0, 37))
        obj = {"spin_id": ids[t], "timestamp": f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z", "table": t,
               "dealer": f"D{int(rng.integers(1, 4))}", "direction": ["cw", "ccw"][int(rng.integers(0, 2))], "result": res}
        if rng.random() < 0.3:
            obj["result"] = str(res)
        if rng.random() < 0.02:
            obj["void"] = True
        line = json.dumps(obj)
        if oddities and rng.random() < 0.01:
            line = line.replace(f'"result": {res}', '"result": 37').replace(f'"result": "{res}"', '"result": "x"')
        out.append(line)
        if oddities and i == 100:
            out += ["", "   ", "{not json", "[1, 2]", '{"result": 3, "result": 4, "spin_id": 5}']
        if oddities and dupes and i == 200:
            out.append(line)  # exported twice
        if oddities and dupes and i == 600:
            out.append(line.replace('"dealer": "D', '"dealer": "\\u0044').replace('"direction": "c', '"direction": "cc'))  # the same spin again, escaped
        if oddities and i == 700:
            out.append(json.dumps({**obj, "spin_id": ids[t] + 1, "revolutions": 5.0, "timestamp": obj["timestamp"]}))
            ids[t] += 1
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.mark.parametrize("block", [200, 2000, 1 << 22])
@pytest.mark.parametrize("oddities", [False, True])
def test_jsonl_streamed_equals_exact(tmp_path, monkeypatch, block, oddities):
    log = _jsonl(tmp_path / "spins.jsonl", oddities=oddities, dupes=False)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", block)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert streamed  # the usual shape (ids increasing per table) and its malformed rows: no fall-back
    assert _snapshot(fast) == _snapshot(slow)
    assert all(t.outcomes.dtype == np.int8 for t in fast.tables.values())
    if oddities:
        why = {r.line: r.reason for r in fast.rejected}
        assert any("not a JSON object" in w for w in why.values()) and any("given twice" in w for w in why.values())
        assert any("gaps in the sequence" in x for t in fast.tables.values() for x in t.notes)


def test_jsonl_pyarrow_blocks_equal_python_blocks(tmp_path, monkeypatch):
    """The blocks pyarrow parses give the rows Python's parser gives (every value as text)."""
    log = _jsonl(tmp_path / "spins.jsonl", oddities=False)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 3000)
    fast, _, _ = _both(monkeypatch, [log])
    with monkeypatch.context() as m:
        m.setattr(jsonl, "_fast_block", lambda *a, **k: None)
        m.setattr(spinlog_read, "_read_spin_log_compact", spinlog_read._read_spin_log_compact)
        python = spinlog.read_spin_log([log], EU)
    assert _snapshot(fast) == _snapshot(python)


def test_jsonl_fast_block_refuses_what_it_would_read_otherwise():
    keys = ["spin_id", "result"]
    assert jsonl._fast_block(b'{"spin_id": 1, "result": 17}\n{"spin_id": 2, "result": "0"}\n', keys) is None  # number, then text
    assert jsonl._fast_block(b'{"spin_id": 1, "result": 1.0}\n', keys) is None  # str(1.0) is "1.0"
    assert jsonl._fast_block(b'{"spin_id": 1, "result": 1}{"spin_id": 2, "result": 2}\n', keys) is None  # two objects, one line
    assert jsonl._fast_block(b'{"spin_id": 1, "result": 1, "x": 1}\n', keys) is None  # a new key
    assert jsonl._fast_block(b'{"spin_id": 1, "result": "\\u0031"}\n', keys) is None
    assert jsonl._fast_block(b'{"spin_id": 1, "result": 1}\r{"spin_id": 2, "result": 2}\n', keys) is None  # a bare CR ends a line
    cols, n = jsonl._fast_block(b'{"spin_id": 1, "result": 17}\r\n{"result": 0, "spin_id": 2}\n', keys)
    assert n == 2 and cols["spin_id"].to_pylist() == ["1", "2"] and cols["result"].to_pylist() == ["17", "0"]


@pytest.mark.parametrize("shape", ["dupes", "latin1", "bom", "new_key_late", "first_block_bad", "text_ids", "out_of_order"])
def test_jsonl_other_shapes_equal_exact(tmp_path, monkeypatch, shape):
    """Shapes the streamed reader hands to the exact path (or reads alike): whatever path, the same result."""
    log = _jsonl(tmp_path / "spins.jsonl", oddities=True)
    lines = log.read_text().splitlines()
    if shape == "latin1":
        log.write_bytes("\n".join(lines).replace('"D1"', '"D\u00e91"').encode("latin-1") + b"\n")
    elif shape == "bom":
        log.write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode() + b"\n")
    elif shape == "new_key_late":
        lines[-3] = lines[-3][:-1] + ', "payout": 35}'
        log.write_text("\n".join(lines) + "\n")
    elif shape == "first_block_bad":
        log.write_text("\n".join(["{bad"] * 30 + lines) + "\n")
    elif shape == "text_ids":
        log.write_text(re.sub(r'"spin_id": (\d+)', r'"spin_id": "R\1"', "\n".join(lines)) + "\n")
    elif shape == "out_of_order":
        log.write_text("\n".join(lines[::-1]) + "\n")
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 500)
    fast, slow, _ = _both(monkeypatch, [log])
    assert _snapshot(fast) == _snapshot(slow)


# ---------------------------------------------------------------------------- spin ids out of file order
def _csv_log(path, n=1500, seed=3):
    """A CSV log of two interleaved tables with voids, a gap, an unreadable result and timestamps in id order."""
    from test_spinlog_memory import _write_log

    log = _write_log(path, n=n, oddities=False, seed=seed)
    rows = log.read_text().splitlines()
    rows[80] = rows[80].rsplit(",", 1)[0] + ",99"  # rejected, its id is present (no gap)
    del rows[300]  # a gap
    log.write_text("\n".join(rows) + "\n")
    return log


def _reshape(log, how: str, seed=0):
    rows = log.read_text().splitlines()
    head, body = rows[:1], rows[1:]
    rng = np.random.default_rng(seed)
    if how == "reversed":  # a newest-first export
        body = body[::-1]
    elif how == "blocks":  # daily files, each newest-first, joined oldest day first
        cut = [0, 200, 450, 700, 1000, len(body)]
        body = [r for a, b in zip(cut[:-1], cut[1:]) for r in body[a:b][::-1]]
    elif how == "blocks_swapped":  # files joined in the wrong order (ascending parts: not told from gaps)
        cut = [0, 200, 450, 700, 1000, len(body)]
        parts = [body[a:b] for a, b in zip(cut[:-1], cut[1:])]
        body = [r for i in (3, 0, 4, 1, 2) for r in parts[i]]
    elif how == "one_late":  # one row exported late
        body = body[:100] + body[101:900] + [body[100]] + body[900:]
    elif how == "shuffled":
        body = [body[i] for i in rng.permutation(len(body))]
    elif how == "repeat":  # reversed, and a row exported twice
        body = body[::-1]
        body.insert(500, body[200])
    elif how == "conflict":
        body = body[::-1]
        body.insert(500, body[200].rsplit(",", 1)[0] + ("," + ("5" if not body[200].endswith(",5") else "6")))
    elif how == "clock_back":  # reversed, and one timestamp that goes back in spin-id order
        body = body[::-1]
        body[400] = body[400].replace("2026-01-01T", "2025-12-31T")
    log.write_text("\n".join(head + body) + "\n")
    return log


@pytest.mark.parametrize("how,streams", [("reversed", True), ("blocks", True), ("blocks_swapped", True), ("one_late", True), ("shuffled", True),
                                         ("repeat", True), ("conflict", True), ("clock_back", False)])
@pytest.mark.parametrize("pool,min_s", [(False, 0.0), (True, 0.0), (False, 5.0)])
def test_ids_out_of_order_equal_exact(tmp_path, monkeypatch, how, streams, pool, min_s):
    """Rows out of spin-id order: read in constant memory when the ids come in runs (a newest-first
    export, newest-first files joined), equal to the exact path's sort, note and gaps; ascending parts
    joined out of order, a row exported late, shuffled ids, repeats, conflicts and a clock that goes
    back in id order are the exact path's (still equal, in the memory of the exact path)."""
    import rngcert.collect.csvstream as csvstream

    log = _reshape(_csv_log(tmp_path / "a.csv"), how)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    fast, slow, streamed = _both(monkeypatch, [log], pool=pool, min_round_interval=min_s)
    assert _snapshot(fast) == _snapshot(slow)
    if min_s == 0:  # (rounds 1 s apart: some have the same result within 5 s, which the exact path judges)
        assert streamed == (streams and not pool)
    if streamed:
        notes = [x for t in fast.tables.values() for x in t.notes]
        assert any("put in spin_id order" in x for x in notes) and any("gaps in the sequence" in x for x in notes)
        assert all(t.outcomes.dtype == np.int8 for t in fast.tables.values())


def test_ids_reversed_jsonl_and_two_files_equal_exact(tmp_path, monkeypatch):
    """A newest-first JSON Lines log beside a CSV log of the same tables, read in tiny blocks."""
    import rngcert.collect.csvstream as csvstream

    a = _reshape(_csv_log(tmp_path / "a.csv", n=800), "reversed")
    rows = [ln.split(",") for ln in a.read_text().splitlines()]
    js = tmp_path / "b.jsonl"
    js.write_text("\n".join(json.dumps(dict(zip(rows[0], r))) for r in rows[1:]) + "\n")
    b = _csv_log(tmp_path / "c.csv", n=600, seed=9)
    b.write_text(b.read_text().replace(",T1,", ",T3,").replace(",T2,", ",T4,"))
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 3000)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 2500)
    for paths in ([js], [js, b], [b, a]):
        fast, slow, streamed = _both(monkeypatch, paths)
        assert streamed and _snapshot(fast) == _snapshot(slow)


# ---------------------------------------------------------------------------- text spin ids
def _text_ids(log, how: str):
    rows = log.read_text().splitlines()
    head, body = rows[:1], rows[1:]
    pre = {"T1": "A", "T2": "B"} if how == "per_table" else {"T1": "R", "T2": "R"}
    body = [f"{pre[r.split(',')[2]]}{r}" if r.split(",")[2] in pre else r for r in body]
    if how == "repeat":
        body.insert(500, body[200])
    elif how == "conflict":
        body.insert(500, body[200].rsplit(",", 1)[0] + ("," + ("5" if not body[200].endswith(",5") else "6")))
    elif how == "empty":
        body[40] = "," + body[40].split(",", 1)[1]
    elif how == "mixed":
        body[40] = "Q" + body[40][1:]
    elif how == "zeros":
        body[40] = body[40][0] + "0" + body[40][1:]
    elif how == "reversed":
        body = body[::-1]
    log.write_text("\n".join(head + body) + "\n")
    return log


@pytest.mark.parametrize("how,streams", [("plain", True), ("per_table", True), ("reversed", True), ("repeat", False), ("conflict", False),
                                         ("empty", False), ("mixed", False), ("zeros", False)])
@pytest.mark.parametrize("pool", [False, True])
def test_text_ids_equal_exact(tmp_path, monkeypatch, how, streams, pool):
    """Text spin ids (``R1234``): read in constant memory when each table's ids are letters and a whole
    number in runs; repeats, conflicts, an empty id, another prefix in a table or a leading zero are the
    exact path's; either way the result is the exact path's (no gaps, spin-id order by the number, text in the
    rejects). Reversed: put in spin-id order with the note, as whole-number ids are (pooled with one prefix,
    the two tables' numbers interleave and are sorted as pooled whole numbers are: the exact path's)."""
    import rngcert.collect.csvstream as csvstream

    log = _text_ids(_csv_log(tmp_path / "a.csv"), how)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    fast, slow, streamed = _both(monkeypatch, [log], pool=pool)
    assert _snapshot(fast) == _snapshot(slow)
    assert streamed == (streams and not (pool and how in ("plain", "reversed")))  # (pooled, one prefix: the tables' numbers interleave)
    if how == "reversed":
        assert all("rows were not in spin_id order in the file; put in spin_id order" in t.notes for t in fast.tables.values())
    if how in ("repeat", "conflict"):
        assert any("R" in r.text and ("duplicate" in r.reason or "conflict" in r.reason) for r in fast.rejected)


def test_text_ids_jsonl_without_timestamps_reversed(tmp_path, monkeypatch):
    """Text ids with no timestamps going down the file: file order, in constant memory, as the exact path."""
    rows = [{"spin_id": f"spin-{100 + 3 * i}", "table": "T1", "result": i % 37} for i in range(600)][::-1]
    rows.insert(300, {"spin_id": "spin-7", "result": 40, "table": "T1"})  # a bad result: rejected
    log = tmp_path / "t.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 1500)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert streamed and _snapshot(fast) == _snapshot(slow)


def test_ids_runs_over_the_limits_are_sorted(tmp_path, monkeypatch):
    """More runs (or gap runs) than the limits: the ids are sorted out of core, with the exact path's result."""
    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idorder as idorder

    log = _reshape(_csv_log(tmp_path / "a.csv"), "blocks")
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    for limit in ("MAX_RUNS", "MAX_GAP_RUNS"):
        with monkeypatch.context() as m:
            m.setattr(idorder, limit, 3)
            fast, slow, streamed = _both(m, [log])
        assert streamed and _snapshot(fast) == _snapshot(slow)


# ---------------------------------------------------------------------------- spin ids in no order: sorted out of core
def _write_rows(tmp_path, log, head, body, *, as_jsonl: bool, split: bool, newest_file_first: bool) -> list:
    """Write CSV rows ``body`` under ``head`` to ``log`` (or as JSON Lines beside it, or split in two
    files, given the later file first when ``newest_file_first``); returns the paths to read."""
    if as_jsonl:
        log = tmp_path / "a.jsonl"
        log.write_text("".join(json.dumps(dict(zip(head[0].split(","), r.split(",")))) + "\n" for r in body))
        return [log]
    if split:
        (tmp_path / "b.csv").write_text("\n".join(head + body[700:]) + "\n")
        log.write_text("\n".join(head + body[:700]) + "\n")
        return [tmp_path / "b.csv", log] if newest_file_first else [log, tmp_path / "b.csv"]
    log.write_text("\n".join(head + body) + "\n")
    return [log]


@pytest.mark.parametrize("how,streams", [("shuffled", True), ("unsplit", True), ("two_files", True), ("jsonl", True), ("text", True),
                                         ("min_s_apart", True), ("min_s_close", False), ("repeat", True), ("conflict", True),
                                         ("clock_back", False), ("pool", False)])
def test_shuffled_ids_sorted_out_of_core(tmp_path, monkeypatch, how, streams):
    """Rows in no order (voids, an unreadable result, a gap, malformed lines): the ids are spilled per table,
    split into id ranges and sorted bucket by bucket (tiny buckets here, so the split runs several levels
    deep), with the exact path's spins, rejects, notes and gaps; repeats, conflicts, a clock that goes back,
    rounds closer than twice the minimum interval and pooled tables are the exact path's (same result). The
    temporary folder is removed."""
    import tempfile

    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idsort as idsort

    log = _csv_log(tmp_path / "a.csv")
    rows = log.read_text().splitlines()
    head, body = rows[:1], rows[1:]
    if how == "unsplit":  # the id of the gap comes back in a row with a field too many: present (no gap), the row rejected
        seen: dict[str, set] = {}
        for r in body:
            seen.setdefault(r.split(",")[2], set()).add(int(r.split(",")[0]))
        ((t, gap),) = [(t, i) for t, v in seen.items() for i in range(min(v), max(v)) if i not in v]
        row = next(r for r in body if r.split(",")[2] == t)
        body.insert(700, f"{gap}," + row.split(",", 1)[1] + ",extra")
        body.insert(10, "")
    rng = np.random.default_rng(8)
    body = [body[i] for i in rng.permutation(len(body))]
    if how == "repeat":
        body.insert(500, body[200])
    elif how == "conflict":
        body.insert(500, body[200].rsplit(",", 1)[0] + ("," + ("5" if not body[200].endswith(",5") else "6")))
    elif how == "clock_back":
        body[400] = body[400].replace("2026-01-01T", "2025-12-31T")
    elif how == "text":
        body = ["R" + r if r else r for r in body]
    paths = _write_rows(tmp_path, log, head, body, as_jsonl=how == "jsonl", split=how == "two_files", newest_file_first=True)
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 5000)
    monkeypatch.setattr(idsort, "BUCKET_ROWS", 40)
    monkeypatch.setattr(idsort, "READ_ROWS", 32)
    kw = {"min_round_interval": 0.4 if how == "min_s_apart" else 5.0 if how == "min_s_close" else 0.0, "pool": how == "pool"}
    fast, slow, streamed = _both(monkeypatch, paths, **kw)
    assert _snapshot(fast) == _snapshot(slow)
    assert streamed == streams
    assert not list(spill.iterdir())
    notes = [x for t in fast.tables.values() for x in t.notes]
    if how not in ("pool",):
        assert notes.count("rows were not in spin_id order in the file; put in spin_id order") == len(fast.tables)
    if how in ("shuffled", "two_files", "jsonl"):
        assert any("gaps in the sequence" in x for x in notes)
    if how == "unsplit":
        assert not any("gaps in the sequence" in x for x in notes) and any(r.column == "*" for r in fast.rejected)


def test_sort_without_room_falls_back_to_the_exact_path(tmp_path, monkeypatch):
    """No room for the sort's temporary files (an OSError): the exact path reads the log, same result."""
    import rngcert.collect.spinlog.idsort as idsort

    log = _reshape(_csv_log(tmp_path / "a.csv"), "shuffled")

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(idsort.scratch.tempfile, "mkdtemp", full)  # (the sort makes its folder through rngcert.scratch)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert not streamed and _snapshot(fast) == _snapshot(slow)


def test_shuffled_ids_of_one_value_and_rejected_copies(tmp_path, monkeypatch):
    """A rejected row with the id of a live one (counted once among the present ids, not a repeat), in a
    bucket of one id (file order is id order), sorted like the exact path."""
    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idsort as idsort

    rng = np.random.default_rng(2)
    ids = rng.permutation(np.r_[np.arange(1, 300), np.arange(400, 420)])
    rows = [f"{i},T1,{rng.integers(0, 37)}" for i in ids] + ["7,T1,99", "7,T1,x", "500,T1,37"]
    log = tmp_path / "one.csv"
    log.write_text("spin_id,table,result\n" + "\n".join(rows[:150] + rows[-3:] + rows[150:-3]) + "\n")
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 1000)
    monkeypatch.setattr(idsort, "BUCKET_ROWS", 4)
    monkeypatch.setattr(idsort, "READ_ROWS", 3)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert streamed and _snapshot(fast) == _snapshot(slow)
    assert "180 spin_id(s) missing between 1 and 500 (gaps in the sequence)" in fast.tables["T1"].notes


# ---------------------------------------------------------------------------- text ids that are labels (UUIDs, T1-5)
@pytest.mark.parametrize("how,streams", [("dash", True), ("uuid", True), ("uuid_jsonl", True), ("two_files", True), ("pool", True),
                                         ("min_s", True), ("repeat", False), ("conflict", False), ("repeat_other_table", True),
                                         ("a_number", False), ("empty", False)])
def test_label_ids_repeats_checked_out_of_core(tmp_path, monkeypatch, how, streams):
    """Spin ids that are labels (``T1-5``, UUIDs): file order, no gaps, and their repeats found by sorting
    64-bit keys of the labels out of core (tiny buckets here); a repeat or a conflict, a label that is a
    whole number or an empty id are the exact path's; the same label in two tables is not a repeat."""
    import uuid

    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idsort as idsort

    log = _csv_log(tmp_path / "a.csv")
    rows = log.read_text().splitlines()
    head, body = rows[:1], rows[1:]
    rng = np.random.default_rng(6)
    if how in ("uuid", "uuid_jsonl"):
        body = [f"{uuid.UUID(int=int(rng.integers(0, 2**62)) << 64 | i)}," + r.split(",", 1)[1] for i, r in enumerate(body)]
    else:
        body = [f"{r.split(',')[2]}-{r.split(',')[0]}," + r.split(",", 1)[1] for r in body]
    if how == "repeat":
        body.insert(500, body[200])
    elif how == "conflict":
        body.insert(500, body[200].rsplit(",", 1)[0] + ("," + ("5" if not body[200].endswith(",5") else "6")))
    elif how == "repeat_other_table":
        t = body[200].split(",")[2]
        body.insert(500, body[200].replace(f",{t},", ",T9,"))
    elif how == "a_number":
        body[40] = "12345," + body[40].split(",", 1)[1]
    elif how == "empty":
        body[40] = "," + body[40].split(",", 1)[1]
    paths = _write_rows(tmp_path, log, head, body, as_jsonl=how == "uuid_jsonl", split=how == "two_files", newest_file_first=False)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 5000)
    monkeypatch.setattr(idsort, "BUCKET_ROWS", 40)
    monkeypatch.setattr(idsort, "READ_ROWS", 32)
    kw = {"min_round_interval": 0.4 if how == "min_s" else 0.0, "pool": how == "pool"}
    fast, slow, streamed = _both(monkeypatch, paths, **kw)
    assert _snapshot(fast) == _snapshot(slow)
    assert streamed == streams
    assert not any("gaps" in x or "spin_id order" in x for t in fast.tables.values() for x in t.notes)


def test_label_keys():
    """Equal labels, equal keys; a whole number or a label over the limit: None (the exact path)."""
    from rngcert.collect.spinlog.idsort import MAX_LABEL, label_keys

    k = label_keys(["T1-5", "T1-50", "T1-5", "é-1", "a", "b"])
    assert k[0] == k[2] and len(set(k.tolist())) == 5
    assert label_keys(["T1-5", "17"]) is None and label_keys(["x" * (MAX_LABEL + 1)]) is None


def test_text_ids_of_a_batch_without_python_strings():
    """A streamed batch's text ids as numbers (one prefix and a number) or label keys; an empty or a
    whole-number id leaves the batch to the codes and labels (then the exact path)."""
    import pyarrow as pa

    from rngcert.collect.spinlog.core import TextIds

    got = TextIds.of(pa.array(["R12", "R3", "S7"]))
    assert got.kind is True and got.values.tolist() == [12, 3, 7] and [got.prefixes[i] for i in got.prefix] == ["R", "R", "S"]
    lab = TextIds.of(pa.array(["T1-5", "T1-6", "T1-5"]))
    assert lab.kind == "label" and lab.values[0] == lab.values[2] != lab.values[1]
    assert TextIds.of(pa.array(["R1", ""])) is None and TextIds.of(pa.array(["T1-5", "12"])) is None


def test_repeats_and_conflicts_sorted_out_of_core(tmp_path, monkeypatch):
    """Repeated spin ids across two files, shuffled: exact duplicates (a void one too), a conflict of five
    rows (its message lists four), a conflict across the files (named by file), a table whose only spin is a
    conflict (left out), a rejected row with a repeated id (not a repeat): the exact path's rejects, notes,
    counts and spins, sorted in tiny buckets."""
    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idsort as idsort

    rng = np.random.default_rng(12)
    res = {i: int(rng.integers(0, 37)) for i in range(1, 401)}
    rows = [f"{i},T1,{res[i]},false" for i in range(1, 401)]
    rows += [f"{i},T1,{res[i]},false" for i in (5, 6, 6, 300)]  # exact duplicates
    rows += [f"{i},T1,{(res[i] + k) % 37},false" for i in (50,) for k in range(1, 5)]  # a conflict of five rows
    rows += ["120,T1,,true", "120,T1,,true", "401,T1,,true", "401,T1,,true", "7,T1,99,false", "9,T2,3,false", "9,T2,4,false"]
    order = rng.permutation(len(rows))
    a_rows = [rows[i] for i in order[: len(rows) // 2]]
    b_rows = [rows[i] for i in order[len(rows) // 2 :]] + ["222,T1,%d,false" % ((res[222] + 1) % 37)]  # conflict across the files
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("spin_id,table,result,void\n" + "\n".join(a_rows) + "\n")
    b.write_text("spin_id,table,result,void\n" + "\n".join(b_rows) + "\n")
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 1500)
    monkeypatch.setattr(idsort, "BUCKET_ROWS", 30)
    monkeypatch.setattr(idsort, "READ_ROWS", 7)
    fast, slow, streamed = _both(monkeypatch, [a, b])
    assert streamed and _snapshot(fast) == _snapshot(slow)
    assert "T2" not in fast.tables and any(" …" in r.reason for r in fast.rejected)
    assert any("b.csv line" in r.reason or "a.csv line" in r.reason for r in fast.rejected)
    assert sum(s.duplicates for s in fast.sources) == 5  # (5, 6 twice, 300, a void 401; 120 again as two voids is a conflict)


def test_repeats_out_of_core_period_and_no_data(tmp_path, monkeypatch):
    """The rows repeats leave out are not in the log's period (a conflict with the latest timestamp), and a
    log whose every row is a conflict is no data: as on the exact path."""
    import rngcert.collect.csvstream as csvstream
    import rngcert.collect.spinlog.idsort as idsort
    from rngcert.errors import NoDataError

    rng = np.random.default_rng(3)
    rows = [f"{i},2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z,{rng.integers(0, 37)}" for i in range(1, 300)]
    rows.append("17,2026-01-02T00:00:00Z,40")  # unreadable: rejected, not a repeat
    rows.append(rows[16].split(",")[0] + ",2026-01-03T00:00:00Z," + str((int(rows[16].split(",")[2]) + 1) % 37))  # a conflict, the latest time
    rows.append(rows[0].split(",")[0] + ",2025-12-31T00:00:00Z," + rows[0].split(",")[2])  # an exact duplicate, the earliest time
    log = tmp_path / "p.csv"
    log.write_text("spin_id,timestamp,result\n" + "\n".join(rows[i] for i in rng.permutation(len(rows))) + "\n")
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 1500)
    monkeypatch.setattr(idsort, "BUCKET_ROWS", 25)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert streamed and _snapshot(fast) == _snapshot(slow)
    assert fast.period[1] < 1767312000 * 10**6  # (before 2026-01-02)
    every = tmp_path / "c.csv"
    every.write_text("spin_id,result\n" + "".join(f"{i},{i % 37}\n{i},{(i + 1) % 37}\n" for i in range(1, 60)))
    got = []
    for force in (False, True):
        with monkeypatch.context() as m:
            if force:
                m.setattr(spinlog_read, "_read_spin_log_compact", force_exact_read)
            with pytest.raises(NoDataError) as exc:
                spinlog.read_spin_log([every], EU)
            got.append(str(exc.value))
    assert got[0] == got[1] and "every row is rejected" in got[0]


@pytest.mark.parametrize("start", [b"[", b"  \n[", b"\xef\xbb\xbf[", b"\xa0["])
def test_jsonl_array_named_as_the_exact_path_names_it(tmp_path, monkeypatch, start):
    """A JSON array (after white space, a byte-order mark, or Latin-1's no-break space): the same error on both paths."""
    from rngcert.errors import InputError

    log = tmp_path / "a.jsonl"
    log.write_bytes(start + b'{"spin_id": 1, "result": 5}]\n')
    got = []
    for force in (False, True):
        with monkeypatch.context() as m:
            if force:
                m.setattr(spinlog_read, "_read_spin_log_compact", force_exact_read)
            try:
                spinlog.read_spin_log([log], EU)
                got.append("read")
            except InputError as exc:
                got.append(str(exc))
    assert got[0] == got[1]


# ---------------------------------------------------------------------------- falling text ids (break test)
def _falling_text_ids(tmp_path, fmt: str, n=1200, seed=11, ts=False):
    """Text ids ``R1 … Rn`` with their results, written newest first (``Rn`` … ``R1``) in ``fmt``;
    returns (path, results in spin-id order)."""
    rng = np.random.default_rng(seed)
    res = rng.integers(0, 37, n)
    rows = [(f"R{i + 1}", int(res[i]), f"2026-01-01T{(i // 3600) % 24:02d}:{(i // 60) % 60:02d}:{i % 60:02d}Z") for i in range(n)][::-1]
    path = tmp_path / f"falling.{fmt}"
    if fmt == "csv":
        path.write_text("spin_id,result" + (",timestamp" if ts else "") + "\n"
                        + "".join(f"{a},{b}" + (f",{c}" if ts else "") + "\n" for a, b, c in rows))
    else:
        path.write_text("".join(json.dumps({"spin_id": a, "result": b, **({"timestamp": c} if ts else {})}) + "\n" for a, b, c in rows))
    return path, res


def _positions(res) -> list[int]:
    """The wheel positions of pocket numbers (the outcomes a table holds)."""
    labels = [str(x) for x in EU.position_space().labels]
    return [labels.index(str(int(r))) for r in res]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
@pytest.mark.parametrize("ts", [False, True])
def test_falling_text_ids_put_in_spin_id_order(tmp_path, monkeypatch, fmt, ts):
    """A newest-first export with letter+number ids (``R1200 … R1``) is put in spin-id order with the
    note whole-number ids get, on the streamed and the exact path alike (it was used in file order, no note)."""
    import rngcert.collect.csvstream as csvstream

    log, res = _falling_text_ids(tmp_path, fmt, ts=ts)
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 3000)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 3000)
    fast, slow, streamed = _both(monkeypatch, [log])
    assert streamed and _snapshot(fast) == _snapshot(slow)
    (t,) = slow.tables.values()
    assert t.outcomes.tolist() == _positions(res)
    assert "rows were not in spin_id order in the file; put in spin_id order" in t.notes


def test_text_id_files_in_reverse_order(tmp_path, monkeypatch):
    """Two files of R-ids given newest file first: spin-id order with the note, both paths."""
    import rngcert.collect.csvstream as csvstream

    rng = np.random.default_rng(4)
    res = rng.integers(0, 37, 800)
    old, new = tmp_path / "day1.csv", tmp_path / "day2.csv"
    for path, part in ((old, range(0, 400)), (new, range(400, 800))):
        path.write_text("spin_id,table,result\n" + "".join(f"R{i + 1},T1,{res[i]}\n" for i in part))
    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 2000)
    for paths, noted in (([new, old], True), ([old, new], False)):
        fast, slow, streamed = _both(monkeypatch, paths)
        assert streamed and _snapshot(fast) == _snapshot(slow)
        assert slow.tables["T1"].outcomes.tolist() == _positions(res)
        assert ("rows were not in spin_id order in the file; put in spin_id order" in slow.tables["T1"].notes) == noted


def test_text_ids_time_order_finding_names_the_text_id(tmp_path, monkeypatch):
    """Letter+number ids whose timestamps go back in spin-id order: the time-order finding (as for whole numbers), naming ``R…``."""
    log, _ = _falling_text_ids(tmp_path, "csv", n=300, ts=True)
    rows = log.read_text().splitlines()
    rows[100] = rows[100].replace("2026-01-01T", "2025-12-31T")
    log.write_text("\n".join(rows) + "\n")
    fast, slow, _ = _both(monkeypatch, [log])
    assert _snapshot(fast) == _snapshot(slow)
    (t,) = slow.tables.values()
    (f,) = [f for f in t.findings if f["name"] == "time_order"]
    assert "spin_id R" in f["text"]


@pytest.mark.parametrize("ids", [(0, 999999999999999999), (1, 2, 999999999999999999)])
def test_gap_count_of_ids_across_the_int64_range(tmp_path, monkeypatch, ids):
    """Ids from 0 to 10**18 - 1 (a spin counter has at most 18 digits; 19 are rejected as on ingest:
    tests/test_spin_id_spellings.py): the gap count is exact (Python ints), with no overflow warning, on either path."""
    import warnings

    log = tmp_path / "far.csv"
    log.write_text("spin_id,table_id,result\n" + "".join(f"{i},T1,{k % 37}\n" for k, i in enumerate(ids)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fast, slow, _ = _both(monkeypatch, [log])
    assert _snapshot(fast) == _snapshot(slow)
    want = ids[-1] - ids[0] + 1 - len(ids)
    notes = [x for t in fast.tables.values() for x in t.notes]
    assert any(f"{want} spin_id(s) missing between {ids[0]} and {ids[-1]}" in x for x in notes), notes


@pytest.mark.parametrize("how", ["plain", "per_table", "reversed"])
def test_text_ids_of_one_prefix_have_their_gaps_counted_as_whole_numbers_do(tmp_path, monkeypatch, how):
    """Text spin ids of one prefix a table (``R1234``) are put in order by their number; their gaps are counted too, on
    both paths, as the same log's whole-number ids are (a missing spin was said for ``1234`` and not for ``R1234``).
    The note names the ids with their prefix; a rejected row's id is present, as for whole numbers."""
    import rngcert.collect.csvstream as csvstream

    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    plain = _csv_log(tmp_path / "n.csv")
    if how == "reversed":
        plain = _reshape(plain, "reversed")
    whole, _, _ = _both(monkeypatch, [plain])
    log = _text_ids(_csv_log(tmp_path / "a.csv"), how)
    fast, slow, _ = _both(monkeypatch, [log])
    assert _snapshot(fast) == _snapshot(slow)
    pre = {"T1": "A", "T2": "B"} if how == "per_table" else {"T1": "R", "T2": "R"}
    for name, t in fast.tables.items():
        want = [re.sub(r"between (\d+) and (\d+)", rf"between {pre[name]}\1 and {pre[name]}\2", x) for x in whole.tables[name].notes]
        assert t.notes == want, (name, t.notes, want)
    assert any("gaps in the sequence" in x for t in fast.tables.values() for x in t.notes)


@pytest.mark.parametrize("order", ["plain", "reversed", "shuffled"])
@pytest.mark.parametrize("prefix", ["", "R"])
def test_the_id_of_a_row_the_reader_could_not_split_is_no_gap_for_text_ids_either(tmp_path, monkeypatch, order, prefix):
    """A row rejected for its number of cells still carries its spin id: ``R150`` is in the file, not missing (certify
    said '1 spin_id(s) missing between R1 and R299', on both paths, where the same log with whole numbers had no note)."""
    import rngcert.collect.csvstream as csvstream

    monkeypatch.setattr(csvstream, "BLOCK_SIZE", 4000)
    ids = list(range(1, 300))
    if order == "reversed":
        ids = ids[::-1]
    elif order == "shuffled":
        ids = np.random.default_rng(4).permutation(ids).tolist()
    rows = [f"{prefix}{i},{i * 7 % 37},T" + (",extra,cells" if i == 150 else "") for i in ids]
    log = tmp_path / "a.csv"
    log.write_text("spin_id,result,table\n" + "\n".join(rows) + "\n")
    fast, slow, _ = _both(monkeypatch, [log])
    assert _snapshot(fast) == _snapshot(slow)
    assert [r.line for r in fast.rejected] == [2 + ids.index(150)]
    assert not any("gaps in the sequence" in x for x in fast.tables["T"].notes), fast.tables["T"].notes
