"""One column of the file mapped to two known columns (``--column result=n --column table=n``, or a
mapping onto a column that another known column reads by its default name) is an input error naming
both, for every reader (CSV on the numpy path and the exact path, JSON Lines) and every command that
reads a log; before, ``table=n`` made one table per pocket and the certify printed FAIL (exit 12)."""

from __future__ import annotations

import json

import pytest
from _support import run_cli

from rngcert.collect.spinlog import read_spin_log
from rngcert.equipment.wheel import load_wheel
from rngcert.errors import InputError

ROWS = [(i, f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", "T1", f"D{i % 3}", (7 * i) % 37) for i in range(1, 400)]


def _csv(tmp_path, name="log.csv"):
    p = tmp_path / name
    p.write_text("spin_id,timestamp,table,dealer,number\n" + "".join(f"{a},{b},{c},{d},{e}\n" for a, b, c, d, e in ROWS))
    return p


def _jsonl(tmp_path):
    p = tmp_path / "log.jsonl"
    p.write_text("".join(json.dumps({"spin_id": a, "timestamp": b, "table": c, "dealer": d, "number": e}) + "\n" for a, b, c, d, e in ROWS))
    return p


@pytest.mark.parametrize("maker", [_csv, _jsonl])
@pytest.mark.parametrize(
    ("columns", "both"),
    [
        ({"result": "number", "table": "number"}, ("'result' (--column result=number)", "'table' (--column table=number)")),
        ({"result": "NUMBER", "dealer": "number"}, ("'result' (--column result=NUMBER)", "'dealer' (--column dealer=number)")),
        ({"result": "dealer"}, ("'result' (--column result=dealer)", "'dealer' (its default name 'dealer')")),
    ],
)
def test_one_file_column_for_two_known_columns_is_refused(tmp_path, maker, columns, both):
    log = maker(tmp_path)
    with pytest.raises(InputError, match="would be read both as") as e:
        read_spin_log(log, load_wheel("european"), columns=columns)
    assert all(b in str(e.value) for b in both) and log.name in str(e.value)


def test_distinct_columns_still_read(tmp_path):
    log = read_spin_log(_csv(tmp_path), load_wheel("european"), columns={"result": "number"})
    assert log.accepted == len(ROWS) and list(log.tables) == ["T1"] and not log.rejected


@pytest.mark.parametrize("command", ["certify", "ingest"])
def test_cli_exits_3_and_writes_no_report(tmp_path, command):
    log = _csv(tmp_path)
    args = ["--column", "result=number", "--column", "table=number"]
    if command == "certify":
        r = run_cli("certify", log, *args, "--out", tmp_path / "reports")
        assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").iterdir())
    else:
        r = run_cli("ingest", log, "--db", tmp_path / "s.duckdb", *args)
    assert r.exit_code == 3, r.output
    assert "would be read both as 'result'" in r.output and "'table' (--column table=number)" in r.output
