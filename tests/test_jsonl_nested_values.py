"""A JSON object or array where a spin log's text or number was expected (a dealer, a table, a result…)
is a rejected row naming file, line, column (the key) and reason, on the streamed reader and on the
exact path alike; a break test found ``{"dealer": {"name": "Bob"}}`` read as the dealer "{'name': 'Bob'}".

Runtime budget: about 2 s.
"""

from __future__ import annotations

import json

import pytest
from test_spinlog_stream_shapes import _both, _jsonl, _snapshot

import rngcert.collect.spinlog.jsonl as jsonl
from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")

NESTED = [  # (key, value, words of the reason)
    ("dealer", {"name": "Bob"}, "an object where a dealer name was expected"),
    ("dealer", ["Bob", "Ann"], "an array where a dealer name was expected"),
    ("table", {"id": "T1"}, "an object where a table id was expected"),
    ("result", {"value": 17}, "an object where a result"),
    ("spin_id", [5], "an array where a spin id was expected"),
    ("timestamp", {"t": 1}, "an object where a timestamp was expected"),
]


def _with_nested(tmp_path, at: list[int]):
    """The stream-shapes log with rows ``at`` (line numbers, 1-based) given a nested value, each of NESTED in turn."""
    path = _jsonl(tmp_path / "spins.jsonl", n=900, oddities=False)
    lines = path.read_text().splitlines()
    want = {}
    for j, ln in enumerate(at):
        key, value, words = NESTED[j % len(NESTED)]
        obj = json.loads(lines[ln - 1])
        obj[key] = value
        lines[ln - 1] = json.dumps(obj)
        want[ln] = (key, words)
    path.write_text("\n".join(lines) + "\n")
    return path, want


@pytest.mark.parametrize("block", [2000, 1 << 22])
def test_nested_values_are_rejected_by_key_streamed_and_exact(tmp_path, monkeypatch, block):
    path, want = _with_nested(tmp_path, [3, 50, 120, 400, 650, 899])
    monkeypatch.setattr(jsonl, "JSONL_BLOCK", block)
    fast, slow, streamed = _both(monkeypatch, [path])
    assert streamed and _snapshot(fast) == _snapshot(slow)
    got = {r.line: (r.column, r.reason) for r in fast.rejected}
    assert set(got) == set(want)
    for ln, (key, words) in want.items():
        assert got[ln][0] == key and words in got[ln][1], (ln, got[ln])
        assert all(r.file == str(path) for r in fast.rejected)
    labels = {lab for t in fast.tables.values() for lab in t.dealer_labels}
    assert not any("{" in lab or "[" in lab for lab in labels) and set(fast.tables) == {"T1", "T2"}
    assert fast.accepted + sum(t.void for t in fast.tables.values()) == 900 - len(want)  # every other row read


def test_a_nested_value_in_a_key_the_reader_does_not_use_is_left_alone(tmp_path):
    p = tmp_path / "meta.jsonl"
    p.write_text("".join(json.dumps({"spin_id": i, "result": i % 37, "meta": {"camera": 2}}) + "\n" for i in range(1, 41)))
    log = read_spin_log(p, EU)
    assert log.accepted == 40 and not log.rejected
    # a key --column maps is a column the reader uses
    q = tmp_path / "mapped.jsonl"
    q.write_text("".join(json.dumps({"spin_id": i, "result": i % 37, "Croupier": {"n": 1} if i == 7 else "A"}) + "\n" for i in range(1, 41)))
    (r,) = read_spin_log(q, EU, columns={"dealer": "Croupier"}).rejected
    assert (r.line, r.column) == (7, "Croupier") and "an object where a text or number value was expected" in r.reason
