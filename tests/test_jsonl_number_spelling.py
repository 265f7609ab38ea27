"""A number in a JSON Lines log is read as it is written, as the same cell of a CSV log is: `-0` is not 0 (a spin id
`-0` is rejected as negative, a result `-0` is not pocket 0) and `1e1` is not pocket 10, whichever parser (Python's
line by line, or pyarrow's for a block in the plain shape) reads the line."""

from __future__ import annotations

import json
import random

import pytest
from _support import compact_read

import rngcert.collect.spinlog as spinlog
from rngcert.equipment.wheel import load_wheel

EU = load_wheel("european")
N = 3000  # (about 110 KB: the odd lines are past the first 64 KB, which Python parses, in a block pyarrow may read)
#: line (= its spin id) -> (spin id, result) as written; None: the line's own id
ODD = {2500: ("-0", "5"), 2510: (None, "-0"), 2520: (None, "1e1"), 2530: (None, "10.0"), 2540: (None, "1E1"),
       2550: (None, "-0.0"), 2560: ("5.0061e4", "3"), 2570: (None, "-5"), 2580: (None, "0.0")}


def _logs(tmp_path):
    r = random.Random(11)
    rows = [(str(i), str(r.randrange(37))) for i in range(1, N + 1)]
    for line, (sid, result) in ODD.items():
        rows[line - 1] = (sid or str(line), result)
    csv = tmp_path / "log.csv"
    csv.write_text("spin_id,result\n" + "".join(f"{a},{b}\n" for a, b in rows))
    jl = tmp_path / "log.jsonl"
    jl.write_text("\n" + "".join(f'{{"spin_id": {a}, "result": {b}}}\n' for a, b in rows))  # (a blank first line: the lines are the CSV's)
    return csv, jl


def _reading(log):
    (t,) = log.tables.values()
    rej = [(r.line, r.reason, r.text) for r in log.rejected]
    s = log.sources[0]
    return rej, (s.accepted, s.rejected, s.void), t.outcomes.tolist(), [n for n in t.notes]


@pytest.mark.parametrize("exact", [False, True])
def test_a_json_number_is_read_as_the_csv_cell_of_its_spelling(exact, tmp_path, monkeypatch):
    csv, jl = _logs(tmp_path)
    with compact_read(monkeypatch, exact=exact):
        from_csv = _reading(spinlog.read_spin_log([csv], EU))
        from_jsonl = _reading(spinlog.read_spin_log([jl], EU))
    assert [line for line, _, _ in from_csv[0]] == [2501, 2511, 2521, 2541, 2551, 2561, 2571]  # (10.0 and 0.0 are read, as README says; line = id + 1)
    assert from_jsonl == from_csv
    assert [text for _, _, text in from_jsonl[0]][:3] == ["-0", "-0", "1e1"]


def test_pyarrow_reads_no_block_with_a_negative_zero():
    from rngcert.collect.spinlog.jsonl import _fast_block

    plain = b'{"spin_id": 1, "result": 2}\n{"spin_id": 2, "result": 0}\n'
    assert _fast_block(plain, ["spin_id", "result"]) is not None
    for odd in (b'{"spin_id": -0, "result": 2}\n', b'{"spin_id": 3, "result":-0}\n'):
        assert _fast_block(plain + odd, ["spin_id", "result"]) is None
    named = plain + json.dumps({"spin_id": 3, "result": 1, "table": "T-0"}).encode() + b"\n"
    assert _fast_block(named, ["spin_id", "result", "table"]) is not None  # ('-0' inside a text is no number)
