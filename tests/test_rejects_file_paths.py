"""`rngcert rejects --file PATH` finds the rows of a file given as a path (``./a.csv``, an absolute path, ``../logs/a.csv``),
not only as the text it was stored under or an ending of it."""

from __future__ import annotations

import json

from _support import run_cli


def test_rejects_file_given_as_a_path(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.csv").write_text("spin_id,table,result\n1,X,5\n2,X,99\n3,X,7\n")
    (logs / "b.csv").write_text("spin_id,table,result\n1,Y,5\n2,Y,88\n")
    monkeypatch.chdir(tmp_path)
    assert run_cli("ingest", "logs/a.csv", "logs/b.csv", "--db", "s.duckdb").exit_code == 0
    for given in ("logs/a.csv", "a.csv", "./logs/a.csv", str(logs / "a.csv"), "logs/../logs/a.csv"):
        r = run_cli("rejects", "--db", "s.duckdb", "--file", given, "--json")
        assert r.exit_code == 0, (given, r.output)
        doc = json.loads(r.output)
        assert [(x["file"], x["line"]) for x in doc["rejects"]] == [("logs/a.csv", 3)], given
    monkeypatch.chdir(logs)
    r = run_cli("rejects", "--db", "../s.duckdb", "--file", "../logs/a.csv", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["count"] == 1
    # a name no stored file has is still an error, not 'no rejects'
    r = run_cli("rejects", "--db", str(tmp_path / "s.duckdb"), "--file", "c.csv")
    assert r.exit_code == 3 and "no file ingested" in r.output
    r = run_cli("rejects", "--db", str(tmp_path / "s.duckdb"), "--file", "/elsewhere/x/b.csv.old")
    assert r.exit_code == 3
