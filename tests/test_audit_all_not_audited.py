"""`audit --all` audits the tables that have spins it can use: a table whose every stored spin id has two results
(a conflict: audits use neither) was left out without a word ("1 table(s) audited", exit 0 or the other
tables' verdict), and a store holding only such tables said "no table with spins". Every table of the store
that is not audited is named with why; a table whose stored spins cannot be used makes the run INCONCLUSIVE."""

from __future__ import annotations

import json

import numpy as np

from rngcert.cli import EXIT

RESULTS = np.random.default_rng(11).integers(0, 37, size=6000)  # enough for a PASS of a fair wheel


def _store_with_a_conflicted_table(tmp_path, cli):
    good = tmp_path / "good.csv"
    good.write_text("spin_id,result\n" + "".join(f"{i + 1},{r}\n" for i, r in enumerate(RESULTS)))
    c1, c2 = tmp_path / "c1.csv", tmp_path / "c2.csv"
    c1.write_text("spin_id,result\n1,5\n2,6\n")
    c2.write_text("spin_id,result\n1,7\n2,8\n")
    db = tmp_path / "s.duckdb"
    for log, table in ((good, "A"), (c1, "K"), (c2, "K")):
        assert cli("ingest", log, "--db", db, "--table", table).exit_code == 0
    return db


def test_a_table_with_only_conflicted_spins_is_named_and_the_run_is_inconclusive(tmp_path, cli):
    db = _store_with_a_conflicted_table(tmp_path, cli)
    common = ("--seed", 1, "--resamples", 199, "--no-plots", "--workers", 1, "--no-record")
    r = cli("audit", "--db", db, "--table", "A", *common[:-3], "--no-record", "--out", tmp_path / "a")
    assert r.exit_code == EXIT["PASS"], r.output  # table A alone
    r = cli("audit", "--db", db, "--all", *common, "--out", tmp_path / "r")
    assert r.exit_code == EXIT["INCONCLUSIVE"], r.output  # the run could not judge table K
    assert "NOT AUDITED: table K" in r.output and "2 stored spin(s)" in r.output and "conflicting results" in r.output, r.output
    r = cli("audit", "--db", db, "--all", *common, "--json", "--out", tmp_path / "j")
    g = json.loads(r.output)["group"]
    assert [x["table"] for x in g["not_audited"]] == ["K"] and "conflicting" in g["not_audited"][0]["reason"]
    assert "table K" in g["statement"]


def test_a_store_of_conflicted_tables_only_says_so(tmp_path, cli):
    db = _store_with_a_conflicted_table(tmp_path, cli)
    r = cli("audit", "--db", db, "--all", "--no-plots", "--since", "2030-01-01", "--no-record", "--out", tmp_path / "r")
    assert r.exit_code == 3 and "table K" in r.output and "conflicting results" in r.output, r.output
    r = cli("audit", "--db", db, "--table", "K", "--no-plots", "--no-record", "--out", tmp_path / "r")
    assert r.exit_code == 3 and "2 stored spin(s)" in r.output and "conflicting results" in r.output, r.output


def test_two_group_statements_in_one_second_are_both_kept(tmp_path, cli, monkeypatch):
    """The group statement went to audit-group-<UTC second>.json with a plain write: a second `audit --all` in the same
    second replaced the first run's file."""
    import rngcert.report.writer as writer

    monkeypatch.setattr(writer, "utc_stamp", lambda: "20261204T000000Z")
    db = _store_with_a_conflicted_table(tmp_path, cli)
    for _ in range(2):
        cli("audit", "--db", db, "--all", "--no-plots", "--resamples", 99, "--seed", 1, "--workers", 1, "--no-record", "--out", tmp_path / "r")
    assert sorted(p.name for p in (tmp_path / "r").glob("audit-group-*.json")) == ["audit-group-20261204T000000Z-2.json",
                                                                                 "audit-group-20261204T000000Z.json"]
