"""Review of the streamed JSON Lines reader: for every log it accepts, the SpinLog equals the exact
reader's, whatever the block size (keys in other cases or spellings in later blocks, a key given
twice, numbers, booleans, nulls, escapes, CRLF, a BOM, blank lines), else it falls back."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _support import compact_read
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_spinlog_stream_shapes import EU, _both, _snapshot

import rngcert.collect.spinlog as spinlog
import rngcert.collect.spinlog.jsonl as jsonl
from rngcert.errors import InputError, RngcertError


def _rows(n, start=1, table="T1", result_key="result"):
    return [json.dumps({"spin_id": i, "table": table, result_key: (7 * i) % 37, "timestamp": f"2026-01-01T{i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"})
            for i in range(start, start + n)]


def _check(tmp_path, monkeypatch, text: bytes, block: int, name="spins.jsonl"):
    p = tmp_path / name
    p.write_bytes(text)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", block)
    try:
        fast, slow, _ = _both(monkeypatch, [p])
    except RngcertError as exc:  # (then the exact read must refuse it alike)
        with compact_read(monkeypatch, exact=True), pytest.raises(type(exc)) as exact:
            spinlog.read_spin_log([p], EU)
        assert str(exact.value) == str(exc)
        return None, None
    assert _snapshot(fast) == _snapshot(slow)
    return fast, slow


@pytest.mark.parametrize("block", [300, 5000])
def test_later_block_spells_a_known_key_in_another_case_with_a_new_key(tmp_path, monkeypatch, block):
    """A later block whose first row spells `result` as `Result` beside a key new to the file."""
    lines = _rows(3000) + [json.dumps({"Result": 5, "spin_id": 3001, "table": "T1", "extra": 1,
                                       "timestamp": "2026-01-01T01:00:00Z"})] + _rows(50, 3002)
    fast, slow = _check(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode(), block)
    assert sum(t.outcomes.size for t in fast.tables.values()) == 3051


_KEYS = ["spin_id", "table", "result", "Result", " result", "res\\u0075lt", "void", "dealer", "direction", "timestamp", "extra", "Extra", "revolutions"]
_VALUES = ['7', '"7"', '7.0', '7e0', '-0', 'true', 'false', 'null', '"true"', '1', '"17"', '"x"', '"\\u0037"', 'NaN', 'Infinity',
           '{"a": 1}', '[1]', '"é"', '"T1"', '"T2"', '"2026-01-01T00:00:01+01:00"', '"2026-01-01 00:00:02"', '99999999999999999999', '"cw"']
_ODD_LINES = ["", "   ", "[1, 2]", "7", '"text"', "{not json", '{"result": 1,}', '{"result": 1} // c', "\x0c", "{}"]


@st.composite
def _line(draw):
    if draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from(_ODD_LINES))
    n = draw(st.integers(0, 5))
    pairs = [("spin_id", str(draw(st.sampled_from([draw(st.integers(1, 60)), f'"{draw(st.integers(1, 60))}"'])))),
             ("table", draw(st.sampled_from(['"T1"', '"T2"', "1"]))), ("result", str(draw(st.integers(0, 38))))]
    pairs = pairs[:draw(st.integers(1, 3))] + [(draw(st.sampled_from(_KEYS)), draw(st.sampled_from(_VALUES))) for _ in range(n)]
    pairs = draw(st.permutations(pairs))
    return "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}"


@settings(derandomize=True, max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(_line(), min_size=1, max_size=60), block=st.sampled_from([40, 120, 1000]),
       end=st.sampled_from(["\n", "\r\n"]), bom=st.booleans())
def test_random_logs_streamed_equal_exact(tmp_path_factory, lines, block, end, bom):
    tmp = tmp_path_factory.mktemp("h")
    body = ("\ufeff" if bom else "") + end.join(lines) + end
    with pytest.MonkeyPatch.context() as mp:
        _check(tmp, mp, body.encode(), block)


def test_new_key_in_a_later_block_does_not_add_a_known_key_in_another_case(tmp_path, monkeypatch):
    """Found by the test above: the first block spells `Result`; a later block spells it `result`
    and brings a new key (`void`). The read again with the file's keys had both `Result` and
    `result` as columns (the latter empty), and the second row was rejected for an empty result,
    not, as by the exact reader, for its void flag."""
    lines = ['{"spin_id": 1, "table": "T1", "Result": 7}', '{"spin_id": 2, "table": "T1", "result": 8, "void": 7}',
             '{"spin_id": 3, "table": "T1", "result": 9, "void": false}']
    fast, slow = _check(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode(), 40)
    assert [(r.line, r.reason) for r in fast.rejected] == [(2, "void must be true/false")]
    assert fast.tables["T1"].outcomes.size == 2


def test_a_log_growing_while_read_is_refused_not_read_past_its_hash(tmp_path, monkeypatch):
    """A log still being written: lines appended after the bytes were hashed were read as spins of
    a file whose SHA-256 and size are those of the shorter file (the CSV reader refuses it)."""
    p = tmp_path / "spins.jsonl"
    p.write_text("\n".join(_rows(3000)) + "\n")
    real = jsonl._scan

    def scan_then_grow(fh):
        out = real(fh)
        with open(p, "a") as w:
            w.write("\n".join(_rows(500, 3001)) + "\n")
        return out

    monkeypatch.setattr(jsonl, "_scan", scan_then_grow)
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", 20000)
    with compact_read(monkeypatch), pytest.raises(InputError, match="changed while it was read"):
        spinlog.read_spin_log([p], EU)


@pytest.mark.parametrize("block", [3000, 1 << 22])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_a_void_row_without_a_time_is_in_no_time_order(tmp_path, monkeypatch, block, fmt):
    """A void row without a timestamp among rows that have one: the JSON Lines read raised an internal
    error (OverflowError: its missing time, int64's least value, named as a date), and a CSV read found
    the timestamps going back (to 1970) against the spin-id order, an INCONCLUSIVE reason that is not
    true. A void row without a time is in no time order and no period."""
    if fmt == "jsonl":
        lines = _rows(3000)
        lines[1500] = json.dumps({"spin_id": 1501, "table": "T1", "result": 3, "void": True})
        text = "\n".join(lines) + "\n"
    else:
        rows = [json.loads(x) for x in _rows(3000)]
        text = "spin_id,table,result,timestamp,void\n" + "".join(
            f"{r['spin_id']},T1,{r['result']},{'' if r['spin_id'] == 1501 else r['timestamp']},{'true' if r['spin_id'] == 1501 else ''}\n" for r in rows)
    fast, slow = _check(tmp_path, monkeypatch, text.encode(), block, name=f"spins.{fmt}")
    t = fast.tables["T1"]
    assert t.void == 1 and t.outcomes.size == 2999 and not fast.rejected
    assert not [f for f in t.findings if f.get("name") == "time_order"]
    assert fast.period == (1_767_225_601_000_000, 1_767_225_601_000_000 + 2999 * 1_000_000)


def test_period_of_sorted_tables_leaves_out_void_rows_without_a_time(tmp_path, monkeypatch):
    """Found by the random logs: spin ids sorted out of core (spin_id 1 in two tables and twice in
    one), the first row of a table a void one (revolutions 0) without a time: the streamed period
    started at int64's least value; the exact one has no period (no live row has a time)."""
    lines = ['{"spin_id": 1, "table": "T1", "result": 0, "timestamp": "2026-01-01T00:00:01+01:00"}',
             '{"spin_id": 1, "table": "T1", "result": 0, "revolutions": 0}', '{"spin_id": 1, "table": "T2", "result": 0, "revolutions": 0}']
    fast, _ = _check(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode(), 30)
    assert fast.period is None


def test_timestamps_first_seen_in_a_later_block_are_sorted_with(tmp_path, monkeypatch):
    """Found by random logs: ids out of order (sorted out of core) and the `timestamp` key first seen
    in a later block: the read again kept the sort's record type of the first read (no time), so
    the period was lost (None where the exact read has the one accepted time)."""
    rng = np.random.default_rng(0)
    ids, lines = {"T1": 0, "T2": 1000}, []
    for _ in range(50):
        t = ["T1", "T2"][int(rng.integers(0, 2))]
        ids[t] += 1 + int(rng.integers(0, 40) == 0)
        lines.append(json.dumps({"spin_id": ids[t], "table": t, "result": int(rng.integers(0, 37))}))
    row = '{"spin_id": 18, "table": "T1", "result": 7, "timestamp": "2026-01-01T00:00:00Z"}'
    lines[5:5] = [row, row]
    fast, slow = _check(tmp_path, monkeypatch, ("\n".join(lines) + "\n").encode(), 300)
    assert fast.period == (1_767_225_600_000_000, 1_767_225_600_000_000)
