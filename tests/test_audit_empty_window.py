"""An audit window by --since/--until that holds no spin says when the table's spins are, and that spins without a
timestamp are in no such window (exit 3 as before)."""

from __future__ import annotations

from _support import run_cli


def test_empty_time_window_says_the_tables_time_span(tmp_path):
    timed = tmp_path / "timed.csv"
    timed.write_text("spin_id,timestamp,table,result\n" + "".join(f"{i},2026-06-01T10:{i:02d}:00Z,T,{i % 37}\n" for i in range(1, 51)))
    untimed = tmp_path / "untimed.csv"
    untimed.write_text("spin_id,table,result\n" + "".join(f"{i},U,{i % 37}\n" for i in range(1, 51)))
    db = tmp_path / "s.duckdb"
    assert run_cli("ingest", timed, untimed, "--db", db).exit_code == 0
    r = run_cli("audit", "--table", "T", "--db", db, "--since", "2026-07-01", "--no-record", "--no-plots")
    assert r.exit_code == 3 and "no spins in the window" in r.output
    assert "50 stored spin(s) with a timestamp run from 2026-06-01T10:01:00 to 2026-06-01T10:50:00 UTC" in r.output, r.output
    r = run_cli("audit", "--table", "U", "--db", db, "--until", "2026-07-01", "--no-record", "--no-plots")
    assert r.exit_code == 3 and "50 stored spin(s) have no timestamp" in r.output, r.output
